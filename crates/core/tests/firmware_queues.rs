//! The programmable NIC with the host's ways of spreading receive work:
//! RPS over its one return ring (the host driver hands each frame's
//! protocol work to the CPU its flow's hash picks), and the refusals of
//! what its firmware or its host driver in code does not do.

use irqsim_core::cpu::Bin;
use irqsim_core::{Error, Record, Report, Scenario, parse_override, simulate};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios")
}

fn load(file: &str, sets: &[&str]) -> Result<Scenario, Error> {
    let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    Scenario::from_file(&dir().join(file), &o)
}

fn run(file: &str, sets: &[&str]) -> Report {
    let r = simulate(&load(file, sets).unwrap(), &dir().join("compose"), Record::default()).unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r.check_invariants().unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r
}

fn m(r: &Report, key: &str) -> f64 {
    r.metric(key).unwrap_or_else(|| panic!("no metric {key}"))
}

const ABSTRACT: &str = "compose/rx-firmware.toml";
/// The host of compose/rx-firmware with its stack, on two CPUs, slower than the wire.
const HOST: [&str; 4] = ["run.duration_ms=3", "workload.rate_per_s=400000", "stack.enabled=true", "cpu.threads=2"];
const RPS: [&str; 3] = ["rss.kind=\"toeplitz\"", "rss.queues=1", "rss.rps_cpus=2"];

/// RPS with the abstract host driver: CPU 0 polls the return ring and
/// runs the driver's part of each frame; the protocol's part goes to the
/// backlog of the CPU the flow's hash picks, so CPU 1, idle without RPS,
/// runs NET_RX, and the host delivers more before the firmware's MAC drops.
#[test]
fn rps_spreads_the_returned_frames_over_cpus() {
    let alone = run(ABSTRACT, &HOST);
    let rps = run(ABSTRACT, &[&HOST[..], &RPS[..]].concat());
    assert_eq!(m(&alone, "thread1_busy_share"), 0.0);
    assert!(m(&rps, "thread1_busy_share") > 0.5, "{}", m(&rps, "thread1_busy_share"));
    let cpu1 = rps.bins[1];
    assert!(cpu1.get(Bin::BottomHalf) > 0 && cpu1.get(Bin::Interrupt) == 0, "CPU 1 runs NET_RX only: {cpu1:?}");
    // Uniform flows over two CPUs: about half the frames go to the other one.
    let (remote, delivered) = (m(&rps, "rps_remote_frames"), m(&rps, "rx_delivered"));
    assert!(remote > 0.35 * delivered && remote < 0.65 * delivered, "{remote} of {delivered}");
    assert!(delivered > 1.5 * m(&alone, "rx_delivered"), "{delivered} against {}", m(&alone, "rx_delivered"));
    assert!(m(&rps, "rx_dropped_nic") < m(&alone, "rx_dropped_nic"));
    // The firmware's own work is the host's business only through its buffers.
    assert!(m(&rps, "nic_firmware_interrupts") > 0.0);
    let again = run(ABSTRACT, &[&HOST[..], &RPS[..]].concat());
    assert_eq!(format!("{:?}", rps.metrics), format!("{:?}", again.metrics));
}

fn refusal(file: &str, sets: &[&str]) -> String {
    match load(file, sets) {
        Err(e) => e.to_string(),
        Ok(s) => panic!("{sets:?} loaded: {:?}", s.rss),
    }
}

/// What neither the firmware nor fw_rx.c does is refused, one line naming the key.
#[test]
fn what_the_firmware_does_not_spread_is_refused() {
    let e = refusal(ABSTRACT, &[&HOST[..], &["rss.kind=\"toeplitz\"", "rss.queues=2"]].concat());
    assert!(e.contains("`rss.queues`") && e.contains("one ring") && !e.contains('\n'), "{e}");
    let e = refusal(ABSTRACT, &[&HOST[..], &["rss.kind=\"toeplitz\"", "rss.queues=1"]].concat());
    assert!(e.contains("`rss.kind`") && e.contains("rss.rps_cpus"), "{e}");
    let e = refusal("code/rx-firmware.toml", &["irq_path.kind=\"napi\"", "cpu.threads=2", "rss.kind=\"toeplitz\"", "rss.queues=1", "rss.rps_cpus=2"]);
    assert!(e.contains("`rss.rps_cpus`") && e.contains("fw_rx"), "{e}");
}
