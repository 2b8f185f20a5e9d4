//! The NAPI path: polls within their weight, the NIC's interrupt off while a
//! poll is scheduled, no frame lost but at a full ring, determinism, the
//! livelock curve's shape, and composition with the controllers.

use irqsim_core::{Record, Report, Scenario, parse_override, simulate};
use std::path::Path;

fn scenario(name: &str, sets: &[&str]) -> (Scenario, std::path::PathBuf) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios").join(format!("{name}.toml"));
    let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    (Scenario::from_file(&path, &o).unwrap_or_else(|e| panic!("{name}: {e}")), path)
}

fn run_with(name: &str, sets: &[&str], record: Record) -> Report {
    let (s, path) = scenario(name, sets);
    let r = simulate(&s, path.parent().unwrap(), record).unwrap_or_else(|e| panic!("{name}: {e}"));
    r.check_invariants().unwrap_or_else(|e| panic!("{name} {sets:?}: {e}"));
    r
}

fn run(name: &str, sets: &[&str]) -> Report {
    run_with(name, sets, Record::default())
}

fn m(r: &Report, k: &str) -> f64 {
    r.metric(k).unwrap_or_else(|| panic!("no metric {k}"))
}

const NAPI: &str = "irq_path.kind=\"napi\"";

/// Counted from the outside: frames delivered between one poll's start and
/// the next never exceed the weight (the stack runs inside the poll, so a
/// frame is delivered when its poll step ends).
#[test]
fn a_poll_never_exceeds_its_weight() {
    for (weight, rate) in [(64, 90_000), (8, 20_000), (3, 12_000), (16, 11_000)] {
        let w = format!("napi.weight={weight}");
        let r = format!("workload.rate_per_s={rate}");
        let rep = run_with("livelock/receiver", &[NAPI, &w, &r, "run.duration_ms=40", "stats.timeline_max_items=1000000"], Record { timeline: true });
        let mut polls: Vec<u64> = rep.timeline.spans().iter().filter(|s| s.label == "NAPI poll").map(|s| s.start).collect();
        polls.dedup();
        let delivered: Vec<u64> = rep.records.iter().map(|&(arrival, latency)| arrival + latency).collect();
        assert_eq!(delivered.len() as f64, m(&rep, "rx_delivered"), "every delivery recorded");
        assert!(polls.len() > 3, "{weight} {rate}: polls ran");
        for p in polls.windows(2) {
            let n = delivered.iter().filter(|&&t| t > p[0] && t <= p[1]).count() as u64;
            assert!(n <= weight, "weight {weight} at {rate}/s: {n} frames between polls at {} and {}", p[0], p[1]);
        }
        assert!(m(&rep, "napi_max_poll_frames") <= weight as f64);
        // A run takes polls until its budget is spent: at most budget + weight - 1 frames.
        assert!(m(&rep, "napi_max_run_frames") <= (300 + weight - 1) as f64);
    }
}

/// A run stops at its frame budget or its time budget, whichever comes first.
#[test]
fn a_softirq_run_yields_at_its_budget() {
    // Time: a 64-frame poll takes about 5.5 ms here, past 2,000 µs.
    let slow = run("livelock/receiver", &[NAPI, "workload.rate_per_s=90000"]);
    assert_eq!(m(&slow, "napi_max_run_frames"), 64.0);
    assert!(m(&slow, "napi_time_squeezes") > 10.0);
    // Frames: a cheap receive path runs 5 polls of 64 (320 >= 300), then yields.
    let cheap = ["stack.socket_cycles=0", "stack.udp_cycles=0", "stack.ip_cycles=0", "stack.recv_wakeup_cycles=0", "stack.copy_cycles_per_byte=0"];
    let mut sets = vec![NAPI, "driver.isr_rx_done_cycles=500", "workload.rate_per_s=1000000", "napi.budget_usecs=100000"];
    sets.extend(cheap);
    let fast = run("livelock/receiver", &sets);
    assert_eq!(m(&fast, "napi_max_run_frames"), 320.0);
    assert!(m(&fast, "napi_time_squeezes") > 10.0);
}

