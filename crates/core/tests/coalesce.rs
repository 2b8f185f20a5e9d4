//! Receive-interrupt coalescing follows ethtool's documented semantics: the
//! timer runs from the first frame an interrupt would cover, the frame count
//! interrupts at once, either key at 0 leaves the other alone, both at 0 are
//! refused; and it composes with every interrupt path.

use irqsim_core::{Record, Report, Scenario, parse_override, simulate};

/// A 100 MHz CPU (1 µs = 100 cycles), the mt driver layer, 64-byte frames
/// landing at the given cycles.
fn scenario(usecs: u32, frames: u32, at: &[u64]) -> String {
    let events: String = at.iter().map(|c| format!("[[workload.events]]\nat_cycle = {c}\naction = \"receive\"\nbytes = 64\n")).collect();
    format!(
        "[run]\nduration_ms = 0.1\n[cpu]\nclock_mhz = 100.0\n[nic]\nlink_mbps = 100000.0\n[driver]\nisr_rx_done_cycles = 100\n\
         [coalesce]\nrx_usecs = {usecs}\nrx_frames = {frames}\n[workload]\nkind = \"script\"\n{events}"
    )
}

fn run(usecs: u32, frames: u32, at: &[u64]) -> (Vec<u64>, Report) {
    let s = Scenario::from_toml(&scenario(usecs, frames, at), "coalesce.toml", &[]).expect("scenario loads");
    let r = simulate(&s, std::path::Path::new("."), Record { timeline: true }).expect("run");
    r.check_invariants().expect("invariants");
    let irqs = r.timeline.marks().iter().filter(|m| m.label == "NIC interrupt").map(|m| m.time).collect();
    (irqs, r)
}

#[test]
fn rx_usecs_alone_delays_from_the_first_frame() {
    let (irqs, r) = run(10, 0, &[0, 300, 600, 5000]);
    assert_eq!(irqs, [1000, 6000]);
    assert_eq!(r.metric("rx_delivered"), Some(4.0));
    assert_eq!(r.metric("coalesce_timer_interrupts"), Some(2.0));
}

#[test]
fn rx_frames_alone_interrupts_at_the_count_and_never_otherwise() {
    let (irqs, r) = run(0, 3, &[0, 300, 600, 2000, 2300]);
    assert_eq!(irqs, [600]);
    // Two frames short of the count: no interrupt ever takes them.
    assert_eq!(r.metric("rx_delivered"), Some(3.0));
    assert_eq!(r.metric("rx_in_flight"), Some(2.0));
}

#[test]
fn both_whichever_comes_first() {
    // The timer takes two frames at 10 µs; three frames interrupt at the third,
    // and the timer they armed is cleared, not fired later.
    let (irqs, r) = run(10, 3, &[0, 300, 2000, 2100, 2200]);
    assert_eq!(irqs, [1000, 2200]);
    assert_eq!(r.metric("coalesce_timer_interrupts"), Some(1.0));
    assert_eq!(r.metric("coalesce_frame_interrupts"), Some(1.0));
}

#[test]
fn the_default_interrupts_per_frame() {
    let (irqs, _) = run(0, 1, &[0, 300, 600]);
    assert_eq!(irqs, [0, 300, 600]);
}

#[test]
fn both_zero_is_refused() {
    let e = Scenario::from_toml(&scenario(0, 0, &[0]), "coalesce.toml", &[]).expect_err("refused").to_string();
    assert!(e.contains("coalesce.rx_frames") && e.contains("never interrupt") && !e.contains('\n'), "{e}");
}

/// On every path and controller frames are conserved and fewer interrupts
/// serve the same frames.
#[test]
fn composes_with_every_path() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/livelock/receiver.toml");
    for kind in ["mt", "linux", "napi"] {
        for intc in ["direct", "msi", "ioapic", "xtpic"] {
            let at = |sets: &[String]| {
                let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
                let s = Scenario::from_file(&path, &o).unwrap();
                let r = simulate(&s, path.parent().unwrap(), Record::default()).unwrap();
                r.check_invariants().unwrap_or_else(|e| panic!("{sets:?}: {e}"));
                r
            };
            let base = vec![
                format!("irq_path.kind=\"{kind}\""),
                format!("intc.kind=\"{intc}\""),
                "workload.process=\"poisson\"".into(),
                "workload.rate_per_s=8000".into(),
            ];
            let plain = at(&base);
            let mut sets = base.clone();
            sets.push("coalesce.rx_usecs=100".into());
            sets.push("coalesce.rx_frames=0".into());
            let coalesced = at(&sets);
            let irq = |r: &Report| r.metric("interrupts").unwrap();
            assert!(irq(&coalesced) < irq(&plain), "{kind} {intc}: {} vs {}", irq(&coalesced), irq(&plain));
            assert!(coalesced.metric("rx_delivered").unwrap() > 700.0, "{kind} {intc}");
        }
    }
}
