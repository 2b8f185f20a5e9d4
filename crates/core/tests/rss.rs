//! Receive-side scaling: each queue's vector reaches its own core, frames
//! are conserved and no queue's interrupt is enabled while it is polled,
//! skew concentrates load, throughput scales with queues, each queue
//! coalesces on its own (DIM too), and the unsupported combinations are
//! refused naming `rss.kind`.

use irqsim_core::cpu::Bin;
use irqsim_core::{Record, Report, Scenario, parse_override, simulate};
use std::path::Path;

fn path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/livelock/rss.toml")
}

fn run(sets: &[&str]) -> Report {
    let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    let s = Scenario::from_file(&path(), &o).unwrap_or_else(|e| panic!("{e}"));
    let r = simulate(&s, path().parent().unwrap(), Record::default()).unwrap();
    r.check_invariants().unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r
}

fn m(r: &Report, k: &str) -> f64 {
    r.metric(k).unwrap_or_else(|| panic!("no metric {k}"))
}

/// Cycles each core spent forwarding.
fn polled(r: &Report) -> Vec<u64> {
    r.bins.iter().map(|b| b.get(Bin::BottomHalf)).collect()
}

#[test]
fn each_queue_is_polled_on_its_own_core() {
    for intc in ["msix", "msi", "direct"] {
        let r = run(&["rss.queues=4", &format!("intc.kind=\"{intc}\""), "run.duration_ms=5"]);
        let busy = polled(&r);
        assert!(busy[..4].iter().all(|&c| c > 0) && busy[4..].iter().all(|&c| c == 0), "{intc}: {busy:?}");
        let lost = m(&r, "rx_offered") - m(&r, "rx_delivered") - m(&r, "rx_in_flight");
        assert_eq!(lost, m(&r, "rx_dropped_nic"), "{intc}");
    }
}

#[test]
fn throughput_scales_with_queues_until_the_load_is_met() {
    let got: Vec<f64> = [1, 2, 4, 8, 16].iter().map(|q| m(&run(&[&format!("rss.queues={q}"), "run.duration_ms=5"]), "rx_delivered")).collect();
    assert!(got.windows(2).all(|w| w[1] > w[0] * 1.02 || w[1] > 0.99 * got[4]), "{got:?}");
    assert!(got[1] > 1.9 * got[0] && got[3] > 7.5 * got[0], "{got:?}");
}

#[test]
fn skew_concentrates_the_load() {
    let uniform = run(&["rss.queues=8", "run.duration_ms=5"]);
    let skewed = run(&["rss.queues=8", "rss.flow_skew=1.2", "run.duration_ms=5"]);
    assert!(m(&skewed, "rss_busiest_queue_share") > 2.0 * m(&uniform, "rss_busiest_queue_share"));
    assert!(m(&skewed, "rx_delivered") < m(&uniform, "rx_delivered"));
}

#[test]
fn runs_are_deterministic() {
    let sets = ["rss.queues=6", "rss.flow_skew=0.8", "run.duration_ms=3"];
    let (a, b) = (run(&sets), run(&sets));
    assert_eq!(a.metrics, b.metrics);
    assert_eq!(a.bins, b.bins);
}

#[test]
fn unsupported_combinations_are_refused() {
    for sets in [&["irq_path.kind=\"linux\""][..], &["intc.kind=\"ioapic\""], &["intc.kind=\"msi\"", "rss.queues=3"]] {
        let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
        let e = Scenario::from_file(&path(), &o).expect_err("refused").to_string();
        assert!(e.contains("rss.kind") && !e.contains('\n'), "{sets:?}: {e}");
    }
    let o = [parse_override("rss.kind=\"none\"").unwrap(), parse_override("rss.queues=2").unwrap()];
    let e = Scenario::from_file(&path(), &o).expect_err("refused").to_string();
    assert!(e.contains("only used when `rss.kind` is `toeplitz`"), "{e}");
}

/// RPS: one queue's CPU runs the driver's part and hands each frame to its
/// flow's CPU, whose backlog runs the protocol; the protocol's load spreads.
#[test]
fn rps_spreads_the_protocol_over_cpus() {
    let at = |rps: &str| run(&["rss.queues=1", rps, "stack.enabled=true", "driver.isr_rx_done_cycles=1000", "workload.rate_per_s=400000", "run.duration_ms=5"]);
    let (one, spread) = (at("rss.rps_cpus=0"), at("rss.rps_cpus=8"));
    assert!(m(&spread, "rx_delivered") > 3.0 * m(&one, "rx_delivered"), "{} vs {}", m(&spread, "rx_delivered"), m(&one, "rx_delivered"));
    assert!(m(&spread, "rps_remote_frames") > 0.8 * m(&spread, "rx_delivered"));
    let busy = polled(&spread);
    assert!(busy[..8].iter().all(|&c| c > 0) && busy[8..].iter().all(|&c| c == 0), "{busy:?}");
    let again = at("rss.rps_cpus=8");
    assert_eq!(spread.metrics, again.metrics);
    for (sets, key) in [(&["rss.rps_cpus=17"][..], "rss.rps_cpus"), (&["rss.rps_cpus=4"], "stack.enabled")] {
        let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
        let e = Scenario::from_file(&path(), &o).expect_err("refused").to_string();
        assert!(e.contains("rss.rps_cpus") && e.contains(if key == "stack.enabled" { "stack.enabled" } else { "cpu.threads" }), "{e}");
    }
}