/// The laws hold at every load, on every controller, under both context
/// policies and with several threads: the NIC's interrupt is never enabled
/// while its poll is scheduled, and frames are lost only at the NIC's ring.
#[test]
fn irq_off_while_scheduled_and_loss_only_at_the_ring() {
    for intc in ["direct", "msi", "ioapic", "xtpic"] {
        for policy in ["single", "multithreaded"] {
            for rate in [2_000, 11_000, 40_000, 150_000] {
                for rotting in [false, true] {
                    let sets = [
                        NAPI,
                        &format!("intc.kind=\"{intc}\""),
                        &format!("cpu.context_policy=\"{policy}\""),
                        &format!("workload.rate_per_s={rate}"),
                        &format!("napi.rotting={rotting}"),
                        "run.duration_ms=20",
                    ];
                    let r = run("livelock/receiver", &sets);
                    assert_eq!(m(&r, "rx_dropped_backlog"), 0.0, "{sets:?}");
                    assert_eq!(m(&r, "rx_dropped_wire"), 0.0, "{sets:?}");
                    let lost = m(&r, "rx_offered") - m(&r, "rx_delivered") - m(&r, "rx_in_flight");
                    assert_eq!(lost, m(&r, "rx_dropped_nic"), "{sets:?}");
                    if rate <= 11_000 {
                        assert_eq!(lost, 0.0, "{sets:?}: below capacity nothing is dropped");
                    }
                }
            }
        }
    }
    let two = run("livelock/receiver", &[NAPI, "intc.kind=\"msi\"", "cpu.threads=2", "nic.irq_thread=1", "workload.rate_per_s=40000"]);
    assert!(two.bins[0].get(irqsim_core::cpu::Bin::BottomHalf) == 0 && two.bins[1].get(irqsim_core::cpu::Bin::BottomHalf) > 0);
}

/// A rotting NIC leaves frames that came in before the re-enable waiting
/// for the next arrival; a latching one interrupts at once.
#[test]
fn rotting_packets_wait_for_the_next_arrival() {
    let sets = |rotting: &'static str| [NAPI, rotting, "workload.process=\"poisson\"", "workload.rate_per_s=9000"];
    let latched = run("livelock/receiver", &sets("napi.rotting=false"));
    let rotting = run("livelock/receiver", &sets("napi.rotting=true"));
    assert_eq!(m(&latched, "napi_rotted"), 0.0);
    assert!(m(&rotting, "napi_rotted") > 0.0);
    assert!(m(&rotting, "latency_p50_us") > m(&latched, "latency_p50_us"));
}

/// With the late acknowledgement (`napi.late_ack`), a poll that took a frame
/// arriving after its read of the cause re-raises the interrupt on enable,
/// one more interrupt and one more emptying poll each; a frame already
/// waiting at the read does not.
#[test]
fn a_late_acknowledgement_raises_a_redundant_interrupt() {
    let sets = |late: &'static str, rate: &'static str| [late, rate, "workload.packet_bytes=1024", "run.duration_ms=20"];
    let on = run("livelock/e1000-router", &sets("napi.late_ack=true", "workload.rate_per_s=119061"));
    let off = run("livelock/e1000-router", &sets("napi.late_ack=false", "workload.rate_per_s=119061"));
    assert_eq!(m(&off, "napi_late_acks"), 0.0);
    assert!(m(&on, "napi_late_acks") > 100.0, "{}", m(&on, "napi_late_acks"));
    assert!(m(&on, "interrupts") > m(&off, "interrupts"));
    assert!((m(&on, "napi_completes") - m(&on, "interrupts")).abs() <= 1.0, "each interrupt ends in an emptying poll");
    // One frame every 100 µs: each poll takes the frame its read acknowledged.
    let slow = run("livelock/e1000-router", &sets("napi.late_ack=true", "workload.rate_per_s=10000"));
    assert_eq!(m(&slow, "napi_late_acks"), 0.0);
}

