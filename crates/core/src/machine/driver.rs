//! The NIC driver: Driver Send (start the transmitter or queue the frame) and
//! the Driver ISR, which acknowledges transmit completions and drains the
//! receive buffer one frame at a time until it is empty, masked throughout.
//!
//! On the Linux path the same drain runs in the NET_RX bottom half, which
//! the top half schedules (`kernel/linux.rs`); the NIC's interrupt stays
//! disabled until the drain is over.

use crate::cpu::{IRQ, SOFT};
use crate::device::nic::{Accept, RxFrame, Send, TxFrame};
use crate::engine::Time;
use crate::kernel::Job;
use crate::kernel::net::Site;
use crate::machine::{Event, Machine, Net, Route};

impl Machine {
    /// The sender offers a frame. Frames land no closer together than the
    /// wire takes to carry each: one that would land sooner waits for the
    /// wire (in the sending port's queue, dropped when that is full).
    #[inline(always)]
    pub(crate) fn receive(&mut self, now: Time, bytes: u32) {
        self.net.counters.rx_offered += 1;
        if let Some(prev) = self.net.rx_landed {
            let earliest = prev.saturating_add(self.net.nic.wire_cycles(bytes));
            if earliest > now {
                if self.net.wire_waiting >= self.net.wire_queue {
                    self.net.counters.rx_dropped_wire += 1;
                    return;
                }
                self.net.wire_waiting += 1;
                self.net.rx_landed = Some(earliest);
                self.queue.schedule(earliest, Event::Landed { bytes });
                return;
            }
        }
        self.net.rx_landed = Some(now);
        self.land(now, bytes);
    }

    /// A frame has come off the wire into the NIC.
    #[inline(always)]
    pub(crate) fn land(&mut self, now: Time, bytes: u32) {
        if self.net.direct {
            if self.nic_takes(now, bytes) {
                self.raise_irq(Job::IsrRx);
            }
            return;
        }
        self.timeline.mark(now, "frame received");
        if self.net.firmware.is_some() {
            return self.firmware_land(now, bytes);
        }
        if self.code.is_some() {
            return self.code_land(now, bytes);
        }
        if self.net.rss.is_some() {
            return self.rss_land(now, bytes);
        }
        if !self.nic_takes(now, bytes) {
            return;
        }
        if self.net.coalesce.is_some() {
            if !self.net.irq_posted {
                self.coalesce_count(0, 1);
            }
            return;
        }
        self.raise_irq(Job::IsrRx);
    }

    /// Offers a landed frame to the NIC; `false` if it dropped it.
    #[inline(always)]
    fn nic_takes(&mut self, now: Time, bytes: u32) -> bool {
        if self.net.nic.receive(now, bytes) == Accept::Stored {
            return true;
        }
        self.nic_dropped(now);
        false
    }

    /// The NIC's buffer had no room for a frame.
    #[cold]
    pub(crate) fn nic_dropped(&mut self, now: Time) {
        self.net.counters.rx_dropped_nic += 1;
        self.resend_after_drop(now, |n| n.nic.next_release(now));
    }

    /// A closed-loop sender keeps one frame outstanding: when a NIC dropped
    /// it, it tries again as DMA frees buffer space (`release`, asked only
    /// then: a frame waiting for the ISR would be this loop's one frame, so
    /// the buffer is full of DMAs).
    pub(crate) fn resend_after_drop(&mut self, now: Time, release: impl FnOnce(&Net) -> Option<Time>) {
        if !self.net.workload.closed_loop_rx() {
            return;
        }
        let retry = release(&self.net).unwrap_or(now + 1).max(now + 1);
        if let Some((t, s)) = self.net.workload.rx_serviced(retry) {
            self.queue.schedule(t, Event::Feedback(s));
        }
    }

    /// The transmitter has put a frame on the wire.
    pub(crate) fn tx_out(&mut self, now: Time) {
        let frame = self.net.nic.tx_finished();
        self.sent(now, frame);
        if self.net.rss.is_some() {
            // Transmit completions are queue 0's: its poll cleans them.
            return self.rss_raise(0);
        }
        self.raise_irq(Job::IsrTx);
    }

    /// The NIC's interrupt, enabled again with work waiting, fires at once.
    pub(crate) fn raise_nic_irq(&mut self) {
        self.raise_irq(Job::IsrRx);
    }

    /// Asserts the NIC's interrupt unless its ISR is already pending or
    /// running (the ISR rereads the status register before it returns).
    #[inline(always)]
    fn raise_irq(&mut self, first: Job) {
        if self.net.irq_posted {
            return;
        }
        self.net.irq_posted = true;
        self.net.counters.interrupts += 1;
        if self.net.direct {
            // SAFETY: `irq_thread`, assigned only when the machine is
            // built, was checked against `threads` then (`build.rs`).
            return unsafe { self.post_dispatch_again(self.net.irq_thread, IRQ, first) };
        }
        if let Some(c) = &mut self.net.coalesce {
            c.fired();
        }
        let now = self.queue.now();
        self.timeline.mark(now, "NIC interrupt");
        match self.net.route {
            Route::Controller => self.signal_interrupt(now, 0, 0),
            Route::Masked(priority) => self.raise_masked(self.net.irq_thread, priority),
            Route::Wire => {
                self.timeline.flow_from(self.net.irq_thread, IRQ, now, "NIC interrupt");
                // SAFETY: as above.
                unsafe { self.post_dispatch_again(self.net.irq_thread, IRQ, first) };
            }
        }
    }

