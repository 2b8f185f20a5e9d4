//! The NICs beside the first (`[[nics.others]]`) on the machine. Each is
//! a port: its own arrivals, wire, receive buffer and interrupt source on
//! the controllers, and one receive queue numbered after the first NIC's
//! (its RSS queues): queue `Net::port_base + k` is port `k`'s. Its NAPI
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
use crate::device::nic::{Accept, Nic};
use crate::engine::Time;
use crate::error::Result;
use crate::workload::{Stimulus, Workload};

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
                Port { nic, workload, landed: None, wire_waiting: 0, wire_queue: c.wire_queue_packets, irq_off: false, counters: PortCounters::default() }
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
        for k in 0..self.net.ports.len() {
            self.schedule_port_arrival(k)?;
        }
        Ok(())
    }

    fn schedule_port_arrival(&mut self, k: usize) -> Result<()> {
        if let Some((t, Stimulus::Receive { bytes })) = self.net.ports[k].workload.next_stimulus()?
            && t < self.end
        {
            let now = self.queue.now();
            self.queue.schedule(t.max(now), Event::PortArrive { port: k as u8, bytes });
        }
        Ok(())
    }

    /// A frame arrives for port `k`: it lands once its wire is free.
    pub(super) fn port_arrive(&mut self, now: Time, k: usize, bytes: u32) -> Result<()> {
        self.port_offer(now, k, bytes);
        self.schedule_port_arrival(k)
    }

    fn port_offer(&mut self, now: Time, k: usize, bytes: u32) {
        self.net.counters.rx_offered += 1;
        let p = &mut self.net.ports[k];
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
        let p = &mut self.net.ports[k];
        if p.nic.receive(now, bytes) == Accept::Dropped {
            p.counters.dropped_nic += 1;
            self.net.counters.rx_dropped_nic += 1;
            return;
        }
        self.port_raise(k);
    }

    /// Port `k`'s interrupt fires unless it is disabled.
    pub(crate) fn port_raise(&mut self, k: usize) {
        let p = &mut self.net.ports[k];
        if p.irq_off {
            return;
        }
        p.irq_off = true;
        p.counters.interrupts += 1;
        self.net.counters.interrupts += 1;
        let now = self.queue.now();
        self.timeline.mark(now, "NIC interrupt");
        let src = self.net.port_src + k;
        self.signal_interrupt(now, src, 0);
    }

    /// The port whose queue is `q`, if `q` is a port's.
    #[inline(always)]
    pub(crate) fn port_of(&self, q: usize) -> Option<usize> {
        q.checked_sub(self.net.port_base).filter(|&k| k < self.net.ports.len())
    }
}
