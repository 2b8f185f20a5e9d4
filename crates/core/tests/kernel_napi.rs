//! The SMT study's kernel (programs/kernel: `kernel/host.elf` and
//! `kernel/nat.elf`) on the NAPI path: its top half `nic_napi_isr` and its
//! poll `nic_napi_poll` (programs/kernel/napi.c) under the machine's NAPI
//! part, with threaded NAPI, deferred interrupts, busy polling, coalescing
//! and DIM. Each test asserts the mechanism's effect on the kernel's run.
//! Runs are a few milliseconds of the smt-hot-thread scenarios (the
//! Pentium 4 class SMT core and its caches) at the 1 Gb/s line rate.

use irqsim_core::cpu::Bin;
use irqsim_core::{Record, Report, Scenario, parse_override, simulate};
use std::path::Path;

const NAPI: &str = "irq_path.kind=\"napi\"";

fn scenario(name: &str, sets: &[&str]) -> Result<Scenario, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/smt-hot-thread");
    let mut all = vec!["run.duration_ms=3", NAPI];
    all.extend_from_slice(sets);
    let o: Vec<_> = all.iter().map(|s| parse_override(s).unwrap()).collect();
    Scenario::from_file(&dir.join(format!("{name}.toml")), &o).map_err(|e| e.to_string())
}

fn try_run(name: &str, sets: &[&str]) -> Result<Report, String> {
    let s = scenario(name, sets)?;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/smt-hot-thread");
    let r = simulate(&s, &dir, Record::default()).map_err(|e| e.to_string())?;
    r.check_invariants().unwrap_or_else(|e| panic!("{name} {sets:?}: {e}"));
    conserved(&r);
    Ok(r)
}

fn run(name: &str, sets: &[&str]) -> Report {
    try_run(name, sets).unwrap_or_else(|e| panic!("{name} {sets:?}: {e}"))
}

fn m(r: &Report, key: &str) -> f64 {
    r.metric(key).unwrap_or_else(|| panic!("no metric {key}"))
}

/// Every frame the ring took reached the socket (or NIC 1's wire) or is
/// still on its way: only the NIC drops, and only the frames before
/// kernel_init armed the ring (20 in the first 3 ms, as on the Linux path).
fn all_served(r: &Report) -> bool {
    let ring = m(r, "rx_offered") - m(r, "rx_dropped_nic");
    let served = m(r, "rx_delivered") + m(r, "rx_in_flight");
    m(r, "rx_dropped_software") == 0.0 && served >= ring - 1.0 && m(r, "rx_dropped_nic") < 0.1 * m(r, "rx_offered")
}

/// Frames in = delivered (or forwarded) + dropped + in flight.
fn conserved(r: &Report) {
    let out = m(r, "rx_delivered") + m(r, "rx_dropped_nic") + m(r, "rx_dropped_software") + m(r, "rx_in_flight") + m(r, "rx_dropped_wire");
    assert_eq!(out, m(r, "rx_offered"));
}

/// The NAPI part calls the kernel's poll with `napi.weight` as its budget:
/// with the NIC raising its interrupt every 4 frames and a weight of 2,
/// each interrupt's first two polls use their whole budget and stay
/// scheduled (`napi_not_done`), the next finds the ring empty and
/// completes. Every frame is taken by a poll in the hot thread's bottom
/// half, none by `net_rx_action` or `nic_isr`'s NIC 0 branch.
#[test]
fn polls_take_at_most_their_budget() {
    let r = run("netperf-hot", &["napi.weight=2", "coalesce.rx_frames=4", "coalesce.rx_usecs=1000"]);
    assert_eq!(m(&r, "napi_max_poll_frames"), 2.0);
    assert!(m(&r, "napi_not_done") > 80.0 && m(&r, "napi_completes") > 40.0, "{} {}", m(&r, "napi_not_done"), m(&r, "napi_completes"));
    assert_eq!(m(&r, "napi_polls"), m(&r, "napi_not_done") + m(&r, "napi_completes"));
    assert!(m(&r, "napi_not_done") >= 1.9 * m(&r, "interrupts"), "two full polls an interrupt");
    assert!(all_served(&r));
    assert!(r.bins[1].get(Bin::BottomHalf) > 0 && r.bins[0].get(Bin::BottomHalf) == 0, "the hot thread polls");
}

/// The top half masks NIC 0's receive cause until the poll's
/// napi_complete_done answers 1: each interrupt schedules the instance
/// once, and none comes while it is scheduled, so interrupts never exceed
/// the enables (the completions that were not deferred) plus the first.
/// With the default weight one poll serves every frame an interrupt found.
#[test]
fn interrupts_stay_masked_while_the_instance_is_scheduled() {
    let r = run("netperf-hot", &[]);
    assert_eq!(m(&r, "napi_schedules"), m(&r, "interrupts"));
    assert!(
        m(&r, "interrupts") <= m(&r, "napi_completes") - m(&r, "napi_deferred") + 1.0,
        "{} interrupts, {} completions",
        m(&r, "interrupts"),
        m(&r, "napi_completes")
    );
    assert!(m(&r, "interrupts") > 100.0);
    assert_eq!(m(&r, "napi_not_done"), 0.0, "a frame every 12 µs never fills a poll of 64");
}

