//! The NIC and what drives it: the device, its workload, the driver and
//! protocol costs, and the packet counters and latencies.
//!
//! The NIC's interrupt reaches the CPU over the ideal wire (`intc.kind =
//! "direct"` with the mt-interrupts path: the Driver ISR is posted at once
//! on `nic.irq_thread`) or as interrupt source 0 of [`super::Delivery`],
//! through the controller and the interrupt path the scenario selects.

use super::{Event, Machine, Record};
use crate::config::{Scenario, WorkloadConfig};
use crate::cpu::{SOFT, USER};
use crate::device::firmware::Firmware;
use crate::device::nic::Nic;
use crate::engine::Time;
use crate::error::Result;
use crate::kernel::net::{Costs, Software};
use crate::kernel::{IrqPathKind, Job};
use crate::stats::{Counters, Latencies};
use crate::workload::{Stimulus, Workload};

pub(crate) struct Net {
    pub nic: Nic,
    pub costs: Costs,
    pub workload: Workload,
    pub counters: Counters,
    pub latencies: Latencies,
    pub irq_thread: usize,
    pub app_thread: usize,
    /// The thread on which a CPU-bound application runs whenever nothing
    /// else does (`app.background`).
    pub background: Option<usize>,
    /// The NIC interrupt is posted and its ISR has not finished.
    pub irq_posted: bool,
    pub backlog_limit: u64,
    /// Stimuli that came earlier than one before them (strace -f interleaving).
    pub reordered: u64,
    /// How the NIC's interrupt reaches its CPU.
    pub route: Route,
    /// The receive path its handler starts: the ISR drains the NIC (mt),
    /// the top half schedules the NET_RX bottom half (Linux) or a poll
    /// of its NAPI instance (NAPI).
    pub path: IrqPathKind,
    /// Derived at the start, for the hot path: a landed frame goes straight
    /// into the one NIC and its interrupt straight to `irq_thread` (the bare
    /// wire and no code, RSS, coalescing, masking or timeline). One test on
    /// the arrival path instead of one per part.
    pub direct: bool,
    /// Derived at the start: some queue has DIM (its coalescer's, or the
    /// programmable NIC's), sampled at each NAPI poll's completion.
    pub dims: bool,
    /// Derived at the start, for the hot path: a frame the driver takes
    /// goes to the protocol stack and nothing else follows from it (no
    /// closed-loop sender, no critical section in the driver, no drawn
    /// receive cost). One test per frame instead of three.
    pub rx_plain: bool,
    /// `app.max_waiting_calls`.
    pub max_waiting_calls: u64,
    /// When the last received frame landed (or will land) at the NIC.
    pub rx_landed: Option<Time>,
    /// Received frames waiting for the wire, and how many may.
    pub wire_waiting: u64,
    pub wire_queue: u64,
    /// The NAPI path's instance (`irq_path.kind = "napi"`).
    pub napi: Option<crate::kernel::napi::Napi>,
    /// Receive-interrupt coalescing (`[coalesce]`), when the NIC coalesces.
    pub coalesce: Option<crate::device::coalesce::Coalesce>,
    /// Receive-side scaling over several queues (`[rss]`).
    pub rss: Option<crate::device::rss::Rss>,
    /// The programmable NIC (`[nic_firmware]`): `nic` (or with `[rss]` the
    /// queues' rings) is then the host's queue of the frames it returned.
    pub firmware: Option<Box<crate::device::firmware::Firmware>>,
    /// The NICs beside the first (`nics.rs`).
    pub ports: super::nics::Ports,
    /// Received frames forwarded out of a NIC (`forward.rs`).
    pub forwarding: super::forward::Forwarding,
}

