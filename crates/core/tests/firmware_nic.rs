//! The programmable NIC as the machine's NIC (`[nic_firmware]`): frames go
//! wire → firmware → host memory → host driver → socket exactly once and in
//! order at every core count, the host's parts combine with it, and bad
//! firmware or keys it replaces are refused with one line.

use irqsim_core::{Error, Record, Report, Scenario, parse_override, simulate};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios")
}

fn load(sets: &[&str]) -> Result<Scenario, Error> {
    let mut all = vec!["run.duration_ms=1"];
    all.extend_from_slice(sets);
    let o: Vec<_> = all.iter().map(|s| parse_override(s).unwrap()).collect();
    Scenario::from_file(&dir().join("compose/rx-firmware.toml"), &o)
}

fn try_run(sets: &[&str]) -> Result<Report, Error> {
    simulate(&load(sets)?, &dir().join("compose"), Record::default())
}

fn run(sets: &[&str]) -> Report {
    let r = try_run(sets).unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r.check_invariants().unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r
}

fn m(r: &Report, key: &str) -> f64 {
    r.metric(key).unwrap_or_else(|| panic!("no metric {key}"))
}

/// Below what the host and the firmware can take, every frame arrives and
/// nothing is dropped, on 1, 2, 4 and 6 cores (the host checks each
/// returned frame's number, length and buffer: a frame lost, duplicated or
/// out of order would end the run with an invariant error).
#[test]
fn every_frame_once_and_in_order_at_each_core_count() {
    for cores in ["1", "2", "4", "6"] {
        let r = run(&[&format!("nic_firmware.cores={cores}"), "workload.rate_per_s=200000", "run.duration_ms=2"]);
        let (offered, delivered) = (m(&r, "rx_offered"), m(&r, "rx_delivered"));
        assert!(offered >= 399.0, "{cores} cores: {offered} offered");
        assert_eq!(m(&r, "rx_dropped_nic"), 0.0, "{cores} cores");
        assert!(delivered + m(&r, "rx_in_flight") == offered && delivered > offered - 10.0, "{cores} cores: {delivered} of {offered}");
        // The firmware's DMA latencies (1 µs read, 250 ns write) and the
        // wire's 1.2 µs are the least a frame takes.
        assert!(m(&r, "latency_min_us") > 2.0, "{cores} cores: {}", m(&r, "latency_min_us"));
    }
}

/// Frames from the wire are given to the NIC ahead: its cores run on past
/// them instead of stopping at each (the loop handles far fewer events
/// than frames offered), and each is still counted once, taken or dropped
/// by the MAC (the invariants), on one core and on four.
#[test]
fn the_wire_does_not_stop_the_nic() {
    for cores in ["1", "4"] {
        let r = run(&[&format!("nic_firmware.cores={cores}"), "workload.rate_per_s=5000000", "run.duration_ms=2"]);
        let offered = m(&r, "rx_offered");
        assert!(offered > 9_000.0 && m(&r, "rx_dropped_nic") > 0.0, "{cores} cores: {offered} offered");
        assert!(m(&r, "events") < offered / 4.0, "{cores} cores: {} events for {offered} frames", m(&r, "events"));
    }
}

/// A host slower than the wire starves the firmware of receive buffers:
/// the MAC drops (not the host), at most the ring's 256 frames wait.
#[test]
fn a_slow_host_makes_the_mac_drop() {
    let r = run(&["run.duration_ms=3"]);
    assert!(m(&r, "rx_dropped_nic") > 0.3 * m(&r, "rx_offered"));
    assert!(m(&r, "rx_in_flight") <= 256.0 + 64.0 + 8.0, "{}", m(&r, "rx_in_flight"));
    assert_eq!(m(&r, "rx_dropped_backlog"), 0.0);
}

/// Giants (longer than Ethernet's 1,518 bytes) are dropped by the MAC.
#[test]
fn the_mac_drops_giants() {
    let r = run(&["workload.packet_bytes=4000", "workload.rate_per_s=10000"]);
    assert!(m(&r, "rx_offered") >= 9.0);
    assert_eq!(m(&r, "rx_dropped_nic"), m(&r, "rx_offered"));
}

#[test]
fn the_same_run_twice_is_the_same() {
    let a = run(&["nic_firmware.cores=4"]);
    let b = run(&["nic_firmware.cores=4"]);
    assert_eq!(format!("{:?}", a.metrics), format!("{:?}", b.metrics));
}

/// The host's parts combine with the programmable NIC: each controller,
/// the mt, Linux and NAPI paths, contexts per level, SMT, critical sections
/// and a device on another controller. Each run delivers and keeps its
/// invariants; the NAPI path polls and the other device is serviced.
#[test]
fn host_parts_combine() {
    let light = "workload.rate_per_s=100000";
    let cases: &[&[&str]] = &[
        &["intc.kind=\"direct\"", "irq_path.kind=\"mt\""],
        &["intc.kind=\"ioapic\"", "irq_path.kind=\"linux\""],
        &["intc.kind=\"xtpic\"", "irq_path.kind=\"napi\""],
        &["intc.kind=\"msi\"", "irq_path.kind=\"napi\"", "napi.threaded=true"],
        &["cpu.threads=2", "nic.irq_thread=1", "cpu.context_policy=\"multithreaded\""],
        &["masking.driver_section_cycles=200"],
        &["sources.others=[{rate_per_s = 2000.0, isr_cycles = 3000, intc = \"ioapic\"}]"],
    ];
    for sets in cases {
        let mut all = vec![light, "run.duration_ms=2"];
        all.extend_from_slice(sets);
        let r = run(&all);
        assert!(m(&r, "rx_delivered") > 0.9 * m(&r, "rx_offered"), "{sets:?}");
        assert!(m(&r, "interrupts") > 0.0, "{sets:?}");
    }
    let napi = run(&[light, "run.duration_ms=2"]);
    assert!(m(&napi, "napi_polls") > 0.0);
    let other = run(&[light, "run.duration_ms=2", "sources.others=[{rate_per_s = 2000.0, isr_cycles = 3000, intc = \"ioapic\"}]"]);
    assert!(m(&other, "source1_serviced") >= 3.0);
}

