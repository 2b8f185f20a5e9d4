//! Threads sharing the issue slot take their instructions from their blocks
//! by cursors (`interleave`); with `Core::cursors` off they fetch each from
//! the text, cycle by cycle. Both must give the same, cycle for cycle, under
//! every policy, with a reserved thread, with and without caches, and when
//! one thread rewrites the other's code.

mod common;
use common::*;
use irqsim_mips::core::Policy;
use irqsim_mips::elf::{Program, Segment};
use irqsim_mips::hierarchy::HierarchyConfig;
use irqsim_mips::{Context, Stop, System, SystemConfig};

/// Thread 0 adds to a shared word through an `addiu` that thread 1 keeps
/// rewriting (its immediate counts up), with a multiply and a load-use
/// interlock; thread 1 also strides through data (misses in a small L1D).
fn pair() -> Program {
    let a = [lui(8, DATA >> 16), lw(10, 0, 8), addiu(10, 10, 1), sw(10, 0, 8), mult(10, 10), mflo(11), beq(0, 0, -6), addiu(13, 13, 1)];
    // The address of thread 0's rewritten `addiu` (TEXT + 8) in $9.
    let b = [
        lui(9, TEXT >> 16),
        lui(8, DATA >> 16),
        lw(12, 8, 9),
        addiu(12, 12, 1),
        sw(12, 8, 9),
        lw(10, 64, 8),
        addiu(8, 8, 64),
        addu(11, 11, 10),
        bne(11, 9, -7),
        addiu(14, 14, 1),
    ];
    let mut words = vec![NOP; 0x1000 / 4 + b.len()];
    words[..a.len()].copy_from_slice(&a);
    words[0x1000 / 4..].copy_from_slice(&b);
    let text: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
    let n = text.len() as u32;
    let segments =
        vec![Segment { vaddr: TEXT, data: text, memsz: n, executable: true }, Segment { vaddr: DATA, data: vec![], memsz: 1 << 16, executable: false }];
    Program { name: "cursors".into(), entry: TEXT, segments, sections: vec![], symbols: vec![] }
}

/// Everything the run leaves that the two ways could differ in.
fn run(threads: usize, policy: Policy, interrupt_thread: Option<usize>, caches: bool, cursors: bool) -> String {
    let caches = caches.then(|| {
        let mut c = HierarchyConfig::default();
        c.l1d.size_bytes = 1024;
        c.l1i.size_bytes = 1024;
        c
    });
    let c = SystemConfig { threads, policy, interrupt_thread, caches, ..Default::default() };
    let mut s = System::new(pair(), &c, irqsim_mips::device::NoDevices);
    s.cores[0].cursors = cursors;
    s.start(0, 0, Context::at(TEXT, 0x7000_0000), 0);
    s.start(0, 1, Context::at(TEXT + 0x1000, 0x6000_0000), 0);
    for until in (0..8_000).step_by(331).skip(1).chain([8_000]) {
        assert_eq!(s.run(until), Stop::Limit);
    }
    let core = &s.cores[0];
    let th: Vec<_> = core.threads.iter().map(|t| (t.instructions, &t.ctx)).collect();
    let counts = s.caches.as_ref().map(|h| (h.l1i[0].total(), h.l1d[0].total(), h.l2[0].total()));
    format!("{:?} {} {} {:?} {:?} {:x}", th, core.now, core.busy_cycles, counts, s.mem.read_u32(DATA), s.mem.read_u32(TEXT + 8))
}

#[test]
fn cursors_issue_as_fetching_from_the_text_cycle_by_cycle() {
    for caches in [false, true] {
        for (threads, policy, reserved) in [
            (2, Policy::RoundRobin, None),
            (2, Policy::Icount, None),
            (2, Policy::RoundRobin, Some(0)),
            (2, Policy::Icount, Some(1)),
            (3, Policy::RoundRobin, None),
            (3, Policy::Icount, Some(2)),
        ] {
            let by_text = run(threads, policy, reserved, caches, false);
            assert_eq!(run(threads, policy, reserved, caches, true), by_text, "{threads} threads, {policy:?}, reserved {reserved:?}, caches {caches}");
        }
    }
    // The rewriting took effect: thread 0's `addiu` counts up.
    let s = run(2, Policy::RoundRobin, None, false, true);
    assert!(!s.ends_with(&format!("{:x}", addiu(10, 10, 1))), "{s}");
}
