//! Bad firmware stops a run with one error naming the program, the
//! function and the PC (a fault, an unsupported instruction, an infinite
//! loop that never reads the event flags). On the machine the error ends
//! the run (crates/core/tests/firmware_nic.rs).

mod support;

use irqsim_firmware::device::WATCHDOG_CYCLES;
use irqsim_firmware::{Error, Nic, NicConfig};
use irqsim_mips::Program;
use support::Loopback;

fn firmware() -> Program {
    Program::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/irqsim/programs/firmware/nic.elf"))).unwrap()
}

/// The firmware with `words` written over the start of function `name`; its address.
fn patched(name: &str, words: &[u32]) -> (Program, u32) {
    let mut p = firmware();
    let at = p.symbol(name).unwrap();
    let seg = p.segments.iter_mut().find(|s| s.executable && at >= s.vaddr && at < s.vaddr + s.data.len() as u32).unwrap();
    for (k, w) in words.iter().enumerate() {
        let off = (at - seg.vaddr) as usize + 4 * k;
        seg.data[off..off + 4].copy_from_slice(&w.to_be_bytes());
    }
    (p, at)
}

/// The error of a run of `p` on `cores` cores under 64-byte full-duplex
/// floods, well past the watchdog (a run that gets there fails the test).
fn stopped(p: &Program, cores: usize) -> Error {
    let cfg = NicConfig::from_sets(&[format!("cores={cores}")]).unwrap();
    let (mut nic, _) = Nic::new(p, &cfg, None).unwrap();
    match Loopback::new(64, 11).run(&mut nic, 20 * WATCHDOG_CYCLES, 1 << 16) {
        Ok(()) => panic!("ran to cycle {}", nic.now()),
        Err(e) => e,
    }
}

#[test]
fn an_unsupported_instruction_names_program_function_and_pc() {
    // add.s $f0, $f0, $f0: the cores have no FPU.
    let (p, at) = patched("receive", &[0x4600_0000]);
    for cores in [1, 4] {
        let Error::Stopped(m) = stopped(&p, cores) else { panic!() };
        assert!(m.starts_with(&format!("{}: unsupported instruction", p.name)), "{m}");
        assert!(m.contains(&format!(" in receive+0x0 at pc 0x{at:08x} (instruction 0x46000000) on core ")), "{m}");
        assert_eq!(m.lines().count(), 1);
    }
}

#[test]
fn a_fault_names_program_function_and_pc() {
    // lw $t0, 1($zero): an unaligned load.
    let (p, at) = patched("send_complete", &[0x8C08_0001]);
    let Error::Stopped(m) = stopped(&p, 2) else { panic!() };
    assert!(m.starts_with(&format!("{}: unaligned access to 0x00000001 in send_complete+0x0", p.name)), "{m}");
    assert!(m.contains(&format!("at pc 0x{at:08x}")) && m.contains(" on core "), "{m}");
}

#[test]
fn an_infinite_loop_that_never_reads_the_event_flags_is_caught() {
    // b . ; nop: receive spins where it starts.
    let (p, at) = patched("receive", &[0x1000_FFFF, 0]);
    for cores in [1, 3] {
        let e = stopped(&p, cores);
        let Error::Stopped(m) = &e else { panic!("{e:?}") };
        let want = format!("has not read the event flags for {WATCHDOG_CYCLES} cycles (an infinite loop?)");
        assert!(m.starts_with(&format!("{}: core ", p.name)) && m.contains(&want), "{m}");
        let (off, pc) = if m.contains(" in receive+0x0 at") { (0, at) } else { (4, at + 4) };
        assert!(m.contains(&format!(" in receive+0x{off:x} at pc 0x{pc:08x}, cycle ")), "{m}");
    }
}

#[test]
fn a_store_into_read_only_data_names_program_function_and_pc() {
    // lui $t0, %hi(fw_cfg); sw $zero, %lo(fw_cfg)($t0): cores run ahead load
    // fw_cfg at any cycle, so with several cores a store there faults.
    let cfg = firmware().symbol("fw_cfg").unwrap();
    let (p, at) = patched("receive", &[0x3C08_0000 | (cfg.wrapping_add(0x8000) >> 16), 0xAD00_0000 | (cfg & 0xFFFF)]);
    for cores in [2, 4] {
        let Error::Stopped(m) = stopped(&p, cores) else { panic!() };
        assert!(m.starts_with(&format!("{}: write to read-only data at 0x{cfg:08x} in receive+0x4 at pc 0x{:08x}", p.name, at + 4)), "{m}");
        assert_eq!(m.lines().count(), 1);
    }
}
