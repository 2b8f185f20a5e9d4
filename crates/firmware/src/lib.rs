//! A programmable NIC for irqsim, after Brogioli, Willmann and Rixner's
//! study of parallel NIC firmware: event-driven firmware in C
//! (programs/firmware) on 1-6 execution-driven MIPS R4000 cores, against
//! a modelled NIC and host, and an offline VLIW scheduler over the same
//! firmware's basic blocks.
//!
//! - [`config`]: the run's settings; [`nic`]: event flags, DMA engines,
//!   MAC, SRAM, and the wire's order check; [`host`]: the driver, its
//!   MSI and the receive side's order check.
//! - [`run`]: steps the cores and the NIC; [`profile`]: cycles and
//!   executions by PC, function and handler; [`report`]: a run as JSON.
//! - [`blocks`]: basic blocks of the program text; [`ilp`]: the VLIW list
//!   scheduler; [`vliw`]: Table 1 from a profile.

pub mod blocks;
pub mod config;
pub mod host;
pub mod ilp;
pub mod nic;
pub mod profile;
pub mod report;
pub mod run;
pub mod vliw;

pub use config::{NicConfig, Organisation, Traffic};
pub use run::{Error, Outcome, run, task_owners};
