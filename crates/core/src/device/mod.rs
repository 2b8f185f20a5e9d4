//! Devices: where interrupts come from.
//!
//! - [`nic`]: the network interface: receive buffer, transmitter, DMA.
//! - [`firmware`]: the programmable NIC (firmware on MIPS cores) in its place.
//! - [`ring`]: the growable FIFO of the NIC's receive buffer.
//! - [`coalesce`]: the NIC's receive-interrupt coalescing (rx-usecs, rx-frames).
//! - [`dim`]: dynamic interrupt moderation (adaptive-rx) over lib/dim's profiles.
//! - [`rss`]: receive-side scaling: Toeplitz hash, indirection table, a ring
//!   and an MSI-X vector per queue.
//! - [`nics`]: the NICs beside the first (`[[nics.others]]`); [`tx_ring`]:
//!   their transmit descriptor rings, when frames are forwarded to them.
//! - [`source`]: interrupt sources as the delivery path sees them (the PCIe
//!   exerciser, timer, disk, the NIC behind a controller); [`sources`]: how
//!   a scenario configures those beside the NIC.

pub mod coalesce;
pub mod dim;
pub mod firmware;
pub mod nic;
pub mod nics;
pub(crate) mod ring;
pub mod rss;
pub mod source;
pub mod sources;
pub mod tx_ring;
