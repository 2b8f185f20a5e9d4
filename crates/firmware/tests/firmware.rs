//! The firmware on the NIC: frames arrive exactly once and in order at the
//! wire and at the host, locks exclude, runs are deterministic, and the
//! organisations behave as the model claims.

use irqsim_firmware::host::{self, Host};
use irqsim_firmware::nic::Hardware;
use irqsim_firmware::profile::{Functions, Recorder};
use irqsim_firmware::{Effect, NicConfig, Outcome, run, task_owners};
use irqsim_mips::device::{Access, DEVICE_BASE, Devices, NoDevices};
use irqsim_mips::run::STACK_TOP;
use irqsim_mips::{Context, Program, Stop, System, SystemConfig};

fn firmware() -> Program {
    Program::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/irqsim/programs/firmware/nic.elf"))).unwrap()
}

fn go(sets: &[&str], owners: Option<&[u32]>) -> Outcome {
    let cfg = NicConfig::from_sets(sets).unwrap();
    run(&firmware(), &cfg, owners).unwrap_or_else(|e| panic!("{sets:?}: {e}"))
}

#[test]
fn every_frame_once_and_in_order_at_both_ends() {
    // The wire and the host check every frame as it passes; a run that
    // breaks either returns an error. Both directions must carry frames.
    for cores in ["cores=1", "cores=2", "cores=4", "cores=6"] {
        for size in ["frame_bytes=64", "frame_bytes=1518"] {
            let o = go(&[cores, size, "frames=600", "warmup_frames=100"], None);
            assert!(o.sent > 100 && o.received > 100, "{cores} {size}: sent {} received {}", o.sent, o.received);
        }
    }
}

#[test]
fn the_host_check_catches_a_frame_out_of_order() {
    let mut h = Host::new(64, 0, false, true);
    for (k, stamp) in [(0u32, 0u32), (1, 2), (2, 1)] {
        let buf = host::RECV_BUFS + k * 2048;
        h.write(host::RET_RING + 16 * k, buf);
        h.write(host::RET_RING + 16 * k + 4, 64);
        h.write(host::RET_RING + 16 * k + 8, stamp);
        h.write(buf, stamp);
    }
    h.write(host::STATUS + 4, 3);
    h.interrupt(0);
    let e = h.advance(0).unwrap_err();
    assert!(e.contains("receive descriptor 1 carries frame 2"), "{e}");
}

#[test]
fn a_frame_handed_to_the_mac_leaves_the_wire_with_its_header() {
    let cfg = NicConfig::from_sets(&["traffic=send"]).unwrap();
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
    let (mut mem, mut effects) = (host::Memory::default(), vec![]);
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
        let stop = if ahead > 0 { sys.run_ahead(u64::MAX >> 1, &private, ahead) } else { sys.run(u64::MAX >> 1) };
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

#[test]
fn runs_are_deterministic() {
    let a = go(&["cores=4", "frames=400"], None);
    let b = go(&["cores=4", "frames=400"], None);
    assert_eq!((a.cycles, a.instructions, a.profile.lock, a.profile.ordering), (b.cycles, b.instructions, b.profile.lock, b.profile.ordering));
}

#[test]
fn frame_level_throughput_grows_with_cores_and_task_level_stalls() {
    let sets = |c: &'static str| vec![c, "frames=1500", "warmup_frames=200"];
    let one = go(&sets("cores=1"), None);
    let fpkc: Vec<f64> = ["cores=2", "cores=4", "cores=6"].iter().map(|c| go(&sets(c), None).frames_per_kcycle()).collect();
    assert!(one.frames_per_kcycle() < fpkc[0] && fpkc[0] < fpkc[1] && fpkc[1] < fpkc[2], "{} {fpkc:?}", one.frames_per_kcycle());
    // Task-level: one core per handler type cannot use six cores as well as frame-level can.
    let owners = task_owners(&one.profile.handler_cycles, 6);
    let task = go(&["cores=6", "organisation=task", "frames=1500", "warmup_frames=200"], Some(&owners));
    assert!(task.frames_per_kcycle() < fpkc[2], "task {} frame {}", task.frames_per_kcycle(), fpkc[2]);
}

#[test]
fn task_owners_balance_by_longest_first() {
    // Costs 8..1 over 3 cores, each to the least loaded (ties: lowest core):
    // 8->0, 7->1, 6->2, 5->2, 4->1, 3->0, then all at 11: 2->0, 1->1.
    let owners = task_owners(&[8, 7, 6, 5, 4, 3, 2, 1], 3);
    let mut load = [0u64; 3];
    for (h, &k) in owners.iter().enumerate() {
        load[k as usize] += 8 - h as u64;
    }
    assert_eq!(load, [13, 12, 11]);
    assert_eq!(task_owners(&[1; 8], 1), vec![0; 8]);
}

#[test]
fn bad_owners_are_refused() {
    let cfg = NicConfig::from_sets(&["cores=2", "organisation=task"]).unwrap();
    assert!(run(&firmware(), &cfg, None).err().unwrap().to_string().contains("task-level needs handler owners"));
    assert!(run(&firmware(), &cfg, Some(&[0, 1, 2, 0, 0, 0, 0, 0])).err().unwrap().to_string().starts_with("owners: core 2 does not exist"));
}

#[test]
fn host_interrupts_are_msis_that_merge_while_pending() {
    let mut h = Host::new(64, 100, true, false);
    h.interrupt(0);
    h.interrupt(50); // the vector is still pending: merges
    h.advance(99).unwrap();
    h.advance(100).unwrap(); // the driver takes the vector
    h.interrupt(150); // a new one after the take is delivered
    assert_eq!((h.interrupts, h.merged), (3, 1));
    h.advance(250).unwrap();
}

#[test]
fn the_profile_charges_every_core_cycle_and_instruction_of_the_window_once() {
    for cores in ["cores=1", "cores=3"] {
        let o = go(&[cores, "frames=500", "warmup_frames=100"], None);
        let p = &o.profile;
        let all = o.cycles * o.cores as u64;
        assert_eq!(p.handler_cycles.iter().sum::<u64>(), all, "{cores}");
        assert_eq!(p.cycles.iter().sum::<u64>(), all, "{cores}");
        assert_eq!(p.lock + p.ordering + p.dma_wait + p.handler_work + p.dispatch_work, all, "{cores}");
        assert_eq!(p.executed.iter().sum::<u64>(), o.instructions, "{cores}");
        assert_eq!(p.handler_instructions.iter().sum::<u64>(), o.instructions, "{cores}");
    }
}
