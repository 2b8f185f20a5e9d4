//! The devices beside the NIC as a scenario configures them: the exerciser
//! workload's device and its fellow sources (`[[workload.others]]`), and
//! the interrupt sources beside the NIC (`[[sources.others]]`). What they
//! do at run time is `source.rs`.

use crate::intc::IntcKind;
use crate::params::{Param, REQ, absent, d};
use crate::workload::config::Process;
use serde::{Deserialize, Serialize};

/// The exerciser's workload (the `exerciser` variant of `[workload]`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExerciserConfig {
    pub process: Process,
    /// Interrupts raised per second (the key `rate_per_s`).
    #[serde(rename = "rate_per_s")]
    pub rate_hz: f64,
    pub dma_bytes: u32,
    pub line: Option<u32>,
    pub cpu: usize,
    pub priority: u8,
    pub busy_user: bool,
    pub others: Vec<SourceConfig>,
}

const PROCESSES: &[&str] = &["periodic", "poisson"];
/// Keys of vector-based controllers only: the XT-PIC's priority is its line's.
const VECTORED: &[&str] = &["ioapic", "msi", "msix"];

impl ExerciserConfig {
    /// The variant's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::choice("process", PROCESSES, d("\"periodic\""), "arrival process of the exerciser's interrupts"),
        Param::float("rate_per_s", "/s", REQ, true, 0.0, 1e9, "interrupts the exerciser raises per second (at most one per cycle)"),
        Param::int("dma_bytes", "bytes", d("0"), 0, 1 << 24, "data DMA-written to memory before each interrupt"),
        Param::int("line", "", absent("first free"), 0, 2047, "controller input: XT-PIC line 0..=15 except 2, IO-APIC pin 0..=23, first MSI vector"),
        Param::int("cpu", "", d("0"), 0, 63, "destination CPU (first vector), below `cpu.threads`"),
        Param::int("priority", "", d("4"), 0, 13, "IO-APIC/MSI vector priority class, higher served first").when("intc.kind", VECTORED),
        Param::flag("busy_user", d("false"), "a CPU-bound user task runs on every CPU whenever nothing else does"),
        Param::items(
            "others",
            SourceConfig::PARAMS,
            d("[]"),
            "other interrupt sources, one `[[workload.others]]` table each (same line as another: shared, legacy only)",
        ),
    ];
}

/// Another interrupt source. On legacy lines its ISR reads and clears its
/// status like the exerciser's; with MSI it has a vector of its own. An
/// `exerciser` also DMA-writes data before each interrupt, and its ISR and
/// tasklet write signatures the bus analyzer times, as the exerciser
/// workload's device does.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SourceConfig {
    pub kind: SourceKind,
    pub process: Process,
    /// Interrupts raised per second (the key `rate_per_s`).
    #[serde(rename = "rate_per_s")]
    pub rate_hz: f64,
    pub line: Option<u32>,
    pub cpu: usize,
    pub priority: u8,
    pub isr_cycles: u64,
    pub dma_bytes: u32,
    /// Its own controller (absent: `intc.kind`'s).
    pub intc: Option<IntcKind>,
}

/// What another source's handler does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// Its ISR's work only (a timer, a disk).
    Plain,
    /// A PCIe exerciser: DMA before each interrupt, signature writes, a tasklet.
    Exerciser,
}

/// `[sources]`: interrupt sources beside the NIC (a timer, a disk, ...),
/// each on its own controller input or sharing a legacy line.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SourcesConfig {
    pub others: Vec<SourceConfig>,
}

impl SourcesConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[Param::items(
        "others",
        SourceConfig::PARAMS,
        d("[]"),
        "other interrupt sources beside the NIC (`[[sources.others]]`), the same keys as the exerciser's `[[workload.others]]`",
    )];
}

impl SourceConfig {
    /// What the sources of list `key` ask of the controllers, each with its key.
    pub fn requests<'a>(others: &'a [SourceConfig], key: &'a str) -> impl ExactSizeIterator<Item = (String, crate::intc::Request)> + 'a {
        others.iter().enumerate().map(move |(i, o)| (format!("{key}[{i}]"), o.request()))
    }

    /// What it asks of the controllers.
    pub fn request(&self) -> crate::intc::Request {
        crate::intc::Request { intc: self.intc, cpu: self.cpu, line: self.line, vectors: 1, cpu_key: "cpu" }
    }

    /// The keys of each `[[workload.others]]` (or `[[sources.others]]`) table.
    pub const PARAMS: &'static [Param] = &[
        Param::choice(
            "kind",
            &["plain", "exerciser"],
            d("\"plain\""),
            "its ISR's work only, or a PCIe exerciser: DMA before each interrupt, ISR and tasklet signatures timed by the bus analyzer",
        ),
        Param::choice("process", PROCESSES, d("\"poisson\""), "arrival process"),
        Param::float("rate_per_s", "/s", REQ, true, 0.0, 1e9, "interrupts raised per second"),
        Param::int("line", "", absent("first free"), 0, 2047, "controller input; equal to another source's line: shared (legacy only)"),
        Param::int("cpu", "", d("0"), 0, 63, "destination CPU"),
        Param::int("priority", "", d("4"), 0, 13, "vector priority class").when("intc.kind", VECTORED),
        Param::cycles("isr_cycles", d("1000"), "its ISR's work besides its status read and clear"),
        Param::int("dma_bytes", "bytes", d("0"), 0, 1 << 24, "an exerciser's data DMA-written to memory before each interrupt, over `bus.link_mbps`"),
        Param::choice(
            "intc",
            &["direct", "xtpic", "ioapic", "msi", "msix"],
            absent("`intc.kind`"),
            "its own controller beside the first device's: e.g. a legacy device on the IO-APIC or the 8259s while the NIC uses MSI-X; sources naming one kind share one controller (MSI and MSI-X share the local APIC); `line` and `priority` are that controller's",
        ),
    ];
}
