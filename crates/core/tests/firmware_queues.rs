//! The programmable NIC with the host's ways of spreading receive work:
//! RSS over several return rings (nic_rss.elf steers each frame by its
//! flow's hash to a ring with its own vector); RPS over its one return
//! ring (the host driver hands each frame's protocol work to the CPU its
//! flow's hash picks), with the abstract host driver and with
//! fw_rx_nics.elf as code; other NICs beside it with its host driver in
//! code; and the refusals of what its firmware or fw_rx.elf does not do.

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
const CODE: &str = "code/rx-firmware.toml";
const FW_RX_NICS: &str = "code.program=\"../../programs/system/fw_rx_nics.elf\"";
/// The host of compose/rx-firmware with its stack, on two CPUs, slower than the wire.
const HOST: [&str; 4] = ["run.duration_ms=3", "workload.rate_per_s=400000", "stack.enabled=true", "cpu.threads=2"];
const RPS: [&str; 3] = ["rss.kind=\"toeplitz\"", "rss.queues=1", "rss.rps_cpus=2"];
const NIC_RSS: &str = "nic_firmware.program=\"../../programs/firmware/nic_rss.elf\"";

/// RSS in the firmware with the abstract host driver: nic_rss.elf returns
/// each frame on the ring its flow's Toeplitz hash picks through the
/// indirection table (the e1000-like NIC's flows and table), and each
/// ring's vector goes to its own CPU, whose NAPI instance takes it: both
/// CPUs take interrupts and poll, and the host delivers about twice what
/// one CPU does. The host checks every frame came back on its flow's ring.
#[test]
fn rss_returns_frames_on_their_flows_rings() {
    let alone = run(ABSTRACT, &HOST);
    let rss = run(ABSTRACT, &[&HOST[..], &[NIC_RSS, "rss.kind=\"toeplitz\"", "rss.queues=2"]].concat());
    let (q0, q1) = (m(&rss, "rss_queue0_frames"), m(&rss, "rss_queue1_frames"));
    assert!(q0 > 0.4 * (q0 + q1) && q1 > 0.4 * (q0 + q1), "{q0} and {q1}");
    assert!(m(&rss, "rss_queue0_interrupts") > 0.0 && m(&rss, "rss_queue1_interrupts") > 0.0);
    for (k, cpu) in rss.bins.iter().enumerate() {
        assert!(cpu.get(Bin::Interrupt) > 0 && cpu.get(Bin::BottomHalf) > 0, "CPU {k} takes its ring's vector and polls it: {cpu:?}");
    }
    assert_eq!(alone.bins[1].get(Bin::Interrupt), 0);
    let delivered = m(&rss, "rx_delivered");
    assert!(delivered > 1.7 * m(&alone, "rx_delivered"), "{delivered} against {}", m(&alone, "rx_delivered"));
    assert!(m(&rss, "rx_dropped_nic") < m(&alone, "rx_dropped_nic"));
    // Four rings over two CPUs (vector k to CPU k mod 2): every ring used.
    let four = run(ABSTRACT, &[&HOST[..], &[NIC_RSS, "rss.kind=\"toeplitz\"", "rss.queues=4"]].concat());
    for q in 0..4 {
        assert!(m(&four, &format!("rss_queue{q}_frames")) > 0.15 * m(&four, "rx_offered"), "ring {q}");
        assert!(m(&four, &format!("rss_queue{q}_interrupts")) > 0.0, "ring {q}");
    }
    let again = run(ABSTRACT, &[&HOST[..], &[NIC_RSS, "rss.kind=\"toeplitz\"", "rss.queues=2"]].concat());
    assert_eq!(format!("{:?}", rss.metrics), format!("{:?}", again.metrics));
}

