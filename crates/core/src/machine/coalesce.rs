//! Interrupt coalescing on the machine: the NIC counts frames and arms its
//! timer, and fires the queue's interrupt when either says so. The
//! thresholds and the timer's state are the device's (`device/coalesce.rs`).

use crate::device::coalesce::{Coalesce, GENERATION_BITS, PROFILE_MARKS, Then};
use crate::engine::Time;
use crate::machine::{Event, Machine};

impl Machine {
    /// Queue `q`'s coalescing (one per RSS queue, or the NIC's own).
    pub(crate) fn coalescer(&mut self, q: usize) -> Option<&mut Coalesce> {
        if self.net.ports.holds(q) {
            return self.port_coalescer(q);
        }
        match &mut self.net.rss {
            Some(r) => r.coalesce.get_mut(q),
            None => self.net.coalesce.as_mut(),
        }
    }

    /// Queue `q`'s interrupt fires.
    fn coalesced_interrupt(&mut self, q: usize) {
        if self.code_queue(q) {
            let now = self.queue.now();
            self.code_rx_interrupt(now, q)
        } else if self.net.ports.holds(q) {
            self.port_raise(q)
        } else if self.net.rss.is_some() {
            self.rss_raise(q)
        } else {
            self.raise_nic_irq()
        }
    }

    /// `frames` landed in queue `q` (or wait there at a re-enable) while
    /// its interrupt is enabled: interrupt now, arm the timer, or wait.
    pub(crate) fn coalesce_count(&mut self, q: usize, frames: u64) {
        let now = self.queue.now();
        let Some(c) = self.coalescer(q) else { return };
        match c.count(frames) {
            Then::Interrupt => self.coalesced_interrupt(q),
            Then::Arm(generation) => {
                let at = now + c.usecs;
                if at < self.end {
                    self.queue.schedule(at, Event::CoalesceTimer((q as u32) << GENERATION_BITS | generation));
                }
            }
            Then::Wait => {}
        }
    }

    /// Queue `q`'s NAPI poll completed: its DIM takes a sample of its own
    /// counters (with RSS, the queue's; else the NIC's) and may move to
    /// another profile. Inline, one flag's test: most machines have no DIM
    /// (once per NAPI poll).
    #[inline(always)]
    pub(crate) fn dim_sample(&mut self, q: usize) {
        if self.net.dims {
            self.dim_sample_queue(q);
        }
    }

    fn dim_sample_queue(&mut self, q: usize) {
        // Most queues have no DIM: no counts to gather.
        // The programmable NIC's DIM is its own (the host writes the firmware's words).
        if self.coalescer(q).is_none_or(|c| c.dim.is_none()) && self.net.firmware.as_ref().is_none_or(|f| f.dim.is_empty()) {
            return;
        }
        let now = self.queue.now();
        let c = &self.net.counters;
        let (events, frames, bytes) = match &self.net.rss {
            // Another NIC's DIM samples its own counts.
            _ if self.net.ports.holds(q) => self.port_dim_counts(q),
            Some(r) => (r.interrupts[q], r.taken[q].0, r.taken[q].1),
            None if self.net.ports.list.is_empty() => (c.interrupts, c.rx_delivered, c.rx_delivered_bytes),
            // Beside other NICs, the first NIC's own: the totals less theirs.
            None => self.net.ports.list.iter().fold((c.interrupts, c.rx_delivered, c.rx_delivered_bytes), |(e, f, b), p| {
                let (taken, bytes) = p.taken();
                (e - p.interrupts(), f.saturating_sub(taken), b.saturating_sub(bytes))
            }),
        };
        if let Some(f) = self.net.firmware.as_mut().filter(|f| !f.dim.is_empty()) {
            // The programmable NIC's: the host writes DIM's choice into its firmware.
            if let Some(ix) = f.dim_sample(q, now, events, frames, bytes) {
                self.timeline.mark(now, PROFILE_MARKS[ix]);
            }
            return;
        }
        let Some(co) = self.coalescer(q) else { return };
        let Some(d) = co.dim.as_mut() else { return };
        if let Some(ix) = d.sample(now, events, frames, bytes) {
            let profile = d.profiles[ix];
            co.apply(profile);
            self.timeline.mark(now, PROFILE_MARKS[ix]);
        }
    }

    /// The coalescing timer `tag` (queue and generation) expires.
    #[inline(never)]
    pub(crate) fn coalesce_timer(&mut self, _now: Time, tag: u32) {
        let q = (tag >> GENERATION_BITS) as usize;
        let off = if self.code_queue(q) { self.code_rx_irq_off(q) } else { self.queue_irq_off(q) };
        let Some(c) = self.coalescer(q) else { return };
        if c.armed != Some(tag & ((1 << GENERATION_BITS) - 1)) {
            return;
        }
        c.armed = None;
        if c.counted > 0 && !off {
            c.timer_interrupts += 1;
            self.coalesced_interrupt(q);
        }
    }
}
