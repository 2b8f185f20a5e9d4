//! DIM on the programmable NIC, and coalescing with RSS in its firmware.
//!
//! - DIM (`coalesce.adaptive_rx`) is the host's, as on the e1000-like NIC:
//!   it samples at each NAPI poll's end (with kernel code, where the driver
//!   enables its receive cause again) and writes the profile it picks into
//!   the firmware's coalescing words (nic_coal.elf's `fw_coal`), which the
//!   firmware's next batch and next timer use.
//! - nic_rss_coal.elf (fw.c with `-DFW_RSS -DFW_COAL`) keeps a frame count
//!   and a deadline per return ring on the NIC's one timer; DIM then runs
//!   per ring, as Linux's per queue.

mod common;

use common::{load, m, run};
use irqsim_core::{Record, simulate};

const ABSTRACT: &str = "compose/rx-firmware";
const CODE: &str = "code/rx-firmware";
const NIC_COAL: &str = "nic_firmware.program=\"../../programs/firmware/nic_coal.elf\"";
const NIC_RSS_COAL: &str = "nic_firmware.program=\"../../programs/firmware/nic_rss_coal.elf\"";
const DIM: &str = "coalesce.adaptive_rx=true";
/// compose/rx-firmware with a host that keeps up.
const HOST: [&str; 2] = ["driver.isr_rx_done_cycles=1000", "irq_path.kind=\"napi\""];
/// Two return rings, a CPU each, and two NIC cores (one does not keep up with steering at 400,000 frames/s).
const RINGS: [&str; 4] = ["cpu.threads=2", "rss.kind=\"toeplitz\"", "rss.queues=2", "nic_firmware.cores=2"];

/// `base` for `ms` at `rate` frames/s, on one NIC core unless `more` says
/// (one keeps up with one ring's 200,000 frames/s, and runs fastest).
fn at(base: &str, ms: u32, rate: f64, more: &[&str]) -> irqsim_core::Report {
    let mut sets = vec![format!("run.duration_ms={ms}"), format!("workload.rate_per_s={rate}")];
    if !more.iter().any(|s| s.starts_with("nic_firmware.cores")) {
        sets.push("nic_firmware.cores=1".into());
    }
    if base == ABSTRACT {
        sets.extend(HOST.iter().map(|s| s.to_string()));
    }
    sets.extend(more.iter().map(|s| s.to_string()));
    run(base, &sets.iter().map(String::as_str).collect::<Vec<_>>())
}

/// A scenario that is refused, at load or when the machine is built: its one line.
fn refusal(base: &str, sets: &[&str]) -> String {
    match load(base, sets) {
        Err(e) => e,
        Ok((s, path)) => simulate(&s, path.parent().unwrap(), Record::default()).err().expect("refused").to_string(),
    }
}

/// At 10,000 frames/s DIM settles on its short profiles (8 us or less)
/// and the median latency is far below a fixed 128 us timer's; at
/// 200,000 frames/s it walks to its long ones, and the firmware, given
/// them, interrupts far less often than at DIM's starting profile held
/// fixed (8 us): the host's writes reach the firmware.
#[test]
fn dim_tunes_the_firmwares_coalescing_with_the_load() {
    let low = at(ABSTRACT, 40, 10_000.0, &[NIC_COAL, DIM]);
    let long = at(ABSTRACT, 10, 10_000.0, &[NIC_COAL, "coalesce.rx_usecs=128", "coalesce.rx_frames=256"]);
    assert!(
        m(&low, "dim_decisions") >= 5.0 && m(&low, "dim_final_profile") <= 1.0,
        "{} decisions, profile {}",
        m(&low, "dim_decisions"),
        m(&low, "dim_final_profile")
    );
    assert!(m(&low, "latency_p50_us") + 20.0 < m(&long, "latency_p50_us"), "{} against {}", m(&low, "latency_p50_us"), m(&long, "latency_p50_us"));
    let high = at(ABSTRACT, 30, 200_000.0, &[NIC_COAL, DIM]);
    let start = at(ABSTRACT, 30, 200_000.0, &[NIC_COAL, "coalesce.rx_usecs=8", "coalesce.rx_frames=256"]);
    assert!(m(&high, "dim_final_profile") >= 3.0, "profile {}", m(&high, "dim_final_profile"));
    let (tuned, fixed) = (m(&high, "nic_firmware_interrupts"), m(&start, "nic_firmware_interrupts"));
    assert!(tuned < 0.3 * fixed, "{tuned} firmware interrupts against {fixed} at DIM's first profile");
    let per = |r: &irqsim_core::Report| m(r, "rx_delivered") / m(r, "interrupts");
    assert!(per(&high) > 5.0 * per(&low), "{} frames an interrupt against {}", per(&high), per(&low));
    assert!(m(&high, "coalesce_timer_interrupts") > 0.0 && m(&high, "rx_delivered") > m(&high, "rx_offered") - 100.0);
    // The same run, bit for bit.
    assert_eq!(format!("{:?}", high.metrics), format!("{:?}", at(ABSTRACT, 30, 200_000.0, &[NIC_COAL, DIM]).metrics));
}

