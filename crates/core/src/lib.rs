//! irqsim-core: a deterministic discrete-event simulator of interrupt and
//! event handling for network I/O.
//!
//! # Overview
//! - [`engine`]: integer time and the event queue; knows nothing of networks.
//! - [`config`]: scenarios as typed, validated TOML.
//! - [`cpu`]: hardware threads running prioritized activities, with context
//!   policies (single context, multithreaded contexts) and cycle bins.
//! - [`device`]: the NIC (receive buffer, transmitter, DMA) and the
//!   interrupt sources (PCIe exerciser, timer, disk, ...).
//! - [`intc`]: interrupt delivery: the ideal wire, 8259 XT-PIC, IO-APIC,
//!   MSI, several at once, with the bus's and the controllers' parameters.
//! - [`kernel`]: the software that runs on the CPU: application, system calls,
//!   drivers, protocol layers, the interrupt paths, critical sections.
//! - [`workload`]: floods, arrival processes, scripts, traces, generators.
//! - [`trace`]: pcap and strace readers.
//! - [`machine`]: one run, every selected part in one event loop;
//!   [`report`]: what it yields; [`metrics`]: every metric it can hold, declared.
//! - [`masking`]: the masking part's parameters and machine profiles.
//!
//! ```
//! let text = "[cpu]\nclock_mhz = 200.0\n[workload]\nkind = \"flood\"\ndirection = \"rx\"\npacket_bytes = 1500\n";
//! let report = irqsim_core::run_str(text, "example.toml", &[]).unwrap();
//! report.check_invariants().unwrap();
//! ```

pub mod code;
pub mod config;
pub mod cpu;
pub mod device;
pub mod engine;
pub mod error;
pub mod input;
pub mod intc;
pub mod kernel;
pub mod machine;
pub mod masking;
pub mod metrics;
pub mod monitor;
pub mod params;
pub mod report;
pub mod stats;
pub mod timeline;
pub mod trace;
pub mod workload;

pub use config::{INPUT_KEYS, Input, Override, Scenario, parse_override};
pub use error::{Error, Result};
pub use machine::{Machine, Record};
pub use monitor::{Monitor, Unwatched};
pub use report::Report;

/// Runs a loaded scenario; relative paths in it resolve from `base`.
pub fn simulate(scenario: &Scenario, base: &std::path::Path, record: Record) -> Result<Report> {
    simulate_with(scenario, base, record, &mut Unwatched)
}

/// [`simulate`], with a [`Monitor`] polled as the run goes (progress, Ctrl-C).
pub fn simulate_with(scenario: &Scenario, base: &std::path::Path, record: Record, monitor: &mut dyn Monitor) -> Result<Report> {
    let mut budget = monitor::Budget::new(monitor, scenario.run.max_events);
    let outcome = Machine::new(scenario, base, record).and_then(|m| m.run(&mut budget));
    match outcome {
        Err(Error::Cancelled { at, .. }) if budget.spent => Err(Error::Config {
            file: scenario.file.clone(),
            key: "run.max_events".into(),
            line: None,
            msg: format!(
                "the run passed {} events at cycle {at} of {}; raise run.max_events or shorten run.duration_ms",
                scenario.run.max_events,
                scenario.duration_cycles()
            ),
        }),
        other => other.and_then(|report| checked(report, &scenario.file)),
    }
}

/// The report of a run whose conservation laws and cycle bins hold; a
/// broken one is an error, never results.
pub fn checked(report: Report, file: &str) -> Result<Report> {
    match report.check_invariants() {
        Ok(()) => Ok(report),
        Err(msg) => Err(Error::Invariant { file: file.to_string(), msg }),
    }
}

/// Loads and runs a scenario file.
pub fn run_file(path: &std::path::Path, overrides: &[Override], record: Record) -> Result<Report> {
    let scenario = Scenario::shared_from_file(path, overrides)?;
    simulate(&scenario, path.parent().unwrap_or(std::path::Path::new(".")), record)
}

/// Runs a scenario given as TOML text (relative paths resolve from the
/// working directory).
pub fn run_str(text: &str, name: &str, overrides: &[Override]) -> Result<Report> {
    let scenario = Scenario::shared_from_toml(text, name, overrides)?;
    simulate(&scenario, std::path::Path::new("."), Record::default())
}
