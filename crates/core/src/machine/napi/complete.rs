//! The end of a NAPI poll that emptied its ring (napi_complete_done in
//! net/core/dev.c) and the deferral of the interrupt it may choose (napi.rst,
//! "Software IRQ coalescing": `defer_hard_irqs` empty polls, one each
//! `gro_flush_timeout_ns`, before the interrupt comes back).

use crate::engine::Time;
use crate::kernel::napi::TIMER_GENERATION_BITS;
use crate::machine::{Event, Machine};

impl Machine {
    /// (Re)arms queue `q`'s timer, `gro_flush_timeout_ns` from now: a
    /// timer armed before it is stale.
    pub(super) fn arm_napi_timer(&mut self, now: Time, q: usize) {
        let n = self.napi();
        let generation = (n.timer_generation[q] + 1) & ((1 << TIMER_GENERATION_BITS) - 1);
        n.timer_generation[q] = generation;
        let at = now + n.flush_timeout;
        if at < self.end {
            self.queue.schedule(at, Event::NapiTimer((q as u32) << TIMER_GENERATION_BITS | generation));
        }
    }

    /// The deferral timer of queue `q` expires: its instance is scheduled
    /// again, with its interrupt still masked.
    #[inline(never)]
    pub(crate) fn napi_timer(&mut self, tag: u32) {
        let q = (tag >> TIMER_GENERATION_BITS) as usize;
        if self.napi().timer_generation[q] != tag & ((1 << TIMER_GENERATION_BITS) - 1) {
            return;
        }
        let cpu = self.napi().home[q];
        self.napi_schedule(cpu, q);
        self.dispatch(cpu);
    }

    /// napi_complete_done: off the poll list, the queue's interrupt enabled
    /// again, or (deferring) left masked with a timer to poll again.
    pub(super) fn napi_complete(&mut self, cpu: usize, q: usize) {
        if !self.complete_done(cpu, q) {
            return;
        }
        self.dim_sample(q);
        self.queue_irq_enable(q);
        let waiting = self.waiting(q);
        if waiting == 0 && !self.tx_done_pending(q) {
            if self.cause_since_ack(q) {
                self.napi().counters.late_acks += 1;
                self.queue_interrupt(q, 0);
            }
            return;
        }
        if self.napi().rotting {
            self.napi().counters.rotted += waiting;
            return;
        }
        self.queue_interrupt(q, waiting);
    }

    /// With `late_ack`, the poll's read of the receive cause at its start
    /// (the 2002 e1000's ICR read in `e1000_process_intr`) clears it; the
    /// frames then waiting are the ones it acknowledged.
    #[inline(always)]
    pub(super) fn ack_cause(&mut self, q: usize) {
        if self.napi().late_ack {
            self.napi().waiting_at_ack[q] = self.waiting(q);
        }
    }

    /// Whether a frame arrived at instance `q`'s ring after its poll's
    /// acknowledgement (those it took and those waiting, beyond those
    /// waiting at the read): its cause is still set (NAPI_HOWTO's
    /// "redundant irqs … due to too late acking of already processed irqs").
    fn cause_since_ack(&mut self, q: usize) -> bool {
        let n = self.napi();
        n.late_ack && q < n.device_queues && n.poll_frames[q] > n.waiting_at_ack[q]
    }

    /// napi_complete_done's decision (net/core/dev.c): the instance leaves
    /// the poll list; a poll that took frames resets the deferral count,
    /// and while deferrals remain one is spent and the timer armed instead
    /// of the interrupt. Returns whether the driver may enable the
    /// interrupt again (never for an RPS backlog, which has none).
    pub(super) fn complete_done(&mut self, cpu: usize, q: usize) -> bool {
        let n = self.napi();
        n.scheduled.remove(q);
        // An instance is on a list at most once (`napi_schedule` puts only
        // an unscheduled one there), and the one completing is usually the
        // first: a `retain` over the list cost 26 a frame on the e1000 rows.
        let list = &mut n.cpus[cpu].list;
        if list.front().is_some_and(|&x| usize::from(x) == q) {
            list.pop_front();
        } else {
            list.retain(|&x| usize::from(x) != q);
        }
        debug_assert!(!list.iter().any(|&x| usize::from(x) == q), "instance {q} was on the poll list twice");
        n.counters.completes += 1;
        if q >= n.device_queues {
            // An RPS backlog: no interrupt; frames enqueued meanwhile reschedule it.
            if self.waiting(q) > 0 {
                self.napi_schedule(cpu, q);
            }
            return false;
        }
        let n = self.napi();
        if n.poll_frames[q] > 0 {
            n.defer_left[q] = n.defer_hard_irqs;
        }
        !self.defer_interrupt(q)
    }

    /// napi_complete_done's deferral, for a softirq poll and for a busy
    /// poll's last one: while deferrals remain and there is a timeout, one
    /// is spent and the timer armed instead of the interrupt (`true`);
    /// otherwise the interrupt comes back and a deferral timer still armed
    /// (a busy poll took the instance meanwhile) is stale.
    pub(super) fn defer_interrupt(&mut self, q: usize) -> bool {
        let now = self.queue.now();
        let n = self.napi();
        if n.defer_left[q] > 0 && n.flush_timeout > 0 {
            n.defer_left[q] -= 1;
            n.counters.deferred += 1;
            self.arm_napi_timer(now, q);
            return true;
        }
        n.timer_generation[q] = n.timer_generation[q].wrapping_add(1) & ((1 << TIMER_GENERATION_BITS) - 1);
        false
    }
}
