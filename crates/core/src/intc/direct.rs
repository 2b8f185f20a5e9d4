//! The ideal wire: a device's interrupt reaches its CPU at once and costs
//! nothing to acknowledge or end, as in the mt-interrupts and Mach studies,
//! whose costs already include whatever their hardware did.
//!
//! An input is pending or not, like a vector's IRR bit: a second interrupt
//! on a pending input merges with it. That is MSI's local APIC with nothing
//! to pay (no EOI write, no bus), so it is that model with no costs.

use super::{Costs, Kind, Msi};

pub(crate) const KIND: Kind = Kind {
    key: "direct",
    name: "direct",
    legacy: false,
    inputs: super::msi::INPUTS,
    cpu0_only: false,
    local_apic: false,
    vectors: None,
    bus: false,
    auto_order: super::in_order::<{ super::msi::INPUTS }>,
    no_input: super::msi::no_vector,
    build: |_, routes, _| Box::new(Msi::new(routes, Costs::default())),
};
