//! Parameters of the controllers and the fabric (the MSI latency paper's
//! methodology): which controller delivers (`[intc]`), what the bus costs
//! (`[bus]`), and the checks of how devices are wired to the controllers.
//! Defaults are the 2008 workstation profile;
//! docs/models/interrupt-delivery.md cites each value.

use crate::params::{Param, absent, d};
use crate::config::{Scenario, WorkloadConfig};
use crate::device::sources::{SourceConfig, SourceKind};
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

/// Every controller but the direct wire, which has no bus.
pub(crate) const CONTROLLERS: &[&str] = &["xtpic", "ioapic", "msi", "msix"];

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
            return Err((
                format!("{prefix}[{i}].dma_bytes"),
                "only an exerciser DMA-writes before its interrupt: set kind = \"exerciser\" or remove the key".into(),
            ));
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
        return err(
            "intc.vectors",
            format!(
                "the exerciser's vectors need intc.kind = \"msi\" or \"msix\" (it is `{}`); the other sources' controllers take one input each",
                kind.name()
            ),
        );
    }
    if kind == IntcKind::Msi && (v > 32 || !v.is_power_of_two()) {
        return err("intc.vectors", format!("MSI grants 1, 2, 4, 8, 16 or 32 vectors per function, got {v}"));
    }
    cpu(s, "workload.cpu", w.cpu)?;
    check_others(s, &w.others, "workload.others")?;
    // Wiring: every input in range, MSI never shared, enough inputs for all.
    intc::assign(kind, intc::First { key: "workload.line", line: w.line, vectors: s.intc.vectors }, &w.others, "workload.others").map(|_| ())
}
