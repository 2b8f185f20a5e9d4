//! Bad firmware stops a run with one error naming the program, the
//! function and the PC (a fault, an unsupported instruction, an infinite
//! loop that never reads the event flags), and a watcher (a binding's
//! Ctrl-C) stops a long run.

use irqsim_firmware::device::WATCHDOG_CYCLES;
use irqsim_firmware::{Error, NicConfig, run, watched};
use irqsim_mips::Program;

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

/// The error of a short run of `p` on `cores` cores (a run that finishes fails the test).
fn stopped(p: &Program, cores: usize) -> Error {
    // max_cycles well past the watchdog: the run's own limit must not be what stops it.
    let cfg = NicConfig::from_sets(&[format!("cores={cores}"), "frames=2000".into(), "max_cycles=20000000".into()]).unwrap();
    match run(p, &cfg, None) {
        Ok(o) => panic!("ran {} frames", o.frames),
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
fn a_watcher_stops_a_long_run() {
    let cfg = NicConfig::from_sets(&["cores=2", "frames=100000000", "max_cycles=20000000"]).unwrap();
    let mut polls = 0;
    let e = watched(
        move || {
            polls += 1;
            polls < 5
        },
        || run(&firmware(), &cfg, None).err(),
    );
    let Some(Error::Cancelled(m)) = e else { panic!("{e:?}") };
    assert!(m.starts_with(&format!("{}: interrupted at cycle ", firmware().name)), "{m}");
    // Outside `watched` nothing polls: a short run finishes.
    assert!(run(&firmware(), &NicConfig::from_sets(&["frames=100"]).unwrap(), None).is_ok());
}
