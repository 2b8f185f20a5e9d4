//! Busy polling on the machine: the receiving application polls its NAPI
//! instance before it sleeps (`kernel/napi/busy.rs` holds its state).

use crate::cpu::{Bin, USER, Work};
use crate::engine::Time;
use crate::kernel::Job as Any;
use crate::kernel::napi::{Job, busy::Busy};
use crate::kernel::net::Site;
use crate::machine::Machine;

impl Machine {
    fn busy(&mut self) -> &mut Busy {
        self.net.napi.as_mut().and_then(|n| n.busy.as_mut()).expect("busy-poll jobs run only with busy polling")
    }

    /// The receiver calls recv: it spins for a new window.
    pub(crate) fn busy_poll_start(&mut self) {
        if self.code.is_some() {
            // Code's receiver busy-polls from its own recv (`code.rs`).
            return;
        }
        let now = self.queue.now();
        let b = self.busy();
        (b.sleeping, b.deadline) = (false, now + b.window);
        let app = self.net.app_thread;
        self.post(app, USER, Any::Napi(Job::BusySpin));
    }

    /// A frame that came through queue `q` reached the socket: the socket
    /// remembers the queue, and a sleeping receiver wakes.
    pub(super) fn busy_wake(&mut self, q: usize) {
        if self.code.is_some() {
            // An abstract kernel's frame beside code (`code.cpus`): code's
            // receiver reads only the program's socket (`code_busy_mark`).
            return;
        }
        let Some(b) = self.net.napi.as_mut().and_then(|n| n.busy.as_mut()) else { return };
        b.napi_id = q;
        if b.sleeping {
            self.busy_poll_start();
            let app = self.net.app_thread;
            self.dispatch(app);
        }
    }

    pub(super) fn busy_work(&mut self, job: Job) -> Work<Any> {
        let cycles = match job {
            Job::BusySpin => self.napi().poll_cycles,
            _ => {
                let q = self.busy().owned.expect("a busy-poll frame is taken from an owned instance");
                self.rx_cycles(q)
            }
        };
        Work { job: Any::Napi(job), cycles, bin: Bin::Kernel }
    }

    /// The receiver's next step after `job`.
    pub(super) fn busy_after(&mut self, now: Time, job: Job) -> Option<Job> {
        if job == Job::BusyRx {
            // The frame is delivered (`napi_after`) and its sections have run.
            let q = self.busy().owned.expect("a busy-poll frame is taken from an owned instance");
            let b = self.busy();
            (b.frames, b.batch) = (b.frames + 1, b.batch + 1);
            b.by_queue[q] += 1;
            if b.batch < b.budget && self.ring(q).rx_waiting() > 0 {
                return Some(Job::BusyRx);
            }
            self.busy_release();
            // recv returns with data and is called again.
            let b = self.busy();
            b.deadline = now + b.window;
        }
        // napi_busy_loop (net/core/dev.c): the poller takes the instance
        // (NAPI_STATE_SCHED | NAPI_STATE_IN_BUSY_POLL) when the softirq does
        // not hold it and keeps it for the whole loop, so an interrupt
        // meanwhile schedules no softirq poll (napi_schedule_prep fails),
        // on the interrupt's own core too. It lets go when recv returns or
        // sleeps, or when the socket's last frame came through another queue.
        let q = self.busy().napi_id;
        if self.busy().owned.is_some_and(|o| o != q) {
            self.busy_release();
        }
        if self.busy().owned.is_none() && !self.napi().is_scheduled(q) {
            self.busy().owned = Some(q);
        }
        if self.busy().owned == Some(q) && self.ring(q).rx_waiting() > 0 {
            self.busy().batch = 0;
            return Some(Job::BusyRx);
        }
        if now >= self.busy().deadline {
            if self.busy().owned.is_some() {
                self.busy_release();
            }
            let b = self.busy();
            (b.sleeping, b.sleeps) = (true, b.sleeps + 1);
            return None;
        }
        Some(Job::BusySpin)
    }

    /// The critical section of the busy poller's frame that comes next:
    /// from `Site::Busy` the driver's, then the socket layer's.
    pub(crate) fn busy_section(&self, from: Site) -> Option<Any> {
        let sec = &self.net.costs.sections;
        if from == Site::Busy && sec.driver > 0 {
            return Some(Any::section(Site::Busy, 0, 0, 0));
        }
        (sec.protocol > 0 && self.net.costs.stack).then(|| Any::section(Site::BusySocket, 0, 0, 0))
    }

    /// After the frame's critical sections: the busy poller goes on.
    pub(crate) fn busy_resume(&mut self, now: Time) -> Option<Any> {
        self.busy_after(now, Job::BusyRx).map(Any::Napi)
    }

    /// The busy loop lets the instance go; an interrupt masked meanwhile is
    /// enabled again.
    ///
    /// Preferring busy polling, it keeps the interrupt masked instead and
    /// arms the instance's timer with a fresh deferral count: unless it
    /// busy-polls again within `gro_flush_timeout_ns`, the softirq takes
    /// over and, once the deferrals are spent, the interrupt comes back.
    fn busy_release(&mut self) {
        let q = self.busy().owned.take().expect("only an owned instance is let go");
        if self.busy().prefer {
            let now = self.queue.now();
            self.queue_irq_disable(q);
            let n = self.napi();
            n.defer_left[q] = n.defer_hard_irqs;
            self.arm_napi_timer(now, q);
            return;
        }
        // busy_poll_stop polls once more and completes as a softirq poll
        // would (napi_complete_done; the loop has just emptied the ring, so
        // that poll takes nothing and does not renew the count): deferrals
        // left keep the interrupt masked with the timer armed; otherwise the
        // interrupt comes back and a timer still armed is stale.
        if self.defer_interrupt(q) {
            self.queue_irq_disable(q);
            return;
        }
        if self.queue_irq_off(q) {
            self.queue_irq_enable(q);
            let waiting = self.ring(q).rx_waiting() as u64;
            if waiting > 0 {
                self.queue_interrupt(q, waiting);
            }
        }
    }
}