/// The firmware's steering is the e1000-like NIC's: the same flows drawn
/// from the same seed land on the same queues, frame for frame counted.
#[test]
fn the_firmware_steers_as_the_e1000_like_nic() {
    let sets = ["run.duration_ms=1", "workload.rate_per_s=200000", "cpu.threads=2", "rss.kind=\"toeplitz\"", "rss.queues=4", "rss.flow_skew=1.0"];
    let fw = run(ABSTRACT, &[&sets[..], &[NIC_RSS]].concat());
    let e1000 = run(
        "livelock/receiver.toml",
        &[&sets[..], &["irq_path.kind=\"napi\"", "workload.process=\"periodic\"", "workload.packet_bytes=1518", "nic.link_mbps=10000.0"]].concat(),
    );
    assert_eq!(m(&fw, "rx_offered"), m(&e1000, "rx_offered"));
    for q in 0..4 {
        let key = format!("rss_queue{q}_frames");
        assert_eq!(m(&fw, &key), m(&e1000, &key), "{key}");
    }
}

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

/// RSS and RPS together with the abstract host driver: nic_rss.elf returns
/// each frame on its flow's ring, the ring's vector goes to CPU 0 or 1,
/// whose NAPI poll hands the protocol's part to the backlog of one of four
/// CPUs by the same hash: both rings interrupt, and CPUs 2 and 3, which
/// take no interrupt, run NET_RX for the frames handed to them.
#[test]
fn rss_and_rps_together_on_the_firmware() {
    let sets = [&HOST[..], &[NIC_RSS, "rss.kind=\"toeplitz\"", "rss.queues=2", "cpu.threads=4", "rss.rps_cpus=4"]].concat();
    let r = run(ABSTRACT, &sets);
    assert!(m(&r, "rss_queue0_interrupts") > 0.0 && m(&r, "rss_queue1_interrupts") > 0.0);
    for cpu in &r.bins[2..] {
        assert!(cpu.get(Bin::Interrupt) == 0 && cpu.get(Bin::BottomHalf) > 0, "RPS's CPUs run NET_RX only: {cpu:?}");
    }
    let (remote, delivered) = (m(&r, "rps_remote_frames"), m(&r, "rx_delivered"));
    assert!(remote > 0.3 * delivered, "{remote} of {delivered}");
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
    let e = failure(ABSTRACT, &[&HOST[..], &["rss.kind=\"toeplitz\"", "rss.queues=2"]].concat());
    assert!(e.contains("`nic_firmware.program`") && e.contains("one ring") && e.contains("nic_rss.elf") && !e.contains('\n'), "{e}");
    let e = refusal(ABSTRACT, &[&HOST[..], &["rss.kind=\"toeplitz\"", "rss.queues=1"]].concat());
    assert!(e.contains("`rss.kind`") && e.contains("rss.rps_cpus"), "{e}");
    // fw_rx.elf serves the return ring only: RPS and other NICs need fw_rx_nics.elf.
    let e = failure(CODE, &["irq_path.kind=\"napi\"", "cpu.threads=2", "rss.kind=\"toeplitz\"", "rss.queues=1", "rss.rps_cpus=2"]);
    assert!(e.contains("`rss.rps_cpus`") && e.contains("fw_rx_nics.elf") && !e.contains('\n'), "{e}");
    let e = failure(CODE, &[OTHER]);
    assert!(e.contains("`nics.others`") && e.contains("nic_other_isr"), "{e}");
}

/// A scenario that loads but cannot be built: its one line.
fn failure(file: &str, sets: &[&str]) -> String {
    match simulate(&load(file, sets).unwrap(), &dir().join("code"), Record::default()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{sets:?} ran"),
    }
}

/// RPS with the host driver as code (fw_rx_nics.elf): the return ring's
/// poll asks the kernel for each frame's CPU (get_rps_cpu) and queues it to
/// that CPU's backlog, whose poll hands it to the socket. The machine
/// checks each delivered frame is whole and the next of its flow (RPS
/// keeps order within a flow, not across); every frame is delivered.
#[test]
fn rps_with_the_host_driver_as_code() {
    let sets = [FW_RX_NICS, "irq_path.kind=\"napi\"", "cpu.threads=2", "rss.kind=\"toeplitz\"", "rss.queues=1", "rss.rps_cpus=2"];
    let r = run(CODE, &sets);
    let (offered, delivered) = (m(&r, "rx_offered"), m(&r, "rx_delivered"));
    assert!(delivered + m(&r, "rx_in_flight") == offered && delivered > offered - 5.0, "{delivered} of {offered}");
    let remote = m(&r, "rps_remote_frames");
    assert!(remote > 0.35 * delivered && remote < 0.65 * delivered, "{remote} of {delivered}");
    assert!(r.code_bins[1][Bin::BottomHalf as usize].instructions > 0, "CPU 1 runs its backlog's polls");
    // One CPU: RPS to CPU 0 only, nothing remote.
    let one = run(CODE, &[&sets[..5], &["rss.rps_cpus=1"]].concat());
    assert_eq!(m(&one, "rps_remote_frames"), 0.0);
    assert!(m(&one, "rx_delivered") > offered - 5.0, "{}", m(&one, "rx_delivered"));
}

