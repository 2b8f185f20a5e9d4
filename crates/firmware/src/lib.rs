//! A programmable NIC for irqsim, after Brogioli, Willmann and Rixner's
//! study of parallel NIC firmware: event-driven firmware in C
//! (programs/firmware) on 1-6 execution-driven MIPS R4000 cores, against
//! the NIC's modelled hardware, and an offline VLIW scheduler over the same
//! firmware's basic blocks. The NIC has no run loop of its own:
//! irqsim-core's machine drives it (`[nic_firmware]`), its host and wire.
//!
//! - [`config`]: the device's settings; [`device`]: the NIC as a device a
//!   machine drives (advance to a cycle, frames in, mailbox writes; DMA
//!   writes, transmissions and interrupt requests out; host memory behind
//!   a trait); [`nic`]: its hardware as the cores see it (event flags,
//!   DMA engines, MAC, SRAM, mailboxes); [`memory`]: host memory and the
//!   rings' addresses.
//! - [`window`]: a measured window of frames (the study's throughput, IPC
//!   and profile); [`profile`]: cycles and executions by PC, function and
//!   handler; [`report`]: a window as JSON; [`error`]: why a run failed.
//! - [`blocks`]: basic blocks of the program text; [`ilp`]: the VLIW list
//!   scheduler; [`vliw`]: Table 1 from a profile.

pub mod blocks;
pub mod config;
pub mod device;
pub mod error;
pub mod ilp;
pub mod memory;
pub mod nic;
pub mod profile;
pub mod report;
pub mod vliw;
pub mod window;

pub use config::{NicConfig, Organisation};
pub use device::{Effect, HostMemory, Nic};
pub use error::Error;
pub use window::{Measured, Window};
