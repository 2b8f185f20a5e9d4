//! The mt-interrupts driver-layer floods
//! (`python/irqsim/scenarios/mt-interrupts/driver-{rx,tx}-{single,multithreaded}.toml`)
//! against the per-packet cycle composition documented for the study:
//!
//! - receive, per frame: `irq_entry + isr_rx_done` (+ `save_restore` if single,
//!   the interrupt preempting the running application);
//! - send, per frame: `swi_entry + driver send + irq_entry + isr_tx_done`
//!   (+ 2 × `save_restore` if single: the send SWI preempts the application and
//!   the Tx-done interrupt preempts the next Driver Send).
//!
//! Throughput = frame bits / (cycles per frame / clock). Everything is derived
//! from each scenario's own parameters, never from the paper's figures, and
//! the simulated throughput must match within one packet's worth (one frame
//! more or less in the run).

use irqsim_core::config::{Direction, WorkloadConfig};
use irqsim_core::cpu::ContextPolicy;
use irqsim_core::{Record, Report, Scenario, parse_override};
use std::path::PathBuf;

fn scenario_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/mt-interrupts").join(name)
}

struct Run {
    scenario: Scenario,
    report: Report,
}

fn run(name: &str, sets: &[&str]) -> Run {
    let path = scenario_path(name);
    let overrides: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    let scenario = Scenario::from_file(&path, &overrides).unwrap_or_else(|e| panic!("{name}: {e}"));
    let report = irqsim_core::simulate(&scenario, path.parent().unwrap(), Record::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    report.check_invariants().unwrap_or_else(|e| panic!("{name}: {e}"));
    Run { scenario, report }
}

/// Cycles per frame of the documented composition, and the frame size.
fn composition(s: &Scenario) -> (Direction, u64, u32) {
    let WorkloadConfig::Flood(irqsim_core::config::FloodConfig { direction, packet_bytes, gap_cycles }) = s.workload else { panic!("{}: not a flood", s.name) };
    // Preconditions of the composition, read from the scenario itself.
    assert_eq!(gap_cycles, 0, "{}: back to back", s.name);
    assert!(!s.stack.enabled, "{}: driver layer only", s.name);
    assert!(s.app.background, "{}: an application runs between driver work (what single context preempts)", s.name);
    assert_eq!(s.cpu.context_switch_cycles, 0, "{}: the documented composition has no context-switch term", s.name);
    assert_eq!(s.cpu.threads, 1);
    let c = &s.cpu;
    let single = c.context_policy == ContextPolicy::Single;
    let sr = if single { c.save_restore_cycles } else { 0 };
    let cycles = match direction {
        Direction::Rx => c.irq_entry_cycles + sr + s.driver.isr_rx_done_cycles,
        Direction::Tx => c.swi_entry_cycles + c.irq_entry_cycles + s.driver.send_cycles + s.driver.isr_tx_done_cycles + 2 * sr,
    };
    if direction == Direction::Tx {
        // The link must not be the bottleneck, and a frame's Tx-done interrupt
        // must come during the next Driver Send (so that it preempts running code).
        let on_wire = f64::from(packet_bytes) / s.nic.dma_bytes_per_cycle + f64::from(packet_bytes) * 8.0 / s.nic.link_mbps * s.cycles_per_us();
        assert!(on_wire.ceil() + 2.0 < s.driver.send_cycles as f64, "{}: frame takes {on_wire} cycles to leave", s.name);
    }
    (direction, cycles, packet_bytes)
}

/// Checks a run against the composition; returns the simulated Mb/s.
fn check(name: &str, sets: &[&str]) -> f64 {
    let Run { scenario: s, report: r } = run(name, sets);
    let (direction, cycles, bytes) = composition(&s);
    let bits = f64::from(bytes) * 8.0;
    let expected = bits * s.cpu.clock_mhz / cycles as f64;
    let seconds = r.metric("sim_seconds").unwrap();
    let one_packet = bits / seconds / 1e6;
    let (metric, other, dropped) = match direction {
        Direction::Rx => ("rx_throughput_mbps", "tx_throughput_mbps", r.metric("rx_dropped_nic").unwrap() + r.metric("rx_dropped_backlog").unwrap()),
        Direction::Tx => ("tx_throughput_mbps", "rx_throughput_mbps", r.metric("tx_dropped").unwrap()),
    };
    let got = r.metric(metric).unwrap();
    assert!(
        (got - expected).abs() <= one_packet * (1.0 + 1e-9),
        "{name} {sets:?}: simulated {got:.4} Mb/s, composition {cycles} cycles/frame gives {expected:.4} Mb/s (one packet = {one_packet:.6} Mb/s)"
    );
    assert_eq!(r.metric(other), Some(0.0), "{name}: nothing flows the other way");
    assert_eq!(dropped, 0.0, "{name}: a closed-loop flood drops nothing");
    got
}

/// Receive flood, single context: each frame costs irq_entry + save_restore +
/// isr_rx_done cycles, and the delivered throughput matches that composition.
#[test]
fn rx_single_matches_composition() {
    check("driver-rx-single.toml", &[]);
}

/// Receive flood, multithreaded contexts: irq_entry + isr_rx_done per frame.
#[test]
fn rx_multithreaded_matches_composition() {
    check("driver-rx-multithreaded.toml", &[]);
}

/// Send flood, single context: swi_entry + driver send + irq_entry +
/// isr_tx_done + 2 × save_restore per frame.
#[test]
fn tx_single_matches_composition() {
    check("driver-tx-single.toml", &[]);
}

/// Send flood, multithreaded contexts: swi_entry + driver send + irq_entry +
/// isr_tx_done per frame.
#[test]
fn tx_multithreaded_matches_composition() {
    check("driver-tx-multithreaded.toml", &[]);
}

/// The driver's cycles do not depend on the frame size (DMA moves the data in
/// parallel with the CPU), so the composition holds for every size from 50 to
/// 1,500 bytes, throughput scaling with the size (shorter runs keep it fast).
#[test]
fn composition_holds_from_50_to_1500_bytes() {
    for name in ["driver-rx-single.toml", "driver-rx-multithreaded.toml", "driver-tx-single.toml", "driver-tx-multithreaded.toml"] {
        for bytes in [50, 500, 1500] {
            check(name, &[&format!("workload.packet_bytes={bytes}"), "run.duration_ms=100"]);
        }
    }
}

/// Multithreading removes exactly the save/restore cycles: the ratio of
/// throughputs (multithreaded / single) equals the ratio of per-frame cycles,
/// within one packet's worth on each side.
#[test]
fn multithreading_gain_is_the_saved_cycles() {
    for dir in ["rx", "tx"] {
        let single = run(&format!("driver-{dir}-single.toml"), &[]);
        let mt = run(&format!("driver-{dir}-multithreaded.toml"), &[]);
        let (_, cs, bytes) = composition(&single.scenario);
        let (_, cm, _) = composition(&mt.scenario);
        let saved = if dir == "rx" { 1 } else { 2 } * single.scenario.cpu.save_restore_cycles;
        assert_eq!(cs - cm, saved, "{dir}: single pays {saved} more cycles per frame");
        let metric = format!("{dir}_throughput_mbps");
        let (ts, tm) = (single.report.metric(&metric).unwrap(), mt.report.metric(&metric).unwrap());
        let seconds = single.report.metric("sim_seconds").unwrap();
        let one = f64::from(bytes) * 8.0 / seconds / 1e6;
        let want = cs as f64 / cm as f64;
        let (lo, hi) = ((tm - one) / (ts + one), (tm + one) / (ts - one));
        assert!(lo <= want && want <= hi, "{dir}: throughput ratio {:.5} vs cycle ratio {want:.5}", tm / ts);
    }
}