    /// The driver's next step for what the NIC has, in the ISR or (`bottom`)
    /// the bottom half; `None` when there is nothing, and the NIC may
    /// interrupt again.
    pub(crate) fn nic_step(&mut self, bottom: bool) -> Option<Job> {
        let step = if self.net.nic.tx_done_pending {
            Some(if bottom { Job::PollTx } else { Job::IsrTx })
        } else if self.net.nic.rx_waiting() > 0 {
            Some(if bottom { Job::PollRx } else { Job::IsrRx })
        } else {
            None
        };
        if step.is_none() {
            self.net.irq_posted = false;
        }
        step
    }

    /// The ISR (or, `bottom`, the bottom half) acknowledged a transmit
    /// completion; it goes on while the NIC has work for it.
    #[inline(always)]
    pub(crate) fn tx_step(&mut self, now: Time, bottom: bool) -> Option<Job> {
        if let Some(out) = self.net.nic.ack_tx(now) {
            self.queue.schedule(out, Event::TxOut);
        }
        self.nic_step(bottom)
    }

    /// The protocol's backlog is full: the frame is dropped. Cold, so that
    /// LLVM keeps the post of the common case inline in the event loop.
    #[cold]
    fn backlog_drop(&mut self) {
        self.net.counters.rx_dropped_backlog += 1;
    }

    /// The ISR (or, `bottom`, the bottom half) took one received frame; it
    /// goes on while the NIC has work for it.
    #[inline(always)]
    pub(crate) fn rx_step(&mut self, now: Time, thread: usize, bottom: bool) -> Option<Job> {
        let (frame, in_memory) = self.net.nic.take_rx(now).expect("an Rx ISR step always has a frame");
        if self.net.rx_plain {
            self.protocol_takes(thread, frame);
            return self.nic_step(bottom);
        }
        self.net.costs.redraw();
        if let Some(to) = self.net.forwarding.first {
            self.forward_takes(thread, frame.arrival, frame.bytes, to);
        } else if self.net.costs.stack {
            self.protocol_takes(thread, frame);
        } else {
            // Driver layer only: the frame is delivered once its DMA is done.
            self.deliver_in_memory(frame.arrival, in_memory, frame.bytes);
        }
        if let Some((t, s)) = self.net.workload.rx_serviced(now) {
            self.queue.schedule(t, Event::Feedback(s));
        }
        if self.net.costs.sections.driver > 0 {
            return Some(Job::section(if bottom { Site::BottomHalf } else { Site::Driver }, 0, 0, 0));
        }
        self.nic_step(bottom)
    }

    /// Hands a received frame to the protocol, unless its backlog is full.
    #[inline(always)]
    pub(crate) fn protocol_takes(&mut self, thread: usize, frame: RxFrame) {
        if self.net.counters.rx_in_stack >= self.net.backlog_limit {
            self.backlog_drop();
        } else {
            self.net.counters.rx_in_stack += 1;
            // The SWI waits while the ISR runs (it is a lower level).
            // SAFETY: `thread` is `complete`'s (`rx_step` and
            // `port_rx_step` are called from `after` only), which indexed
            // `threads` (`Machine::complete`).
            unsafe { self.post_again(thread, SOFT, Job::RecvIp { arrival: frame.arrival, bytes: frame.bytes }) };
        }
    }

    /// Driver Send finished: hand the frame to the NIC.
    pub(crate) fn driver_send(&mut self, now: Time, bytes: u32) {
        self.net.counters.tx_in_stack -= 1;
        if self.net.firmware.is_some() {
            return self.firmware_send(bytes);
        }
        match self.net.nic.send(now, TxFrame::local(bytes)) {
            Send::Started(out) => self.queue.schedule(out, Event::TxOut),
            Send::Queued => {}
            Send::Dropped => self.net.counters.tx_dropped += 1,
        }
    }

    /// A frame delivered once its DMA has put it in memory, at `at` (the
    /// driver layer alone): one whose data is in memory only after the run
    /// (a DMA slower than the run) is still in flight when it ends.
    pub(crate) fn deliver_in_memory(&mut self, arrival: Time, at: Time, bytes: u32) {
        if at > self.end {
            self.net.counters.rx_in_dma += 1;
            return;
        }
        self.deliver(arrival, at, bytes);
    }

    /// Counts a delivered frame and records its latency (`at` within the
    /// run). Out of line: once its record got shorter, LLVM inlined it into
    /// the event loop, which cost more there (spills) than the call saves.
    #[inline(never)]
    pub(crate) fn deliver(&mut self, arrival: Time, at: Time, bytes: u32) {
        self.net.counters.rx_delivered += 1;
        self.net.counters.rx_delivered_bytes += u64::from(bytes);
        self.net.latencies.record(arrival, at - arrival);
    }
}
