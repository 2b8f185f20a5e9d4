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

fn napi_dim(mode: &str, at: &[u64]) -> Vec<u64> {
    let events: String = at.iter().map(|c| format!("[[workload.events]]\nat_cycle = {c}\naction = \"receive\"\nbytes = 64\n")).collect();
    let text = format!(
        "[run]\nduration_ms = 0.1\n[cpu]\nclock_mhz = 100.0\n[nic]\nlink_mbps = 100000.0\n[driver]\nisr_rx_done_cycles = 100\n[irq_path]\nkind = \"napi\"\n\
         [coalesce]\nadaptive_rx = true\ndim_mode = \"{mode}\"\n[workload]\nkind = \"script\"\n{events}"
    );
    let s = Scenario::from_toml(&text, "dim.toml", &[]).expect("scenario loads");
    let r = simulate(&s, std::path::Path::new("."), Record { timeline: true }).expect("run");
    r.check_invariants().expect("invariants");
    r.timeline.marks().iter().filter(|m| m.label == "NIC interrupt").map(|m| m.time).collect()
}

/// DIM starts at profile 1: EQE's 8 µs from the first frame, CQE's 8 µs
/// restarted at each frame.
#[test]
fn dim_modes_time_from_the_first_or_the_last_frame() {
    assert_eq!(napi_dim("eqe", &[0, 500, 5000]), [800, 5800]);
    assert_eq!(napi_dim("cqe", &[0, 500, 5000]), [1300, 5800]);
}

#[test]
fn dim_needs_napi_and_owns_the_two_keys() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/livelock/receiver.toml");
    let refused = |sets: &[&str]| {
        let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
        Scenario::from_file(&path, &o).expect_err("refused").to_string()
    };
    let e = refused(&["coalesce.adaptive_rx=true"]);
    assert!(e.contains("coalesce.adaptive_rx") && e.contains("napi"), "{e}");
    let e = refused(&["irq_path.kind=\"napi\"", "coalesce.adaptive_rx=true", "coalesce.rx_usecs=8"]);
    assert!(e.contains("coalesce.rx_usecs") && e.contains("only used when"), "{e}");
}

/// Under load DIM moves off its starting profile, and runs repeat exactly.
#[test]
fn dim_adapts_and_is_deterministic() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/livelock/e1000-forward.toml");
    let sets = ["coalesce.adaptive_rx=true", "workload.process=\"poisson\"", "workload.rate_per_s=300000", "workload.packet_bytes=128", "run.duration_ms=50"];
    let at = || {
        let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
        let s = Scenario::from_file(&path, &o).unwrap();
        let r = simulate(&s, path.parent().unwrap(), Record::default()).unwrap();
        r.check_invariants().unwrap();
        r
    };
    let (a, b) = (at(), at());
    assert_eq!(a.metrics, b.metrics);
    assert!(a.metric("dim_profile_changes").unwrap() > 0.0);
    let shares: f64 = (0..5).map(|i| a.metric(&format!("dim_time_share_profile_{i}")).unwrap()).sum();
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
}
