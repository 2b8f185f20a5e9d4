//! Each firmware core's stack ends in a guard: a firmware that recurses
//! without end faults at its own core's limit, in one line naming the
//! program, the function and the PC, instead of writing on through the
//! next core's stack.

use irqsim_firmware::{Nic, NicConfig};
use irqsim_mips::Program;

/// The NIC firmware with `fw_main` replaced by a function that calls
/// itself forever, a 64-byte frame each time.
fn recursing_firmware() -> Program {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/irqsim/programs/firmware/nic.elf");
    let mut p = Program::load(std::path::Path::new(path)).unwrap();
    let main = p.symbol("fw_main").unwrap();
    let code = [
        0x27BD_FFC0,                             // addiu $sp, $sp, -64
        0xAFBF_003C,                             // sw    $ra, 60($sp)
        0x0C00_0000 | (main >> 2 & 0x03FF_FFFF), // jal   fw_main
        0,                                       // nop (delay slot)
    ];
    let seg = p.segments.iter_mut().find(|s| s.executable && main >= s.vaddr && main - s.vaddr < s.memsz).unwrap();
    let at = (main - seg.vaddr) as usize;
    for (i, w) in code.iter().enumerate() {
        seg.data[at + 4 * i..at + 4 * i + 4].copy_from_slice(&u32::to_be_bytes(*w));
    }
    p
}

struct Zeros;

impl irqsim_firmware::HostMemory for Zeros {
    fn read(&mut self, _addr: u32) -> u32 {
        0
    }
    fn write(&mut self, _addr: u32, _value: u32) {}
}

#[test]
fn a_stack_overflow_faults_at_its_own_cores_limit() {
    for cores in [1, 2, 8] {
        let cfg = NicConfig::from_sets(&[format!("cores={cores}")]).unwrap();
        let (mut nic, _) = Nic::new(&recursing_firmware(), &cfg, None).unwrap();
        // 60 KiB of stack in 64-byte frames: under 1,000 calls, a few thousand cycles.
        let err = nic.advance(1_000_000, &mut Zeros, &mut Vec::new()).expect_err("the recursion must fault").to_string();
        assert!(!err.contains('\n'), "{err}");
        assert!(err.contains("nic.elf: stack overflow (segmentation fault: write to 0x") && err.contains(" in fw_main+0x4 at pc 0x"), "{err}");
        // Core 0 runs first in each cycle, so it faults first: at the page below its 60 KiB (0x7fff0000..0x7ffff000).
        let addr = u32::from_str_radix(&err[err.find("write to 0x").unwrap() + 11..][..8], 16).unwrap();
        assert!((0x7FFE_0000..0x7FFF_0000).contains(&addr), "{err}");
        assert!(nic.now() < 100_000, "faulted at cycle {}", nic.now());
    }
}
