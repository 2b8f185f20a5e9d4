//! Kernel software on the simulated CPUs, as jobs with costs.
//!
//! - `net.rs`: the network jobs' costs (application, system calls, NIC
//!   driver, protocol layers); `config.rs`: their keys.
//! - `linux.rs`: the steps of the Linux 2.6 interrupt path around device
//!   handlers (entry, shared-line handler chain, exit, tasklet).
//! - `napi/`: the NAPI receive path's instances (a weight and a budget, the
//!   interrupt off while polling, busy polling, RPS).
//! - The masking part's steps (`crate::masking`) are variants too.
//!
//! [`Job`] is the one job type every hardware thread runs, the network jobs
//! its own variants. What each costs and what follows it are the machine's
//! (`machine/jobs.rs`), since a step may touch any part.

mod config;
pub mod irq_path;
pub mod linux;
pub mod napi;
pub mod net;

pub use crate::masking::jobs::Job as MaskJob;
pub use config::{AppConfig, DriverConfig, StackConfig};
pub use irq_path::{IrqPathConfig, IrqPathKind};
pub use linux::Job as IrqJob;
pub use napi::Job as NapiJob;

use crate::cpu::Label;
use crate::engine::Time;
use net::{Phase, Site};

/// One piece of software work on a hardware thread. One flat enum: the
/// event loop's matches on the job (its cost, what runs after it) are one
/// jump on one tag.
/// (The default only fills a hardware thread's slots before they start
/// anything.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Job {
    // The network software: its costs in `net.rs`, what follows each job in
    // `machine/jobs.rs`, with `machine/driver.rs` and `machine/stack.rs`.
    /// A CPU-bound application that runs whenever nothing else does.
    #[default]
    Background,
    /// The sending application between two send calls.
    AppThink,
    /// A system call that moves no packet.
    Syscall,
    /// The send path's layers, each calling the next, then the driver.
    SendSocket {
        bytes: u32,
    },
    SendUdp {
        bytes: u32,
    },
    SendIp {
        bytes: u32,
    },
    DriverSend {
        bytes: u32,
    },
    /// Driver ISR, transmit-done part.
    IsrTx,
    /// Driver ISR, receive part, one frame.
    IsrRx,
    /// The NET_RX bottom half's entry (Linux path).
    Softirq,
    /// The bottom half's transmit-done and receive steps: the ISR's work,
    /// deferred (Linux path).
    PollTx,
    PollRx,
    /// A step of a critical section in the Driver ISR or the socket layer
    /// (`masking.rs`); the frame rides along for its delivery.
    Section {
        phase: Phase,
        site: Site,
        /// The NAPI instance whose poll holds it (`Site::Poll*`).
        q: u8,
        arrival: Time,
        bytes: u32,
    },
    /// The receive path's layers, each passing the frame up.
    RecvIp {
        arrival: Time,
        bytes: u32,
    },
    RecvUdp {
        arrival: Time,
        bytes: u32,
    },
    RecvSocket {
        arrival: Time,
        bytes: u32,
    },
    /// A received frame the kernel forwards out of NIC `to` (IP forwarding
    /// and Driver Send, at the software-interrupt level).
    Forward {
        arrival: Time,
        bytes: u32,
        to: u8,
    },
    /// A driver step for the receive queue `q` of a NIC beside the first,
    /// on the mt or Linux path (`machine/nics.rs`): its ISR's or its bottom
    /// half's, as `IsrRx`, `Softirq` and `PollRx` are the first NIC's.
    Port {
        step: PortStep,
        q: u8,
    },
    // The other parts' jobs, each its own enum.
    /// A step of the Linux interrupt path (`linux.rs`).
    Irq(IrqJob),
    /// A step of a program with critical sections (`masking.rs`).
    Mask(MaskJob),
    /// An activity that is code: it runs until its entry returns.
    Code(crate::code::Activity),
    /// A step of the NAPI receive path (`napi/`).
    Napi(NapiJob),
}

/// A driver step of a NIC beside the first ([`Job::Port`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortStep {
    /// The ISR takes one received frame.
    Isr,
    /// The NET_RX bottom half's entry.
    Softirq,
    /// The bottom half takes one received frame.
    Poll,
    /// The ISR, or (`PollTx`) the bottom half, cleans a transmit
    /// completion (a NIC others forward to).
    IsrTx,
    PollTx,
}

