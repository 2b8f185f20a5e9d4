//! Cores run ahead ([`System::run_ahead`]) must give what [`System::run`]
//! gives: every core's registers, instructions, cycles and issues, and
//! shared memory; their turns and private stretches run blocks whole.

mod common;
use common::*;
use irqsim_mips::block::Step;
use irqsim_mips::context::REG_SLOTS;
use irqsim_mips::device::{Access, DEVICE_BASE, Devices, MMIO_BASE};
use irqsim_mips::{Context, Stop, System, SystemConfig};
use std::ops::Range;

/// Per hardware thread, the issues the hooks report, (PC, cycle) in order;
/// and the block hook's calls.
#[derive(Default)]
struct PerThread {
    issues: Vec<Vec<(u32, u64)>>,
    blocks: u64,
}

impl PerThread {
    fn push(&mut self, thread: usize, pc: u32, cycle: u64) {
        if self.issues.len() <= thread {
            self.issues.resize(thread + 1, vec![]);
        }
        self.issues[thread].push((pc, cycle));
    }
}

impl Devices for PerThread {
    fn read(&mut self, _: u32, _: Access) -> Result<(u32, u32), String> {
        Err("none".into())
    }
    fn write(&mut self, _: u32, _: u32, _: u32, _: Access) -> Result<u32, String> {
        Err("none".into())
    }
    fn issued(&mut self, thread: usize, pc: u32, cycle: u64) {
        self.push(thread, pc, cycle);
    }
    const BLOCK_HOOK: bool = true;
    fn issued_block(&mut self, thread: usize, pc: u32, t0: u64, steps: &[Step]) {
        self.blocks += 1;
        steps.iter().enumerate().for_each(|(j, s)| self.push(thread, pc + 4 * j as u32, t0 + u64::from(s.off)));
    }
}

/// A loop mixing the core's own stack (private) with a shared word, a
/// multiply, a load in a delay slot, then a read of the cycle register.
fn mixed() -> Vec<u32> {
    vec![
        lui(8, DATA >> 16),
        addiu(9, 0, 30),
        sw(9, -4, 29), // loop: 2
        lw(10, -4, 29),
        addu(11, 10, 9),
        lw(12, 0, 8),
        addu(12, 12, 11),
        sw(12, 0, 8),
        sw(12, -8, 29),
        mult(11, 9),
        mflo(13),
        addiu(9, 9, -1),
        bne(9, 0, -11), // back to 2
        lw(14, -8, 29), // slot
        lui(16, MMIO_BASE >> 16),
        lw(17, 0, 16),
        addu(18, 17, 14),
    ]
}

/// Core `core`'s thread, stopped at its exit: registers, instructions and cycle.
fn exit<D: Devices>(s: &mut System<D>, core: usize) -> ([u32; REG_SLOTS], u64, u64) {
    let (now, n) = (s.cores[core].now, s.cores[core].threads[0].instructions);
    (s.stop(core, 0).r, n, now)
}

/// Per core: registers, instructions and cycle at its exit; the shared
/// word; per core its issues in order; the block hook's calls.
type Outcome = (Vec<([u32; REG_SLOTS], u64, u64)>, u32, Vec<Vec<(u32, u64)>>, u64);

fn run(cores: usize, ahead: Option<u64>) -> Outcome {
    run_by(cores, ahead, u64::MAX >> 1).0
}

/// [`run`], each call of the run to `step` cycles past the last's limit;
/// also whether a core had issued past a call's limit when it returned.
fn run_by(cores: usize, ahead: Option<u64>, step: u64) -> (Outcome, bool) {
    run_with(&mixed(), cores, ahead, step, &[])
}

/// [`run_by`] of the program `words`, `read_only` given to `run_ahead`.
fn run_with(words: &[u32], cores: usize, ahead: Option<u64>, step: u64, read_only: &[Range<u32>]) -> (Outcome, bool) {
    let config = SystemConfig { cores, ..Default::default() };
    let mut s = System::new(program(words, 4096), &config, PerThread::default());
    let stack = |k: usize| 0x7000_0000 - 0x1000 * k as u32;
    for k in 0..cores {
        s.start(k, 0, Context::at(TEXT, stack(k)), k as u64);
    }
    let private: Vec<_> = (0..cores).map(|k| stack(k) - 0x1000..stack(k)).collect();
    let mut exits = vec![None; cores];
    let (mut until, mut past) = (0, false);
    loop {
        let stop = match ahead {
            Some(cycles) => s.run_ahead(until, &private, read_only, cycles, None),
            None => s.run(until),
        };
        past |= s.devices.issues.iter().filter_map(|i| i.last()).any(|&(_, cycle)| cycle >= until);
        match stop {
            Stop::Limit => until = until.saturating_add(step),
            Stop::Syscall { core, .. } => exits[core] = Some(exit(&mut s, core)),
            Stop::Idle => break,
            other => panic!("{other:?}"),
        }
    }
    let exits = exits.into_iter().map(|e| e.expect("every core exits")).collect();
    ((exits, s.mem.read_u32(DATA), std::mem::take(&mut s.devices.issues), s.devices.blocks), past)
}

