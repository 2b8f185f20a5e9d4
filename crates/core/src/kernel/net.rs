//! The network software's costs: the application, system calls, the NIC
//! driver (Driver Send, Driver ISR) and the protocol layers. Its jobs are
//! variants of [`Job`]; what runs after each is the machine's
//! (`machine/jobs.rs`, with `machine/driver.rs` for the device side and
//! `machine/stack.rs` for the layers above it).

use super::Job;
use super::{AppConfig, DriverConfig, IrqPathConfig, IrqPathKind, StackConfig};
use crate::cpu::{Bin, Work};
use crate::masking::MaskingConfig;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// A critical section's steps: the mask raise, the protected work, the mask
/// lower, and (optimistic, after deferred handlers ran) the hardware mask's
/// restore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Enter,
    Body,
    Exit,
    Restore,
}

/// Where a critical section is: the driver's receive work per frame (in
/// the ISR, the NET_RX bottom half, a NAPI poll or a busy poll), the socket
/// layer's per frame, or a system call's kernel work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Site {
    /// In the Driver ISR's receive work (mt path).
    Driver,
    /// In the NET_RX bottom half's receive work (Linux path).
    BottomHalf,
    /// In a NAPI poll's receive work of queue `q` (`Job::Section::q`): the
    /// driver's, then the socket layer's.
    Poll,
    PollSocket,
    /// In the busy-polling receiver's receive work: the driver's, then the
    /// socket layer's.
    Busy,
    BusySocket,
    /// In the socket layer's receive work (a protocol job).
    Protocol,
    /// In a replayed system call's kernel work.
    Syscall,
}

impl Site {
    /// Whether the section is the socket layer's (else the driver's or a system call's).
    pub fn socket(self) -> bool {
        matches!(self, Site::Protocol | Site::PollSocket | Site::BusySocket)
    }
}

/// Cycles of the critical sections in the NIC path (all 0: none).
#[derive(Debug, Clone, Copy, Default)]
pub struct Sections {
    pub driver: u64,
    pub protocol: u64,
    pub syscall: u64,
    pub enter: u64,
    pub exit: u64,
    pub restore: u64,
    /// The priority they mask up to.
    pub level: u8,
}

/// The driver's per-frame receive cost as a drawn value: `isr_rx` scaled by
/// each multiple (their mean 1), one drawn per frame from its own stream of
/// `run.seed`, so arrivals draw the same numbers with or without it.
#[derive(Debug, Clone)]
struct Spread {
    cycles: Vec<u64>,
    rng: Pcg64Mcg,
}

impl Spread {
    /// Added to `run.seed` for this stream: any fixed odd constant.
    const STREAM: u64 = 0x9e37_79b9_7f4a_7c15;

    fn new(isr_rx: u64, multiples: &[f64], seed: u64) -> Option<Self> {
        if multiples.is_empty() {
            return None;
        }
        let mean = multiples.iter().sum::<f64>() / multiples.len() as f64;
        let cycles = multiples.iter().map(|m| (isr_rx as f64 * m / mean).round() as u64).collect();
        Some(Self { cycles, rng: Pcg64Mcg::seed_from_u64(seed.wrapping_add(Self::STREAM)) })
    }

    fn draw(&mut self) -> u64 {
        self.cycles[self.rng.random_range(0..self.cycles.len())]
    }
}

/// Cycle costs of every job, fixed at configuration time.
/// The sections of a scenario the network software's costs come from.
pub struct Software<'a> {
    pub driver: &'a DriverConfig,
    pub stack: &'a StackConfig,
    pub app: &'a AppConfig,
    pub irq_path: &'a IrqPathConfig,
}

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
    /// A received frame's layers as one job, but for the copy (the
    /// section is at most `socket`, checked with the scenario).
    recv_fixed: u64,
    driver_send: u64,
    isr_tx: u64,
    /// The driver's receive cost of the next frame on the ISR or bottom-half
    /// path: fixed, or with a spread drawn ahead (`redraw`), so the jobs'
    /// cost lookup on the hot path stays one load.
    isr_rx: u64,
    /// Per-frame receive costs to draw from (`driver.isr_rx_spread`), if any.
    rx_spread: Option<Spread>,
    softirq_entry: u64,
    syscall: u64,
    think: u64,
    pub sections: Sections,
}

impl Costs {
    /// The costs of `sw`, with the critical sections `m` puts in the NIC
    /// path; `seed` draws the receive spread, `think` is the sending
    /// application's gap, `layered` runs each protocol layer as its own job.
    pub fn new(sw: &Software, m: &MaskingConfig, seed: u64, think: u64, layered: bool) -> Self {
        let sections = if m.nic_sections() {
            let c = m.costs();
            let optimistic = m.scheme == crate::masking::Scheme::Optimistic;
            let (enter, exit) =
                if optimistic { (c.optimistic_enter.unwrap_or(0), c.optimistic_leave.unwrap_or(0)) } else { (c.conventional_raise, c.conventional_lower) };
            let level = m.section_level.unwrap_or(m.nic_priority);
            Sections {
                driver: m.driver_section_cycles,
                protocol: m.protocol_section_cycles,
                syscall: m.syscall_section_cycles,
                enter,
                exit,
                restore: c.conventional_lower,
                level,
            }
        } else {
            Sections::default()
        };
        let mut costs = Self {
            stack: sw.stack.enabled,
            layered,
            socket: sw.stack.socket_cycles,
            udp: sw.stack.udp_cycles,
            ip: sw.stack.ip_cycles,
            copy_per_byte: sw.stack.copy_cycles_per_byte,
            copy_last: (0, 0),
            recv_wakeup: sw.stack.recv_wakeup_cycles,
            recv_fixed: sw.stack.ip_cycles + sw.stack.udp_cycles + sw.stack.recv_wakeup_cycles + sw.stack.socket_cycles - sections.protocol,
            driver_send: sw.driver.send_cycles,
            isr_tx: sw.driver.isr_tx_done_cycles,
            // The section's part of the work is its own job.
            isr_rx: sw.driver.isr_rx_done_cycles - sections.driver,
            rx_spread: Spread::new(sw.driver.isr_rx_done_cycles - sections.driver, &sw.driver.isr_rx_spread, seed),
            softirq_entry: sw.irq_path.softirq_entry_cycles,
            syscall: sw.app.syscall_cycles,
            think,
            sections,
        };
        // The ISR and bottom-half paths take the first frame's cost drawn
        // ahead; NAPI draws as each frame is polled.
        if sw.irq_path.kind != Some(IrqPathKind::Napi) {
            costs.redraw();
        }
        costs
    }

