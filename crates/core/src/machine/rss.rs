//! RSS on the machine: a landed frame is steered to its queue's ring, and the
//! queue's vector interrupts through the controller unless its NAPI instance
//! has it masked. The hash, the table and the queues' rings are the device's
//! (`device/rss.rs`). Queues after the first NIC's are the other NICs'
//! (`nics.rs`).

use crate::device::nic::Nic;
use crate::engine::Time;
use crate::machine::Machine;

impl Machine {
    /// Receive queue `q`'s ring: the NIC's own without RSS.
    pub(crate) fn ring(&mut self, q: usize) -> &mut Nic {
        if self.net.ports.holds(q) {
            return self.port_ring(q);
        }
        match &mut self.net.rss {
            Some(r) => &mut r.rings[q],
            None => &mut self.net.nic,
        }
    }

    /// Whether queue `q`'s interrupt is disabled.
    /// (An RPS backlog, past the rings, has no interrupt: always off.)
    pub(crate) fn queue_irq_off(&self, q: usize) -> bool {
        if self.net.ports.holds(q) {
            return self.port_irq_off(q);
        }
        self.net.rss.as_ref().map_or(self.net.irq_posted, |r| q >= r.irq_off.len() || r.irq_off.contains(q))
    }

    pub(crate) fn queue_irq_disable(&mut self, q: usize) {
        if self.net.ports.holds(q) {
            return self.port_irq_set(q, true);
        }
        match &mut self.net.rss {
            Some(r) => r.irq_off.insert(q),
            None => self.net.irq_posted = true,
        }
    }

    pub(crate) fn queue_irq_enable(&mut self, q: usize) {
        if self.net.ports.holds(q) {
            return self.port_irq_set(q, false);
        }
        match &mut self.net.rss {
            Some(r) => r.irq_off.remove(q),
            None => self.net.irq_posted = false,
        }
    }

    /// Queue `q`'s interrupt, enabled again with `waiting` frames, fires
    /// (through coalescing, if the NIC coalesces).
    pub(crate) fn queue_interrupt(&mut self, q: usize, waiting: u64) {
        if self.net.ports.holds(q) {
            return match self.port_coalescer(q).is_some() && waiting > 0 {
                true => self.coalesce_count(q, waiting),
                false => self.port_raise(q),
            };
        }
        let coalescing = self.net.rss.as_ref().map_or(self.net.coalesce.is_some(), |r| !r.coalesce.is_empty());
        if coalescing && waiting > 0 {
            self.coalesce_count(q, waiting);
        } else if self.net.rss.is_some() {
            self.rss_raise(q);
        } else {
            self.raise_nic_irq();
        }
    }

    /// A frame came off the wire into the multi-queue NIC: steered to its
    /// queue's ring, whose vector interrupts unless masked.
    #[inline(never)]
    pub(crate) fn rss_land(&mut self, now: Time, bytes: u32) {
        let r = self.net.rss.as_mut().expect("RSS landing needs RSS");
        let (q, flow) = r.steer();
        if !r.receive(q, flow, now, bytes) {
            self.net.counters.rx_dropped_nic += 1;
            return self.resend_after_drop(now, |n| n.rss.as_ref().and_then(|r| r.rings[q].next_release(now)));
        }
        if !r.coalesce.is_empty() {
            if !r.irq_off.contains(q) {
                self.coalesce_count(q, 1);
            }
            return;
        }
        self.rss_raise(q);
    }

    /// Queue `q`'s MSI-X vector fires unless its interrupt is disabled.
    pub(crate) fn rss_raise(&mut self, q: usize) {
        if !self.net.rss.as_mut().expect("RSS interrupts need RSS").fire(q) {
            return;
        }
        self.net.counters.interrupts += 1;
        let now = self.queue.now();
        self.timeline.mark(now, "NIC interrupt");
        self.signal_vector(now, 0, q);
    }
}
