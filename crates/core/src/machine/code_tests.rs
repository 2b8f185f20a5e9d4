//! Code on the machine, end to end with `programs/system/rx_min.c`: what the
//! program counts in its own memory must agree with what the machine
//! counts, whatever preempts it.

use super::{Machine, Record};
use crate::config::{Scenario, parse_override};
use crate::cpu::Bin;
use crate::report::Report;
use std::path::Path;

const SCENARIO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/irqsim/scenarios/code/rx-min.toml");

fn machine(sets: &[&str]) -> Machine {
    let overrides: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    let s = Scenario::from_file(Path::new(SCENARIO), &overrides).unwrap();
    let mut m = Machine::new(&s, Path::new(SCENARIO).parent().unwrap(), Record::default()).unwrap();
    m.simulate(&mut crate::monitor::Unwatched).unwrap();
    m
}

/// A 32-bit variable of the program after the run.
fn var(m: &Machine, name: &str) -> u64 {
    let code = m.code.as_ref().unwrap();
    u64::from(code.sys.mem.read_u32(code.sys.program.symbol(name).unwrap()))
}

fn report(m: Machine) -> Report {
    crate::checked(Report::new(m), "rx-min").expect("invariants hold")
}

#[test]
fn the_program_and_the_machine_count_the_same_frames() {
    count_the_same_frames(&["workload.rate_per_s=60000"]);
}

/// With caches, code's returns and interrupts fall at the same cycles in
/// other orders (a returned job must not run again before it completes).
#[test]
fn the_program_and_the_machine_count_the_same_frames_with_caches() {
    count_the_same_frames(&["workload.rate_per_s=20000", "code.core=[\"memory.model=caches\"]"]);
}

fn count_the_same_frames(sets: &[&str]) {
    let m = machine(sets);
    let (delivered, dropped, received) = (var(&m, "delivered"), var(&m, "dropped"), var(&m, "received"));
    let payload = var(&m, "app_bytes");
    let held = m.code.as_ref().unwrap().sys.devices.frames.len() as u64;
    let r = report(m);
    let metric = |k: &str| r.metric(k).unwrap() as u64;
    assert!(delivered > 100);
    assert!(metric("rx_dropped_nic") <= 1, "only a frame before init may find no descriptor");
    assert_eq!(delivered, metric("rx_delivered"));
    assert_eq!(dropped, metric("rx_dropped_software"));
    assert!(received >= delivered + dropped && received - delivered - dropped <= held);
    // The application's sum survives every interrupt that preempted it:
    // each delivered 512-byte frame gave it 470 bytes of payload.
    assert_eq!(payload, delivered * 470);
}

#[test]
fn overload_drops_on_the_wire_and_at_the_socket_and_conserves_frames() {
    let r = report(machine(&["workload.rate_per_s=400000"]));
    let metric = |k: &str| r.metric(k).unwrap();
    assert!(metric("rx_dropped_wire") > 0.0, "more than the link carries");
    assert!(metric("rx_dropped_software") > 0.0, "the socket queue fills");
    assert!(metric("rx_delivered") > 0.0);
}

#[test]
fn each_activity_counts_its_instructions_in_its_bin() {
    let m = machine(&["code.core=[\"memory.model=caches\"]"]);
    let retired = m.code.as_ref().unwrap().counters(0)[0];
    let r = report(m);
    let c = r.code_bins[0];
    // Every instruction the core retired is in exactly one activity's bin.
    assert_eq!(c.iter().map(|b| b.instructions).sum::<u64>(), retired);
    for bin in [Bin::User, Bin::Kernel, Bin::Interrupt, Bin::BottomHalf] {
        assert!(c[bin as usize].instructions > 0, "{bin:?}");
        assert!(r.bins[0].get(bin) >= c[bin as usize].instructions, "{bin:?}: at least a cycle per instruction");
    }
    assert!(c[Bin::BottomHalf as usize].l1d_misses > 0, "DMA invalidates the frames the bottom half reads");
}

#[test]
fn a_reserved_thread_takes_interrupts_and_bottom_halves_only() {
    let sets =
        ["cpu.threads=2", "nic.irq_thread=1", "code.app_thread=0", "code.core=[\"core.threads=2\", \"core.interrupt_thread=1\"]", "workload.rate_per_s=60000"];
    let m = machine(&sets);
    let payload = var(&m, "app_bytes");
    let r = report(m);
    let (app, irq) = (r.code_bins[0], r.code_bins[1]);
    assert_eq!(irq[Bin::User as usize].instructions, 0, "the hot thread never runs the application");
    assert_eq!(irq[Bin::Kernel as usize].instructions, 0);
    assert!(irq[Bin::Interrupt as usize].instructions > 0 && irq[Bin::BottomHalf as usize].instructions > 0);
    assert_eq!(app[Bin::Interrupt as usize].instructions + app[Bin::BottomHalf as usize].instructions, 0);
    assert_eq!(payload, r.metric("rx_delivered").unwrap() as u64 * 470);
}