impl PortStep {
    /// The first NIC's job of the same cost.
    pub fn as_first(self) -> Job {
        match self {
            PortStep::Isr => Job::IsrRx,
            PortStep::Softirq => Job::Softirq,
            PortStep::Poll => Job::PollRx,
            PortStep::IsrTx => Job::IsrTx,
            PortStep::PollTx => Job::PollTx,
        }
    }
}

impl Job {
    /// A critical section's first step: its mask raise.
    pub fn section(site: Site, q: u8, arrival: Time, bytes: u32) -> Self {
        Job::Section { phase: Phase::Enter, site, q, arrival, bytes }
    }

    /// Whether an activity that ends with this job ends an interrupt taken
    /// through the controller (interrupts are enabled again after it).
    #[inline]
    pub fn ends_interrupt(&self) -> bool {
        matches!(self, Job::Irq(IrqJob::Exit { .. }))
    }
}

impl Label for Job {
    fn label(&self) -> &'static str {
        match self {
            Job::Background => "application",
            Job::AppThink => "application (send loop)",
            Job::Syscall => "system call",
            Job::SendSocket { .. } => "socket send",
            Job::SendUdp { .. } => "UDP send",
            Job::SendIp { .. } => "IP send",
            Job::DriverSend { .. } => "Driver Send",
            Job::IsrTx => "Driver ISR (Tx done)",
            Job::IsrRx => "Driver ISR (Rx done)",
            Job::Softirq => "NET_RX softirq entry",
            Job::PollTx => "NET_RX (Tx done)",
            Job::PollRx => "NET_RX (Rx done)",
            Job::Section { phase: Phase::Enter, .. } => "section enter (mask raise)",
            Job::Section { phase: Phase::Body, site: Site::Driver, .. } => "Driver ISR (critical section)",
            Job::Section { phase: Phase::Body, site: Site::BottomHalf, .. } => "NET_RX (critical section)",
            Job::Section { phase: Phase::Body, site: Site::Poll | Site::Busy, .. } => "driver poll (critical section)",
            Job::Section { phase: Phase::Body, site: Site::Protocol | Site::PollSocket | Site::BusySocket, .. } => "socket receive (critical section)",
            Job::Section { phase: Phase::Body, site: Site::Syscall, .. } => "system call (critical section)",
            Job::Section { phase: Phase::Exit, .. } => "section exit (mask lower)",
            Job::Section { phase: Phase::Restore, .. } => "restore hardware mask",
            Job::RecvIp { .. } => "IP receive",
            Job::RecvUdp { .. } => "UDP receive",
            Job::RecvSocket { .. } => "socket receive",
            Job::Forward { .. } => "IP forward",
            Job::Port { step, .. } => step.as_first().label(),
            Job::Irq(j) => j.label(),
            Job::Mask(j) => j.label(),
            Job::Code(a) => a.label(),
            Job::Napi(j) => j.label(),
        }
    }

    fn args(&self) -> crate::timeline::Args {
        match *self {
            Job::RecvIp { arrival, bytes }
            | Job::RecvUdp { arrival, bytes }
            | Job::RecvSocket { arrival, bytes }
            | Job::Forward { arrival, bytes, .. }
            | Job::Section { arrival, bytes, site: Site::Protocol, .. } => [Some(("frame", arrival)), Some(("bytes", u64::from(bytes)))],
            Job::SendSocket { bytes } | Job::SendUdp { bytes } | Job::SendIp { bytes } | Job::DriverSend { bytes } => [Some(("bytes", u64::from(bytes))), None],
            Job::Irq(j) => j.args(),
            Job::Mask(j) => j.args(),
            Job::Napi(j) => j.args(),
            _ => [None, None],
        }
    }
}

#[cfg(test)]
mod tests {
    /// Jobs are copied on every post and dispatch: the three parts' jobs
    /// together stay as small as the network jobs alone.
    #[test]
    fn a_job_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<super::Job>(), 16);
        assert_eq!(std::mem::size_of::<crate::cpu::Work<super::Job>>(), 32);
    }
}