/// Each queue coalesces its own interrupt: fewer interrupts, every frame
/// delivered, and every queue's core polled.
#[test]
fn each_queue_coalesces_on_its_own() {
    let at = |usecs: &str, frames: &str| run(&["rss.queues=4", usecs, frames, "workload.rate_per_s=500000", "run.duration_ms=5"]);
    let (plain, coalesced) = (at("coalesce.rx_usecs=0", "coalesce.rx_frames=1"), at("coalesce.rx_usecs=50", "coalesce.rx_frames=0"));
    assert!(m(&coalesced, "interrupts") < 0.3 * m(&plain, "interrupts"));
    assert_eq!(m(&coalesced, "coalesce_timer_interrupts"), m(&coalesced, "interrupts"));
    assert_eq!(m(&coalesced, "rx_delivered") + m(&coalesced, "rx_in_flight"), m(&coalesced, "rx_offered"));
    assert!(polled(&coalesced)[..4].iter().all(|&c| c > 0));
}

/// DIM runs per queue (one `struct dim` per channel, lib/dim/net_dim.c),
/// each on its own queue's interrupts and frames: a decision needs 64 of its
/// queue's interrupts, so all queues together decide at most once per 64
/// interrupts (DIM on shared counters would decide about 16 times as often);
/// under skew the busy queues and the quiet ones end at different profiles;
/// and moving up from its start profile, DIM takes fewer interrupts than
/// that profile fixed.
#[test]
fn dim_runs_per_queue_on_its_own_counters() {
    for skew in ["rss.flow_skew=0", "rss.flow_skew=1.5"] {
        let dim = run(&["coalesce.adaptive_rx=true", skew, "run.duration_ms=10"]);
        let start = run(&["coalesce.rx_usecs=8", "coalesce.rx_frames=256", skew, "run.duration_ms=10"]);
        let decisions = m(&dim, "dim_decisions");
        assert!((16.0..=m(&dim, "interrupts") / 64.0).contains(&decisions), "{skew}: {decisions} decisions, {} interrupts", m(&dim, "interrupts"));
        assert!(m(&dim, "interrupts") < 0.5 * m(&start, "interrupts"), "{skew}: {} vs {}", m(&dim, "interrupts"), m(&start, "interrupts"));
        let shares: f64 = (0..5).map(|i| m(&dim, &format!("dim_time_share_profile_{i}"))).sum();
        assert!((shares - 1.0).abs() < 1e-9, "{skew}: {shares}");
    }
    let skewed = run(&["coalesce.adaptive_rx=true", "rss.flow_skew=1.5", "run.duration_ms=10"]);
    assert!(m(&skewed, "dim_final_profile_min") < m(&skewed, "dim_final_profile_max"));
}

/// Busy polling with RSS polls one NAPI instance: the one of the queue the
/// socket's last frame came through (`sk_napi_id`). One flow keeps to one
/// queue, and the receiver takes most frames at a lower latency, as on a
/// one-queue NIC; flows spread over four queues move it from queue to queue,
/// and the interrupts take most frames. With RPS the frames it takes go on
/// to their flow's backlog like the softirq's.
#[test]
fn busy_polling_follows_the_sockets_queue() {
    const LOAD: &[&str] = &[
        "app.background=false",
        "workload.rate_per_s=50000",
        "workload.packet_bytes=128",
        "run.duration_ms=20",
        "rss.queues=4",
        "cpu.threads=5",
        "app.thread=4",
    ];
    let at = |sets: &[&str]| run(&[LOAD, sets].concat());
    let plain = at(&["rss.flows=1"]);
    let one = at(&["rss.flows=1", "napi.busy_poll_usecs=50"]);
    let spread = at(&["napi.busy_poll_usecs=50"]);
    assert!(m(&one, "napi_busy_poll_frames") > 0.8 * m(&one, "rx_delivered"));
    assert_eq!(m(&one, "napi_busy_poll_queues"), 1.0);
    assert!(m(&one, "latency_p50_us") < 0.8 * m(&plain, "latency_p50_us"));
    assert_eq!(m(&spread, "napi_busy_poll_queues"), 4.0);
    assert!(m(&spread, "napi_busy_poll_frames") < 0.5 * m(&one, "napi_busy_poll_frames"));
    let rps = at(&["rss.flows=1", "napi.busy_poll_usecs=50", "stack.enabled=true", "rss.rps_cpus=4"]);
    assert!(m(&rps, "napi_busy_poll_frames") > 0.8 * m(&rps, "rx_delivered"));
    // The receiver's thread 4 is none of the four RPS CPUs: all its frames are handed on.
    assert!(m(&rps, "rps_remote_frames") >= m(&rps, "napi_busy_poll_frames"));
}