#[test]
fn runs_are_deterministic() {
    let a = report(machine(&["code.core=[\"memory.model=caches\"]"])).to_json();
    let b = report(machine(&["code.core=[\"memory.model=caches\"]"])).to_json();
    assert_eq!(a, b);
}

#[test]
fn pokes_set_the_programs_words_before_it_starts() {
    let m = machine(&["code.poke=[\"app_bytes=1000\"]"]);
    let payload = var(&m, "app_bytes");
    let r = report(m);
    assert_eq!(payload, 1000 + r.metric("rx_delivered").unwrap() as u64 * 470);
}

#[test]
fn controllers_and_other_sources_deliver_to_code() {
    for intc in ["msi", "ioapic", "xtpic"] {
        let kind = format!("intc.kind=\"{intc}\"");
        let m = machine(&[&kind, "irq_path.kind=\"linux\"", "workload.rate_per_s=20000"]);
        let payload = var(&m, "app_bytes");
        let r = report(m);
        let metric = |k: &str| r.metric(k).unwrap();
        assert!(metric("interrupts_serviced") > 0.0, "{intc}");
        assert!(r.code_bins[0][Bin::Interrupt as usize].instructions > 0, "{intc}: the handler is code");
        assert_eq!(payload, metric("rx_delivered") as u64 * 470, "{intc}");
    }
    let timer = "sources.others=[{process=\"periodic\", rate_per_s=1000.0, isr_cycles=500}]";
    let r = report(machine(&["intc.kind=\"msi\"", timer]));
    assert!(r.metric("interrupts_serviced").unwrap() > r.metric("interrupts").unwrap(), "the timer's interrupts are served too");
}

#[test]
fn dma_that_updates_the_l2_leaves_the_frames_there() {
    let caches = "code.core=[\"memory.model=caches\"]";
    let l2 = |r: &Report| r.code_bins[0][Bin::BottomHalf as usize].l2_misses;
    let invalidate = report(machine(&[caches]));
    let update = report(machine(&[caches, "code.dma=\"update\""]));
    assert_eq!(invalidate.metric("rx_delivered"), update.metric("rx_delivered"));
    assert!(l2(&update) * 4 < l2(&invalidate), "{} vs {}", l2(&update), l2(&invalidate));
}

#[test]
fn a_long_stretch_of_code_runs_in_slices_the_loop_sees() {
    let m = machine(&["code.app=\"spin\"", "workload.rate_per_s=10"]);
    let spins = var(&m, "app_bytes");
    let r = report(m);
    // 20 ms at 200 MHz: 4 M cycles, so at least three slices of 2^20.
    assert!(r.metric("events").unwrap() >= 3.0);
    assert!(spins > 100_000, "the application ran: {spins}");
}

/// `[code.core]` as tables and as the older list of strings is one machine,
/// bit for bit; and the settings do reach it (the default caches differ).
#[test]
fn the_list_form_and_the_table_form_are_one_machine() {
    let run = ["run.duration_ms=2", "workload.rate_per_s=40000"];
    let list = [&run[..], &["code.core=[\"memory.model=caches\", \"l1d.size_bytes=2048\", \"l1d.ways=4\", \"l2.way_masks=0:0x3\"]"]].concat();
    let table = [&run[..], &["code.core.memory.model=\"caches\"", "code.core.l1d.size_bytes=2048", "code.core.l1d.ways=4", "code.core.l2.way_masks=\"0:0x3\""]]
        .concat();
    let defaults = [&run[..], &["code.core.memory.model=\"caches\""]].concat();
    let json = |sets: &[&str]| report(machine(sets)).to_json();
    let from_list = json(&list);
    assert_eq!(from_list, json(&table));
    assert_ne!(from_list, json(&defaults));
}