#[test]
fn cores_run_ahead_by_blocks_as_in_lockstep() {
    for cores in [2, 3, 4] {
        let (exits, shared, issues, _) = run(cores, None);
        for ahead in [1, 4, 64] {
            let (a_exits, a_shared, a_issues, calls) = run(cores, Some(ahead));
            assert_eq!((&a_exits, a_shared, &a_issues), (&exits, shared, &issues), "{cores} cores, {ahead} ahead");
            assert!(calls > 0, "{cores} cores, {ahead} ahead: blocks ran");
        }
    }
}

/// Run to limits a few cycles apart (the NIC's next hardware event), cores
/// go on past each limit through private work, and still give
/// [`System::run`]'s registers, cycles, issues and shared word.
#[test]
fn cores_run_ahead_past_the_limit_as_in_lockstep() {
    for cores in [2, 3, 4] {
        let (exits, shared, issues, _) = run(cores, None);
        for step in [1, 3, 7] {
            for ahead in [1, 4, 64] {
                let ((a_exits, a_shared, a_issues, _), past) = run_by(cores, Some(ahead), step);
                assert_eq!((&a_exits, a_shared, &a_issues), (&exits, shared, &issues), "{cores} cores, limits {step} apart, {ahead} ahead");
                assert!(past, "{cores} cores, limits {step} apart, {ahead} ahead: no core went on past a limit");
            }
        }
    }
}

/// [`mixed`] with a load of a word no core writes (at `DATA + 0x100`) in its loop.
fn reading() -> Vec<u32> {
    let mut words = mixed();
    words.insert(4, lw(15, 0x100, 8));
    words[13] = bne(9, 0, -12);
    words.push(addu(19, 18, 15));
    words
}

/// Loads of memory named read-only are private: cores run ahead through
/// them, in fewer blocks than when they wait for their turn at each, and
/// give [`System::run`]'s registers, cycles, issues and shared word.
#[test]
fn cores_run_ahead_through_read_only_loads() {
    let read_only = DATA + 0x100..DATA + 0x104;
    for cores in [2, 3, 4] {
        let (exits, shared, issues, _) = run_with(&reading(), cores, None, u64::MAX >> 1, &[]).0;
        let (.., waiting) = run_with(&reading(), cores, Some(64), u64::MAX >> 1, &[]).0;
        let (r_exits, r_shared, r_issues, calls) = run_with(&reading(), cores, Some(64), u64::MAX >> 1, std::slice::from_ref(&read_only)).0;
        assert_eq!((&r_exits, r_shared, &r_issues), (&exits, shared, &issues), "{cores} cores");
        assert!(calls < waiting, "{cores} cores: {calls} block calls, {waiting} with the loads shared");
    }
}

