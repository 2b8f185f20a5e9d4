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

use crate::engine::Time;

/// The busy-polling receiver.
#[derive(Debug)]
pub struct Busy {
    pub(crate) window: u64,
    pub(crate) budget: u64,
    /// The instance it owns (NAPI_STATE_SCHED taken by the busy loop).
    pub owned: Option<usize>,
    /// The queue the socket's last frame came through (`sk_napi_id`).
    pub(crate) napi_id: usize,
    /// Frames it took off each queue's ring.
    pub by_queue: Vec<u64>,
    pub(crate) sleeping: bool,
    pub(crate) deadline: Time,
    pub(crate) batch: u64,
    pub frames: u64,
    pub sleeps: u64,
    /// SO_PREFER_BUSY_POLL: the interrupt stays masked between busy polls.
    pub(crate) prefer: bool,
    /// With code: busy_poll_stop's last poll is under way, and whether the
    /// socket had data (recv runs again) or the window ran out (it sleeps).
    pub(crate) stopping: Option<bool>,
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