/// With kernel code as the driver (fw_rx.elf, unchanged) DIM samples where
/// the driver enables its receive cause again, as with kernel code's
/// e1000-like NIC: short profiles at low load, long ones at high load.
#[test]
fn dim_tunes_the_firmware_for_kernel_code() {
    let low = at(CODE, 30, 10_000.0, &[NIC_COAL, DIM]);
    assert!(m(&low, "dim_decisions") >= 3.0 && m(&low, "dim_final_profile") <= 1.0 && m(&low, "latency_p50_us") < 30.0);
    let high = at(CODE, 30, 200_000.0, &[NIC_COAL, DIM]);
    assert!(m(&high, "dim_final_profile") >= 3.0, "profile {}", m(&high, "dim_final_profile"));
    assert!(m(&high, "rx_delivered") > 10.0 * m(&high, "interrupts") && m(&high, "rx_delivered") > m(&high, "rx_offered") - 100.0);
}

/// nic_rss_coal.elf moderates each ring on its own: at 100,000 frames/s a
/// 20 us timer per ring covers about two frames an interrupt and no frame
/// waits much past it (a ring whose deadline the shared timer missed
/// would wait for the next frame); at 400,000 frames/s the count of 8 fires.
/// Without `[coalesce]` it interrupts per batch as nic_rss.elf does.
#[test]
fn each_return_ring_coalesces_on_its_own() {
    let plain = at(ABSTRACT, 10, 100_000.0, &[&RINGS[..], &[NIC_RSS_COAL]].concat());
    let slow = at(ABSTRACT, 10, 100_000.0, &[&RINGS[..], &[NIC_RSS_COAL, "coalesce.rx_usecs=20", "coalesce.rx_frames=0"]].concat());
    assert!(m(&slow, "interrupts") < 0.6 * m(&plain, "interrupts"), "{} against {}", m(&slow, "interrupts"), m(&plain, "interrupts"));
    assert!(m(&slow, "coalesce_timer_interrupts") > 0.0 && m(&slow, "coalesce_frame_interrupts") == 0.0);
    assert!(m(&slow, "latency_p99_us") < 40.0, "p99 {}", m(&slow, "latency_p99_us"));
    assert!(m(&slow, "rss_queue0_interrupts") > 100.0 && m(&slow, "rss_queue1_interrupts") > 100.0);
    let fast = at(ABSTRACT, 10, 400_000.0, &[&RINGS[..], &[NIC_RSS_COAL, "coalesce.rx_usecs=20", "coalesce.rx_frames=8"]].concat());
    let offered = m(&fast, "rx_offered");
    assert!(
        m(&fast, "coalesce_frame_interrupts") > offered / 16.0 && m(&fast, "coalesce_frame_interrupts") < offered / 7.0,
        "{}",
        m(&fast, "coalesce_frame_interrupts")
    );
    for r in [&slow, &fast] {
        assert!(m(r, "rx_delivered") + m(r, "rx_in_flight") == m(r, "rx_offered") && m(r, "rx_in_flight") < 20.0);
    }
}

/// Kernel code's driver of several rings (fw_rx_rss.elf) takes each
/// ring's moderated interrupts; DIM runs per ring.
#[test]
fn rings_coalesce_and_tune_for_kernel_code() {
    let code = ["irq_path.kind=\"napi\"", "intc.kind=\"msix\"", "code.program=\"../../programs/system/fw_rx_rss.elf\"", NIC_RSS_COAL];
    let plain = at(CODE, 10, 200_000.0, &[&RINGS[..], &code].concat());
    let r = at(CODE, 10, 200_000.0, &[&RINGS[..], &code, &["coalesce.rx_usecs=20", "coalesce.rx_frames=8"]].concat());
    assert!(m(&r, "interrupts") < 0.4 * m(&plain, "interrupts") && m(&r, "rx_delivered") > m(&r, "rx_offered") - 10.0);
    let tuned = at(CODE, 30, 200_000.0, &[&RINGS[..], &code, &[DIM]].concat());
    assert!(m(&tuned, "dim_decisions") >= 4.0 && m(&tuned, "dim_final_profile_min") >= 3.0, "{}", m(&tuned, "dim_decisions"));
    assert!(m(&tuned, "rss_queue0_interrupts") > 0.0 && m(&tuned, "rss_queue1_interrupts") > 0.0);
}

/// Firmware that cannot take the host's values is refused naming the
/// program it needs; CQE's timer restart, which the firmware lacks, names its key.
#[test]
fn what_the_firmware_cannot_moderate_is_refused() {
    let e = refusal(ABSTRACT, &["irq_path.kind=\"napi\"", DIM]);
    assert!(e.contains("`nic_firmware.program`") && e.contains("nic_coal.elf") && !e.contains('\n'), "{e}");
    let rss = "nic_firmware.program=\"../../programs/firmware/nic_rss.elf\"";
    let e = refusal(ABSTRACT, &[&RINGS[..], &["irq_path.kind=\"napi\"", rss, "coalesce.rx_usecs=20", "coalesce.rx_frames=8"]].concat());
    assert!(e.contains("nic_rss_coal.elf") && !e.contains('\n'), "{e}");
    let e = refusal(ABSTRACT, &[&RINGS[..], &["irq_path.kind=\"napi\"", NIC_COAL, DIM]].concat());
    assert!(e.contains("steers") && e.contains("nic_rss_coal.elf") && !e.contains('\n'), "{e}");
    let e = refusal(ABSTRACT, &["irq_path.kind=\"napi\"", NIC_COAL, DIM, "coalesce.dim_mode=\"cqe\""]);
    assert!(e.contains("`coalesce.dim_mode`") && e.contains("EQE") && !e.contains('\n'), "{e}");
}
