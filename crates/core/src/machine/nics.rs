//! The NICs beside the first (`[[nics.others]]`) on the machine. Each is
//! a port: its own arrivals, wire, receive buffer and interrupt source on
//! the controllers, and one receive queue numbered after the first NIC's
//! (its RSS queues): queue `Ports::base + k` is port `k`'s. Its NAPI
//! instance is that queue's, so the NAPI path (polls, weight and budget,
//! threaded NAPI, deferred interrupts, busy polling, critical sections)
//! serves it as it serves the first NIC's queues.
//!
//! The totals (`rx_offered`, drops, `interrupts`, deliveries) count every
//! NIC; each port also keeps its own, and the report checks frames in =
//! dropped + waiting + taken per port. The first NIC's fields stay where
//! they were (`Net::nic`, ...), so a machine of one NIC pays nothing.

use super::{Event, Machine};
use crate::config::Scenario;
use crate::device::coalesce::Coalesce;
use crate::device::nic::{Accept, Nic};
use crate::engine::Time;
use crate::error::Result;
use crate::cpu::Work;
use crate::kernel::net::Site;
use crate::kernel::{Job, PortStep};
use crate::workload::{Stimulus, Workload};

/// The NICs beside the first: each one's state, their first receive queue
/// (after the first NIC's; `usize::MAX` without any) and their first
/// interrupt source (after the other sources).
pub(crate) struct Ports {
    pub list: Vec<Port>,
    pub base: usize,
    pub src: usize,
}

impl Default for Ports {
    fn default() -> Self {
        Self { list: Vec::new(), base: usize::MAX, src: 0 }
    }
}

impl Ports {
    pub fn new(s: &Scenario) -> Self {
        match s.nics.others.is_empty() {
            true => Self::default(),
            false => Self { list: Port::all(s), base: s.rss.vectors() as usize, src: 1 + s.sources.others.len() },
        }
    }
}

/// One NIC beside the first.
pub(crate) struct Port {
    pub nic: Nic,
    pub workload: Workload,
    /// When its last received frame landed (or will land).
    pub landed: Option<Time>,
    /// Frames waiting for its wire, and how many may.
    pub wire_waiting: u64,
    pub wire_queue: u64,
    /// Its interrupt is disabled (its NAPI instance owns it).
    pub irq_off: bool,
    pub counters: PortCounters,
    /// Its receive-interrupt coalescing, when it coalesces.
    pub coalesce: Option<Coalesce>,
}

/// One port's own counts.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct PortCounters {
    pub offered: u64,
    pub dropped_wire: u64,
    pub dropped_nic: u64,
    pub interrupts: u64,
    /// Frames and bytes the driver took off its ring.
    pub taken: u64,
    pub taken_bytes: u64,
}

impl Port {
    /// The ports of scenario `s` (its `[[nics.others]]`), each drawing its
    /// arrivals from a seed of its own.
    pub fn all(s: &Scenario) -> Vec<Port> {
        let host = s.workload_host();
        let cycles_per_us = s.cycles_per_us();
        s.nics
            .others
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let mut nic = Nic::new(c.rx_buffer_bytes, 1, c.dma_bytes_per_cycle, cycles_per_us, c.link_mbps);
                nic.rx_ring = c.rx_ring_frames.unwrap_or(u64::MAX);
                // Port k's stream: the run's seed moved by a golden-ratio step per port.
                let seed = host.seed.wrapping_add((k as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
                let workload = Workload::arrivals(&c.arrivals(), &crate::workload::Host { seed, ..host });
                let coalesce = c.coalesce().active().then(|| Coalesce::new(&c.coalesce(), cycles_per_us));
                Port { nic, workload, landed: None, wire_waiting: 0, wire_queue: c.wire_queue_packets, irq_off: false, counters: PortCounters::default(), coalesce }
            })
            .collect()
    }

    /// Frames it holds: waiting for the wire or in its buffer.
    pub fn in_flight(&self) -> u64 {
        self.wire_waiting + self.nic.rx_waiting() as u64
    }
}

impl Machine {
    /// Each port's first arrival.
    pub(super) fn start_ports(&mut self) -> Result<()> {
        for k in 0..self.net.ports.list.len() {
            self.schedule_port_arrival(k)?;
        }
        Ok(())
    }

    fn schedule_port_arrival(&mut self, k: usize) -> Result<()> {
        if let Some((t, Stimulus::Receive { bytes })) = self.net.ports.list[k].workload.next_stimulus()?
            && t < self.end
        {
            let now = self.queue.now();
            self.queue.schedule(t.max(now), Event::PortArrive { port: k as u8, bytes });
        }
        Ok(())
    }

    /// A frame arrives for port `k`: it lands once its wire is free. Out
    /// of line, as the next: a machine of one NIC has none of their events.
    #[inline(never)]
    pub(super) fn port_arrive(&mut self, now: Time, k: usize, bytes: u32) -> Result<()> {
        self.port_offer(now, k, bytes);
        self.schedule_port_arrival(k)
    }

    /// Port `k`'s frame that waited for its wire lands.
    #[inline(never)]
    pub(super) fn port_landed(&mut self, now: Time, k: usize, bytes: u32) {
        self.net.ports.list[k].wire_waiting -= 1;
        self.port_land(now, k, bytes);
    }