impl Net {
    pub fn new(s: &Scenario, base_dir: &std::path::Path, record: Record) -> Result<Self> {
        let workload = workload(s, base_dir)?;
        let think = workload.send_flood().map_or(0, |(_, gap)| gap);
        let mut nic = Nic::new(s.nic.rx_buffer_bytes, s.nic.tx_queue_packets, s.nic.dma_bytes_per_cycle, s.cycles_per_us(), s.nic.link_mbps);
        nic.rx_ring = s.nic.rx_ring_frames.unwrap_or(u64::MAX);
        if let Some(rate) = s.nic_dma_link() {
            nic.pace(rate);
        }
        let ring = || {
            if s.nic_firmware.selected() {
                // The return ring's frames are in host memory already.
                return Firmware::host_queue(s.cycles_per_us(), s.nic.link_mbps);
            }
            let mut r = Nic::new(s.nic.rx_buffer_bytes, 1, s.nic.dma_bytes_per_cycle, s.cycles_per_us(), s.nic.link_mbps);
            r.rx_ring = nic.rx_ring;
            r
        };
        let coalescer = || crate::device::coalesce::Coalesce::new(&s.coalesce, s.cycles_per_us());
        let rss = s.rss.active().then(|| {
            let mut r = crate::device::rss::Rss::new(&s.rss, s.run.seed, ring);
            // The programmable NIC's coalescing is its firmware's.
            if s.coalesce.active() && !s.nic_firmware.selected() {
                r.coalesce = (0..s.rss.queues).map(|_| coalescer()).collect();
            }
            r
        });
        let firmware = match s.nic_firmware.selected() {
            true => {
                let f = Firmware::new(&s.nic_firmware, base_dir, s.cpu.clock_mhz, s.rss.vectors() as usize, s.coalesce.active().then_some(&s.coalesce))
                    .map_err(|(key, msg)| crate::Error::Config { file: s.file.clone(), key, line: None, msg })?;
                nic = Firmware::host_queue(s.cycles_per_us(), s.nic.link_mbps);
                Some(Box::new(f))
            }
            false => None,
        };
        let software = Software { driver: &s.driver, stack: &s.stack, app: &s.app, irq_path: &s.irq_path };
        let costs = Costs::new(&software, &s.masking, s.run.seed, think, record.timeline);
        let forward_to = s.nic.forward_to.map(|k| k as u8);
        let rx_plain = costs.stack && costs.sections.driver == 0 && !costs.spread() && !workload.closed_loop_rx() && forward_to.is_none();
        Ok(Self {
            nic,
            costs,
            workload,
            counters: Counters::default(),
            latencies: Latencies::new(s.stats.max_packet_records),
            irq_thread: s.nic.irq_thread,
            app_thread: s.app.thread,
            background: s.app.background.then_some(s.app.thread),
            irq_posted: false,
            backlog_limit: s.stack.backlog_packets as u64,
            reordered: 0,
            route: Route::Wire,
            path: IrqPathKind::of_nic(None, s.irq_path.kind),
            direct: false,
            dims: false,
            rx_plain,
            max_waiting_calls: s.app.max_waiting_calls,
            rx_landed: None,
            wire_waiting: 0,
            wire_queue: s.nic.wire_queue_packets,
            napi: None,
            coalesce: (s.coalesce.active() && !s.rss.active() && !s.nic_firmware.selected()).then(coalescer),
            rss,
            firmware,
            ports: super::nics::Ports::new(s),
            forwarding: super::forward::Forwarding { first: forward_to, ..Default::default() },
        })
    }

    /// No NIC: the workload drives another device.
    pub fn idle() -> Self {
        Self {
            nic: Nic::new(0, 1, 1.0, 1.0, 1.0),
            costs: Costs::default(),
            workload: Workload::Idle,
            counters: Counters::default(),
            latencies: Latencies::unused(),
            irq_thread: 0,
            app_thread: 0,
            background: None,
            irq_posted: false,
            backlog_limit: 0,
            reordered: 0,
            route: Route::Wire,
            path: IrqPathKind::Mt,
            direct: false,
            dims: false,
            rx_plain: false,
            max_waiting_calls: 0,
            rx_landed: None,
            wire_waiting: 0,
            wire_queue: 0,
            napi: None,
            coalesce: None,
            rss: None,
            firmware: None,
            ports: super::nics::Ports::default(),
            forwarding: Default::default(),
        }
    }

    pub fn active(&self) -> bool {
        !matches!(self.workload, Workload::Idle)
    }

    /// The NIC's interrupt goes through the controllers as delivery source 0.
    pub fn wired(&self) -> bool {
        self.route == Route::Controller
    }
}

