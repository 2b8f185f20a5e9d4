//! Parameters of the interrupt-delivery study: which controller delivers
//! (`[intc]`), what the fabric costs (`[bus]`), what the Linux interrupt path
//! costs (`[irq_path]`), and the exerciser workload. Defaults are the 2008
//! workstation profile; docs/models/interrupt-delivery.md cites each value.

use crate::config::params::{Param, REQ, absent, d};
use crate::config::{Process, Scenario, WorkloadConfig};
use crate::intc::{self, IntcKind};
use serde::{Deserialize, Serialize};

/// The interrupt controller and its programming.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IntcConfig {
    pub kind: IntcKind,
    pub vectors: u32,
    pub trigger: intc::Trigger,
}

impl IntcConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::choice(
            "kind",
            &["direct", "xtpic", "ioapic", "msi", "msix"],
            d("\"direct\""),
            "delivery mechanism: an ideal wire (at once, free: the mt-interrupts and Mach studies), two cascaded 8259As, the IO-APIC, MSI or MSI-X",
        ),
        Param::int(
            "vectors",
            "",
            d("1"),
            1,
            2048,
            "vectors granted to the exerciser (MSI: 1, 2, 4, 8, 16 or 32; MSI-X: up to 2048); interrupt k uses vector k mod `vectors`, vector j goes to CPU (`workload.cpu` + j) mod `cpu.threads`",
        )
        .when("intc.kind", &["msi", "msix"]),
        Param::choice("trigger", &["level", "edge"], d("\"level\""), "IO-APIC pin trigger mode (PCI INTx is level; the XT-PIC's PCI lines are always level)")
            .when("intc.kind", &["ioapic"]),
    ];
}

/// Fabric latencies between CPU, chipset and device (PCIe + FSB + DMI).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BusConfig {
    pub mmio_read_ns: f64,
    pub posted_write_ns: f64,
    pub port_io_ns: f64,
    pub link_mbps: Option<f64>,
}

/// The exerciser's link when `bus.link_mbps` is not given (PCIe 1.x x1).
pub const EXERCISER_LINK_MBPS: f64 = 2000.0;

/// The Linux path's keys: the exerciser's path, or the NIC's when chosen.
const LINUX: &[&str] = &["linux", "napi"];

/// Every controller but the direct wire, which has no bus.
const CONTROLLERS: &[&str] = &["xtpic", "ioapic", "msi", "msix"];

/// Longest bus transaction: bounds keep every sum of costs far from 64-bit overflow.
const MAX_NS: f64 = 1e6;

impl BusConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::float("mmio_read_ns", "ns", d("900.0"), true, 0.0, MAX_NS, "round trip of the CPU's uncached read of a device register (non-posted)")
            .when("intc.kind", CONTROLLERS),
        Param::float(
            "posted_write_ns",
            "ns",
            d("450.0"),
            true,
            0.0,
            MAX_NS,
            "one-way latency of a posted write or message between device (or I/O hub) and CPU: MSI, Assert/Deassert_INTx, IO-APIC message, MMIO write to the device, EOI broadcast",
        )
        .when("intc.kind", CONTROLLERS),
        Param::float(
            "port_io_ns",
            "ns",
            d("1000.0"),
            true,
            0.0,
            MAX_NS,
            "round trip of one legacy port I/O (IN, OUT) or interrupt-acknowledge cycle to the 8259s",
        )
        .when("intc.kind", CONTROLLERS),
        Param::float(
            "link_mbps",
            "Mb/s",
            absent("2,000 for the exerciser (PCIe 1.x x1, 250 MB/s); no limit for a NIC"),
            true,
            0.0,
            8e6,
            "device link bandwidth for DMA data: the exerciser's DMA crosses it before its interrupt; a NIC's DMA runs at the slower of it and `nic.dma_bytes_per_cycle`",
        ),
    ];
}

/// Which interrupt path the kernel runs for the NIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IrqPathKind {
    /// The mt-interrupts path: the Driver ISR drains the NIC, then a
    /// software interrupt runs the protocol.
    Mt,
    /// Linux 2.6: do_IRQ, a top half that acknowledges and schedules the
    /// NET_RX bottom half, which drains the NIC (the exerciser's path).
    Linux,
    /// Linux's NAPI: the top half schedules a poll of the receive ring,
    /// with the NIC's interrupt off until the poll empties it (`[napi]`).
    Napi,
}

/// CPU cycles of the Linux 2.6 interrupt path around the device's handlers.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IrqPathConfig {
    pub kind: Option<IrqPathKind>,
    pub entry_cycles: u64,
    pub exit_cycles: u64,
    pub lapic_eoi_cycles: u64,
    pub mmio_write_cycles: u64,
    pub isr_cycles: u64,
    pub tasklet_schedule_cycles: u64,
    pub softirq_entry_cycles: u64,
    pub tasklet_cycles: u64,
}