    fn port_offer(&mut self, now: Time, k: usize, bytes: u32) {
        self.net.counters.rx_offered += 1;
        let p = &mut self.net.ports.list[k];
        p.counters.offered += 1;
        if let Some(prev) = p.landed {
            let earliest = prev.saturating_add(p.nic.wire_cycles(bytes));
            if earliest > now {
                if p.wire_waiting >= p.wire_queue {
                    p.counters.dropped_wire += 1;
                    self.net.counters.rx_dropped_wire += 1;
                    return;
                }
                p.wire_waiting += 1;
                p.landed = Some(earliest);
                self.queue.schedule(earliest, Event::PortLanded { port: k as u8, bytes });
                return;
            }
        }
        p.landed = Some(now);
        self.port_land(now, k, bytes);
    }

    /// A frame of port `k` comes off its wire into its buffer; its interrupt
    /// fires unless its NAPI instance has it masked.
    pub(super) fn port_land(&mut self, now: Time, k: usize, bytes: u32) {
        self.timeline.mark(now, "frame received");
        if self.code.is_some() {
            return self.code_port_land(now, k, bytes);
        }
        let p = &mut self.net.ports.list[k];
        if p.nic.receive(now, bytes) == Accept::Dropped {
            p.counters.dropped_nic += 1;
            self.net.counters.rx_dropped_nic += 1;
            return;
        }
        if p.coalesce.is_some() {
            if !p.irq_off {
                self.coalesce_count(self.net.ports.base + k, 1);
            }
            return;
        }
        self.port_raise(k);
    }

    /// Port `k`'s interrupt fires unless it is disabled.
    #[cold]
    #[inline(never)]
    pub(crate) fn port_raise(&mut self, k: usize) {
        let p = &mut self.net.ports.list[k];
        if p.irq_off {
            return;
        }
        p.irq_off = true;
        p.counters.interrupts += 1;
        if let Some(c) = &mut p.coalesce {
            c.fired();
        }
        self.net.counters.interrupts += 1;
        let now = self.queue.now();
        self.timeline.mark(now, "NIC interrupt");
        let src = self.net.ports.src + k;
        self.signal_interrupt(now, src, 0);
    }

    /// A port's driver step as CPU work: the first NIC's step of the same
    /// kind costs the same (the driver and its costs are one).
    #[inline(never)]
    pub(super) fn port_work(&mut self, job: Job, step: PortStep) -> Work<Job> {
        Work { job, ..self.net.costs.work(step.as_first()) }
    }

    /// A port's driver step on the mt or Linux path ended on `thread`:
    /// what follows, as `IsrRx`, `Softirq` and `PollRx` are followed.
    #[inline(never)]
    pub(super) fn port_after(&mut self, now: Time, thread: usize, step: PortStep, q: usize) -> Option<Job> {
        match step {
            PortStep::Isr => self.port_rx_step(now, thread, q, false).or_else(|| self.port_isr_done(now, thread)),
            PortStep::Softirq => self.port_step(q, true),
            PortStep::Poll => self.port_rx_step(now, thread, q, true),
        }
    }

    /// The driver's next step on port queue `q` in its ISR or (`bottom`)
    /// its bottom half; `None` when its ring is empty, and its interrupt
    /// is enabled again.
    pub(crate) fn port_step(&mut self, q: usize, bottom: bool) -> Option<Job> {
        if self.port_ring(q).rx_waiting() > 0 {
            let step = if bottom { PortStep::Poll } else { PortStep::Isr };
            return Some(Job::Port { step, q: q as u8 });
        }
        self.port_irq_set(q, false);
        None
    }

    /// The port's ISR drained its ring: the handler chain goes on (a
    /// port's interrupt always comes through the controllers).
    pub(crate) fn port_isr_done(&mut self, now: Time, thread: usize) -> Option<Job> {
        Some(Job::Irq(self.nic_handler_done(now, thread)))
    }

    /// The ISR or the bottom half took one frame off port queue `q`, as
    /// `rx_step` does for the first NIC (no closed-loop sender: a port's
    /// arrivals are open).
    fn port_rx_step(&mut self, now: Time, thread: usize, q: usize, bottom: bool) -> Option<Job> {
        let (frame, in_memory) = self.port_ring(q).take_rx(now).expect("a port's Rx step always has a frame");
        self.port_took(q, frame.bytes);
        self.net.costs.redraw();
        if self.net.costs.stack {
            self.protocol_takes(thread, frame);
        } else {
            self.deliver_in_memory(frame.arrival, in_memory, frame.bytes);
        }
        if self.net.costs.sections.driver > 0 {
            return Some(Job::section(if bottom { Site::BottomHalf } else { Site::Driver }, q as u8, 0, 0));
        }
        self.port_step(q, bottom)
    }

    /// The driver took a frame of `bytes` off port queue `q`'s ring.
    pub(crate) fn port_took(&mut self, q: usize, bytes: u32) {
        let c = &mut self.net.ports.list[q - self.net.ports.base].counters;
        (c.taken, c.taken_bytes) = (c.taken + 1, c.taken_bytes + u64::from(bytes));
    }

    /// Port queue `q`'s coalescing, if it coalesces.
    #[cold]
    #[inline(never)]
    pub(crate) fn port_coalescer(&mut self, q: usize) -> Option<&mut Coalesce> {
        self.net.ports.list[q - self.net.ports.base].coalesce.as_mut()
    }

    // The queue operations of `rss.rs` on a port's queue `q`. Cold and out
    // of line: inlined, their code made the one-NIC event loop's register
    // allocation worse (4 instructions a frame on the bench).

    #[cold]
    #[inline(never)]
    pub(crate) fn port_ring(&mut self, q: usize) -> &mut Nic {
        &mut self.net.ports.list[q - self.net.ports.base].nic
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn port(&self, q: usize) -> &Port {
        &self.net.ports.list[q - self.net.ports.base]
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn port_irq_set(&mut self, q: usize, off: bool) {
        self.net.ports.list[q - self.net.ports.base].irq_off = off;
    }
}
