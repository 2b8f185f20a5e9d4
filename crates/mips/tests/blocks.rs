//! Blocks run whole at their precomputed cycles must give what one
//! instruction at a time gives (a slice's limit makes the run go one at a
//! time near it), and must follow the text when the program writes it.

mod common;
use common::*;
use irqsim_mips::block::Step;
use irqsim_mips::context::REG_SLOTS;
use irqsim_mips::device::{Access, Devices, MMIO_BASE};
use irqsim_mips::hierarchy::{HierarchyConfig, Level};
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

/// Registers, instructions, cycles and cache counts (accesses and misses of
/// each cache) at the exit, running in slices of `step` cycles.
fn run_in_slices(words: &[u32], config: &SystemConfig, step: u64) -> ([u32; REG_SLOTS], u64, u64, Vec<(u64, u64)>) {
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
    let counts = s.caches.as_ref().map_or(vec![], |h| Level::ALL.iter().map(|&l| h.level(l)[0].total()).map(|c| (c.accesses, c.misses)).collect());
    (th.ctx.r, th.instructions, s.cores[0].now, counts)
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

/// Loads and stores of every width and lane, and an unaligned halfword
/// load that faults, as a block runs them in ordinary memory
/// (`crate::plain` in irqsim-mips) and as one instruction at a time
/// runs them (slices of one cycle).
#[test]
fn a_block_loads_and_stores_every_lane_as_one_instruction_at_a_time() {
    let (lb, lh, lbu, lhu, sb, sh) = (32, 33, 36, 37, 40, 41);
    let mut words = vec![lui(8, 0x1000), lui(9, 0x89AB), i(13, 9, 9, 0xCDEF), sw(9, 0, 8)];
    for off in 0..4 {
        words.extend([i(sb, 8, 9, 4 + off), i(lb, 8, 10, off), i(lbu, 8, 11, off), addu(12, 12, 10), addu(13, 13, 11)]);
    }
    for off in [0, 2] {
        words.extend([i(sh, 8, 9, 8 + off), i(lh, 8, 14, off), i(lhu, 8, 15, off), addu(16, 16, 14), addu(17, 17, 15)]);
    }
    words.extend([lw(18, 4, 8), lw(19, 8, 8), i(lhu, 8, 20, 1)]);
    let mut s = system(program(&words, 4096), &SystemConfig::default());
    let fault = s.run(1_000_000);
    let r = s.cores[0].threads[0].ctx.r;
    // The bytes 89 AB CD EF sign- and zero-extended, the halves 89AB and CDEF.
    assert_eq!((r[12], r[13]), (0xFFFF_FF89u32.wrapping_add(0xFFFF_FFAB).wrapping_add(0xFFFF_FFCD).wrapping_add(0xFFFF_FFEF), 0x89 + 0xAB + 0xCD + 0xEF));
    assert_eq!((r[16], r[17]), (0xFFFF_89ABu32.wrapping_add(0xFFFF_CDEF), 0x89AB + 0xCDEF));
    assert_eq!((r[18], r[19]), (0xEFEF_EFEF, 0xCDEF_CDEF));
    let mut one = system(program(&words, 4096), &SystemConfig::default());
    let mut until = 1;
    let stop = loop {
        match one.run(until) {
            Stop::Limit => until += 1,
            other => break other,
        }
    };
    assert_eq!(format!("{stop:?}"), format!("{fault:?}"));
    assert_eq!(one.cores[0].threads[0].ctx, s.cores[0].threads[0].ctx);
    assert_eq!((one.cores[0].now, one.cores[0].threads[0].instructions), (s.cores[0].now, s.cores[0].threads[0].instructions));
}

/// A block's loads and stores that the plain path leaves to the general one
/// (a page never written, a load into `$zero`, the cycle counter) beside
/// those it takes, whole and one cycle at a time, with and without caches.
#[test]
fn a_block_leaves_what_is_not_plain_memory_to_the_bus() {
    let words = [
        lui(8, 0x2000), // a page never written
        lw(9, 0, 8),
        addiu(10, 0, 77),
        sw(10, 4, 8), // its first write
        sw(10, 8, 8),
        lw(11, 8, 8),
        lw(0, 4, 8),
        lui(12, MMIO_BASE >> 16),
        lw(13, 0, 12), // the cycle counter
        addu(14, 11, 9),
    ];
    for config in [SystemConfig::default(), SystemConfig { caches: Some(HierarchyConfig::default()), ..Default::default() }] {
        let whole = run_in_slices(&words, &config, 1_000_000);
        assert_eq!((whole.0[0], whole.0[9], whole.0[11], whole.0[14]), (0, 0, 77, 77));
        assert!(whole.0[13] > 0 && u64::from(whole.0[13]) < whole.2, "cycle {}", whole.0[13]);
        assert_eq!(run_in_slices(&words, &config, 1), whole);
    }
}

#[test]
fn a_store_into_the_running_block_takes_effect_before_it_runs() {
    // The loop's store rewrites its own `addiu $4, $4, 1` (index 6) into `addiu $4, $4, 2` before it runs.
    let words = [
        lui(8, TEXT >> 16),
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
fn a_loop_whose_slot_writes_the_text_goes_round_again() {
    // The slot of the loop's branch, taken, leaves the run of blocks (it wrote the text): on from the loop's entry.
    let words = [
        lui(8, TEXT >> 16),
        addiu(10, 0, 3),
        addiu(10, 10, -1), // loop: 2
        addiu(4, 4, 1),
        bne(10, 0, -3), // back to 2
        sw(0, 28, 8),   // slot: a no-op written over the no-op at 7
        NOP,
        NOP,
    ];
    let (regs, instructions, ..) = run_in_slices(&words, &SystemConfig::default(), 1_000_000);
    assert_eq!((regs[4], regs[10], instructions), (3, 0, 2 + 3 * 4 + 2 + 2));
}

#[test]
fn a_block_run_before_is_rebuilt_when_its_text_changes() {
    // Calls a subroutine whose delay slot adds 1 to $4, patches the slot to add 2, calls it again.
    let words = [
        lui(8, TEXT >> 16),
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

#[test]
fn code_reading_its_fetch_count_sees_every_fetch_before_it() {
    // Straight-line code reads its instruction cache's access count (L1I
    // block at 0x100, accesses at +0x20) in the middle of a block, where
    // the fetches before it in the same line are counted, not looked up.
    let words = [lui(8, MMIO_BASE >> 16), addiu(9, 0, 1), addiu(9, 9, 1), addiu(9, 9, 1), lw(4, 0x120, 8), addiu(9, 9, 1), addiu(9, 9, 1), lw(5, 0x120, 8)];
    let config = SystemConfig { caches: Some(HierarchyConfig::default()), ..Default::default() };
    let whole = run_in_slices(&words, &config, 1_000_000);
    assert_eq!((whole.0[4], whole.0[5]), (5, 8));
    assert_eq!(run_in_slices(&words, &config, 1), whole);
}

#[test]
fn a_line_locked_over_the_running_code_is_fetched_again() {
    // A direct-mapped 1 KiB L1I: code locks the line 1 KiB above its own
    // (range base at 0x10C, length at 0x110 of the L1I block), which takes
    // the set of the line it runs in; its next instruction misses. With
    // memory at no cost, the lock itself does not stall.
    let words = [
        lui(8, MMIO_BASE >> 16),
        lui(9, TEXT >> 16),
        addiu(9, 9, 0x400),
        sw(9, 0x10C, 8),
        addiu(10, 0, 32),
        sw(10, 0x110, 8),
        addiu(11, 0, 1),
        addiu(11, 11, 1),
    ];
    let l1i = irqsim_mips::cache::Geometry { size_bytes: 1024, ways: 1, line_bytes: 32, hit_cycles: 0 };
    let config = SystemConfig { caches: Some(HierarchyConfig { l1i, memory_cycles: 0, ..Default::default() }), ..Default::default() };
    let whole = run_in_slices(&words, &config, 1_000_000);
    assert_eq!(whole.3[0].1, 3, "the first line, the first again, the exit's line");
    assert_eq!(run_in_slices(&words, &config, 1), whole);
}

/// Records every issue the [`Devices::issued`] hook reports, and with
/// `BLOCKS` those [`Devices::issued_block`] reports (how many calls).
#[derive(Default)]
struct Issues<const BLOCKS: bool>(Vec<(usize, u32, u64)>, u64);

impl<const BLOCKS: bool> Devices for Issues<BLOCKS> {
    fn read(&mut self, _: u32, _: Access) -> Result<(u32, u32), String> {
        Err("none".into())
    }
    fn write(&mut self, _: u32, _: u32, _: u32, _: Access) -> Result<u32, String> {
        Err("none".into())
    }
    fn issued(&mut self, thread: usize, pc: u32, cycle: u64) {
        self.0.push((thread, pc, cycle));
    }
    const BLOCK_HOOK: bool = BLOCKS;
    fn issued_block(&mut self, thread: usize, pc: u32, t0: u64, steps: &[Step]) {
        self.1 += 1;
        for (j, s) in steps.iter().enumerate() {
            self.0.push((thread, pc + 4 * j as u32, t0 + u64::from(s.off)));
        }
    }
}

/// Every issue of `words` on `config` run in slices of `step` cycles, as
/// the hooks report them, checked for order and count; and the block hook's calls.
fn issues<const BLOCKS: bool>(words: &[u32], config: &SystemConfig, step: u64) -> (Vec<(usize, u32, u64)>, u64) {
    let exit = TEXT + 4 * (words.len() as u32 + 1);
    let mut s = System::new(program(words, 4096), config, Issues::<BLOCKS>::default());
    for k in 0..config.cores {
        for t in 0..config.threads {
            let stack = 0x7000_0000 - 0x1000 * s.thread_id(k, t) as u32;
            s.start(k, t, Context::at(TEXT, stack), 3 * t as u64);
        }
    }
    let mut until = step;
    while s.run(until) == Stop::Limit {
        until += step;
    }
    for k in 0..config.cores {
        for t in 0..config.threads {
            let id = s.thread_id(k, t);
            let n = s.devices.0.iter().filter(|i| i.0 == id).count() as u64;
            assert_eq!(n, s.cores[k].threads[t].instructions, "{config:?}");
        }
    }
    // In (cycle, thread) order, one issue per thread and cycle at most
    // (one per core with one core); the last is an exit's syscall.
    assert!(s.devices.0.windows(2).all(|w| (w[0].2, w[0].0) < (w[1].2, w[1].0)), "{config:?}");
    if config.cores == 1 {
        assert!(s.devices.0.windows(2).all(|w| w[0].2 < w[1].2), "{config:?}");
    }
    assert_eq!(s.devices.0.last().map(|i| i.1), Some(exit));
    (std::mem::take(&mut s.devices.0), s.devices.1)
}

#[test]
fn every_issue_is_reported_once_with_its_cycle_whole_or_in_slices() {
    // `mixed` between two reads of the cycle register (a block leaves after
    // a device access), with a branch not taken and one taken, each with an
    // arithmetic delay slot, before the second.
    let mut words = vec![lui(16, MMIO_BASE >> 16), lw(17, 0, 16)];
    words.extend(mixed());
    words.extend([bne(0, 0, 5), addiu(19, 0, 1), beq(0, 0, 1), addiu(19, 19, 1), addiu(20, 0, 9), lw(18, 0, 16)]);
    let caches = Some(HierarchyConfig::default());
    let configs = [
        SystemConfig::default(),
        SystemConfig { caches, ..Default::default() },
        SystemConfig { threads: 2, ..Default::default() },
        SystemConfig { threads: 2, caches, ..Default::default() },
        SystemConfig { cores: 2, caches, ..Default::default() },
    ];
    for config in &configs {
        let (whole, _) = issues::<false>(&words, config, 1_000_000);
        // Told a block at a time, the same issues in the same order.
        let (blocks, calls) = issues::<true>(&words, config, 1_000_000);
        assert_eq!(blocks, whole, "{config:?} by blocks");
        if config.threads == 1 && config.caches.is_none() {
            assert!(calls > 0, "{config:?}: blocks ran whole");
        }
        for step in [1, 2, 3, 5] {
            assert_eq!(issues::<false>(&words, config, step).0, whole, "{config:?} in slices of {step} cycles");
            assert_eq!(issues::<true>(&words, config, step).0, whole, "{config:?} by blocks in slices of {step} cycles");
        }
    }
}

/// Blocks that branch back to themselves, one with nothing in flight as
/// it starts again, one with its slot's load in flight: whole and in
/// slices, each limit falling at another place in them, every instruction
/// issues at the same cycle, and none at or past its slice's limit.
#[test]
fn a_block_looping_to_itself_issues_as_one_instruction_at_a_time() {
    let words = [
        lui(8, 0x1000),
        addiu(9, 0, 30),
        sw(9, 0, 8), // loop: 2
        addiu(8, 8, 4),
        addiu(9, 9, -1),
        bne(9, 0, -4),   // back to 2
        addu(10, 10, 9), // slot
        addiu(9, 0, 5),
        beq(0, 0, 1),     // to 10
        addiu(13, 0, 1),  // slot
        addu(11, 11, 12), // loop: 10, waits for the slot's load
        addiu(9, 9, -1),
        bne(9, 0, -3), // back to 10
        lw(12, -4, 8), // slot: its result in flight as the block starts again
    ];
    for config in [SystemConfig::default(), SystemConfig { caches: Some(HierarchyConfig::default()), ..Default::default() }] {
        let issues = |step: u64| {
            let mut s = System::new(program(&words, 4096), &config, Issues::<false>::default());
            s.start(0, 0, Context::at(TEXT, 0x7000_0000), 0);
            let mut until = step;
            while s.run(until) == Stop::Limit {
                assert!(s.devices.0.iter().all(|i| i.2 < until), "an issue at or past the limit {until}");
                until += step;
            }
            (s.cores[0].threads[0].ctx.r, std::mem::take(&mut s.devices.0))
        };
        let whole = issues(1_000_000);
        assert_eq!((whole.0[8], whole.0[10], whole.0[11]), (0x1000_0000 + 120, (0..30).sum(), 4));
        for step in [1, 2, 3, 4, 5, 6, 7, 11, 13] {
            assert_eq!(issues(step), whole, "slices of {step} cycles");
        }
    }
}

/// A jump to a misaligned address faults there, even where the aligned
/// address below it starts a block already built (its lookup must not find it).
#[test]
fn a_jump_to_a_misaligned_address_faults_beside_a_built_block() {
    let jr = |s: u32| r(8, s, 0, 0, 0);
    let words = [lui(8, TEXT >> 16), i(13, 8, 8, 0x10), jr(8), NOP, addiu(9, 9, 1), i(13, 8, 8, 0x12), jr(8), NOP];
    let mut s = system(program(&words, 0), &SystemConfig::default());
    match s.run(1_000) {
        Stop::Fault { error, .. } => assert!(error.to_string().contains("0x00400012"), "{error}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(s.cores[0].threads[0].ctx.r[9], 1, "the block at the aligned address ran once");
}

/// A block goes on past a branch not taken and its slot (see
/// `irqsim_mips::exec::Cond::inner`): a slot's load in flight into the
/// instructions after it, a branch within the block taken on some
/// iterations (its slot then runs after the taken branch's penalty),
/// another on the last. Whole and in slices, with and without caches, told
/// one by one or a block at a time: every instruction issues at the same cycle.
#[test]
fn a_block_going_on_past_a_branch_not_taken_issues_as_one_instruction_at_a_time() {
    let words = [
        lui(8, 0x1000),
        addiu(9, 0, 12),
        i(12, 9, 10, 3),  // loop: 2, andi
        bne(10, 0, 2),    // to 6 three times in four
        lw(11, 0, 8),     // slot: its result in flight into 5
        addu(12, 12, 11), // 5
        addiu(9, 9, -1),  // 6
        sw(9, 0, 8),      // what 4 loads next
        beq(9, 0, 2),     // to 11 on the last round
        addiu(13, 13, 1), // slot
        beq(0, 0, -9),    // back to 2, always
        addu(14, 14, 9),  // 11, the slot
    ];
    for config in [SystemConfig::default(), SystemConfig { caches: Some(HierarchyConfig::default()), ..Default::default() }] {
        let whole = run_in_slices(&words, &config, 1_000_000);
        // The loads at 12, 8 and 4 see 0, 8 and 4; every round's slot at 9 runs; 11 to 1, then 0.
        assert_eq!((whole.0[12], whole.0[13], whole.0[14]), (12, 12, 66), "{config:?}");
        for step in [1, 2, 3, 4, 5, 6, 7, 9, 11, 13] {
            assert_eq!(run_in_slices(&words, &config, step), whole, "{config:?} in slices of {step} cycles");
        }
        let (one_by_one, _) = issues::<false>(&words, &config, 1_000_000);
        for step in [1_000_000, 1, 2, 3, 5, 7] {
            assert_eq!(issues::<true>(&words, &config, step).0, one_by_one, "{config:?} by blocks in slices of {step} cycles");
            assert_eq!(issues::<false>(&words, &config, step).0, one_by_one, "{config:?} in slices of {step} cycles");
        }
    }
}

/// A block's step skips its fetch (one in the line before it, or a loop's
/// round run again) only where it would hit: not where a miss may cost
/// nothing (L2 and memory free) and be served without allocating (every
/// L1I set reserved for another thread), so that every fetch misses.
#[test]
fn a_loop_round_fetches_again_where_a_free_miss_allocates_nothing() {
    let words = [addiu(9, 0, 20), addiu(10, 10, 3), addiu(9, 9, -1), bne(9, 0, -3), addu(11, 11, 10)];
    let l2 = irqsim_mips::cache::Geometry { hit_cycles: 0, ..HierarchyConfig::default().l2 };
    let config = SystemConfig { caches: Some(HierarchyConfig { l2, memory_cycles: 0, ..Default::default() }), ..Default::default() };
    let run = |step: u64| {
        let mut s = system(program(&words, 0), &config);
        let l1i = &mut s.caches.as_mut().unwrap().l1i[0];
        let sets = l1i.geometry.sets();
        l1i.pin.reserve_sets(1, 0, sets, sets).unwrap();
        let mut until = step;
        while s.run(until) == Stop::Limit {
            until += step;
        }
        (s.cores[0].threads[0].ctx.r[11], s.cores[0].now, s.caches.unwrap().l1i[0].total())
    };
    let whole = run(1_000_000);
    assert_eq!(whole.2.misses, whole.2.accesses, "every fetch misses");
    assert_eq!(run(1), whole);
}

/// With caches, a block entered while a load is still in flight starts
/// when its first step's operand arrives (`Block::held_start`), but its
/// first fetch starts at entry: a miss there stalls from then, as one
/// instruction at a time counts it.
#[test]
fn a_block_held_by_a_load_fetches_from_its_entry() {
    // A jump whose slot loads (and misses), to a cold line whose first instruction uses the load.
    let mut words = vec![lui(8, 0x1000), jal(16), lw(10, 0, 8)];
    words.resize(16, NOP);
    words.extend([addu(11, 10, 10), addiu(12, 11, 1)]);
    let config = SystemConfig { caches: Some(HierarchyConfig::default()), ..Default::default() };
    let whole = run_in_slices(&words, &config, 1_000_000);
    assert_eq!(whole.0[12], 1);
    assert_eq!(run_in_slices(&words, &config, 1), whole);
}

/// A run of blocks skips the fetches of lines it fetched before only while
/// those lines are consecutive and no more than the instruction cache's
/// sets, so that each is its set's most recently used: a loop over nine
/// lines of an eight-set two-way cache fetches its first line again each
/// round, which decides the line a later fetch into that set evicts.
#[test]
fn a_loop_of_blocks_over_more_lines_than_sets_fetches_again() {
    // Lines 1 to 9: a round from 8 back from 72; on the fourth it leaves from line 1 to line 17
    // (set 1: it evicts the older of lines 1 and 9), which jumps to the exit in line 9.
    let mut words = vec![addiu(9, 0, 4)];
    words.resize(8, NOP);
    words.extend([addiu(9, 9, -1), beq(9, 0, 126)]);
    words.resize(72, NOP);
    words.extend([beq(0, 0, -65), NOP, addiu(2, 0, 4001), SYSCALL]);
    words.resize(136, NOP);
    words.extend([beq(0, 0, -63), NOP]);
    let l1i = irqsim_mips::cache::Geometry { size_bytes: 512, ways: 2, ..HierarchyConfig::default().l1i };
    let config = SystemConfig { caches: Some(HierarchyConfig { l1i, ..Default::default() }), ..Default::default() };
    let whole = run_in_slices(&words, &config, 1_000_000);
    assert_eq!(whole.0[9], 0);
    assert_eq!(run_in_slices(&words, &config, 1), whole);
}

/// With caches a block goes on after a load that misses only where every
/// later step waits, if at all, for that load or a later step: here the
/// step after the miss waits for the load before it, whose result the
/// stall does not delay, so it issues earlier than its offset moved by the
/// stall, as one instruction at a time has it.
#[test]
fn a_block_goes_on_after_a_miss_only_where_the_stall_moves_every_later_step() {
    let words = [
        lui(8, 0x1000),
        addiu(9, 0, 20),
        addu(13, 8, 0),
        lw(10, 0, 8),     // loop: 3, hits after the first round
        lw(11, 1024, 13), // a new line each round: misses
        addu(12, 10, 10), // waits for $10, not $11
        addiu(13, 13, 32),
        addiu(9, 9, -1),
        bne(9, 0, -6),
        NOP,
    ];
    let config = SystemConfig { caches: Some(HierarchyConfig::default()), ..Default::default() };
    let whole = run_in_slices(&words, &config, 1_000_000);
    assert!(whole.3[1].1 >= 20, "a miss a round: {:?}", whole.3);
    assert_eq!(run_in_slices(&words, &config, 1), whole);
}