impl IrqPathConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::choice(
            "kind",
            &["mt", "linux", "napi"],
            absent("`mt` for the NIC; the exerciser's path is always `linux`"),
            "the NIC's interrupt path: the mt-interrupts ISR + SWI, Linux's top half + NET_RX bottom half, or Linux's top half + NAPI poll (`[napi]`)",
        )
        .when("workload.kind", &["flood", "arrivals", "trace", "script", "synthetic"]),
        Param::cycles("entry_cycles", d("600"), "common_interrupt + do_IRQ to the first handler (register save, irq_enter, descriptor lookup, flow handler)")
            .when("irq_path.kind", LINUX),
        Param::cycles("exit_cycles", d("400"), "after the handlers: irq_exit, softirq check, register restore, iret")
            .when("irq_path.kind", LINUX),
        Param::cycles("lapic_eoi_cycles", d("100"), "a write to the local APIC's EOI register")
            .when("intc.kind", CONTROLLERS),
        Param::cycles("mmio_write_cycles", d("50"), "issuing one uncached MMIO write (the CPU does not wait for it to land)")
            .when("intc.kind", CONTROLLERS),
        Param::cycles("isr_cycles", d("100"), "the ISR's own work besides its bus accesses: the exerciser's, or the NIC's top half on the Linux path")
            .when("irq_path.kind", LINUX),
        Param::cycles("tasklet_schedule_cycles", d("100"), "tasklet_schedule()")
            .when("irq_path.kind", LINUX),
        Param::cycles("softirq_entry_cycles", d("300"), "do_softirq → tasklet_action up to the tasklet's first instruction")
            .when("irq_path.kind", LINUX),
        Param::cycles("tasklet_cycles", d("1000"), "the exerciser tasklet's work after its signature write")
            .when("workload.kind", &["exerciser"]),
    ];
}

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
    /// The keys of each `[[workload.others]]` (or `[[sources.others]]`) table.
    pub const PARAMS: &'static [Param] = &[
        Param::choice("kind", &["plain", "exerciser"], d("\"plain\""), "its ISR's work only, or a PCIe exerciser: DMA before each interrupt, ISR and tasklet signatures timed by the bus analyzer"),
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

/// A rate no faster than one event per cycle of the clock.
fn per_cycle(s: &Scenario, key: &str, rate: f64) -> Result<(), (String, String)> {
    if rate > s.cpu.clock_mhz * 1e6 {
        return Err((key.into(), format!("{rate} per second is more than one per cycle of the {} MHz clock", s.cpu.clock_mhz)));
    }
    Ok(())
}

/// A CPU that exists.
fn cpu(s: &Scenario, key: &str, c: usize) -> Result<(), (String, String)> {
    if c >= s.cpu.threads {
        return Err((key.into(), format!("CPU {c} does not exist (cpu.threads = {})", s.cpu.threads)));
    }
    Ok(())
}

/// Each other source's rate and CPU; `prefix` names the list.
fn check_others(s: &Scenario, others: &[SourceConfig], prefix: &str) -> Result<(), (String, String)> {
    for (i, o) in others.iter().enumerate() {
        per_cycle(s, &format!("{prefix}[{i}].rate_per_s"), o.rate_hz)?;
        cpu(s, &format!("{prefix}[{i}].cpu"), o.cpu)?;
        if o.dma_bytes > 0 && o.kind != SourceKind::Exerciser {
            return Err((format!("{prefix}[{i}].dma_bytes"), "only an exerciser DMA-writes before its interrupt: set kind = \"exerciser\" or remove the key".into()));
        }
    }
    Ok(())
}

/// Checks of the NIC's interrupt delivery: where the controller can route
/// it, and the sources beside it, wired after its line: `(key, message)`.
pub fn check_nic(s: &Scenario) -> Result<(), (String, String)> {
    if s.intc.kind == IntcKind::Xtpic && s.nic.irq_thread != 0 {
        let msg = format!("the XT-PIC delivers to CPU 0 only, not thread {}; use intc.kind = \"ioapic\" or \"msi\" to route elsewhere", s.nic.irq_thread);
        return Err(("nic.irq_thread".into(), msg));
    }
    let others = &s.sources.others;
    if others.is_empty() {
        return Ok(());
    }
    check_others(s, others, "sources.others")?;
    nic_wiring(s).map(|_| ())
}

/// The NIC's inputs (one vector per RSS queue, on the first free ones) and
/// the other sources' after them: checked at load and built from by the
/// same call, so a machine never meets wiring its check did not see.
pub fn nic_wiring(s: &Scenario) -> Result<intc::Wiring, (String, String)> {
    let vectors = s.rss.vectors();
    let wiring = intc::assign(s.intc.kind, intc::First { key: "nic", line: None, vectors }, &s.sources.others, "sources.others");
    wiring.map_err(|(key, msg)| match vectors {
        1 => (key, msg),
        n => (key, format!("{msg} (the NIC's {n} RSS queues take vectors 0..={})", n - 1)),
    })
}

/// Checks of the delivery sections that span keys (each key's own range is
/// in its table): `(key, message)`.
pub fn check(s: &Scenario) -> Result<(), (String, String)> {
    let WorkloadConfig::Exerciser(w) = &s.workload else { return Ok(()) };
    let err = |k: &str, m: String| Err((k.to_string(), m));
    per_cycle(s, "workload.rate_per_s", w.rate_hz)?;
    let kind = s.intc.kind;
    if kind == IntcKind::Xtpic && s.cpu.threads > 1 {
        return err(
            "cpu.threads",
            format!("the XT-PIC delivers to one CPU only (uniprocessor), got {} threads; use intc.kind = \"ioapic\" or \"msi\" for SMP", s.cpu.threads),
        );
    }
    let v = s.intc.vectors;
    if v > 1 && !matches!(kind, IntcKind::Msi | IntcKind::Msix) {
        // Allowed by the key's rule when another source's controller is MSI.
        return err("intc.vectors", format!("the exerciser's vectors need intc.kind = \"msi\" or \"msix\" (it is `{}`); the other sources' controllers take one input each", kind.name()));
    }
    if kind == IntcKind::Msi && (v > 32 || !v.is_power_of_two()) {
        return err("intc.vectors", format!("MSI grants 1, 2, 4, 8, 16 or 32 vectors per function, got {v}"));
    }
    cpu(s, "workload.cpu", w.cpu)?;
    check_others(s, &w.others, "workload.others")?;
    // Wiring: every input in range, MSI never shared, enough inputs for all.
    intc::assign(kind, intc::First { key: "workload.line", line: w.line, vectors: s.intc.vectors }, &w.others, "workload.others").map(|_| ())
}