/// Within the run's budget (`napi.poll_within_budget`, the 2002 e1000's
/// `rx_work_limit = min(*budget, quota)`), an overloaded router's NET_RX runs
/// poll 64, 64, 64, 64 and 44 frames of the budget's 300: 60 a poll that
/// leaves frames, where polls of the whole weight take 64.
#[test]
fn polls_within_the_budget_take_only_its_rest() {
    for (within, per_poll) in [("napi.poll_within_budget=true", 60.0), ("napi.poll_within_budget=false", 64.0)] {
        let r = run("livelock/e1000-router", &[within, "workload.packet_bytes=60", "workload.rate_per_s=890000", "run.duration_ms=20"]);
        let took = m(&r, "rx_delivered") / m(&r, "napi_not_done");
        assert!((took - per_poll).abs() < 1.0, "{within}: {took} frames a poll");
    }
}

/// Interrupt-driven receive collapses above the MLFRR; NAPI holds near it.
#[test]
fn livelock_interrupts_collapse_napi_holds() {
    let at =
        |kind: &str, rate: u32| m(&run("livelock/receiver", &[&format!("irq_path.kind=\"{kind}\""), &format!("workload.rate_per_s={rate}")]), "rx_delivered");
    let peak = at("mt", 11_000);
    assert!(at("mt", 50_000) < 0.6 * peak);
    assert!(at("mt", 90_000) < 0.05 * peak);
    let napi_peak = at("napi", 11_000);
    assert!(at("napi", 90_000) > 0.95 * napi_peak);
}

#[test]
fn runs_are_deterministic() {
    let sets = [NAPI, "workload.process=\"poisson\"", "workload.rate_per_s=15000", "intc.kind=\"ioapic\""];
    let (a, b) = (run("livelock/receiver", &sets), run("livelock/receiver", &sets));
    assert_eq!(a.metrics, b.metrics);
    assert_eq!(a.bins, b.bins);
}

/// A NAPI key without the NAPI path is refused with one line naming the key.
#[test]
fn refusals_name_the_key() {
    let refuse = |sets: &[&str], key: &str| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/livelock/receiver.toml");
        let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
        let e = Scenario::from_file(&path, &o).expect_err("refused").to_string();
        assert!(e.contains(key) && !e.contains('\n'), "{e}");
    };
    refuse(&["napi.weight=16"], "napi.weight");
}

/// napi_defer_hard_irqs with gro_flush_timeout: after a poll that took a
/// frame, the interrupt stays masked through `defer` empty polls, one per
/// timeout, and only then comes back.
#[test]
fn deferred_hard_irqs_poll_on_a_timer() {
    let r = run("livelock/receiver", &[NAPI, "napi.defer_hard_irqs=3", "napi.gro_flush_timeout_ns=50000", "workload.rate_per_s=1000", "run.duration_ms=50.5"]);
    let frames = m(&r, "rx_delivered");
    assert_eq!(frames, 51.0);
    assert_eq!(m(&r, "interrupts"), frames);
    assert_eq!(m(&r, "napi_polls"), 4.0 * frames);
    assert_eq!(m(&r, "napi_deferred"), 3.0 * frames);
    // Under load the timer's polls find frames and the interrupt stays off.
    let busy = run("livelock/receiver", &[NAPI, "napi.defer_hard_irqs=3", "napi.gro_flush_timeout_ns=50000", "workload.rate_per_s=10000"]);
    let plain = run("livelock/receiver", &[NAPI, "workload.rate_per_s=10000"]);
    assert!(m(&busy, "interrupts") < 0.1 * m(&plain, "interrupts"), "{} vs {}", m(&busy, "interrupts"), m(&plain, "interrupts"));
    // Only the frames still waiting for the timer at the end differ.
    assert!((m(&busy, "rx_delivered") - m(&plain, "rx_delivered")).abs() <= 1.0);
}