/// More NIC cores take more frames per second when the firmware is the
/// bottleneck (64-byte frames at 10 Gb/s, a host that costs little).
#[test]
fn more_nic_cores_take_more_small_frames() {
    let small = ["workload.packet_bytes=64", "workload.rate_per_s=14880952", "driver.isr_rx_done_cycles=20", "run.duration_ms=0.5"];
    let taken = |cores: &str| {
        let mut sets = small.to_vec();
        let c = format!("nic_firmware.cores={cores}");
        sets.push(&c);
        let r = run(&sets);
        m(&r, "rx_offered") - m(&r, "rx_dropped_nic")
    };
    let (one, six) = (taken("1"), taken("6"));
    assert!(six > 1.5 * one, "1 core: {one}, 6 cores: {six}");
}

/// The host sends through the firmware's send ring (a closed-loop sender:
/// the next send when the last call returns): every frame posted goes on
/// the wire once and in order (the wire's check would end the run), and
/// the firmware's completions come back to the driver to clean.
#[test]
fn the_host_sends_through_the_firmware() {
    let o: Vec<_> = ["run.duration_ms=1", "driver.send_cycles=500"].iter().map(|s| parse_override(s).unwrap()).collect();
    let text = std::fs::read_to_string(dir().join("compose/rx-firmware.toml")).unwrap();
    let text = text.replace(
        "kind = \"arrivals\"\nprocess = \"periodic\"\nrate_per_s = 812743.8           # 10 Gb/s of 1518-byte frames: 1e10 / ((1518 + 20) x 8)",
        "kind = \"flood\"\ndirection = \"tx\"",
    );
    let s = Scenario::from_toml(&text, "tx.toml", &o).unwrap();
    let r = simulate(&s, &dir().join("compose"), Record::default()).unwrap();
    r.check_invariants().unwrap();
    let sent = m(&r, "tx_sent");
    assert!(sent > 500.0, "{sent}");
    assert_eq!(m(&r, "tx_offered"), sent + m(&r, "tx_dropped") + m(&r, "tx_in_flight"));
    assert!(m(&r, "tx_throughput_mbps") > 5000.0, "{}", m(&r, "tx_throughput_mbps"));
}

fn refused(sets: &[&str]) -> String {
    match load(sets) {
        Err(e) => e.to_string(),
        Ok(s) => match simulate(&s, &dir().join("compose"), Record::default()) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{sets:?} ran"),
        },
    }
}

#[test]
fn what_the_programmable_nic_replaces_is_refused_by_name() {
    for (set, key) in [
        ("nic.rx_buffer_bytes=65536", "nic.rx_buffer_bytes"),
        ("nic.dma_bytes_per_cycle=4", "nic.dma_bytes_per_cycle"),
        ("bus.link_mbps=8000", "bus.link_mbps"),
    ] {
        let e = refused(&[set]);
        assert!(e.contains(&format!("`{key}`")) && e.contains("programmable"), "{set}: {e}");
    }
    let e = refused(&["nic_firmware.organisation=\"task\""]);
    assert!(e.contains("nic_firmware.organisation") && e.contains("owners"), "{e}");
    let e = refused(&["nic_firmware.traffic=\"send\""]);
    assert!(e.contains("nic_firmware.traffic"), "{e}");
}

#[test]
fn a_firmware_key_without_the_firmware_is_refused() {
    let o = [parse_override("nic_firmware.cores=2").unwrap()];
    let e = Scenario::from_file(&dir().join("livelock/receiver.toml"), &o).unwrap_err().to_string();
    assert!(e.contains("nic_firmware.cores") && e.contains("nic_firmware.program"), "{e}");
}

/// A program that is not the firmware (no `fw_main`), and one that is not
/// an ELF, each give one line naming the key.
#[test]
fn a_program_that_is_not_the_firmware_is_refused() {
    let e = refused(&["nic_firmware.program=\"../../programs/system/rx_min.elf\""]);
    assert!(e.contains("nic_firmware.program") && e.contains("fw_main"), "{e}");
    let e = refused(&["nic_firmware.program=\"rx-firmware.toml\""]);
    assert!(e.contains("nic_firmware.program") && !e.contains('\n'), "{e}");
}

/// A quiet stretch of firmware (no frames for a long time) still sees
/// Ctrl-C: the machine pulses its monitor after each slice of NIC cycles,
/// without counting them as events.
#[test]
fn ctrl_c_reaches_a_quiet_nic() {
    struct StopAtPulse(u64);
    impl irqsim_core::Monitor for StopAtPulse {
        fn poll(&mut self, _: u64, _: u64) -> bool {
            true
        }
        fn pulse(&mut self, _: u64, _: u64) -> bool {
            self.0 += 1;
            self.0 < 3
        }
    }
    let s = load(&["workload.rate_per_s=10", "run.duration_ms=50"]).unwrap();
    let mut stop = StopAtPulse(0);
    let Err(e) = irqsim_core::simulate_with(&s, &dir().join("compose"), Record::default(), &mut stop) else { panic!("ran to its end") };
    assert!(matches!(e, Error::Cancelled { at, .. } if at < 10_000_000), "{e}");
    assert_eq!(stop.0, 3);
}
