//! The programmable NIC with its host driver as kernel code
//! (`code/rx-firmware`: programs/system/fw_rx.c beside `[nic_firmware]`):
//! wire → firmware → the kernel's memory → the driver's code → the socket,
//! each frame once, in order and whole, checked on what the socket
//! delivers; each check caught on a planted wrong frame; the send path
//! through the firmware; the host's parts around it.

use irqsim_core::{Error, Record, Report, Scenario, parse_override, simulate};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/code")
}

fn run_file(path: &Path, sets: &[&str]) -> Result<Report, Error> {
    let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    simulate(&Scenario::from_file(path, &o)?, &dir(), Record::default())
}

fn try_run(sets: &[&str]) -> Result<Report, Error> {
    run_file(&dir().join("rx-firmware.toml"), sets)
}

fn run(sets: &[&str]) -> Report {
    let r = try_run(sets).unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r.check_invariants().unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r
}

fn m(r: &Report, key: &str) -> f64 {
    r.metric(key).unwrap_or_else(|| panic!("no metric {key}"))
}

const CORES: [&str; 4] = ["1", "2", "4", "6"];

/// Below what the host takes, every frame the wire brings reaches the
/// application, at 1, 2, 4 and 6 NIC cores: the machine checks each one the
/// socket delivers (the next frame the MAC accepted, its bytes as
/// received), so a frame lost, duplicated, reordered or changed would end
/// the run. The driver's cycles are code's, in the bins.
#[test]
fn every_frame_once_and_in_order_at_each_core_count() {
    for cores in CORES {
        let r = run(&[&format!("nic_firmware.cores={cores}")]);
        let (offered, delivered) = (m(&r, "rx_offered"), m(&r, "rx_delivered"));
        assert!(offered >= 399.0, "{cores} cores: {offered} offered");
        assert_eq!(m(&r, "rx_dropped_nic") + m(&r, "rx_dropped_backlog"), 0.0, "{cores} cores");
        assert!(delivered + m(&r, "rx_in_flight") == offered && delivered > offered - 5.0, "{cores} cores: {delivered} of {offered}");
        assert!(m(&r, "code_interrupt_instructions") > 0.0 && m(&r, "code_bottom_half_instructions") > 0.0, "{cores} cores: the driver ran as code");
        // The firmware's two DMA round trips and the wire's 1.2 µs are the least a frame takes.
        assert!(m(&r, "latency_min_us") > 2.0, "{cores} cores: {}", m(&r, "latency_min_us"));
    }
}

/// Each of the checks on what the socket delivers catches its planted
/// fault (the driver's `plant`): frame 10 delivered twice, frame 10 queued
/// after frame 11, a byte of frame 10 changed; at every core count.
#[test]
fn each_check_catches_a_planted_wrong_frame() {
    let plants = [
        ("1", "the socket delivered frame 10, which is not in flight (delivered twice"),
        ("2", "the socket delivered frame 11 where frame 10 was next (out of order)"),
        ("3", "frame 10 (1518 bytes) delivered with byte 128 = 0x"),
    ];
    for cores in CORES {
        for (plant, want) in plants {
            let e = try_run(&[&format!("nic_firmware.cores={cores}"), &format!("code.poke=[\"plant={plant}\"]"), "run.duration_ms=0.2"]).err();
            let e = e.unwrap_or_else(|| panic!("{cores} cores, plant {plant}: ran")).to_string();
            assert!(e.contains(want) && e.contains("invariant") && !e.contains('\n'), "{cores} cores, plant {plant}: {e}");
        }
    }
}

/// Same scenario and seed, same numbers, bit for bit, under Poisson arrivals.
#[test]
fn deterministic() {
    let sets = ["workload.process=\"poisson\"", "nic_firmware.cores=4"];
    let bits = |r: &Report| r.metrics.iter().map(|(k, v)| (k.clone(), v.to_bits())).collect::<Vec<_>>();
    let (a, b) = (run(&sets), run(&sets));
    assert_eq!(bits(&a), bits(&b));
    assert_eq!(a.bins, b.bins);
}

/// The driver sends through the firmware: each send writes a descriptor
/// and the mailbox, the firmware fetches the frame by DMA and its MAC puts
/// it on the wire, checked against the sends in order (a send flood).
#[test]
fn the_driver_sends_through_the_firmware() {
    let text = std::fs::read_to_string(dir().join("rx-firmware.toml")).unwrap();
    let (head, _) = text.split_once("[workload]").unwrap();
    let path = std::env::temp_dir().join(format!("irqsim-fw-send-{}.toml", std::process::id()));
    std::fs::write(&path, format!("{head}[workload]\nkind = \"flood\"\ndirection = \"tx\"\npacket_bytes = 1000\n")).unwrap();
    let r = run_file(&path, &["run.duration_ms=1"]).unwrap();
    r.check_invariants().unwrap();
    // 10 Gb/s of 1,020-byte slots: about 1,225 frames in 1 ms. The flood
    // sends faster than the wire, so the send ring fills (the sends it
    // cannot take are dropped: -ENOBUFS) and the wire runs at line rate.
    let (sent, dropped) = (m(&r, "tx_sent"), m(&r, "tx_dropped"));
    assert!(sent > 1100.0 && dropped > 0.0, "{sent} sent, {dropped} dropped");
}

