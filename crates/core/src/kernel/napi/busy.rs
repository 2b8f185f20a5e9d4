//! Busy polling (`SO_BUSY_POLL`, net.core.busy_read; napi.rst "Busy
//! polling"; `napi_busy_loop` in net/core/dev.c): the application, blocked
//! in recv on `app.thread`, polls a NAPI instance itself instead of waiting
//! for the interrupt. With RSS it is the instance of the queue the socket's
//! last frame came through (the socket's `sk_napi_id`, set by
//! `sk_mark_napi_id` at each delivery); with RPS the frames it takes go on
//! to their flows' backlogs as the softirq's do.
//!
//! 1. Spinning (`BusySpin`, one `napi.poll_cycles` attempt each), the
//!    receiver takes the instance when the softirq does not own it and the
//!    ring has frames.
//! 2. Owning it, it runs the driver's receive work and the stack for at most
//!    `busy_poll_budget` frames (`BusyRx`, in process context), then lets
//!    it go: recv returns and is called again, spinning for a new window.
//!    A NIC interrupt meanwhile finds the instance owned and leaves its
//!    interrupt masked; letting go enables it again (and it fires at once
//!    if frames wait).
//! 3. A window of `busy_poll_usecs` with no frame ends the spin: the
//!    receiver sleeps until the softirq path delivers a frame to it.
//! 4. With `prefer_busy_poll` (SO_PREFER_BUSY_POLL, napi.rst "IRQ
//!    mitigation"), letting go keeps the interrupt masked and arms the
//!    `gro_flush_timeout_ns` timer with `defer_hard_irqs` deferrals: the
//!    interrupt stays off while the receiver keeps polling.

use super::Job;
use crate::cpu::{Bin, USER, Work};
use crate::engine::Time;
use crate::kernel::Job as Any;
use crate::kernel::net::Site;
use crate::machine::Machine;

/// The busy-polling receiver.
#[derive(Debug)]
pub struct Busy {
    pub(super) window: u64,
    pub(super) budget: u64,
    /// The instance it owns (NAPI_STATE_SCHED taken by the busy loop).
    pub owned: Option<usize>,
    /// The queue the socket's last frame came through (`sk_napi_id`).
    pub(super) napi_id: usize,
    /// Frames it took off each queue's ring.
    pub by_queue: Vec<u64>,
    sleeping: bool,
    pub(super) deadline: Time,
    batch: u64,
    pub frames: u64,
    pub sleeps: u64,
    /// SO_PREFER_BUSY_POLL: the interrupt stays masked between busy polls.
    pub(super) prefer: bool,
    /// With code: busy_poll_stop's last poll is under way, and whether the
    /// socket had data (recv runs again) or the window ran out (it sleeps).
    pub(super) stopping: Option<bool>,
}

impl Busy {
    pub fn new(c: &super::NapiConfig, cycles_per_us: f64, queues: usize) -> Option<Self> {
        (c.busy_poll_usecs > 0).then(|| Self {
            window: (f64::from(c.busy_poll_usecs) * cycles_per_us).round() as u64,
            budget: u64::from(c.busy_poll_budget),
            owned: None,
            napi_id: 0,
            by_queue: vec![0; queues],
            sleeping: false,
            deadline: 0,
            batch: 0,
            frames: 0,
            sleeps: 0,
            prefer: c.prefer_busy_poll,
            stopping: None,
        })
    }
}

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
        let q = self.busy().napi_id;
        let free = !self.napi().is_scheduled(q);
        if free && self.ring(q).rx_waiting() > 0 {
            let b = self.busy();
            (b.owned, b.batch) = (Some(q), 0);
            return Some(Job::BusyRx);
        }
        let b = self.busy();
        if now >= b.deadline {
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
        if self.queue_irq_off(q) {
            self.queue_irq_enable(q);
            let waiting = self.ring(q).rx_waiting() as u64;
            if waiting > 0 {
                self.queue_interrupt(q, waiting);
            }
        }
    }
}
