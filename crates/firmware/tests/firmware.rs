//! The firmware's parts on the NIC: the MAC sends a frame with its header,
//! and the firmware's locks exclude, whether cores run in lockstep or
//! ahead. (Runs of the firmware on the machine, frames exactly once and in
//! order, the organisations and the profile: crates/core/tests/firmware_nic.rs.)

use irqsim_firmware::memory::Memory;
use irqsim_firmware::nic::Hardware;
use irqsim_firmware::profile::{Functions, Recorder};
use irqsim_firmware::{Effect, NicConfig};
use irqsim_mips::device::{Access, DEVICE_BASE, Devices, NoDevices};
use irqsim_mips::run::STACK_TOP;
use irqsim_mips::{Context, Program, Stop, System, SystemConfig};

fn firmware() -> Program {
    Program::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/irqsim/programs/firmware/nic.elf"))).unwrap()
}

#[test]
fn a_frame_handed_to_the_mac_leaves_the_wire_with_its_header() {
    let cfg = NicConfig::default();
    let mut hw = Hardware::new(&cfg, Recorder::new(&Functions::new(&firmware()), 1, false));
    let at = Access { core: 0, thread: 0, cycle: 10 };
    let w = |hw: &mut Hardware, off: u32, v: u32| hw.write(DEVICE_BASE + off, v, u32::MAX, at).unwrap();
    // Frame 1's header in transmit buffer 0, handed to the MAC first.
    w(&mut hw, 0x1_0000 + 0x1_0000, 1);
    w(&mut hw, 0x300, 0x1_0000);
    w(&mut hw, 0x304, 1518);
    w(&mut hw, 0x308, 1);
    assert!(hw.take_stop(), "queued work stops the cores");
    // 1538 B at 10 Gb/s and 166 MHz: 204.246 cycles after cycle 10.
    assert_eq!(hw.next_event(), 215);
    let (mut mem, mut effects) = (Memory::default(), vec![]);
    hw.retire(214, &mut mem, &mut effects);
    assert!(effects.is_empty());
    hw.retire(215, &mut mem, &mut effects);
    assert_eq!(effects, [Effect::Transmit { at: 215, seq: 1, len: 1518 }]);
    assert_eq!(hw.sent, 1);
}

/// Runs `lock_selftest(times, locked)` on `cores` cores, each up to
/// `ahead` cycles ahead of the others through private work (0: as
/// `System::run` interleaves them); returns the counter and each core's
/// cycle and instructions at the end.
fn lock_selftest(cores: usize, times: u32, locked: bool, ahead: u64) -> (u32, Vec<(u64, u64)>) {
    let p = firmware();
    let (entry, gp, counter) = (p.symbol("lock_selftest").unwrap(), p.symbol("_gp").unwrap(), p.symbol("selftest_counter").unwrap());
    let mut sys = System::new(p, &SystemConfig { cores, ..SystemConfig::default() }, NoDevices);
    let stack = |k: u32| STACK_TOP - 0x1_0000 * (k + 1) + 256..STACK_TOP - 0x1_0000 * k;
    let private: Vec<_> = (0..cores as u32).map(stack).collect();
    for k in 0..cores {
        let mut ctx = Context::call(entry, STACK_TOP - 0x1_0000 * k as u32, &[times, locked as u32]);
        ctx.r[28] = gp;
        sys.start(k, 0, ctx, 0);
    }
    loop {
        let stop = if ahead > 0 { sys.run_ahead(u64::MAX >> 1, &private, &[], ahead, None) } else { sys.run(u64::MAX >> 1) };
        match stop {
            Stop::Idle => break,
            Stop::Returned { .. } => continue,
            s => panic!("{s:?}"),
        }
    }
    (sys.mem.read_u32(counter), sys.cores.iter().map(|c| (c.now, c.threads[0].instructions)).collect())
}

#[test]
fn locks_give_mutual_exclusion() {
    assert_eq!(lock_selftest(4, 300, true, 0).0, 1200);
    // Without the lock the same read-modify-write loses updates: the test can fail.
    assert!(lock_selftest(4, 300, false, 0).0 < 1200);
}

#[test]
fn cores_running_ahead_interleave_shared_memory_as_in_lockstep() {
    // Unlocked, the updates lost depend on exactly how the cores' accesses interleave.
    for (cores, locked) in [(2, false), (4, false), (6, false), (4, true)] {
        let lockstep = lock_selftest(cores, 200, locked, 0);
        for ahead in [1, 16, 1 << 20] {
            assert_eq!(lock_selftest(cores, 200, locked, ahead), lockstep, "{cores} cores, locked {locked}, {ahead} ahead");
        }
    }
}
