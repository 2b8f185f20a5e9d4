//! The NICs beside the first (`[[nics.others]]`) on the machine. Each is
//! a port: its own arrivals, wire and interrupt source on the controllers,
//! and its receive queues (one, or its own RSS's), numbered after the first
//! NIC's: port `k`'s queues start at `Ports::first[k]`. Each queue has its
//! ring, its vector (the source's `i`th input), its coalescing and its NAPI
//! instance, so the NAPI path (polls, weight and budget, threaded NAPI,
//! deferred interrupts, busy polling, RPS, critical sections) serves it as
//! it serves the first NIC's queues.
//!
//! The totals (`rx_offered`, drops, `interrupts`, deliveries) count every
//! NIC; each port also keeps its own, and the report checks frames in =
//! dropped + waiting + taken per port. The first NIC's fields stay where
//! they were (`Net::nic`, ...), so a machine of one NIC pays nothing.

use super::{Event, Machine};
use crate::config::Scenario;
use crate::cpu::{SOFT, Work};
use crate::device::coalesce::Coalesce;
use crate::device::nic::Nic;
use crate::device::rss::Rss;
use crate::device::tx_ring::TxRing;
use crate::engine::Time;
use crate::error::Result;
use crate::kernel::net::Site;
use crate::kernel::{IrqPathKind, Job, PortStep};
use crate::workload::{Stimulus, Workload};

/// The NICs beside the first: each one's state, their first receive queue
/// (after the first NIC's; `usize::MAX` without any; RPS backlogs follow
/// their last), their first interrupt source (after the other sources),
/// and which port and queue within it each of their queues is.
pub(crate) struct Ports {
    pub list: Vec<Port>,
    pub base: usize,
    pub src: usize,
    /// Port queue `q`'s port and its queue there, at `q - base`.
    pub owner: Vec<(u8, u8)>,
    /// Each port's first queue.
    pub first: Vec<usize>,
}

impl Default for Ports {
    fn default() -> Self {
        Self { list: Vec::new(), base: usize::MAX, src: 0, owner: Vec::new(), first: Vec::new() }
    }
}

impl Ports {
    pub fn new(s: &Scenario) -> Self {
        if s.nics.others.is_empty() {
            return Self::default();
        }
        let base = s.rss.vectors() as usize;
        let owner: Vec<(u8, u8)> = s.nics.others.iter().enumerate().flat_map(|(k, c)| (0..c.queues).map(move |i| (k as u8, i as u8))).collect();
        let first = s.nics.others.iter().scan(base, |next, c| Some(std::mem::replace(next, *next + c.queues as usize))).collect();
        Self { list: Port::all(s), base, src: 1 + s.sources.others.len(), owner, first }
    }

    /// Whether queue `q` is a port's (not the first NIC's, nor an RPS
    /// backlog's, which come after the ports').
    #[inline(always)]
    pub fn holds(&self, q: usize) -> bool {
        q.wrapping_sub(self.base) < self.owner.len()
    }

    /// Port queue `q`'s port and its queue within it.
    pub(crate) fn at(&self, q: usize) -> (usize, usize) {
        let (k, i) = self.owner[q - self.base];
        (usize::from(k), usize::from(i))
    }

    /// Where port queue `q`'s frames leave by, if they are forwarded.
    pub fn forward_of(&self, q: usize) -> Option<u8> {
        self.list[self.at(q).0].forward
    }

    /// The queue of port `k`'s input `input` (its vector's queue).
    #[cold]
    #[inline(never)]
    pub fn queue_of_input(&self, k: usize, inputs: &[u32], input: u32) -> usize {
        self.first[k] + inputs.iter().position(|&i| i == input).unwrap_or(0)
    }
}

/// One NIC beside the first.
pub(crate) struct Port {
    /// Its receive queues: each ring, mask, count and coalescing, and the
    /// flows it hashes (one queue and no flows without RSS or RPS).
    pub rx: Rss,
    /// Each frame's flow is drawn: it steers over several queues, or RPS
    /// reads the flow back.
    pub steers: bool,
    /// Its driver's receive path (`irq_path`, else the machine's).
    pub path: IrqPathKind,
    /// The NIC its received frames leave by (`forward_to`), if any.
    pub forward: Option<u8>,
    /// Its transmit ring (used when a NIC forwards to it), and the frames
    /// it sent; its completions interrupt on its first queue.
    pub tx: TxRing,
    pub sent: u64,
    pub workload: Workload,
    /// When its last received frame landed (or will land).
    pub landed: Option<Time>,
    /// Frames waiting for its wire, and how many may.
    pub wire_waiting: u64,
    pub wire_queue: u64,
    pub counters: PortCounters,
}