/// Threaded NAPI: woken, not raised, it polls its list empty with no netdev
/// budget (no time squeeze) and pays the wakeup instead of the softirq entry.
#[test]
fn threaded_napi_polls_without_a_budget() {
    let threaded = run("livelock/receiver", &[NAPI, "napi.threaded=true", "workload.rate_per_s=90000"]);
    assert_eq!(m(&threaded, "napi_time_squeezes"), 0.0);
    assert_eq!(m(&threaded, "napi_thread_runs"), 1.0, "woken once, polling ever after");
    assert_eq!(m(&threaded, "napi_softirq_runs"), 0.0, "the thread polls, not the softirq");
    let light = |threaded: &str| run("livelock/receiver", &[NAPI, threaded, "workload.rate_per_s=2000"]);
    let (t, s) = (light("napi.threaded=true"), light("napi.threaded=false"));
    // One wakeup (3,000 cycles) per interrupt instead of a softirq entry (300).
    let extra = (t.bins[0].get(irqsim_core::cpu::Bin::BottomHalf) - s.bins[0].get(irqsim_core::cpu::Bin::BottomHalf)) as f64;
    assert_eq!(extra, 2700.0 * m(&t, "interrupts"));
}

/// The receiver's load in the busy-polling tests: no background task, 50,000
/// Poisson frames/s of 128 bytes, 50 ms.
const BUSY_LOAD: &[&str] =
    &["app.background=false", "workload.rate_per_s=50000", "workload.packet_bytes=128", "workload.process=\"poisson\"", "run.duration_ms=50"];

/// Busy polling from recv on its own core takes most frames before the
/// interrupt path does, at a lower latency, spinning its core. On the
/// interrupt's core too the poller takes most: it holds the instance for its
/// whole loop (napi_busy_loop), so the interrupt that preempts the spin
/// schedules no softirq poll.
#[test]
fn busy_polling_trades_a_core_for_latency() {
    let at = |busy: &str, threads: &str, app: &str| run("livelock/e1000-forward", &[&[busy, threads, app], BUSY_LOAD].concat());
    let plain = at("napi.busy_poll_usecs=0", "cpu.threads=2", "app.thread=1");
    let own = at("napi.busy_poll_usecs=50", "cpu.threads=2", "app.thread=1");
    let shared = at("napi.busy_poll_usecs=50", "cpu.threads=1", "app.thread=0");
    assert!(m(&own, "napi_busy_poll_frames") > 0.8 * m(&own, "rx_delivered"));
    assert!(m(&own, "latency_p50_us") < 0.8 * m(&plain, "latency_p50_us"));
    assert!(own.bins[1].get(irqsim_core::cpu::Bin::Kernel) > own.elapsed_cycles * 8 / 10, "the spinning core is busy");
    assert!(m(&shared, "napi_busy_poll_frames") > 0.8 * m(&shared, "rx_delivered"), "the poller holds the instance: the interrupt schedules nothing");
    for r in [&own, &shared] {
        assert_eq!(m(r, "rx_delivered") + m(r, "rx_in_flight"), m(r, "rx_offered"));
    }
}

#[test]
fn busy_polling_refusals() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/livelock/e1000-forward.toml");
    let o = [parse_override("napi.busy_poll_usecs=50").unwrap()];
    let e = Scenario::from_file(&path, &o).expect_err("refused").to_string();
    assert!(e.contains("napi.busy_poll_usecs") && e.contains("app.background"), "{e}");
}

/// With the kernel's software as code, the abstract receive path's costs
/// its rotting NIC and its late acknowledgement are refused, naming the key: the NAPI part decides
/// when code polls, code's instructions are the poll (`code_parts.rs`).
#[test]
fn receive_path_parts_are_refused_with_code() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/code/rx-min.toml");
    for (sets, key) in [
        (&["nic.rx_ring_frames=64"][..], "nic.rx_ring_frames"),
        (&["irq_path.kind=\"napi\"", "napi.complete_cycles=100"], "napi.complete_cycles"),
        (&["irq_path.kind=\"napi\"", "napi.rotting=true"], "napi.rotting"),
        (&["irq_path.kind=\"napi\"", "napi.late_ack=true"], "napi.late_ack"),
        (&["irq_path.kind=\"napi\"", "napi.poll_within_budget=true"], "napi.poll_within_budget"),
    ] {
        let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
        let e = Scenario::from_file(&path, &o).expect_err("refused").to_string();
        assert!(e.contains(key) && e.contains("code") && !e.contains('\n'), "{e}");
    }
}

