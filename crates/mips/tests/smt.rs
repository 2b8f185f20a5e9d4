//! SMT issue sharing under each policy, the interrupt-reserved thread,
//! ll/sc atomicity across cores, and device registers reached from code.

mod common;
use common::*;
use irqsim_mips::core::Policy;
use irqsim_mips::device::MMIO_BASE;
use irqsim_mips::elf::{Program, Segment};
use irqsim_mips::hierarchy::HierarchyConfig;
use irqsim_mips::{Context, Stop, System, SystemConfig};

/// Text with thread 0's code at TEXT and thread 1's at TEXT + 0x1000.
fn two_programs(a: &[u32], b: &[u32]) -> Program {
    let mut words = vec![NOP; 0x1000 / 4 + b.len()];
    words[..a.len()].copy_from_slice(a);
    words[0x1000 / 4..].copy_from_slice(b);
    let text: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
    let n = text.len() as u32;
    let segments = vec![Segment { vaddr: TEXT, data: text, memsz: n, executable: true }, Segment { vaddr: DATA, data: vec![], memsz: 4096, executable: false }];
    Program { name: "smt".into(), entry: TEXT, segments, sections: vec![], symbols: vec![] }
}

fn smt(a: &[u32], b: &[u32], policy: Policy, interrupt_thread: Option<usize>) -> System {
    let c = SystemConfig { threads: 2, policy, interrupt_thread, ..Default::default() };
    let mut s = System::new(two_programs(a, b), &c, irqsim_mips::device::NoDevices);
    s.start(0, 0, Context::at(TEXT, 0x7000_0000), 0);
    s.start(0, 1, Context::at(TEXT + 0x1000, 0x6000_0000), 0);
    s
}

fn counts(s: &System) -> (u64, u64) {
    (s.cores[0].threads[0].instructions, s.cores[0].threads[1].instructions)
}

const ALU: [u32; 400] = [0x2508_0001; 400]; // addiu $8, $8, 1

fn loads() -> Vec<u32> {
    // lui $9, DATA; then independent loads into $10 (never used).
    std::iter::once(lui(9, DATA >> 16)).chain(std::iter::repeat_n(lw(10, 0, 9), 399)).collect()
}

#[test]
fn round_robin_alternates_ready_threads() {
    let mut s = smt(&ALU, &ALU, Policy::RoundRobin, None);
    assert_eq!(s.run(100), Stop::Limit);
    assert_eq!(counts(&s), (50, 50));
    // Loads whose results nobody waits for do not change round-robin's turns.
    let mut s = smt(&loads(), &ALU, Policy::RoundRobin, None);
    s.run(100);
    assert_eq!(counts(&s), (50, 50));
}

#[test]
fn icount_prefers_the_thread_with_fewer_results_in_flight() {
    // Thread 0's load at cycle c is in flight until c + 3 (issue, then the
    // 2-cycle load delay), so thread 1 takes cycles c+1 and c+2. Thread 0
    // issues its lui at 0 and loads at 2, 5, ..., 98: 1 + 33 of 99 cycles.
    let mut s = smt(&loads(), &ALU, Policy::Icount, None);
    s.run(99);
    assert_eq!(counts(&s), (34, 65));
    // With nothing in flight ICOUNT falls back to round-robin order.
    let mut s = smt(&ALU, &ALU, Policy::Icount, None);
    s.run(100);
    assert_eq!(counts(&s), (50, 50));
}

#[test]
fn a_stalled_thread_gives_up_its_slot() {
    // Thread 0 waits on every load's result (lw then use); thread 1 fills the gaps.
    let dependent: Vec<u32> = std::iter::once(lui(9, DATA >> 16)).chain((0..199).flat_map(|_| [lw(10, 0, 9), addu(11, 10, 10)])).collect();
    let mut s = smt(&dependent, &ALU, Policy::RoundRobin, None);
    s.run(300);
    let (a, b) = counts(&s);
    assert_eq!(a + b, 300, "the issue slot is never idle while thread 1 is ready");
    assert!(b > a, "{a} {b}");
}

