//! Parameters of the controllers and the fabric (the MSI latency paper's
//! methodology): which controller delivers (`[intc]`), what the bus costs
//! (`[bus]`), and the checks of how devices are wired to the controllers.
//! Defaults are the 2008 workstation profile;
//! docs/models/interrupt-delivery.md cites each value.

use crate::intc::{self, IntcKind};
use crate::params::{Param, absent, d};
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
            KINDS,
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
    pub apic_message_ns: Option<f64>,
    pub apic_eoi_ns: Option<f64>,
    pub link_mbps: Option<f64>,
}

/// The exerciser's link when `bus.link_mbps` is not given (PCIe 1.x x1).
pub const EXERCISER_LINK_MBPS: f64 = 2000.0;

/// Every value of `intc.kind`, one per row of the registry (`IntcKind::kind`; a test keeps them the same).
pub(crate) const KINDS: &[&str] = &["direct", "xtpic", "ioapic", "msi", "msix"];

/// Every controller but the direct wire, which has no bus.
pub(crate) const CONTROLLERS: &[&str] = &["xtpic", "ioapic", "msi", "msix"];

/// The controllers of shared lines, whose handlers read their device's status
/// to learn whether it interrupted.
pub(crate) const LEGACY: &[&str] = &["xtpic", "ioapic"];

/// The controllers whose interrupts end with a write to the local APIC's EOI
/// register (the 8259s take theirs by port I/O).
pub(crate) const LOCAL_APIC: &[&str] = &["ioapic", "msi", "msix"];

/// Longest bus transaction: bounds keep every sum of costs far from 64-bit overflow.
const MAX_NS: f64 = 1e6;

impl BusConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::float(
            "mmio_read_ns",
            "ns",
            d("900.0"),
            true,
            0.0,
            MAX_NS,
            "round trip of the CPU's uncached read of a device register (non-posted): a legacy line's handler reads its device's status (a message names its source)",
        )
        .when("intc.kind", LEGACY),
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
        .when("intc.kind", &["xtpic"]),
        Param::float(
            "apic_message_ns",
            "ns",
            absent("`posted_write_ns`"),
            true,
            0.0,
            MAX_NS,
            "the IO-APIC's interrupt message to the local APIC, where it differs from a posted write: on the P6 family's serial APIC bus a message of 21 or 34 bus cycles (Intel SDM vol. 3, APIC bus message formats)",
        )
        .when("intc.kind", &["ioapic"]),
        Param::float(
            "apic_eoi_ns",
            "ns",
            absent("`posted_write_ns`"),
            true,
            0.0,
            MAX_NS,
            "the local APIC's EOI message back to the IO-APIC for a level pin, where it differs from a posted write: 14 bus cycles on the P6 family's serial APIC bus",
        )
        .when("intc.kind", &["ioapic"]),
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
