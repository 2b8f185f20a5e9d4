//! Parameters of the interrupt-delivery study: which controller delivers
//! (`[intc]`), what the fabric costs (`[bus]`), what the Linux interrupt path
//! costs (`[irq_path]`), and the exerciser workload. Defaults are the 2008
//! workstation profile; docs/models/interrupt-delivery.md cites each value.

use crate::config::{Process, Scenario, WorkloadConfig};
use crate::intc::{self, IntcKind};
use serde::{Deserialize, Serialize};

/// The interrupt controller and its programming.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct IntcConfig {
    /// `direct` (an ideal wire: at once, free), `xtpic` (two cascaded
    /// 8259s), `ioapic`, `msi` or `msix`.
    pub kind: IntcKind,
    /// Vectors the exerciser function is granted (MSI: 1..=32, a power of
    /// two; MSI-X: 1..=2048). Interrupt k uses vector k mod `vectors`.
    pub vectors: u32,
    /// IO-APIC pin trigger mode: `level` (PCI INTx) or `edge`.
    pub trigger: intc::Trigger,
}

impl Default for IntcConfig {
    fn default() -> Self {
        Self { kind: IntcKind::Direct, vectors: 1, trigger: intc::Trigger::Level }
    }
}

/// Fabric latencies between CPU, chipset and device (PCIe + FSB + DMI).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct BusConfig {
    /// Round trip of a CPU's uncached read of a device register (non-posted).
    pub mmio_read_ns: f64,
    /// One-way latency of a posted write or message between the device (or
    /// the I/O hub) and the CPU side: MSI, Assert/Deassert_INTx, IO-APIC
    /// message, MMIO write reaching the device, EOI broadcast.
    pub posted_write_ns: f64,
    /// Round trip of one legacy port I/O cycle (IN, OUT or INTA) to the 8259s.
    pub port_io_ns: f64,
    /// Device link bandwidth for DMA data (PCIe 1.x x1: 250 MB/s).
    pub link_mbytes_per_s: f64,
}

impl Default for BusConfig {
    fn default() -> Self {
        Self { mmio_read_ns: 900.0, posted_write_ns: 450.0, port_io_ns: 1000.0, link_mbytes_per_s: 250.0 }
    }
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
}

/// CPU cycles of the Linux 2.6 interrupt path around the device's handlers.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct IrqPathConfig {
    /// `mt` or `linux` for the NIC (absent: `mt`); the exerciser's path is
    /// always `linux`.
    pub kind: Option<IrqPathKind>,
    /// common_interrupt + do_IRQ up to the first handler (register save,
    /// irq_enter, descriptor lookup, flow handler).
    pub entry_cycles: u64,
    /// After the handlers: irq_exit, softirq check, register restore, iret.
    pub exit_cycles: u64,
    /// A write to the local APIC's EOI register.
    pub lapic_eoi_cycles: u64,
    /// Issuing one uncached MMIO write (the CPU does not wait for it to land).
    pub mmio_write_cycles: u64,
    /// The exerciser ISR's own work besides its bus accesses.
    pub isr_cycles: u64,
    /// tasklet_schedule().
    pub tasklet_schedule_cycles: u64,
    /// do_softirq → tasklet_action up to the tasklet's first instruction.
    pub softirq_entry_cycles: u64,
    /// The exerciser tasklet's work after its signature write.
    pub tasklet_cycles: u64,
}

impl Default for IrqPathConfig {
    fn default() -> Self {
        Self {
            kind: None,
            entry_cycles: 600,
            exit_cycles: 400,
            lapic_eoi_cycles: 100,
            mmio_write_cycles: 50,
            isr_cycles: 100,
            tasklet_schedule_cycles: 100,
            softirq_entry_cycles: 300,
            tasklet_cycles: 1000,
        }
    }
}

/// The exerciser's workload (the `exerciser` variant of `[workload]`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExerciserConfig {
    /// `periodic` or `poisson` interrupt arrivals.
    #[serde(default = "periodic")]
    pub process: Process,
    /// Interrupts the exerciser raises per second.
    pub rate_hz: f64,
    /// Data the exerciser DMA-writes to memory before each interrupt.
    #[serde(default)]
    pub dma_bytes: u32,
    /// Controller input (XT-PIC line, IO-APIC pin, first MSI vector);
    /// absent: the first free one.
    #[serde(default)]
    pub line: Option<u32>,
    /// CPU (hardware thread) the interrupt is destined to (first vector).
    #[serde(default)]
    pub cpu: usize,
    /// IO-APIC/MSI vector priority class, 0..=13 (higher is served first);
    /// the XT-PIC's priority is fixed by line number.
    #[serde(default = "class")]
    pub priority: u8,
    /// A CPU-bound user task runs on every CPU whenever nothing else does.
    #[serde(default)]
    pub busy_user: bool,
    /// Other interrupt sources, on the same line (shared) or others.
    #[serde(default)]
    pub others: Vec<SourceConfig>,
}

