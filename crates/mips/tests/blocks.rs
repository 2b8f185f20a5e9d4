//! Blocks run whole at their precomputed cycles must give what one
//! instruction at a time gives (a slice's limit makes the run go one at a
//! time near it), and must follow the text when the program writes it.

mod common;
use common::*;
use irqsim_mips::device::{Access, Devices};
use irqsim_mips::hierarchy::HierarchyConfig;
use irqsim_mips::{Context, Stop, System, SystemConfig};

fn bnel(s: u32, t: u32, words: i32) -> u32 {
    i(21, s, t, words)
}
fn jal(index: u32) -> u32 {
    (3 << 26) | (((TEXT + 4 * index) >> 2) & 0x03FF_FFFF)
}
fn jr(s: u32) -> u32 {
    r(8, s, 0, 0, 0)
}

/// A loop with a load-use interlock, a store, a multiply, a load in a
/// branch's delay slot and an annulled branch-likely slot.
fn mixed() -> Vec<u32> {
    vec![
        lui(8, 0x1000),
        addiu(9, 0, 20),
        lw(10, 0, 8), // loop: 2
        addu(11, 10, 9),
        sw(11, 0, 8),
        mult(11, 9),
        mflo(12),
        addiu(9, 9, -1),
        bne(9, 0, -7), // back to 2
        lw(13, 4, 8),  // slot
        bnel(9, 0, 1), // not taken: slot annulled
        addiu(14, 0, 7),
        addu(15, 13, 12),
    ]
}

/// Registers, instructions and cycles at the exit, running in slices of `step` cycles.
fn run_in_slices(words: &[u32], config: &SystemConfig, step: u64) -> ([u32; 32], u64, u64) {
    let mut s = system(program(words, 4096), config);
    let mut until = step;
    loop {
        match s.run(until) {
            Stop::Limit => until += step,
            Stop::Syscall { .. } => break,
            other => panic!("{other:?}"),
        }
    }
    let th = &s.cores[0].threads[0];
    (th.ctx.r, th.instructions, s.cores[0].now)
}

#[test]
fn blocks_give_the_cycles_of_one_instruction_at_a_time() {
    let caches = HierarchyConfig::default();
    for config in [SystemConfig::default(), SystemConfig { caches: Some(caches), ..Default::default() }] {
        let whole = run_in_slices(&mixed(), &config, 1_000_000);
        assert_eq!(whole.0[15], whole.0[13].wrapping_add(whole.0[12]));
        assert_eq!(whole.0[14], 0, "the annulled slot ran");
        for step in [1, 2, 3, 5, 7, 11] {
            assert_eq!(run_in_slices(&mixed(), &config, step), whole, "slices of {step} cycles");
        }
    }
}

#[test]
fn a_store_into_the_running_block_takes_effect_before_it_runs() {
    // The loop's store rewrites its own `addiu $4, $4, 1` (index 6) into `addiu $4, $4, 2` before it runs.
    let words = [
        lui(8, (TEXT >> 16) as u32),
        lw(9, 24, 8),
        addiu(9, 9, 1),
        addiu(10, 0, 3),
        sw(9, 24, 8), // loop: 4
        addiu(10, 10, -1),
        addiu(4, 4, 1),
        bne(10, 0, -4), // back to 4
        NOP,
    ];
    let (regs, ..) = run_in_slices(&words, &SystemConfig::default(), 1_000_000);
    assert_eq!(regs[4], 6);
}

#[test]
fn a_block_run_before_is_rebuilt_when_its_text_changes() {
    // Calls a subroutine whose delay slot adds 1 to $4, patches the slot to add 2, calls it again.
    let words = [
        lui(8, (TEXT >> 16) as u32),
        jal(10),
        NOP,
        lw(9, 44, 8),
        addiu(9, 9, 1),
        sw(9, 44, 8),
        jal(10),
        NOP,
        beq(0, 0, 3), // to the exit at 12
        NOP,
        jr(31), // 10
        addiu(4, 4, 1),
    ];
    let (regs, ..) = run_in_slices(&words, &SystemConfig::default(), 1_000_000);
    assert_eq!(regs[4], 3);
}

/// Records every issue the [`Devices::issued`] hook reports.
#[derive(Default)]
struct Issues(Vec<(usize, u32, u64)>);

impl Devices for Issues {
    fn read(&mut self, _: u32, _: Access) -> Result<(u32, u32), String> {
        Err("none".into())
    }
    fn write(&mut self, _: u32, _: u32, _: u32, _: Access) -> Result<u32, String> {
        Err("none".into())
    }
    fn issued(&mut self, thread: usize, pc: u32, cycle: u64) {
        self.0.push((thread, pc, cycle));
    }
}

#[test]
fn every_issue_is_reported_once_with_its_cycle_whole_or_in_slices() {
    let issues = |step: u64| {
        let mut s = System::new(program(&mixed(), 4096), &SystemConfig::default(), Issues::default());
        s.start(0, 0, Context::at(TEXT, 0x7000_0000), 0);
        let mut until = step;
        while s.run(until) == Stop::Limit {
            until += step;
        }
        let th = &s.cores[0].threads[0];
        assert_eq!(s.devices.0.len() as u64, th.instructions);
        // One issue per cycle at most, in order; the last is the exit's syscall.
        assert!(s.devices.0.windows(2).all(|w| w[0].2 < w[1].2));
        assert_eq!(s.devices.0.last().map(|i| i.1), Some(TEXT + 4 * (mixed().len() as u32 + 1)));
        std::mem::take(&mut s.devices.0)
    };
    let whole = issues(1_000_000);
    for step in [1, 2, 3, 5] {
        assert_eq!(issues(step), whole, "slices of {step} cycles");
    }
}
