//! The interrupt path's parameters (`[irq_path]`): which path the kernel
//! runs for the NIC (the mt-interrupts ISR, Linux's top and bottom half, or
//! NAPI), and what the Linux 2.6 path costs around the device's handlers.
//! What the CPU runs is `linux.rs` and `napi/`.

use crate::device::nics::DriverPath;
use crate::intc::config::{LEGACY, LOCAL_APIC};
use crate::params::{Param, absent, d};
use serde::{Deserialize, Serialize};

/// The Linux path's keys: the exerciser's path, or the NIC's when chosen.
const LINUX: &[&str] = &["linux", "napi"];

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

impl IrqPathKind {
    /// The path of a NIC whose own is `own` (`[[nics.others]]`'s
    /// `irq_path`) on a machine whose path is `machine`.
    pub fn of_nic(own: Option<DriverPath>, machine: Option<IrqPathKind>) -> Self {
        own.map(|p| match p {
            DriverPath::Mt => Self::Mt,
            DriverPath::Linux => Self::Linux,
            DriverPath::Napi => Self::Napi,
        })
        .or(machine)
        .unwrap_or(Self::Mt)
    }
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
        Param::cycles("exit_cycles", d("400"), "after the handlers: irq_exit, softirq check, register restore, iret").when("irq_path.kind", LINUX),
        Param::cycles("lapic_eoi_cycles", d("100"), "a write to the local APIC's EOI register").when("intc.kind", LOCAL_APIC),
        Param::cycles(
            "mmio_write_cycles",
            d("50"),
            "issuing one uncached MMIO write (the CPU does not wait for it to land): a shared line's status clear, the exerciser's signature writes",
        )
        .when("intc.kind", LEGACY),
        Param::cycles("isr_cycles", d("100"), "the ISR's own work besides its bus accesses: the exerciser's, or the NIC's top half on the Linux path")
            .when("irq_path.kind", LINUX),
        Param::cycles("tasklet_schedule_cycles", d("100"), "tasklet_schedule()").when("irq_path.kind", LINUX),
        Param::cycles("softirq_entry_cycles", d("300"), "do_softirq → tasklet_action up to the tasklet's first instruction").when("irq_path.kind", LINUX),
        Param::cycles("tasklet_cycles", d("1000"), "the exerciser tasklet's work after its signature write").when("workload.kind", &["exerciser"]),
    ];
}