/// Another interrupt source. On legacy lines its ISR reads and clears its
/// status like the exerciser's; with MSI it has a vector of its own.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SourceConfig {
    #[serde(default = "poisson")]
    pub process: Process,
    pub rate_hz: f64,
    /// Controller input; absent: the first free one.
    #[serde(default)]
    pub line: Option<u32>,
    #[serde(default)]
    pub cpu: usize,
    #[serde(default = "class")]
    pub priority: u8,
    /// Its ISR's work besides its status read and clear.
    #[serde(default = "other_isr")]
    pub isr_cycles: u64,
}

fn periodic() -> Process {
    Process::Periodic
}
fn poisson() -> Process {
    Process::Poisson
}
fn class() -> u8 {
    4
}
fn other_isr() -> u64 {
    1000
}

/// Largest cost of one step of the kernel path.
const MAX_CYCLES: u64 = 1_000_000_000;

/// Range checks of the delivery sections: `(key, message)`.
pub fn check(s: &Scenario) -> Result<(), (String, String)> {
    let WorkloadConfig::Exerciser(w) = &s.workload else { return Ok(()) };
    let err = |k: &str, m: String| Err((k.to_string(), m));
    let positive = |k: &str, v: f64| if v.is_finite() && v > 0.0 { Ok(()) } else { err(k, format!("must be a positive number, got {v}")) };
    // Bounds keep every sum of costs far from 64-bit cycle overflow.
    for (k, v) in [("bus.mmio_read_ns", s.bus.mmio_read_ns), ("bus.posted_write_ns", s.bus.posted_write_ns), ("bus.port_io_ns", s.bus.port_io_ns)] {
        positive(k, v)?;
        if v > 1e6 {
            return err(k, format!("{v} ns is beyond any bus transaction (max 1000000)"));
        }
    }
    positive("bus.link_mbytes_per_s", s.bus.link_mbytes_per_s)?;
    let p = &s.irq_path;
    for (k, v) in [
        ("irq_path.entry_cycles", p.entry_cycles),
        ("irq_path.exit_cycles", p.exit_cycles),
        ("irq_path.lapic_eoi_cycles", p.lapic_eoi_cycles),
        ("irq_path.mmio_write_cycles", p.mmio_write_cycles),
        ("irq_path.isr_cycles", p.isr_cycles),
        ("irq_path.tasklet_schedule_cycles", p.tasklet_schedule_cycles),
        ("irq_path.softirq_entry_cycles", p.softirq_entry_cycles),
        ("irq_path.tasklet_cycles", p.tasklet_cycles),
    ] {
        if v > MAX_CYCLES {
            return err(k, format!("{v} cycles is beyond any kernel path (max {MAX_CYCLES})"));
        }
    }
    positive("workload.rate_hz", w.rate_hz)?;
    let kind = s.intc.kind;
    if kind == IntcKind::Xtpic && s.cpu.threads > 1 {
        return err(
            "cpu.threads",
            format!("the XT-PIC delivers to one CPU only (uniprocessor), got {} threads; use intc.kind = \"ioapic\" or \"msi\" for SMP", s.cpu.threads),
        );
    }
    let max_vectors = match kind {
        IntcKind::Msi => 32,
        IntcKind::Msix => 2048,
        _ => 1,
    };
    let v = s.intc.vectors;
    if v == 0 || v > max_vectors || (kind == IntcKind::Msi && !v.is_power_of_two()) {
        let what = match kind {
            IntcKind::Msi => "MSI grants 1, 2, 4, 8, 16 or 32 vectors per function".to_string(),
            IntcKind::Msix => "MSI-X allows 1..=2048 vectors per function".to_string(),
            _ => format!("a legacy {} line carries one interrupt; vectors must be 1", kind.name()),
        };
        return err("intc.vectors", format!("{what}, got {v}"));
    }
    let cpu = |k: &str, c: usize| if c < s.cpu.threads { Ok(()) } else { err(k, format!("CPU {c} does not exist (cpu.threads = {})", s.cpu.threads)) };
    let prio = |k: &str, p: u8| if p <= 13 { Ok(()) } else { err(k, format!("priority class must be 0..=13, got {p}")) };
    cpu("workload.cpu", w.cpu)?;
    prio("workload.priority", w.priority)?;
    for (i, o) in w.others.iter().enumerate() {
        positive(&format!("workload.others[{i}].rate_hz"), o.rate_hz)?;
        if o.isr_cycles > MAX_CYCLES {
            return err(&format!("workload.others[{i}].isr_cycles"), format!("{} cycles is beyond any ISR (max {MAX_CYCLES})", o.isr_cycles));
        }
        cpu(&format!("workload.others[{i}].cpu"), o.cpu)?;
        prio(&format!("workload.others[{i}].priority"), o.priority)?;
    }
    // Wiring: every input in range, MSI never shared, enough inputs for all.
    intc::assign(kind, w, s.intc.vectors).map(|_| ())
}
