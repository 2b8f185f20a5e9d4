//! A core: M hardware threads sharing one in-order issue slot per cycle.
//! Each cycle the SMT policy picks one thread among those ready to issue;
//! a thread waiting for a cache miss, a load result or HI/LO is not ready
//! and gives up the slot. One thread may be reserved for interrupts: it
//! gets no ordinary work and, whenever it has some, issues first.

use crate::context::Context;
use crate::decode::Inst;
use crate::timing::Scoreboard;

/// How the issue slot is shared among ready threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// The next ready thread after the one that issued last.
    RoundRobin,
    /// The ready thread with the fewest results in flight (outstanding
    /// load or multiply/divide), ties by round-robin order: an in-order
    /// analogue of Tullsen et al.'s ICOUNT (ISCA 1996), which favours
    /// threads that are not clogging the pipeline.
    Icount,
}

impl Policy {
    pub fn parse(s: &str) -> Option<Policy> {
        match s {
            "round-robin" => Some(Policy::RoundRobin),
            "icount" => Some(Policy::Icount),
            _ => None,
        }
    }
}

/// How the two threads of a core, both at work, share its issue slot ([`Core::two`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Two {
    /// Round-robin: the thread that did not issue last goes first if ready.
    RoundRobin,
    /// This thread is reserved for interrupts: it goes first if ready.
    Reserved(usize),
}

/// One hardware thread: a register context plus its pipeline state.
#[derive(Clone, Debug, Default)]
pub struct HwThread {
    pub ctx: Context,
    /// True while the thread has code to run.
    pub active: bool,
    /// Instructions completed.
    pub instructions: u64,
    pub(crate) board: Scoreboard,
    /// Earliest cycle the next instruction may issue.
    pub(crate) ready: u64,
    /// The next instruction, once fetched (and its fetch charged).
    pub(crate) next: Option<Inst>,
}

impl HwThread {
    /// Gives the thread `ctx` to run from cycle `at`, or once the pipeline
    /// has drained of the previous context's work if that is later.
    pub fn start(&mut self, ctx: Context, at: u64) {
        self.ctx = ctx;
        self.active = true;
        self.board = Scoreboard::default();
        self.ready = self.ready.max(at);
        self.next = None;
    }

    /// Takes the thread's context away (preemption at an instruction boundary);
    /// the thread goes idle. Results still in flight drain first, so a
    /// preempted context never runs ahead. Resume with [`HwThread::start`].
    pub fn stop(&mut self) -> Context {
        self.active = false;
        self.next = None;
        self.ready = self.ready.max(self.board.drained());
        std::mem::take(&mut self.ctx)
    }
}

/// A core of hardware threads.
#[derive(Clone, Debug)]
pub struct Core {
    pub id: usize,
    /// The core's cycle counter.
    pub now: u64,
    pub threads: Vec<HwThread>,
    pub policy: Policy,
    /// The thread reserved for interrupts, if any.
    pub interrupt_thread: Option<usize>,
    /// Cycles in which some thread issued.
    pub busy_cycles: u64,
    /// The thread that issued last (round-robin starts after it).
    pub(crate) last: usize,
}

impl Core {
    pub fn new(id: usize, threads: usize, policy: Policy, interrupt_thread: Option<usize>) -> Self {
        Core { id, now: 0, threads: vec![HwThread::default(); threads], policy, interrupt_thread, busy_cycles: 0, last: threads - 1 }
    }

    pub fn has_work(&self) -> bool {
        self.threads.iter().any(|t| t.active)
    }

    /// The thread to issue at cycle `now` among active, fetched threads whose
    /// `ready` has come, `last` having issued last; None if all wait (they
    /// must be fetched first).
    #[inline(always)]
    pub(crate) fn select(&self, now: u64, last: usize) -> Option<usize> {
        let n = self.threads.len();
        let ready = |t: usize| {
            let th = &self.threads[t];
            th.active && th.ready <= now
        };
        if let Some(k) = self.interrupt_thread.filter(|&k| ready(k)) {
            return Some(k);
        }
        // The threads in round-robin order from the one after the last to issue
        // (a wrap, not a remainder: this runs every cycle).
        let mut t = last;
        let mut best: Option<(usize, u32)> = None;
        for _ in 0..n {
            t = if t + 1 == n { 0 } else { t + 1 };
            if !ready(t) {
                continue;
            }
            match self.policy {
                Policy::RoundRobin => return Some(t),
                // The first of the fewest in flight.
                Policy::Icount => {
                    let load = self.threads[t].board.in_flight(now);
                    if best.is_none_or(|(_, b)| load < b) {
                        best = Some((t, load));
                    }
                }
            }
        }
        best.map(|(t, _)| t)
    }

    /// The thread to issue at `now` ([`Core::select`]) and whether another
    /// active thread may issue by the next cycle (if not, it has the slot alone).
    #[inline(always)]
    pub(crate) fn pick(&self, now: u64, last: usize) -> Option<(usize, bool)> {
        let t = self.select(now, last)?;
        let soon = now + 1;
        let shared = self.threads.iter().enumerate().any(|(k, th)| k != t && th.active && th.ready <= soon);
        Some((t, shared))
    }

    /// How two threads both at work share the slot, if the core has two:
    /// then `interleave`'s `Pair` or `Reserved` may stand for [`Core::pick`].
    pub(crate) fn two(&self) -> Option<Two> {
        if self.threads.len() != 2 || !self.threads.iter().all(|t| t.active) {
            return None;
        }
        match (self.interrupt_thread, self.policy) {
            // The reserved thread first whenever it is ready, else the other
            // (the only candidate left, under either policy).
            (Some(r), _) => Some(Two::Reserved(r)),
            (None, Policy::RoundRobin) => Some(Two::RoundRobin),
            (None, Policy::Icount) => None,
        }
    }

    /// Records that `t` issued this cycle.
    pub(crate) fn issued(&mut self, t: usize) {
        self.last = t;
        self.busy_cycles += 1;
    }

    /// Records that `t`, alone with work, issued `n` instructions in as many cycles.
    pub(crate) fn issued_alone(&mut self, t: usize, n: u64) {
        if n > 0 {
            self.last = t;
        }
        self.busy_cycles += n;
    }

    /// The only thread with work, if just one has.
    pub(crate) fn alone(&self) -> Option<usize> {
        let mut active = self.threads.iter().enumerate().filter(|(_, t)| t.active).map(|(k, _)| k);
        active.next().filter(|_| active.next().is_none())
    }

    /// The earliest cycle an active thread other than `t` may issue (fetched or not).
    pub(crate) fn others_ready(&self, t: usize) -> u64 {
        let others = self.threads.iter().enumerate().filter(|&(k, th)| k != t && th.active);
        others.map(|(_, th)| th.ready).min().unwrap_or(u64::MAX)
    }

    /// The earliest cycle any active thread may issue.
    pub(crate) fn next_ready(&self) -> Option<u64> {
        self.threads.iter().filter(|t| t.active).map(|t| t.ready).min()
    }
}