/// One port's own counts (its queues' interrupts and frames taken are in
/// `Port::rx`).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct PortCounters {
    pub offered: u64,
    pub dropped_wire: u64,
    pub dropped_nic: u64,
}

impl Port {
    /// The ports of scenario `s` (its `[[nics.others]]`), each drawing its
    /// arrivals and flows from a seed of its own.
    pub fn all(s: &Scenario) -> Vec<Port> {
        let host = s.workload_host();
        let cycles_per_us = s.cycles_per_us();
        s.nics
            .others
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let ring = || {
                    let mut nic = Nic::new(c.rx_buffer_bytes, 1, c.dma_bytes_per_cycle, cycles_per_us, c.link_mbps);
                    nic.rx_ring = c.rx_ring_frames.unwrap_or(u64::MAX);
                    nic
                };
                // Port k's stream: the run's seed moved by a golden-ratio step per port.
                let seed = host.seed.wrapping_add((k as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
                // A NIC that only transmits (rate 0) has no arrivals.
                let workload = match c.rate_pps > 0.0 {
                    true => Workload::arrivals(&c.arrivals(), &crate::workload::Host { seed, ..host }),
                    false => Workload::Idle,
                };
                let mut rss = c.rss(s.rss.rps_cpus);
                let steers = rss.queues > 1 || rss.rps();
                if !steers {
                    rss.flows = 1;
                }
                let mut rx = Rss::new(&rss, seed, ring);
                if c.coalesce().active() {
                    rx.coalesce = (0..c.queues).map(|_| Coalesce::new(&c.coalesce(), cycles_per_us)).collect();
                }
                let path = IrqPathKind::of_nic(c.irq_path, s.irq_path.kind);
                let forward = c.forward_to.map(|k| k as u8);
                let tx = TxRing::new(c.tx_queue_packets.unwrap_or(64) as u64, cycles_per_us, c.link_mbps);
                Port {
                    rx,
                    steers,
                    path,
                    forward,
                    tx,
                    sent: 0,
                    workload,
                    landed: None,
                    wire_waiting: 0,
                    wire_queue: c.wire_queue_packets,
                    counters: PortCounters::default(),
                }
            })
            .collect()
    }

    /// Frames it holds: waiting for the wire or in its rings.
    pub fn in_flight(&self) -> u64 {
        self.wire_waiting + self.rx.waiting()
    }

    /// Its queues' interrupts.
    pub fn interrupts(&self) -> u64 {
        self.rx.interrupts.iter().sum()
    }