/// The host's parts around the driver: every controller, the Linux and
/// NAPI paths, two threads with the NIC's interrupt on the second (an SMP),
/// and two SMT threads of one core.
#[test]
fn combines_with_controllers_paths_and_threads() {
    let cases: &[&[&str]] = &[
        &["intc.kind=\"direct\""],
        &["intc.kind=\"msix\"", "irq_path.kind=\"napi\""],
        &["intc.kind=\"ioapic\"", "irq_path.kind=\"linux\""],
        &["intc.kind=\"xtpic\""],
        &["irq_path.kind=\"napi\"", "napi.threaded=true"],
        &["cpu.threads=2", "nic.irq_thread=1"],
        &["cpu.threads=2", "nic.irq_thread=1", "code.core.core.threads=2", "code.core.core.interrupt_thread=1"],
    ];
    for sets in cases {
        // 50,000 frames/s: below what the slowest of them (the IO-APIC's Linux path) takes.
        let mut all = vec!["nic_firmware.cores=2", "workload.rate_per_s=50000"];
        all.extend_from_slice(sets);
        let r = run(&all);
        let (offered, delivered) = (m(&r, "rx_offered"), m(&r, "rx_delivered"));
        assert!(offered >= 99.0 && delivered >= offered - 2.0 && m(&r, "rx_dropped_software") == 0.0, "{sets:?}: {delivered} of {offered} delivered");
        assert!(m(&r, "interrupts") > 0.0, "{sets:?}");
    }
}

/// The abstract host's keys are refused when the driver is code.
#[test]
fn the_abstract_hosts_keys_are_refused() {
    for key in ["nic_firmware.fill_send_ring_bytes=64", "nic_firmware.window_frames=100"] {
        let e = try_run(&[key]).err().unwrap_or_else(|| panic!("{key} runs")).to_string();
        assert!(e.contains(key.split('=').next().unwrap()) && e.contains("the host driver is kernel code") && !e.contains('\n'), "{e}");
    }
}

/// A driver that faults or runs an unsupported instruction stops the run
/// with one line naming the program, the function and the PC (plant 4: an
/// unaligned load in the bottom half; 5: a floating-point instruction in
/// the interrupt handler).
#[test]
fn a_faulting_driver_is_named() {
    for (plant, want) in [("4", "unaligned access"), ("5", "unsupported instruction")] {
        let e = try_run(&[&format!("code.poke=[\"plant={plant}\"]"), "run.duration_ms=0.1"]).err().expect("the driver faults").to_string();
        let function = if plant == "4" { "in rx_clean+0x" } else { "in nic_isr+0x" };
        assert!(e.contains("fw_rx.elf") && e.contains(want) && e.contains(function) && e.contains("pc 0x") && !e.contains('\n'), "{e}");
    }
}

/// A driver that never returns is caught by the lockup watchdog, one line
/// naming the program, the lockup, the activity, the function and the PC:
/// plant 6 spins in the interrupt handler (a hard lockup after
/// `code.watchdog_thresh_ms`), plant 7 waits in the bottom half for a flag
/// nobody sets (a soft lockup after twice it), both well before the run ends.
#[test]
fn a_looping_driver_is_caught_by_the_watchdog() {
    for (plant, want, function) in [("6", "hard lockup: NIC ISR (code)", "in nic_isr+0x"), ("7", "soft lockup: NET_RX (code)", "in rx_clean+0x")] {
        let sets = [&format!("code.poke=[\"plant={plant}\"]"), "code.watchdog_thresh_ms=0.05", "run.duration_ms=1"];
        let e = try_run(&sets).err().expect("the driver locks up").to_string();
        assert!(e.contains("fw_rx.elf") && e.contains(want) && e.contains(function) && e.contains("pc 0x") && !e.contains('\n'), "{e}");
        let ran: f64 = e.split("has run ").nth(1).and_then(|r| r.split(' ').next()).and_then(|r| r.parse().ok()).expect("how long it ran");
        let limit = if plant == "6" { 0.05 } else { 0.1 };
        assert!((limit..limit + 0.01).contains(&ran), "{e}");
    }
}

/// Without the watchdog (`code.watchdog_thresh_ms = 0`), a looping
/// interrupt handler still sees Ctrl-C: the monitor is asked at the loop's
/// polls and after each slice of code cycles (its pulse, by default the
/// same question); it says stop at its third answer, before the end.
#[test]
fn ctrl_c_stops_a_looping_driver() {
    struct StopAtThird(u64);
    impl irqsim_core::Monitor for StopAtThird {
        fn poll(&mut self, _: u64, _: u64) -> bool {
            self.0 += 1;
            self.0 < 3
        }
    }
    let o: Vec<_> = ["code.poke=[\"plant=6\"]", "code.watchdog_thresh_ms=0", "run.duration_ms=50"].iter().map(|s| parse_override(s).unwrap()).collect();
    let s = Scenario::from_file(&dir().join("rx-firmware.toml"), &o).unwrap();
    let mut stop = StopAtThird(0);
    let Err(e) = irqsim_core::simulate_with(&s, &dir(), Record::default(), &mut stop) else { panic!("ran to its end") };
    assert!(matches!(e, Error::Cancelled { at, .. } if at < 50_000_000), "{e}");
    assert_eq!(stop.0, 3);
}