/// `code.ticks_per_s`: every hardware thread takes each tick, the kernel's
/// `nic_isr(2 + t)` counts it, and thread 0's advances `jiffies`; none
/// without the key.
#[test]
fn the_timer_tick_reaches_every_thread() {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/irqsim/scenarios/smt-hot-thread/netperf-hot.toml"));
    let run = |sets: &[&str]| {
        let overrides: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
        let s = Scenario::from_file(path, &overrides).unwrap();
        let mut m = Machine::new(&s, path.parent().unwrap(), Record::default()).unwrap();
        m.simulate(&mut crate::monitor::Unwatched).unwrap();
        let code = m.code.as_ref().unwrap();
        let word = |name: &str, i: u32| code.sys.mem.read_u32(code.sys.program.symbol(name).unwrap() + 4 * i);
        (word("jiffies", 0), word("ticks", 0), word("ticks", 1))
    };
    // Every 1 ms from the first at 1 ms: 4 ticks before the end at 5 ms.
    assert_eq!(run(&["run.duration_ms=5", "code.ticks_per_s=1000"]), (4, 4, 4));
    assert_eq!(run(&["run.duration_ms=5", "code.ticks_per_s=0"]), (0, 0, 0));
}

/// A run of `scenario` with `sets`, its stops folded (`code/fold.rs`) or
/// not: its report as JSON, or its error.
fn folded(scenario: &str, sets: &[&str], folds: bool) -> Result<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios").join(scenario);
    let overrides: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    let s = Scenario::from_file(&path, &overrides).unwrap();
    let mut m = Machine::new(&s, path.parent().unwrap(), Record::default()).unwrap();
    m.code.as_mut().unwrap().folds = folds;
    m.simulate(&mut crate::monitor::Unwatched).map_err(|e| e.to_string())?;
    Ok(report(m).to_json().to_string())
}

/// Folding the stops of critical sections changes no report: one thread,
/// two (a reserved interrupt thread; with sections, a step of one cycle
/// after a stop that moves the core past its limit), two cores (RPS), caches,
/// the masking part's sections, conventional and optimistic, a
/// closed-loop flood (its next frame offered as software takes one), and
/// sections opened with a delivered frame still to count (socket.c's
/// `skb_free` after `DELIVERED`), and ends of interrupt of two NICs.
#[test]
fn folded_stops_change_no_report() {
    let caches = "code.core=[\"memory.model=caches\"]";
    let reserved = ["cpu.threads=2", "nic.irq_thread=1", "code.app_thread=0", "code.core=[\"core.threads=2\", \"core.interrupt_thread=1\"]"];
    for (scenario, sets) in [
        ("code/rx-min.toml", &[caches][..]),
        ("code/rx-min.toml", &reserved[..]),
        ("code/rx-napi.toml", &["run.duration_ms=100"][..]),
        ("code/rx-sections.toml", &["run.duration_ms=5"][..]),
        ("code/rx-sections.toml", &["run.duration_ms=5", "masking.scheme=\"conventional\""][..]),
        ("code/rx-sections.toml", &[&["run.duration_ms=20", "masking.scheme=\"conventional\"", "workload.rate_per_s=200000"][..], &reserved[..]].concat()[..]),
        ("code/rx-sections.toml", &["run.duration_ms=5", "workload={kind=\"flood\", direction=\"rx\", packet_bytes=512, gap_cycles=0}"][..]),
        ("smt-hot-thread/netperf-hot.toml", &["run.duration_ms=1"][..]),
        ("smt-hot-thread/netperf-baseline.toml", &["run.duration_ms=1", "workload.rate_per_s=1200000", "nic.link_mbps=100000"][..]),
        ("smt-hot-thread/nat-baseline.toml", &["run.duration_ms=1", "workload.rate_per_s=2000000", "nic.link_mbps=100000", "code.tx_irq_thread=1"][..]),
    ] {
        assert_eq!(folded(scenario, sets, true), folded(scenario, sets, false), "{scenario} {sets:?}");
    }
}

/// The lockup watchdog sees the same stops with them folded: with a
/// threshold shorter than the program's activities, each run ends at the
/// first stop past one's due cycle, often a section's opening (which folds
/// only before it), with the same message, cycles and PC.
#[test]
fn a_lockup_is_reported_where_it_was_with_stops_folded() {
    for cycles in (40..400).step_by(9) {
        let thresh = format!("code.watchdog_thresh_ms={}", cycles as f64 / 200e3);
        let sets = ["code.core=[\"memory.model=caches\"]", "run.duration_ms=1", &thresh];
        let e = folded("code/rx-sections.toml", &sets, false).expect_err("a lockup");
        assert!(e.contains("lockup"), "{e}");
        assert_eq!(folded("code/rx-sections.toml", &sets, true).expect_err("a lockup"), e);
    }
}