    #[inline]
    fn copy(&mut self, bytes: u32) -> u64 {
        if bytes != self.copy_last.0 {
            // Rounds to nearest (the product is never negative) without a libm call.
            self.copy_last = (bytes, (f64::from(bytes) * self.copy_per_byte + 0.5) as u64);
        }
        self.copy_last.1
    }

    /// A network job as CPU work: its cycles and the bin they count in.
    #[inline(always)]
    pub fn work(&mut self, job: Job) -> Work<Job> {
        let (cycles, bin) = match job {
            Job::Background => (crate::cpu::NEVER, Bin::User),
            Job::AppThink => (self.think, Bin::User),
            Job::Syscall => (self.syscall - self.sections.syscall, Bin::Kernel),
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
            Job::Section { phase, site, .. } => {
                let sec = &self.sections;
                match (phase, site) {
                    (Phase::Enter, _) => (sec.enter, Bin::Overhead),
                    (Phase::Body, Site::Driver) => (sec.driver, Bin::Interrupt),
                    (Phase::Body, Site::BottomHalf | Site::Poll) => (sec.driver, Bin::BottomHalf),
                    (Phase::Body, Site::PollSocket) => (sec.protocol, Bin::BottomHalf),
                    (Phase::Body, Site::Busy) => (sec.driver, Bin::Kernel),
                    (Phase::Body, Site::Protocol | Site::BusySocket) => (sec.protocol, Bin::Kernel),
                    (Phase::Body, Site::Syscall) => (sec.syscall, Bin::Kernel),
                    (Phase::Exit, _) => (sec.exit, Bin::Overhead),
                    (Phase::Restore, _) => (sec.restore, Bin::Overhead),
                }
            }
            Job::RecvIp { bytes, .. } if !self.layered => (self.recv_fixed + self.copy(bytes), Bin::Kernel),
            Job::RecvIp { .. } => (self.ip, Bin::Kernel),
            // UDP copies the data from the socket buffer to the user buffer.
            Job::RecvUdp { bytes, .. } => (self.udp + self.copy(bytes) + self.recv_wakeup, Bin::Kernel),
            Job::RecvSocket { .. } => (self.socket - self.sections.protocol, Bin::Kernel),
            Job::Forward { .. } => (self.forward_cycles(), Bin::Kernel),
            Job::Irq(_) | Job::Mask(_) | Job::Code(_) | Job::Napi(_) | Job::Port { .. } => unreachable!("not a network job: {job:?}"),
        };
        Work { job, cycles, bin }
    }

    /// A NAPI poll's work for one received frame: the driver's, then (with
    /// the stack) every receive layer's, run to completion.
    pub fn napi_rx_cycles(&mut self, bytes: u32) -> u64 {
        self.driver_rx_cycles() + self.stack_rx_cycles(bytes)
    }

    /// Forwarding a received frame: IP's receive, route and output (its
    /// layer's cost, with the stack: no copy, no socket) and Driver Send.
    pub fn forward_cycles(&self) -> u64 {
        if self.stack { self.ip + self.driver_send } else { self.driver_send }
    }

    /// The receive layers' part of a frame (RPS runs it on another CPU).
    pub fn stack_rx_cycles(&mut self, bytes: u32) -> u64 {
        // A section's part of the socket layer's work is its own job.
        if self.stack { self.ip + self.udp + self.copy(bytes) + self.recv_wakeup + self.socket - self.sections.protocol } else { 0 }
    }

    /// Whether the driver's receive cost is drawn per frame.
    pub fn spread(&self) -> bool {
        self.rx_spread.is_some()
    }

    /// The ISR or bottom half took a frame: the next one's cost is drawn
    /// (the draws go to the frames in the order they are taken, as if each
    /// were drawn when its job starts).
    pub fn redraw(&mut self) {
        if let Some(s) = &mut self.rx_spread {
            self.isr_rx = s.draw();
        }
    }

    /// The driver's part of a received frame on the NAPI path (drawn, with a spread).
    #[inline]
    pub fn driver_rx_cycles(&mut self) -> u64 {
        match &mut self.rx_spread {
            None => self.isr_rx,
            Some(s) => s.draw(),
        }
    }

    /// The first job of a send system call of `bytes`.
    pub fn send_call(&self, bytes: u32) -> Job {
        if self.stack { Job::SendSocket { bytes } } else { Job::DriverSend { bytes } }
    }
}
