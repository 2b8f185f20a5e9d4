//! Watching a run from outside: progress reports and cancellation.
//!
//! The event loop calls [`Monitor::poll`] once every [`POLL_EVERY`] events
//! (a few milliseconds of wall time), so a binding can check for Ctrl-C or
//! draw a progress bar without the core knowing of either. Returning `false`
//! stops the run with [`crate::Error::Cancelled`]. Parts that run long
//! stretches between events (kernel code, the programmable NIC) also
//! [`Monitor::pulse`] once per stretch, so Ctrl-C reaches them too.

use crate::engine::Time;

/// Events between two polls: a power of two, so the test is one mask.
pub const POLL_EVERY: u64 = 1 << 16;

/// Something that watches a run.
pub trait Monitor {
    /// The run has reached cycle `now` of `end`; `false` stops it.
    fn poll(&mut self, now: Time, end: Time) -> bool;

    /// A part that runs on its own (kernel code, the programmable NIC) ran
    /// a long stretch between events: the same question, without counting
    /// as events (`run.max_events`). By default, as [`Monitor::poll`].
    fn pulse(&mut self, now: Time, end: Time) -> bool {
        self.poll(now, end)
    }
}

/// Watches nothing: the run always goes on.
pub struct Unwatched;

impl Monitor for Unwatched {
    fn poll(&mut self, _now: Time, _end: Time) -> bool {
        true
    }
}

/// Stops a run that has handled more than `run.max_events` events; it sees
/// the count at polls, so within [`POLL_EVERY`] events of the limit.
pub struct Budget<'m> {
    inner: &'m mut dyn Monitor,
    polls_left: u64,
    /// Whether the budget, not the inner monitor, stopped the run.
    pub spent: bool,
}

impl<'m> Budget<'m> {
    pub fn new(inner: &'m mut dyn Monitor, max_events: u64) -> Self {
        Self { inner, polls_left: max_events / POLL_EVERY, spent: false }
    }
}

impl Monitor for Budget<'_> {
    fn poll(&mut self, now: Time, end: Time) -> bool {
        if self.polls_left == 0 {
            self.spent = true;
            return false;
        }
        self.polls_left -= 1;
        self.inner.poll(now, end)
    }

    fn pulse(&mut self, now: Time, end: Time) -> bool {
        self.inner.pulse(now, end)
    }
}