/// RSS with the host driver as code (fw_rx_rss.elf over nic_rss.elf):
/// each return ring's vector goes to its CPU, whose NAPI instance walks
/// that ring alone; the machine checks every delivered frame is whole and
/// the next of its flow. Frames spread by flow over the rings, both CPUs
/// run top halves, every frame is delivered; fw_rx.elf (one ring) is refused.
#[test]
fn rss_with_the_host_driver_as_code() {
    let sets = [
        NIC_RSS,
        "code.program=\"../../programs/system/fw_rx_rss.elf\"",
        "irq_path.kind=\"napi\"",
        "intc.kind=\"msix\"",
        "cpu.threads=2",
        "rss.kind=\"toeplitz\"",
    ];
    for queues in [2, 4] {
        let r = run(CODE, &[&sets[..], &[&format!("rss.queues={queues}")]].concat());
        let (offered, delivered) = (m(&r, "rx_offered"), m(&r, "rx_delivered"));
        assert!(delivered + m(&r, "rx_in_flight") == offered && delivered > offered - 5.0, "{queues}: {delivered} of {offered}");
        for q in 0..queues {
            let (frames, irqs) = (m(&r, &format!("rss_queue{q}_frames")), m(&r, &format!("rss_queue{q}_interrupts")));
            assert!(frames > 0.6 * offered / queues as f64 && irqs > 0.0, "{queues}: ring {q}: {frames} frames, {irqs} interrupts");
        }
        for cpu in 0..2 {
            assert!(r.code_bins[cpu][Bin::Interrupt as usize].instructions > 0, "{queues}: CPU {cpu} takes its rings' vectors");
        }
    }
    let e = failure(CODE, &[&sets[..1], &sets[2..], &["rss.queues=2"]].concat());
    assert!(e.contains("`rss.queues`") && e.contains("fw_rx_rss.elf") && !e.contains('\n'), "{e}");
}

const OTHER: &str = "nics.others=[{rate_per_s = 20000.0, packet_bytes = 500, link_mbps = 1000.0}]";

/// Other NICs beside the programmable NIC with fw_rx_nics.elf as its host
/// driver: each other NIC's frames land in the ring the driver gave it and
/// reach the socket by tag, the firmware's by the checked FRAME, on the
/// Linux path (nic_other_isr) and on NAPI (an instance per NIC); every
/// frame of each NIC is counted once.
#[test]
fn other_nics_beside_the_firmware_with_code() {
    for path in ["linux", "napi"] {
        let path = format!("irq_path.kind=\"{path}\"");
        let r = run(CODE, &[FW_RX_NICS, OTHER, &path]);
        let (first, other) = (m(&r, "nic0_rx_offered"), m(&r, "nic1_rx_offered"));
        assert!(first >= 399.0 && other >= 39.0, "{path}: {first}, {other}");
        assert_eq!(m(&r, "nic1_rx_taken") + m(&r, "nic1_rx_dropped"), other, "{path}: NIC 1's frames each taken or dropped");
        assert!(m(&r, "nic1_rx_taken") >= other - 1.0, "{path}");
        assert!(m(&r, "rx_delivered") >= first + other - 5.0, "{path}: {} delivered", m(&r, "rx_delivered"));
        assert!(m(&r, "nic_firmware_interrupts") > 0.0 && m(&r, "nic1_interrupts") > 0.0, "{path}");
    }
    let a = run(CODE, &[FW_RX_NICS, OTHER]);
    let b = run(CODE, &[FW_RX_NICS, OTHER]);
    assert_eq!(format!("{:?}", a.metrics), format!("{:?}", b.metrics));
}