/// A store into memory named read-only stops the run with a fault at the store.
#[test]
fn a_store_into_read_only_memory_faults() {
    let words = [lui(8, DATA >> 16), addiu(9, 0, 7), sw(9, 0x104, 8), SYSCALL];
    let mut s = System::new(program(&words, 4096), &SystemConfig { cores: 2, ..Default::default() }, PerThread::default());
    for k in 0..2 {
        s.start(k, 0, Context::at(TEXT, 0x7000_0000 - 0x1000 * k as u32), 0);
    }
    let private = [0x6FFF_F000..0x7000_0000, 0x6FFF_E000..0x6FFF_F000];
    let read_only = DATA + 0x100..DATA + 0x108;
    match s.run_ahead(1000, &private, std::slice::from_ref(&read_only), 64, None) {
        Stop::Fault { core: 0, error, .. } => assert!(error.to_string().contains(&format!("write to read-only data at 0x{:08x}", DATA + 0x104)), "{error}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(s.mem.read_u32(DATA + 0x104), 0, "the store did not happen");
}

/// [`PerThread`], and a register at [`DEVICE_BASE`] whose write asks the
/// caller to stop and to end the run 5 cycles on (as the NIC's queued work
/// is due), until the caller takes that end (`by`: u64::MAX).
#[derive(Default)]
struct Asks {
    issues: PerThread,
    by: u64,
    stop: bool,
}

impl Devices for Asks {
    fn read(&mut self, _: u32, _: Access) -> Result<(u32, u32), String> {
        Err("none".into())
    }
    fn write(&mut self, _: u32, _: u32, _: u32, at: Access) -> Result<u32, String> {
        (self.by, self.stop) = (self.by.min(at.cycle + 5), true);
        Ok(0)
    }
    fn take_stop(&mut self) -> bool {
        std::mem::take(&mut self.stop)
    }
    fn issued(&mut self, thread: usize, pc: u32, cycle: u64) {
        self.issues.push(thread, pc, cycle);
    }
}

/// Each core writes the register every few instructions, between private work.
fn asking() -> Vec<u32> {
    vec![
        lui(8, DEVICE_BASE >> 16),
        addiu(9, 0, 20),
        addiu(10, 10, 1), // loop: 2
        sw(10, -4, 29),
        lw(11, -4, 29),
        sw(11, 0, 8),
        addiu(9, 9, -1),
        bne(9, 0, -6),
        NOP,
        SYSCALL,
    ]
}

/// Per core its exit (registers, instructions, cycle) and issues; the ends
/// the runs reached, each with every core's cycle and instructions there;
/// the runs that stopped for the device.
type Ends = (Vec<([u32; REG_SLOTS], u64, u64)>, Vec<Vec<(u32, u64)>>, Vec<(u64, Vec<(u64, u64)>)>, u64);

/// Runs [`asking`] to limits 10 cycles apart, each run's end lowered to
/// what the device asks: by the caller at each [`Stop::Device`], or
/// within the run (`within`: `run_ahead`'s `stop_by`).
fn run_asking(cores: usize, within: bool) -> Ends {
    let mut s = System::new(program(&asking(), 4096), &SystemConfig { cores, ..Default::default() }, Asks { by: u64::MAX, ..Asks::default() });
    let stack = |k: usize| 0x7000_0000 - 0x1000 * k as u32;
    for k in 0..cores {
        s.start(k, 0, Context::at(TEXT, stack(k)), k as u64);
    }
    let private: Vec<_> = (0..cores).map(|k| stack(k) - 0x1000..stack(k)).collect();
    let (mut exits, mut ends, mut devices, mut until) = (vec![None; cores], vec![], 0, 0);
    let by: fn(&Asks) -> u64 = |d| d.by;
    loop {
        let stop = s.run_ahead(until, &private, &[], 64, within.then_some(by));
        until = until.min(s.devices.by);
        match stop {
            Stop::Limit => {
                ends.push((until, s.cores.iter().map(|c| (c.now, c.threads[0].instructions)).collect()));
                s.devices.by = u64::MAX;
                until += 10;
            }
            Stop::Device { .. } => devices += 1,
            Stop::Syscall { core, .. } => exits[core] = Some(exit(&mut s, core)),
            Stop::Idle => break,
            other => panic!("{other:?}"),
        }
    }
    let exits = exits.into_iter().map(|e| e.expect("every core exits")).collect();
    (exits, std::mem::take(&mut s.devices.issues.issues), ends, devices)
}

/// A device's stop lowers the run's end within `run_ahead` (`stop_by`)
/// exactly as a caller that lowers it and runs again: the same registers,
/// cycles, issues and ends, with no [`Stop::Device`] left to the caller.
#[test]
fn a_devices_stop_lowers_the_end_within_the_run() {
    for cores in [2, 3, 4] {
        let (exits, issues, ends, devices) = run_asking(cores, false);
        let (w_exits, w_issues, w_ends, w_devices) = run_asking(cores, true);
        assert_eq!((&w_exits, &w_issues, &w_ends), (&exits, &issues, &ends), "{cores} cores");
        assert!(ends.windows(2).any(|w| w[1].0 < w[0].0 + 10), "{cores} cores: the device lowered an end");
        assert_eq!((w_devices, devices > 0), (0, true), "{cores} cores: device stops left to the caller");
    }
}