/// Preferring busy polling keeps the interrupt masked between busy polls
/// (one interrupt in the run instead of one per loop): the frames come from
/// the poller, and while it sleeps (a 50 µs loop without a frame) from the
/// deferral timer's polls, which wait out `gro_flush_timeout_ns`.
#[test]
fn preferred_busy_polling_keeps_the_interrupt_off() {
    let at = |prefer: &str| {
        let napi = ["napi.busy_poll_usecs=50", prefer, "napi.defer_hard_irqs=2", "napi.gro_flush_timeout_ns=200000"];
        run("livelock/e1000-forward", &[&napi[..], BUSY_LOAD].concat())
    };
    let (plain, prefer) = (at("napi.prefer_busy_poll=false"), at("napi.prefer_busy_poll=true"));
    assert!(m(&prefer, "interrupts") < 0.01 * m(&plain, "interrupts").max(100.0));
    assert!(m(&plain, "napi_busy_poll_frames") > 0.75 * m(&plain, "rx_delivered"));
    assert!(m(&prefer, "napi_deferred") > 0.0 && m(&prefer, "latency_p50_us") > m(&plain, "latency_p50_us"));
    for r in [&plain, &prefer] {
        assert_eq!(m(r, "rx_delivered") + m(r, "rx_in_flight"), m(r, "rx_offered"));
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/livelock/e1000-forward.toml");
    let o: Vec<_> = ["napi.prefer_busy_poll=true", "napi.busy_poll_usecs=50", "app.background=false"].iter().map(|s| parse_override(s).unwrap()).collect();
    let e = Scenario::from_file(&path, &o).expect_err("refused").to_string();
    assert!(e.contains("napi.prefer_busy_poll") && e.contains("defer_hard_irqs"), "{e}");
}

/// `driver.isr_rx_spread` draws each frame's driver cost from the given
/// multiples: one multiple changes nothing, two keep the mean cost per
/// frame (the drawn mean) and differ by seed; all zero is refused.
#[test]
fn a_receive_cost_spread_keeps_the_mean_and_follows_the_seed() {
    let row = ["workload.packet_bytes=1024", "workload.rate_per_s=119061.0", "run.duration_ms=50"];
    let with = |extra: &[&str]| run("livelock/e1000-forward", &[&row[..], extra].concat());
    let bottom = |r: &Report| r.bins[0].get(irqsim_core::cpu::Bin::BottomHalf) as f64;
    let (plain, one) = (with(&[]), with(&["driver.isr_rx_spread=[2.5]"]));
    assert_eq!(plain.to_json(), one.to_json());
    let (a, b) = (with(&["driver.isr_rx_spread=[0.5, 1.5]", "run.seed=1"]), with(&["driver.isr_rx_spread=[0.5, 1.5]", "run.seed=2"]));
    assert_eq!(m(&a, "rx_delivered"), m(&plain, "rx_delivered"));
    assert_ne!(bottom(&a), bottom(&b));
    // 5,953 frames at 2,742 +- 1,371 cycles: the mean within 4 standard errors (about 1.9%).
    for r in [&a, &b] {
        let extra = (bottom(r) - bottom(&plain)) / m(&plain, "rx_delivered");
        assert!(extra.abs() < 0.019 * 2742.0, "{extra} cycles a frame off the mean");
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/livelock/e1000-forward.toml");
    let e = Scenario::from_file(&path, &[parse_override("driver.isr_rx_spread=[0.0, 0.0]").unwrap()]).expect_err("refused").to_string();
    assert!(e.contains("driver.isr_rx_spread") && !e.contains('\n'), "{e}");
}