    /// Frames and bytes the driver took off its rings.
    pub fn taken(&self) -> (u64, u64) {
        self.rx.taken.iter().fold((0, 0), |(f, b), t| (f + t.0, b + t.1))
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
            let earliest = prev.saturating_add(p.rx.rings[0].wire_cycles(bytes));
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

    /// A frame of port `k` comes off its wire into its buffer, in the ring
    /// of the queue its flow hashes to; that queue's interrupt fires unless
    /// its NAPI instance has it masked.
    pub(super) fn port_land(&mut self, now: Time, k: usize, bytes: u32) {
        self.timeline.mark(now, "frame received");
        if self.code.as_ref().is_some_and(|c| c.drives_port[k]) {
            return self.code_port_land(now, k, bytes);
        }
        let p = &mut self.net.ports.list[k];
        let (i, flow) = if p.steers { p.rx.steer() } else { (0, 0) };
        if !p.rx.receive(i, flow, now, bytes) {
            p.counters.dropped_nic += 1;
            self.net.counters.rx_dropped_nic += 1;
            return;
        }
        let q = self.net.ports.first[k] + i;
        if !p.rx.coalesce.is_empty() {
            if !p.rx.irq_off.contains(i) {
                self.coalesce_count(q, 1);
            }
            return;
        }
        self.port_raise(q);
    }

    /// Port queue `q`'s interrupt fires unless it is disabled: its vector
    /// (the port's source's input for that queue).
    #[cold]
    #[inline(never)]
    pub(crate) fn port_raise(&mut self, q: usize) {
        let (k, i) = self.net.ports.at(q);
        if !self.net.ports.list[k].rx.fire(i) {
            return;
        }
        self.net.counters.interrupts += 1;
        let now = self.queue.now();
        self.timeline.mark(now, "NIC interrupt");
        let src = self.net.ports.src + k;
        self.signal_vector(now, src, i);
    }

    /// Port `k`'s interrupt for its queue `q` was claimed on `cpu`: on its
    /// own path, its NAPI instance is scheduled, its top half raises its
    /// own NET_RX bottom half, or its ISR drains its ring (the step
    /// returned).
    #[cold]
    #[inline(never)]
    pub(super) fn port_claimed(&mut self, cpu: usize, k: usize, q: usize) -> Option<Job> {
        match self.net.ports.list[k].path {
            IrqPathKind::Napi => self.napi_schedule(cpu, q),
            IrqPathKind::Linux => self.post(cpu, SOFT, Job::Port { step: PortStep::Softirq, q: q as u8 }),
            IrqPathKind::Mt => return self.port_step(q, false),
        }
        None
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
            PortStep::IsrTx => {
                self.port_tx_clean(q);
                self.port_step(q, false).or_else(|| self.port_isr_done(now, thread))
            }
            PortStep::PollTx => {
                self.port_tx_clean(q);
                self.port_step(q, true)
            }
        }
    }

    /// The driver's next step on port queue `q` in its ISR or (`bottom`)
    /// its bottom half; `None` when its ring is empty, and its interrupt
    /// is enabled again.
    pub(crate) fn port_step(&mut self, q: usize, bottom: bool) -> Option<Job> {
        if let Some(tx) = self.port_tx_step(q, bottom) {
            return Some(tx);
        }
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
        if let Some(to) = self.net.ports.forward_of(q) {
            self.forward_takes(thread, frame.arrival, frame.bytes, to);
        } else if self.net.costs.stack {
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
    #[cold]
    #[inline(never)]
    pub(crate) fn port_took(&mut self, q: usize, bytes: u32) {
        let (k, i) = self.net.ports.at(q);
        let t = &mut self.net.ports.list[k].rx.taken[i];
        (t.0, t.1) = (t.0 + 1, t.1 + u64::from(bytes));
    }

    /// The hash of the flow of the frame leaving port queue `q` (RPS).
    #[cold]
    #[inline(never)]
    pub(crate) fn port_take_hash(&mut self, q: usize) -> u32 {
        let (k, i) = self.net.ports.at(q);
        self.net.ports.list[k].rx.take_hash(i)
    }

    /// Port queue `q`'s interrupts, frames and bytes taken: what its DIM samples.
    #[cold]
    #[inline(never)]
    pub(crate) fn port_dim_counts(&self, q: usize) -> (u64, u64, u64) {
        let (k, i) = self.net.ports.at(q);
        let r = &self.net.ports.list[k].rx;
        (r.interrupts[i], r.taken[i].0, r.taken[i].1)
    }

    /// Port queue `q`'s coalescing, if it coalesces.
    #[cold]
    #[inline(never)]
    pub(crate) fn port_coalescer(&mut self, q: usize) -> Option<&mut Coalesce> {
        let (k, i) = self.net.ports.at(q);
        self.net.ports.list[k].rx.coalesce.get_mut(i)
    }

    // The queue operations of `rss.rs` on a port's queue `q`. Cold and out
    // of line: inlined, their code made the one-NIC event loop's register
    // allocation worse (4 instructions a frame on the bench).

    #[cold]
    #[inline(never)]
    pub(crate) fn port_ring(&mut self, q: usize) -> &mut Nic {
        let (k, i) = self.net.ports.at(q);
        &mut self.net.ports.list[k].rx.rings[i]
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn port_irq_off(&self, q: usize) -> bool {
        let (k, i) = self.net.ports.at(q);
        self.net.ports.list[k].rx.irq_off.contains(i)
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn port_irq_set(&mut self, q: usize, off: bool) {
        let (k, i) = self.net.ports.at(q);
        self.net.ports.list[k].rx.irq_off.set(i, off);
    }
}
