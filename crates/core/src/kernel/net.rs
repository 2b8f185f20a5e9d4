//! The network software's jobs and their costs: the application, system
//! calls, the NIC driver (Driver Send, Driver ISR) and the protocol layers.
//! What runs after each job is decided in `driver.rs` (the device side) and
//! `stack.rs` (the layers above it).

use super::Job as Any;
use crate::config::Scenario;
use crate::cpu::{Bin, Label, Work};
use crate::engine::Time;

/// One piece of network software work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// A CPU-bound application that runs whenever nothing else does.
    Background,
    /// The sending application between two send calls.
    AppThink,
    /// A system call that moves no packet.
    Syscall,
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
            Job::RecvIp { .. } => "IP receive",
            Job::RecvUdp { .. } => "UDP receive",
            Job::RecvSocket { .. } => "socket receive",
        }
    }
}

/// Cycle costs of every job, fixed at configuration time.
#[derive(Debug, Clone, Default)]
pub struct Costs {
    pub stack: bool,
    /// Run each protocol layer as its own job (for timelines). Otherwise a
    /// direction's layers run as one job of the same total cycles: nothing
    /// can happen at a layer boundary that could not happen inside a layer,
    /// so results are the same with fewer events.
    pub layered: bool,
    socket: u64,
    udp: u64,
    ip: u64,
    copy_per_byte: f64,
    /// `(bytes, copy cycles)` of the last copy: sizes mostly repeat, and this
    /// saves the float arithmetic per frame. `(0, 0)` is right for any cost.
    copy_last: (u32, u64),
    recv_wakeup: u64,
    driver_send: u64,
    isr_tx: u64,
    isr_rx: u64,
    softirq_entry: u64,
    syscall: u64,
    think: u64,
}

impl Costs {
    pub fn new(s: &Scenario, think: u64, layered: bool) -> Self {
        Self {
            stack: s.stack.enabled,
            layered,
            socket: s.stack.socket_cycles,
            udp: s.stack.udp_cycles,
            ip: s.stack.ip_cycles,
            copy_per_byte: s.stack.copy_cycles_per_byte,
            copy_last: (0, 0),
            recv_wakeup: s.stack.recv_wakeup_cycles,
            driver_send: s.driver.send_cycles,
            isr_tx: s.driver.isr_tx_done_cycles,
            isr_rx: s.driver.isr_rx_done_cycles,
            softirq_entry: s.irq_path.softirq_entry_cycles,
            syscall: s.app.syscall_cycles,
            think,
        }
    }

    #[inline]
    fn copy(&mut self, bytes: u32) -> u64 {
        if bytes != self.copy_last.0 {
            // Rounds to nearest (the product is never negative) without a libm call.
            self.copy_last = (bytes, (f64::from(bytes) * self.copy_per_byte + 0.5) as u64);
        }
        self.copy_last.1
    }

    /// The job as CPU work: its cycles and the bin they count in.
    #[inline]
    pub fn work(&mut self, job: Job) -> Work<Any> {
        let (cycles, bin) = match job {
            Job::Background => (u64::MAX / 4, Bin::User),
            Job::AppThink => (self.think, Bin::User),
            Job::Syscall => (self.syscall, Bin::Kernel),
            Job::SendSocket { bytes } if !self.layered => (self.socket + self.udp + self.ip + self.copy(bytes), Bin::Kernel),
            Job::SendSocket { .. } => (self.socket, Bin::Kernel),
            Job::SendUdp { .. } => (self.udp, Bin::Kernel),
            // IP copies the data from the user buffer into a socket buffer.
            Job::SendIp { bytes } => (self.ip + self.copy(bytes), Bin::Kernel),
            Job::DriverSend { .. } => (self.driver_send, Bin::Kernel),
            Job::IsrTx => (self.isr_tx, Bin::Interrupt),
            Job::IsrRx => (self.isr_rx, Bin::Interrupt),
            Job::Softirq => (self.softirq_entry, Bin::BottomHalf),
            Job::PollTx => (self.isr_tx, Bin::BottomHalf),
            Job::PollRx => (self.isr_rx, Bin::BottomHalf),
            Job::RecvIp { bytes, .. } if !self.layered => (self.ip + self.udp + self.copy(bytes) + self.recv_wakeup + self.socket, Bin::Kernel),
            Job::RecvIp { .. } => (self.ip, Bin::Kernel),
            // UDP copies the data from the socket buffer to the user buffer.
            Job::RecvUdp { bytes, .. } => (self.udp + self.copy(bytes) + self.recv_wakeup, Bin::Kernel),
            Job::RecvSocket { .. } => (self.socket, Bin::Kernel),
        };
        Work { job: Any::Net(job), cycles, bin }
    }

    /// The first job of a send system call of `bytes`.
    pub fn send_call(&self, bytes: u32) -> Job {
        if self.stack { Job::SendSocket { bytes } } else { Job::DriverSend { bytes } }
    }
}
