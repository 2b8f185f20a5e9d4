//! Devices: where interrupts come from.
//!
//! - [`nic`]: the network interface: receive buffer, transmitter, DMA.
//! - [`source`]: interrupt sources as the delivery path sees them (the PCIe
//!   exerciser, timer, disk, the NIC behind a controller).

pub mod nic;
pub mod source;
