//! A programmable NIC for irqsim, after Brogioli, Willmann and Rixner's
//! study of parallel NIC firmware: event-driven firmware in C
//! (programs/firmware) on 1-6 execution-driven MIPS R4000 cores, against
//! a modelled NIC and host, and an offline VLIW scheduler over the same
//! firmware's basic blocks.
//!
//! - [`config`]: the run's settings; [`device`]: the NIC as a device a
//!   machine drives (advance to a cycle, frames in, mailbox writes; DMA
//!   writes, transmissions and interrupt requests out; host memory behind
//!   a trait); [`nic`]: its hardware as the cores see it (event flags,
//!   DMA engines, MAC, SRAM, mailboxes); [`memory`]: host memory and the
//!   rings' addresses.
//! - [`host`]: the abstract host that drives the device in the study (its
//!   memory, driver, MSI and the receive side's order check); [`run`]: the
//!   study's run (the host, a wire flood and the measured window);
//!   [`profile`]: cycles and executions by PC, function and handler;
//!   [`report`]: a run as JSON; [`error`]: why a run failed.
//! - [`blocks`]: basic blocks of the program text; [`ilp`]: the VLIW list
//!   scheduler; [`vliw`]: Table 1 from a profile.

pub mod blocks;
pub mod config;
pub mod device;
pub mod error;
pub mod host;
pub mod ilp;
pub mod memory;
pub mod nic;
pub mod profile;
pub mod report;
pub mod run;
pub mod vliw;

pub use config::{NicConfig, Organisation, Traffic};
pub use device::{Effect, HostMemory, Nic, watched};
pub use error::Error;
pub use run::{Outcome, run, task_owners};