/// napi_complete_done with deferrals answers 0: the kernel leaves its cause
/// masked and the timer polls, so interrupts fall while every frame still
/// arrives.
#[test]
fn deferred_completions_keep_the_kernels_interrupt_masked() {
    let plain = run("netperf-hot", &[]);
    let defer = run("netperf-hot", &["napi.defer_hard_irqs=2", "napi.gro_flush_timeout_ns=20000"]);
    assert!(m(&defer, "napi_deferred") > 50.0 && m(&plain, "napi_deferred") == 0.0);
    assert!(m(&defer, "interrupts") < 0.7 * m(&plain, "interrupts"), "{} vs {}", m(&defer, "interrupts"), m(&plain, "interrupts"));
    assert!(m(&defer, "napi_schedules") > m(&defer, "interrupts"), "the timer schedules polls too");
    assert!(all_served(&defer));
}

/// Threaded NAPI: the kernel's polls run in the NAPI thread, which has no
/// netdev budget, so where NET_RX with a budget of one frame squeezes every
/// run that polled a frame, the thread never squeezes.
#[test]
fn threaded_napi_polls_without_squeezes() {
    let softirq = run("netperf-hot", &["napi.weight=1", "napi.budget=1"]);
    let threaded = run("netperf-hot", &["napi.weight=1", "napi.budget=1", "napi.threaded=true"]);
    assert!(m(&softirq, "napi_time_squeezes") > 100.0);
    assert_eq!(m(&threaded, "napi_time_squeezes"), 0.0);
    assert!(m(&threaded, "napi_polls") > 100.0 && all_served(&threaded));
}

/// Busy polling: the reader's recv, finding socket 0 empty, calls the
/// kernel's poll itself (kernel bin, the application's thread) before it
/// sleeps; preferring busy polling with deferrals the interrupt stays
/// masked and the reader takes most frames.
#[test]
fn the_kernels_recv_busy_polls() {
    let plain = run("netperf-hot", &[]);
    let busy = run("netperf-hot", &["napi.busy_poll_usecs=50"]);
    let prefer = run("netperf-hot", &["napi.busy_poll_usecs=50", "napi.prefer_busy_poll=true", "napi.defer_hard_irqs=2", "napi.gro_flush_timeout_ns=200000"]);
    assert!(m(&busy, "napi_busy_poll_frames") > 20.0, "{}", m(&busy, "napi_busy_poll_frames"));
    assert!(m(&busy, "code_kernel_instructions") > m(&plain, "code_kernel_instructions"));
    assert!(m(&prefer, "napi_busy_poll_frames") > 0.5 * m(&prefer, "rx_delivered"), "{}", m(&prefer, "napi_busy_poll_frames"));
    assert!(m(&prefer, "interrupts") < 0.1 * m(&busy, "interrupts"), "{} vs {}", m(&prefer, "interrupts"), m(&busy, "interrupts"));
}

/// Coalescing on the NAPI path: the NIC raises its receive interrupt every
/// 8 frames, and one poll takes them all.
#[test]
fn the_kernels_nic_coalesces_under_napi() {
    let r = run("netperf-hot", &["coalesce.rx_frames=8", "coalesce.rx_usecs=1000"]);
    assert!(m(&r, "interrupts") <= m(&r, "rx_offered") / 8.0 + 2.0, "{} interrupts", m(&r, "interrupts"));
    assert!(m(&r, "napi_max_poll_frames") >= 8.0);
    assert!(all_served(&r));
}

/// DIM samples where the kernel's poll, told by napi_complete_done,
/// enables its receive cause again, and moves the profile.
#[test]
fn dim_samples_the_kernels_completions() {
    let r = run("netperf-hot", &["coalesce.adaptive_rx=true", "run.duration_ms=6"]);
    assert!(m(&r, "dim_decisions") > 0.0 && m(&r, "dim_profile_changes") > 0.0, "{} {}", m(&r, "dim_decisions"), m(&r, "dim_profile_changes"));
    assert!(m(&r, "interrupts") < 0.9 * m(&r, "rx_offered"));
}

/// The NAT box: the poll forwards through NIC 1, whose transmit-done
/// interrupts still run `nic_isr` beside the NAPI top half.
#[test]
fn the_nat_box_forwards_under_napi() {
    let r = run("nat-hot", &[]);
    assert!(all_served(&r), "{} of {}", m(&r, "rx_delivered"), m(&r, "rx_offered"));
    assert!(m(&r, "napi_completes") > 100.0);
}

/// Same scenario, same numbers, bit for bit.
#[test]
fn napi_on_the_kernel_is_deterministic() {
    let sets = ["napi.defer_hard_irqs=1", "napi.gro_flush_timeout_ns=20000", "napi.busy_poll_usecs=20"];
    let (a, b) = (run("netperf-hot", &sets), run("netperf-hot", &sets));
    assert_eq!(format!("{:?}", a.metrics), format!("{:?}", b.metrics));
}

/// The kernel has one receive ring: RSS queues and RPS backlogs beyond its
/// one NAPI instance are refused at load, naming the key.
#[test]
fn more_instances_than_the_kernel_serves_are_refused() {
    let rss = ["intc.kind=\"msix\"", "rss.kind=\"toeplitz\""];
    let refused = |sets: &[&str]| try_run("netperf-hot", sets).err().expect("refused");
    let queues = refused(&[&rss[..], &["rss.queues=2"]].concat());
    assert!(queues.contains("rss.queues") && queues.contains("serves 1 instance"), "{queues}");
    let rps = refused(&[&rss[..], &["rss.queues=1", "rss.rps_cpus=2"]].concat());
    assert!(rps.contains("rss.rps_cpus") && rps.contains("serves 1 instance"), "{rps}");
    // One queue without RPS is the kernel's own: it runs.
    let one = run("netperf-hot", &[&rss[..], &["rss.queues=1"]].concat());
    assert!(all_served(&one), "{:?}", one.metrics);
}