/// How the first NIC's interrupt reaches its CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// The bare wire: the ISR is posted at once on `irq_thread`.
    Wire,
    /// The bare wire with critical sections in the driver and protocol:
    /// the interrupt goes through the masking part at this priority.
    Masked(u8),
    /// Delivery source 0: through a controller (any but the bare wire, the
    /// Linux or NAPI path, or other sources or NICs beside it).
    Controller,
}

impl Machine {
    pub(super) fn start_net(&mut self) -> Result<()> {
        if !self.net.active() {
            return Ok(());
        }
        let n = &self.net;
        self.net.direct =
            self.code.is_none() && n.firmware.is_none() && n.rss.is_none() && n.coalesce.is_none() && n.route == Route::Wire && !self.timeline.enabled();
        let has = |c: &[crate::device::coalesce::Coalesce]| c.iter().any(|c| c.dim.is_some());
        let n = &self.net;
        self.net.dims = n.coalesce.as_ref().is_some_and(|c| c.dim.is_some())
            || n.rss.as_ref().is_some_and(|r| has(&r.coalesce))
            || n.ports.list.iter().any(|p| has(&p.rx.coalesce))
            || n.firmware.as_ref().is_some_and(|f| !f.dim.is_empty());
        let app = self.net.app_thread;
        if self.net.napi.as_ref().is_some_and(|n| n.busy.is_some()) {
            self.busy_poll_start();
        }
        if self.net.workload.send_flood().is_some() {
            self.post(app, USER, Job::AppThink);
        } else if let Some(t) = self.net.background {
            self.post(t, USER, Job::Background);
        }
        self.start_ports()?;
        self.schedule_next_stimulus()
    }

    #[inline(always)]
    pub(super) fn schedule_next_stimulus(&mut self) -> Result<()> {
        if let Some((t, s)) = self.next_stimulus()? {
            self.queue.schedule(t, Event::Stimulus(s));
        }
        Ok(())
    }

    /// The workload's next stimulus and when it acts: no earlier than now
    /// (one due earlier is counted as reordered); none from the run's end.
    #[inline(always)]
    pub(super) fn next_stimulus(&mut self) -> Result<Option<(Time, Stimulus)>> {
        let Some((t, s)) = self.net.workload.next_stimulus()? else { return Ok(None) };
        let now = self.queue.now();
        if t < now {
            self.net.reordered += 1;
        }
        Ok((t < self.end).then_some((t.max(now), s)))
    }

    #[inline(always)]
    pub(super) fn apply(&mut self, now: Time, s: Stimulus) {
        let app = self.net.app_thread;
        match s {
            Stimulus::Receive { bytes } => self.receive(now, bytes),
            // Replayed calls wait for the CPU in bounded number; the rest are dropped.
            Stimulus::Send { .. } if self.net.counters.tx_in_stack >= self.net.max_waiting_calls => {
                self.net.counters.tx_offered += 1;
                self.net.counters.tx_dropped += 1;
            }
            Stimulus::Send { bytes } => {
                self.apply_send(app, bytes);
                self.dispatch(app);
            }
            Stimulus::Syscall => {
                let c = &mut self.net.counters;
                c.syscalls += 1;
                if c.syscalls_waiting >= self.net.max_waiting_calls {
                    c.syscalls_dropped += 1;
                    return;
                }
                c.syscalls_waiting += 1;
                self.post(app, SOFT, Job::Syscall);
                self.dispatch(app);
            }
        }
    }
}

/// The workload part of the scenario's variant; one that drives no NIC
/// (the exerciser's, the null RPC's) leaves it idle.
fn workload(s: &Scenario, base_dir: &std::path::Path) -> Result<Workload> {
    let host = s.workload_host();
    Ok(match &s.workload {
        WorkloadConfig::Flood(c) => Workload::flood(c),
        WorkloadConfig::Arrivals(c) => Workload::arrivals(c, &host),
        WorkloadConfig::Script(c) => Workload::script(c, base_dir, &host)?,
        WorkloadConfig::Trace(c) => Workload::trace(c, base_dir, &host)?,
        WorkloadConfig::Synthetic(c) => Workload::synthetic(c, &host),
        WorkloadConfig::NullRpc(_) | WorkloadConfig::Exerciser(_) => Workload::Idle,
    })
}
