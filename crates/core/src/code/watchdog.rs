//! The lockup watchdog: kernel code that never returns ends the run with
//! one line naming the program, the activity, the function and the PC.
//!
//! Modelled on Linux's detectors (kernel/watchdog.c,
//! Documentation/admin-guide/lockup-watchdogs.rst): a *hard lockup* is a
//! CPU looping in the kernel for `watchdog_thresh` without letting other
//! interrupts run, a *soft lockup* one that loops for twice that
//! (`get_softlockup_thresh()`) without scheduling. Here an invocation of an
//! interrupt-level activity (a top half, a tick) masks its thread's other
//! interrupts, so one that runs `code.watchdog_thresh_ms` is a hard lockup;
//! a software-interrupt-level one (a bottom half, a poll, a system call,
//! `init`) never lets its thread's process run, so one that runs twice
//! that is a soft lockup. An invocation runs from its entry to its return,
//! preemptions included, as Linux's clocks run on through interrupts. The
//! application (user level) is preemptible and loops by design: unwatched.

use super::{Activity, Code};
use crate::cpu::{IRQ, Level, SOFT};

/// Which kernel invocations are live and when the first is due to be stuck.
pub struct Watchdog {
    /// Cycles an interrupt-level invocation may run (`None`: unwatched);
    /// a software-interrupt-level one, twice it.
    hard: Option<u64>,
    /// `code.watchdog_thresh_ms`, for the message.
    thresh_ms: f64,
    /// Cycles in a millisecond of the host's clock.
    cycles_per_ms: f64,
    /// Per (thread, level): the live invocation's activity, level and start.
    live: Vec<Option<(Activity, Level, u64)>>,
    /// The first cycle at which a live invocation is stuck (`u64::MAX`: none),
    /// so the machine's look costs one comparison.
    pub next: u64,
}

impl Watchdog {
    /// Unarmed, for `slots` (thread, level) pairs.
    pub fn new(slots: usize) -> Watchdog {
        Watchdog { hard: None, thresh_ms: 0.0, cycles_per_ms: 1.0, live: vec![None; slots], next: u64::MAX }
    }

    /// Hard lockups after `thresh_ms` of a `clock_mhz` clock, soft ones after
    /// twice it; 0 leaves both unwatched, as `watchdog_thresh = 0` does.
    pub fn arm(&mut self, thresh_ms: f64, clock_mhz: f64) {
        self.thresh_ms = thresh_ms;
        self.cycles_per_ms = clock_mhz * 1e3;
        self.hard = (thresh_ms > 0.0).then(|| ((thresh_ms * self.cycles_per_ms).round() as u64).max(1));
    }

    /// Cycles an invocation at `level` may run: interrupt levels (the
    /// bare wire's priorities too) the threshold, the software-interrupt
    /// level twice it, the application none.
    fn limit(&self, level: Level) -> Option<u64> {
        match level {
            l if l >= IRQ => self.hard,
            SOFT => self.hard.map(|h| h.saturating_mul(2)),
            _ => None,
        }
    }

    /// A fresh invocation of `activity` at `level` in `slot`, from cycle `at`.
    pub(super) fn began(&mut self, slot: usize, level: Level, activity: Activity, at: u64) {
        if let Some(limit) = self.limit(level) {
            self.live[slot] = Some((activity, level, at));
            self.next = self.next.min(at.saturating_add(limit));
        }
    }

    /// The invocation in `slot` returned.
    pub(super) fn ended(&mut self, slot: usize) {
        if self.live[slot].take().is_some() {
            self.next = self.live.iter().flatten().map(|&(_, level, at)| self.due(level, at)).min().unwrap_or(u64::MAX);
        }
    }

    fn due(&self, level: Level, at: u64) -> u64 {
        self.limit(level).map_or(u64::MAX, |l| at.saturating_add(l))
    }
}

impl Code {
    /// At cycle `now`, the first invocation running past its limit, if
    /// any, as one line: which lockup, the activity and its thread, how
    /// long it has run, and the function and PC where it is.
    pub fn lockup(&self, now: u64) -> Option<String> {
        let w = &self.watchdog;
        if now < w.next {
            return None;
        }
        let (slot, &(activity, level, at)) =
            w.live.iter().enumerate().find_map(|(s, l)| l.as_ref().filter(|&&(_, level, at)| now >= w.due(level, at)).map(|l| (s, l)))?;
        let t = slot / self.levels;
        let pc = if self.on_cpu(t) == Some(level) {
            let (k, h) = self.hw(t);
            self.sys.cores[k].threads[h].ctx.pc
        } else {
            self.saved[slot].as_ref().map_or(0, |c| c.pc)
        };
        let (kind, how) = if level >= IRQ { ("hard", "with its thread's interrupts masked") } else { ("soft", "without returning") };
        let ran = now - at;
        Some(format!(
            "{}: {kind} lockup: {} on thread {t} has run {:.3} ms ({ran} cycles) {how}, stuck{} at pc {pc:#010x} (code.watchdog_thresh_ms = {}: hard lockups after it, soft after twice it)",
            self.sys.program.name,
            activity.label(),
            ran as f64 / w.cycles_per_ms,
            self.sys.program.place(pc),
            w.thresh_ms,
        ))
    }
}