#[test]
fn the_interrupt_thread_issues_first_when_it_has_work() {
    let mut s = smt(&ALU, &ALU, Policy::RoundRobin, Some(1));
    s.run(100);
    assert_eq!(counts(&s), (0, 100));
    // Once it is done (here: taken away), the other thread gets every slot.
    s.stop(0, 1);
    s.run(200);
    assert_eq!(counts(&s), (100, 100));
}

#[test]
fn preemption_at_an_instruction_boundary_resumes_exactly() {
    // Run the loop program in slices of 7 cycles, taking the context away and back each time.
    let words = [addiu(8, 0, 50), addiu(8, 8, -1), addu(9, 9, 8), bne(8, 0, -3), NOP];
    let config = SystemConfig::default();
    let whole = cycles_to_exit(&words, &config);
    let mut s = system(program(&words, 0), &config);
    let mut t = 0;
    loop {
        t += 7;
        match s.run(t) {
            Stop::Limit => {
                let ctx = s.stop(0, 0);
                let now = s.cores[0].now;
                s.start(0, 0, ctx, now);
            }
            Stop::Syscall { .. } => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(s.cores[0].threads[0].ctx.r[9], (1..50).sum::<u32>());
    assert!(s.cores[0].now >= whole, "a preempted thread never finishes earlier");
}

#[test]
fn ll_sc_is_atomic_across_cores() {
    // 100 times: retry: ll $10,0($9); addiu $10,1; sc $10,0($9); beq $10,$0,retry; nop
    let body = [i(48, 9, 10, 0), addiu(10, 10, 1), i(56, 9, 10, 0), beq(10, 0, -4), NOP];
    let mut words = vec![lui(9, DATA >> 16), addiu(8, 0, 100)];
    words.extend(body);
    words.extend([addiu(8, 8, -1), bne(8, 0, -7), NOP]);
    for cores in [2, 3] {
        for caches in [None, Some(HierarchyConfig::default())] {
            let c = SystemConfig { cores, caches, ..Default::default() };
            let mut s = system(program(&words, 4096), &c);
            let mut exited = 0;
            while exited < cores {
                match s.run(1 << 30) {
                    Stop::Syscall { core, thread } => {
                        s.stop(core, thread);
                        exited += 1;
                    }
                    other => panic!("{other:?}"),
                }
            }
            assert_eq!(s.mem.read_u32(DATA), 100 * cores as u32, "{cores} cores, caches {}", caches.is_some());
        }
    }
}

#[test]
fn code_reads_the_cycle_counter_and_sets_way_masks() {
    let base = lui(9, MMIO_BASE >> 16);
    let words = [base, addiu(8, 0, 0b01), sw(8, 0x300, 9), lw(10, 0x300, 9), lw(11, 0, 9), lw(12, 0x0C, 9)];
    let c = SystemConfig { caches: Some(HierarchyConfig::default()), ..Default::default() };
    let mut s = system(program(&words, 0), &c);
    assert!(matches!(s.run(1 << 20), Stop::Syscall { .. }));
    let ctx = &s.cores[0].threads[0].ctx;
    assert_eq!(ctx.r[10], 1, "L2 way mask read back");
    assert!(ctx.r[11] > 4 && (ctx.r[11] as u64) < s.cores[0].now, "cycle counter");
    assert_eq!(ctx.r[12], 0, "core 0, thread 0");
    assert_eq!(s.caches.as_mut().unwrap().l2[0].pin.way_mask(0), 1);
    // A bad mask stops the thread with the register's address.
    let words = [base, addiu(8, 0, 0b101), sw(8, 0x300, 9)];
    let mut s = system(program(&words, 0), &c);
    match s.run(1 << 20) {
        Stop::Fault { error, .. } => assert!(error.to_string().contains("device register 0xbf000300"), "{error}"),
        other => panic!("{other:?}"),
    }
    // Registers beyond the built-in block belong to the machine's devices; here there are none.
    let words = [lui(9, 0xBF01), lw(10, 0, 9)];
    let mut s = system(program(&words, 0), &SystemConfig::default());
    match s.run(1 << 20) {
        Stop::Fault { error, .. } => assert!(error.to_string().contains("0xbf010000: no device"), "{error}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_called_activity_returns() {
    // f(a0) = a0 * 2 + 1, called through Context::call; `jr $ra` ends it.
    let words = [addu(2, 4, 4), r(8, 31, 0, 0, 0), addiu(2, 2, 1)];
    let mut s = System::new(program(&words, 0), &SystemConfig::default(), irqsim_mips::device::NoDevices);
    s.start(0, 0, Context::call(TEXT, 0x7000_0000, &[20]), 0);
    assert_eq!(s.run(1000), Stop::Returned { core: 0, thread: 0 });
    assert_eq!(s.cores[0].threads[0].ctx.r[2], 41);
    assert_eq!(s.run(1000), Stop::Idle);
}

#[test]
fn l2_shared_or_private_per_core() {
    // Two cores read the same 64 lines: a shared L2 misses on each line once
    // (the second core finds the first one's lines), private L2s twice.
    let words = [lui(8, DATA >> 16), addiu(9, 8, 4096), lw(10, 0, 8), addiu(8, 8, 64), bne(8, 9, -3), NOP];
    let run = |shared: bool| {
        let h = HierarchyConfig { l2_shared: shared, ..Default::default() };
        let c = SystemConfig { cores: 2, caches: Some(h), ..Default::default() };
        let mut s = system(program(&words, 4096), &c);
        for _ in 0..2 {
            match s.run(1 << 30) {
                Stop::Syscall { core, thread } => drop(s.stop(core, thread)),
                other => panic!("{other:?}"),
            }
        }
        let h = s.caches.as_ref().unwrap();
        (h.l2.len(), h.l2.iter().map(|c| c.total().misses).sum::<u64>())
    };
    // Plus the text: 8 words, one 64-byte L2 line.
    assert_eq!(run(true), (1, 64 + 1));
    assert_eq!(run(false), (2, 2 * (64 + 1)));
}

/// Thread 0 loops over a load-use chain and a multiply; thread 1 strides
/// through 16 KiB of data, missing in a small L1 so that each thread often
/// has the issue slot to itself (the windows the run gives one thread alone).
fn stalling_pair(policy: Policy, interrupt_thread: Option<usize>) -> System {
    let a = [lui(8, DATA >> 16), lw(10, 0, 8), addu(11, 10, 10), mult(11, 11), mflo(12), sw(12, 0, 8), beq(0, 0, -6), addiu(13, 13, 1)];
    let b = [lui(8, DATA >> 16), lw(10, 0, 8), addiu(8, 8, 64), addu(11, 11, 10), beq(0, 0, -4), addiu(13, 13, 1)];
    let mut caches = HierarchyConfig::default();
    caches.l1d.size_bytes = 1024;
    let c = SystemConfig { threads: 2, policy, interrupt_thread, caches: Some(caches), ..Default::default() };
    let mut words = vec![NOP; 0x1000 / 4 + b.len()];
    words[..a.len()].copy_from_slice(&a);
    words[0x1000 / 4..].copy_from_slice(&b);
    let text: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
    let n = text.len() as u32;
    let segments =
        vec![Segment { vaddr: TEXT, data: text, memsz: n, executable: true }, Segment { vaddr: DATA, data: vec![], memsz: 1 << 16, executable: false }];
    let p = Program { name: "smt".into(), entry: TEXT, segments, sections: vec![], symbols: vec![] };
    let mut s = System::new(p, &c, irqsim_mips::device::NoDevices);
    s.start(0, 0, Context::at(TEXT, 0x7000_0000), 0);
    s.start(0, 1, Context::at(TEXT + 0x1000, 0x6000_0000), 0);
    s
}

#[test]
fn threads_alone_in_the_slot_issue_as_cycle_by_cycle_sharing_would() {
    // Instructions per thread, busy cycles and L1D misses after 20,000
    // cycles in slices of 997, as the cycle-by-cycle loop (before threads
    // ran alone while the others waited) gave them at commit d1c6aef.
    let expected = [
        (Policy::RoundRobin, None, (6846, 837, 7683, 168)),
        (Policy::Icount, None, (6850, 837, 7687, 168)),
        (Policy::RoundRobin, Some(1), (6843, 842, 7685, 169)),
    ];
    for (policy, interrupt_thread, want) in expected {
        let mut s = stalling_pair(policy, interrupt_thread);
        for until in (997..20_000).step_by(997).chain([20_000]) {
            assert_eq!(s.run(until), Stop::Limit);
        }
        let misses = s.caches.as_ref().unwrap().l1d[0].total().misses;
        let got = (s.cores[0].threads[0].instructions, s.cores[0].threads[1].instructions, s.cores[0].busy_cycles, misses);
        assert_eq!(got, want, "{policy:?}, interrupt thread {interrupt_thread:?}");
    }
}

#[test]
fn two_threads_take_turns_as_on_a_core_with_an_idle_third() {
    // Both threads add to one shared word (load, add, store: their turns
    // decide which updates are lost) and interlock on the load. A core of
    // two takes its own path (`interleave`'s `Pair`, or `Reserved` with a
    // thread reserved for interrupts); beside an idle third thread the same
    // pair goes the general way, and must give the same.
    let a = [lui(8, DATA >> 16), lw(10, 0, 8), addiu(10, 10, 1), sw(10, 0, 8), mult(10, 10), mflo(11), beq(0, 0, -6), addiu(13, 13, 1)];
    let b = [lui(8, DATA >> 16), lw(10, 0, 8), addiu(10, 10, 3), sw(10, 0, 8), beq(0, 0, -4), addiu(13, 13, 1)];
    let run = |threads: usize, caches: Option<HierarchyConfig>, interrupt_thread: Option<usize>| {
        let c = SystemConfig { threads, caches, interrupt_thread, ..Default::default() };
        let mut s = System::new(two_programs(&a, &b), &c, irqsim_mips::device::NoDevices);
        s.start(0, 0, Context::at(TEXT, 0x7000_0000), 0);
        s.start(0, 1, Context::at(TEXT + 0x1000, 0x6000_0000), 0);
        for until in (0..5_000).step_by(331).skip(1).chain([5_000]) {
            assert_eq!(s.run(until), Stop::Limit);
        }
        (counts(&s), s.cores[0].busy_cycles, s.mem.read_u32(DATA), s.cores[0].threads[0].ctx.r[13])
    };
    for caches in [None, Some(HierarchyConfig::default())] {
        let pair = run(2, caches, None);
        assert_eq!(pair, run(3, caches, None), "caches: {}", caches.is_some());
        assert!(pair.0.0 > 1000 && pair.0.1 > 1000, "{pair:?}");
        // The reserved thread issues whenever it is ready; the other fills its waits.
        for r in [0, 1] {
            let pair = run(2, caches, Some(r));
            assert_eq!(pair, run(3, caches, Some(r)), "caches: {}, thread {r} reserved", caches.is_some());
            assert!(pair.0.0 > 200 && pair.0.1 > 200, "{pair:?}");
        }
    }
}

#[test]
fn a_pair_by_schedules_runs_as_the_cycle_loop() {
    // Two busy threads of a round-robin pair with perfect memory run by
    // schedules computed once (`crate::duet`); with one thread reserved for
    // interrupts or with caches, by the pair's cycle loop. Beside an idle
    // third thread the same pair goes cycle by cycle. Thread 0 loops
    // through a load-use interlock, a divide and its wait, a call and return (jal, jr), a
    // branch-likely whose slot is annulled every other time; thread 1 adds
    // to a word thread 0 loads and now and then rewrites an instruction of
    // thread 0's loop (the text changes under both).
    let andi = |t, s, imm| i(12, s, t, imm);
    let or = |d, s, t| r(37, s, t, d, 0);
    let jal = |w: u32| (3 << 26) | ((TEXT >> 2) + w);
    let jr31 = r(8, 31, 0, 0, 0);
    let mut a = vec![NOP; 24];
    let loop_a = [
        lui(8, DATA >> 16),
        addiu(9, 0, 7),
        lw(10, 0, 8),
        addu(11, 10, 10),
        div(11, 9),
        addiu(14, 14, 1),
        mflo(12),
        sw(12, 4, 8),
        addiu(15, 15, 1),
        jal(20),
        addiu(18, 18, 1),
        andi(16, 15, 1),
        i(21, 16, 0, 1), // bnel $16, $0, +1
        addiu(17, 17, 1),
        beq(0, 0, -13),
        addiu(13, 13, 1),
    ];
    a[..loop_a.len()].copy_from_slice(&loop_a);
    a[20..23].copy_from_slice(&[addu(19, 19, 15), jr31, addiu(20, 20, 1)]);
    let b = [
        lui(8, DATA >> 16),
        lui(21, TEXT >> 16),
        lui(23, 0x25ce), // addiu $14, $14, 0
        lw(10, 0, 8),
        addiu(10, 10, 3),
        sw(10, 0, 8),
        andi(26, 10, 0x30),
        bne(26, 0, 3),
        andi(24, 10, 0xf),
        or(25, 23, 24),
        sw(25, 20, 21),
        beq(0, 0, -9),
        addiu(27, 27, 1),
    ];
    // Caches of the default geometry, and a direct-mapped L1I of 512 bytes
    // in which the two threads' loops (0x1000 apart) evict each other's lines.
    let mut small = HierarchyConfig::default();
    (small.l1i.size_bytes, small.l1i.ways, small.l1d.size_bytes) = (512, 1, 1024);
    let run = |threads: usize, slice: u64, caches: Option<HierarchyConfig>, interrupt_thread: Option<usize>| {
        let c = SystemConfig { threads, caches, interrupt_thread, ..Default::default() };
        let mut s = System::new(two_programs(&a, &b), &c, irqsim_mips::device::NoDevices);
        s.start(0, 0, Context::at(TEXT, 0x7000_0000), 0);
        s.start(0, 1, Context::at(TEXT + 0x1000, 0x6000_0000), 0);
        for until in (0..20_000).step_by(slice as usize).skip(1).chain([20_000]) {
            assert_eq!(s.run(until), Stop::Limit);
        }
        let th = &s.cores[0].threads;
        let regs = [&th[0].ctx, &th[1].ctx].map(|c| (c.r[..32].to_vec(), c.hi, c.lo, c.pc, c.npc));
        let caches = s.caches.as_ref().map(|h| [&h.l1i, &h.l1d, &h.l2].map(|l| l[0].counts[..2].to_vec()));
        (counts(&s), s.cores[0].busy_cycles, s.cores[0].now, regs, [DATA, DATA + 4, TEXT + 20].map(|w| s.mem.read_u32(w)), caches)
    };
    for (caches, reserved) in [None, Some(HierarchyConfig::default()), Some(small)].into_iter().flat_map(|c| [None, Some(0), Some(1)].map(|r| (c, r))) {
        for slice in [331, 7, 1] {
            let pair = run(2, slice, caches, reserved);
            let why = format!("slices of {slice}, caches {:?}, reserved {reserved:?}", caches.map(|c| c.l1i.size_bytes));
            assert_eq!(pair, run(3, slice, caches, reserved), "{why}");
            let (n, regs) = (pair.0, &pair.3);
            assert!(n.0 > 1000 && n.1 > 1000, "{n:?} {why}");
            // Calls, annulled slots and rewrites all happened.
            assert!(regs[0].0[20] > 50 && regs[0].0[17] > 25 && regs[0].0[17] < regs[0].0[15], "{regs:?} {why}");
            assert_ne!(pair.4[2], addiu(14, 14, 1), "thread 1 rewrote thread 0's text ({why})");
        }
    }
}

#[test]
fn a_chain_of_schedules_ends_at_a_text_write_as_the_cycle_loop_would() {
    // A chain of schedules (`crate::duet`, each linked after a branch)
    // leaves the threads' fetched instructions to its end. Both threads
    // loop through a call, a return and a branch back (their loops as long,
    // so the same schedules follow each other every time); thread 0's three
    // delay slots differ. Thread 1 stores every time round, into the text
    // one time in 64: that store ends a chain before thread 0, waiting
    // after its branch, issues in the schedule.
    let jal = |w: u32| (3 << 26) | ((TEXT >> 2) + w);
    let jr31 = r(8, 31, 0, 0, 0);
    // Both loops: ops 0 and 1, a call (slot: op 2), op 3 on return, a branch back (slot: op 4);
    // the called code: op 5, a return (slot: op 6).
    let lay = |base: u32, ops: [u32; 7]| {
        let mut w = vec![NOP; 12];
        w[..7].copy_from_slice(&[ops[0], ops[1], jal(base + 9), ops[2], ops[3], beq(0, 0, -6), ops[4]]);
        w[9..12].copy_from_slice(&[ops[5], jr31, ops[6]]);
        w
    };
    let a = lay(0, [8, 9, 10, 11, 12, 13, 16].map(|r| addiu(r, r, 1)));
    let (sltiu, subu, xor, and) = (|t, s, imm| i(11, s, t, imm), |d, s, t| r(35, s, t, d, 0), |d, s, t| r(38, s, t, d, 0), |d, s, t| r(36, s, t, d, 0));
    // $15: DATA, or the text word when $10 % 64 was 0 (picked without a branch); the store
    // comes where it issues first in a schedule linked after thread 0's branch.
    let ops = [sltiu(12, 11, 1), subu(13, 0, 12), and(13, 13, 14), xor(15, 8, 13), sw(10, 0, 15), addiu(10, 10, 1), i(12, 10, 11, 63)];
    let mut b = vec![lui(8, DATA >> 16), lui(22, TEXT >> 16), addiu(22, 22, 0x800), xor(14, 8, 22)];
    b.extend(lay(0x1000 / 4 + 4, ops));
    let run = |threads: usize| {
        let s = ran_40k(&a, &b, threads);
        (state(&s), [DATA, TEXT + 0x800].map(|w| s.mem.read_u32(w)))
    };
    let pair = run(2);
    assert_eq!(pair, run(3));
    assert!(pair.1[1] >= 64 * 20, "thread 1 wrote the text {} times", pair.1[1] / 64);
}

/// Threads 0 and 1 of a core of `threads` running `a` and `b` (two_programs) for 40,000 cycles.
fn ran_40k(a: &[u32], b: &[u32], threads: usize) -> System {
    let mut s = started(a, b, &SystemConfig { threads, ..Default::default() });
    assert_eq!(s.run(40_000), Stop::Limit);
    s
}

/// Threads 0 and 1 of core 0 started on `a` and `b` (two_programs).
fn started(a: &[u32], b: &[u32], c: &SystemConfig) -> System {
    let mut s = System::new(two_programs(a, b), c, irqsim_mips::device::NoDevices);
    s.start(0, 0, Context::at(TEXT, 0x7000_0000), 0);
    s.start(0, 1, Context::at(TEXT + 0x1000, 0x6000_0000), 0);
    s
}

/// A thread's registers, PC and next PC.
type Regs = (Vec<u32>, u32, u32);

/// Both threads' counts, registers, PC and next PC, and the core's busy cycles.
fn state(s: &System) -> ((u64, u64), u64, [Regs; 2]) {
    let th = &s.cores[0].threads;
    (counts(s), s.cores[0].busy_cycles, [&th[0].ctx, &th[1].ctx].map(|c| (c.r[..32].to_vec(), c.pc, c.npc)))
}

#[test]
fn a_pair_of_transfers_links_by_both_targets() {
    // Where one thread's branch issues right after the other's, a schedule
    // ends with both, decided in place (`crate::duet`'s pair), and the next
    // is linked by where each went. Thread 1's `jr` goes to one of two
    // paths of the same length, eight times each in turn; thread 0's loop
    // (25 instructions to thread 1's 9) drifts past it, so its branch comes
    // just before the `jr` at every alignment, the same way each time, the
    // `jr` one way at some times and the other way at others.
    let jr = |s| r(8, s, 0, 0, 0);
    let (andi, sll) = (|t, s, imm| i(12, s, t, imm), |d, t, sa| r(0, 0, t, d, sa));
    let mut a = vec![addiu(8, 8, 1); 23];
    a.extend([beq(0, 0, -24), addiu(9, 9, 1)]);
    let b = [
        lui(21, (TEXT + 0x1000) >> 16),
        addiu(21, 21, ((TEXT + 0x1000) & 0xffff) as i32 + 4 * 8),
        addiu(10, 10, 1),
        andi(16, 10, 8),
        sll(16, 16, 1),
        addu(17, 21, 16),
        jr(17),
        NOP,
        addiu(18, 18, 1),
        beq(0, 0, -8),
        NOP,
        NOP,
        addiu(19, 19, 1),
        beq(0, 0, -12),
        NOP,
    ];
    let pair = state(&ran_40k(&a, &b, 2));
    assert_eq!(pair, state(&ran_40k(&a, &b, 3)));
    let r1 = &pair.2[1].0;
    assert!(r1[18] > 1000 && r1[19] > 1000, "both paths taken: {} and {} times", r1[18], r1[19]);
}

#[test]
fn a_fault_in_a_schedules_body_stops_as_the_cycle_loop_would() {
    // A pair by schedules (`crate::duet`) runs the entries of a schedule's
    // body, up to its transfers, from a copy of them; an entry that faults
    // there is found again by its place in that copy, where the threads
    // are left as the cycle loop would leave them. Thread 0's `add`
    // overflows (a trap, not one of the simple operations) after about
    // 16,000 rounds of its loop, mid-schedule, while thread 1 keeps adding.
    let add = |d, s, t| r(32, s, t, d, 0);
    let a = [lui(11, 1), addu(8, 8, 11), addiu(9, 9, 1), add(10, 8, 8), addiu(12, 12, 1), beq(0, 0, -5), NOP];
    let b = [addiu(8, 8, 1), addiu(9, 9, 2), addiu(10, 10, 3), beq(0, 0, -4), NOP];
    let run = |threads: usize| {
        let mut s = started(&a, &b, &SystemConfig { threads, ..Default::default() });
        let stop = format!("{:?}", s.run(1_000_000));
        (stop, state(&s), s.cores[0].now)
    };
    let pair = run(2);
    assert_eq!(pair, run(3));
    assert!(pair.0.contains("Fault") && pair.0.contains("thread: 0"), "{}", pair.0);
    let (r0, r1) = (&pair.1.2[0].0, &pair.1.2[1].0);
    assert!(r0[9] > 16_000 && r1[8] > 16_000, "{} and {} rounds", r0[9], r1[8]);
}

#[test]
fn a_pairs_fetches_count_and_hit_as_each_threads_would_alone() {
    // A pair's run of cycles with caches counts its fetches when it ends and
    // looks a fetch up only when its thread changes lines
    // (`irqsim_mips::hierarchy::Lines`); as seen by code and by the caches,
    // the same as the cycle loop of a core of three. Thread 0 reads its L1I
    // access count in a loop within one line (set 2 of a direct-mapped
    // 512-byte L1I); thread 1 reads its own and locks a line of set 2 in
    // (evicting thread 0's, which misses at its next fetch), then unlocks it;
    // with no memory cycles the lock stalls nothing and the run goes on.
    let base = lui(9, MMIO_BASE >> 16);
    let mut a = vec![base; 16];
    a.extend([lw(10, 0x120, 9), addu(20, 20, 10), addiu(8, 8, 1), beq(0, 0, -4), NOP]);
    let b = [
        base,
        lui(11, TEXT >> 16),
        addiu(11, 11, 0x240),
        addiu(12, 0, 4),
        sw(11, 0x10C, 9),
        sw(12, 0x110, 9),
        sw(0, 0x118, 9),
        lw(10, 0x120, 9),
        addu(20, 20, 10),
        beq(0, 0, -6),
        addiu(21, 21, 1),
    ];
    let mut small = HierarchyConfig::default();
    (small.l1i.size_bytes, small.l1i.ways, small.memory_cycles) = (512, 1, 0);
    let run = |threads: usize| {
        let mut s = started(&a, &b, &SystemConfig { threads, caches: Some(small), ..Default::default() });
        assert_eq!(s.run(20_000), Stop::Limit);
        let h = s.caches.as_ref().unwrap();
        (state(&s), [&h.l1i, &h.l1d, &h.l2].map(|l| l[0].counts[..2].to_vec()))
    };
    let pair = run(2);
    assert_eq!(pair, run(3));
    let (regs, l1i) = (&pair.0.2, &pair.1[0]);
    assert!(regs[0].0[8] > 400 && regs[1].0[21] > 400, "both loops ran: {} and {} times", regs[0].0[8], regs[1].0[21]);
    assert!(l1i[0].misses > u64::from(regs[1].0[21] / 2), "thread 0 missed after most locks: {} misses", l1i[0].misses);
}
