//! The CPU model: hardware threads that run prioritized software activities.
//!
//! A [`Thread`] is one hardware thread (a core without SMT). Software reaches
//! it as [`Work`]: a job of some cycles, accounted to a [`Bin`], posted at a
//! priority [`Level`]. Levels are strictly ordered: user code < software
//! interrupts (system calls, protocol processing, bottom halves) < interrupt
//! levels. Work at a level above the running one preempts it at once; work
//! at or below waits. (Masks are the models' business: an interrupt a mask
//! holds is not posted until the mask drops, see `masking/model.rs`.) Each level has at most one
//! started activity, so the started activities form the preemption stack and
//! finishing one returns execution to the one it preempted.
//!
//! Starting an activity costs entry cycles (the interrupt-entry pipeline
//! sequence for interrupts and software interrupts) plus whatever the
//! [`ContextPolicy`] charges: see `contexts.rs`. The thread never schedules
//! events itself; [`Thread::dispatch`] returns the completion time of what it
//! now runs whenever that changed, and the machine keeps it as the thread's
//! one timer (a preemption overwrites it, so no stale completion remains).
//!
//! Per-level state lives in fixed arrays of [`Thread::MAX_LEVELS`] indexed by
//! `level & 31`, so the hot path has no bounds checks; cycles are charged to
//! the running level's bins only, and a thread's bins are their sum.

mod bins;
mod config;
mod contexts;

pub use bins::{Bin, Bins};
pub use config::{CpuConfig, MAX_THREAD};
pub use contexts::{ContextPolicy, MAX_CONTEXTS};

use crate::engine::Time;
use crate::timeline::Timeline;
use std::collections::VecDeque;

/// Priority level; higher preempts lower.
pub type Level = u8;
/// Application code.
pub const USER: Level = 0;
/// Software-interrupt level: system calls, protocol layers, bottom halves.
pub const SOFT: Level = 1;
/// The lowest interrupt level; interrupt priority `p` runs at `IRQ + p`.
pub const IRQ: Level = 2;

/// A job for a hardware thread.
#[derive(Debug, Clone, Copy)]
pub struct Work<J> {
    pub job: J,
    pub cycles: u64,
    pub bin: Bin,
}

/// The cycles of a job that never ends (a background task, code until it
/// returns): the most any work has. Completion times are added plainly,
/// without saturating: times stay below 2^49 (an hour, the longest run, at
/// 100 GHz, the fastest clock), switch and entry cycles are configured costs
/// of at most 10^9 each, and every other work's cycles are sums of a few
/// configured costs, so `now` plus all of them stays below 2^63.
pub const NEVER: u64 = u64::MAX / 4;

/// Per-thread costs of starting and switching activities, in cycles.
#[derive(Debug, Clone, Copy)]
pub struct EntryCosts {
    pub irq_entry: u64,
    pub swi_entry: u64,
    pub save_restore: u64,
    pub context_switch: u64,
}

#[derive(Debug, Clone, Copy)]
struct Active<J> {
    work: Work<J>,
    /// Context-switch cycles still to run before anything else. A resume
    /// replaces (never adds to) what an interrupted switch left unpaid.
    switch: u64,
    /// Entry and save/restore cycles still to run before the work itself.
    overhead: u64,
    /// Work cycles still to run.
    remaining: u64,
}

impl<J> Active<J> {
    /// When the activity completes if it runs from `now` on without a break.
    /// Added plainly (see [`NEVER`]): nothing wraps.
    #[inline(always)]
    fn end(&self, now: Time) -> Time {
        now + self.remaining + self.switch + self.overhead
    }
}

struct Slot<J> {
    /// The level's started activity, valid while its `started` bit is set
    /// (the bit, not an `Option`, says whether there is one: the hot paths
    /// reach only started activities, and test nothing).
    active: Active<J>,
    pending: VecDeque<Work<J>>,
}

/// Index of a level's slot: levels are below 32, and the mask lets the
/// compiler drop the bounds checks.
#[inline(always)]
fn at(level: Level) -> usize {
    usize::from(level) & 31
}

// `Thread::live` is indexed by a context masked to two bits.
const _: () = assert!(MAX_CONTEXTS <= 4);

/// One hardware thread.
pub struct Thread<J> {
    id: usize,
    levels: usize,
    slots: [Slot<J>; 32],
    /// Bit `l` set: level `l` has a started activity.
    started: u32,
    /// Bit `l` set: level `l` has work waiting.
    waiting: u32,
    running: Option<Level>,
    seg_start: Time,
    /// Whether the running activity's completion has been handed out
    /// (meaningless while nothing runs).
    armed: bool,
    policy: ContextPolicy,
    /// Each level's context under the policy, looked up instead of matched.
    ctx_of: [u8; 32],
    costs: EntryCosts,
    /// Which level's registers each hardware context holds (a power-of-two
    /// array, indexed by `ctx & 3`: no bounds checks).
    live: [Option<Level>; 4],
    /// The context execution was last in (for switch costs).
    last_ctx: usize,
    /// Cycles with nothing to run.
    idle: u64,
    /// Cycles by the level that ran them (summed per context in
    /// [`Thread::context_bins`], and with `idle` in [`Thread::bins`]).
    level_bins: [Bins; 32],
}

impl<J: Copy + Label + Default> Thread<J> {
    pub fn new(id: usize, levels: usize, policy: ContextPolicy, costs: EntryCosts) -> Self {
        let levels = levels.clamp(IRQ as usize + 1, Self::MAX_LEVELS);
        // What a slot holds before its level starts anything: never read.
        let none = Active { work: Work { job: J::default(), cycles: 0, bin: Bin::Idle }, switch: 0, overhead: 0, remaining: 0 };
        Self {
            id,
            levels,
            slots: std::array::from_fn(|_| Slot { active: none, pending: VecDeque::new() }),
            started: 0,
            waiting: 0,
            running: None,
            seg_start: 0,
            armed: false,
            policy,
            ctx_of: std::array::from_fn(|l| policy.context_of(l as Level) as u8),
            costs,
            live: [None; 4],
            last_ctx: 0,
            idle: 0,
            level_bins: [Bins::default(); 32],
        }
    }
}

impl<J: Copy + Label> Thread<J> {
    /// Most priority levels a thread has (levels are bits of a `u32`).
    pub const MAX_LEVELS: usize = 32;

    pub fn policy(&self) -> ContextPolicy {
        self.policy
    }

    /// Cycles per bin: every elapsed cycle in exactly one.
    pub fn bins(&self) -> Bins {
        let mut b = Bins::default();
        b.add(Bin::Idle, self.idle);
        for lb in &self.level_bins[..self.levels] {
            b.merge(lb);
        }
        b
    }

    /// Cycles per bin of each hardware context of the policy (idle belongs
    /// to no context, so these sum to the thread's elapsed cycles minus idle).
    pub fn context_bins(&self) -> Vec<Bins> {
        let mut out = vec![Bins::default(); self.policy.contexts()];
        for (level, b) in self.level_bins[..self.levels].iter().enumerate() {
            out[self.policy.context_of(level as Level)].merge(b);
        }
        out
    }

    /// The level now running, if any.
    pub fn running(&self) -> Option<Level> {
        self.running
    }

    /// Whether [`Thread::dispatch`] would change nothing: no work waits
    /// above the top started level, which runs with its completion handed out.
    pub fn settled(&self) -> bool {
        let Some(top) = (self.started != 0).then(|| 31 - self.started.leading_zeros()) else { return false };
        self.waiting & !((2u32 << top).wrapping_sub(1)) == 0 && self.running == Some(top as Level) && self.armed
    }

    /// Queues work at `level`; call [`Thread::dispatch`] afterwards.
    #[inline]
    pub fn post(&mut self, level: Level, work: Work<J>) {
        self.slots[at(level)].pending.push_back(work);
        self.waiting |= 1 << level;
    }

    fn pop_pending(&mut self, level: Level) -> Option<Work<J>> {
        let q = &mut self.slots[at(level)].pending;
        let w = q.pop_front();
        if q.is_empty() {
            self.waiting &= !(1 << level);
        }
        w
    }

    /// Number of works waiting (not started) at `level`.
    pub fn pending(&self, level: Level) -> usize {
        self.slots[at(level)].pending.len()
    }

    /// Accounts the cycles since the last call to the running activity (or
    /// idle) and records them on the timeline.
    #[inline]
    pub fn charge(&mut self, now: Time, timeline: &mut Timeline) {
        // Most calls come at an instant already charged: keep that test inline.
        if now != self.seg_start {
            self.charge_elapsed(now, timeline);
        }
    }

    #[inline(always)]
    fn charge_elapsed(&mut self, now: Time, timeline: &mut Timeline) {
        let elapsed = now - self.seg_start;
        let start = self.seg_start;
        self.seg_start = now;
        let Some(level) = self.running else {
            self.idle += elapsed;
            return;
        };
        debug_assert!(self.started & (1 << level) != 0, "running level {level} has no activity");
        let act = &mut self.slots[at(level)].active;
        if act.switch | act.overhead == 0 && !timeline.enabled() {
            // Into the job's own work (the common preemption): no split.
            // A charge comes no later than the job's completion, for which
            // its timer is armed: the subtraction never passes zero.
            debug_assert!(elapsed <= act.remaining, "charged past the end of a job");
            act.remaining -= elapsed;
            self.level_bins[at(level)].add(act.work.bin, elapsed);
            return;
        }
        let switch = elapsed.min(act.switch);
        act.switch -= switch;
        let entry = (elapsed - switch).min(act.overhead);
        act.overhead -= entry;
        let over = switch + entry;
        let work = elapsed - over;
        debug_assert!(work <= act.remaining, "charged past the end of a job");
        act.remaining -= work;
        let lb = &mut self.level_bins[at(level)];
        lb.add(Bin::Overhead, over);
        lb.add(act.work.bin, work);
        if timeline.enabled() {
            let job = act.work.job;
            self.record_spans(timeline, level, job, start, start + over, now);
        }
    }

    /// Timeline spans of one charge: overhead on `[start, mid)`, `job` on
    /// `[mid, now)`. Out of line: most runs record no timeline.
    #[cold]
    fn record_spans(&self, timeline: &mut Timeline, level: Level, job: J, start: Time, mid: Time, now: Time) {
        let ctx = self.context_of(level);
        if mid > start {
            timeline.span(self.id, ctx, start, mid, "overhead", [None, None]);
        }
        if now > mid {
            timeline.span(self.id, ctx, mid, now, job.label(), job.args());
        }
    }

    /// The running activity's level and job, the switch and entry cycles
    /// it still has to run before the job's own work starts, and the work
    /// cycles left (0: the job is over and its completion is due).
    pub fn running_work(&self) -> Option<(Level, J, u64, u64)> {
        let level = self.running?;
        let act = &self.slots[at(level)].active;
        Some((level, act.work.job, act.switch + act.overhead, act.remaining))
    }

    /// When the running activity completes, run on from its last charge
    /// without a break (what its timer was set to).
    pub fn end_time(&self) -> Option<Time> {
        let level = self.running?;
        Some(self.slots[at(level)].active.end(self.seg_start))
    }

    /// Ends the running job's work at `now`, however many cycles it was
    /// given: a job of code ends when the code returns, not after a count.
    /// Its completion is then due at `now` (see [`Thread::complete`]).
    pub fn end_work(&mut self, now: Time, timeline: &mut Timeline) {
        self.charge(now, timeline);
        if let Some(level) = self.running {
            self.slots[at(level)].active.remaining = 0;
        }
    }

    /// Ends the running activity's job at `now` (its completion time);
    /// returns its level and job. The caller then calls [`Thread::proceed`].
    /// Always inline: with a second caller (`Machine::step_end`) LLVM left
    /// it out of the loop.
    #[inline(always)]
    pub fn complete(&mut self, now: Time, timeline: &mut Timeline) -> Option<(Level, J)> {
        let Some(level) = self.running else {
            self.charge(now, timeline);
            return None;
        };
        let act = &mut self.slots[at(level)].active;
        if !timeline.enabled() {
            // The job ran to its end (its timer is armed for exactly that, and
            // a code job's `end_work` leaves nothing to run): everything it had
            // left is charged, no need to split the elapsed cycles as `charge`
            // does. Were that ever wrong, the bins would not sum to the elapsed
            // cycles, an invariant every run checks.
            let over = act.switch + act.overhead;
            debug_assert_eq!(now - self.seg_start, over + act.remaining);
            self.seg_start = now;
            let lb = &mut self.level_bins[at(level)];
            lb.add(Bin::Overhead, over);
            lb.add(act.work.bin, act.remaining);
            (act.switch, act.overhead, act.remaining) = (0, 0, 0);
            return Some((level, act.work.job));
        }
        self.charge(now, timeline);
        let act = &self.slots[at(level)].active;
        debug_assert_eq!(act.remaining + act.overhead + act.switch, 0);
        Some((level, act.work.job))
    }

    /// After [`Thread::complete`] at `now`: the activity at `level` goes on
    /// with `work` (no new entry cost). Its completion time when nothing
    /// waits above it (armed at once, no [`Thread::dispatch`] needed);
    /// `None`: the caller must dispatch. Apart from [`Thread::proceed`], so
    /// that the next job is never wrapped in an `Option`: LLVM copied the
    /// job field by field at each wrap and unwrap (26 instructions a
    /// completion).
    #[inline(always)]
    pub fn go_on(&mut self, now: Time, level: Level, work: Work<J>) -> Option<Time> {
        let slot = &mut self.slots[at(level)];
        // `complete` left no switch or entry cycles: the job and its cycles only.
        debug_assert_eq!(slot.active.switch | slot.active.overhead, 0);
        (slot.active.work, slot.active.remaining) = (work, work.cycles);
        // `complete` left the activity running, the top started one;
        // only waiting work above it could preempt.
        debug_assert_eq!(self.running, Some(level));
        debug_assert_eq!(31 - self.started.leading_zeros(), u32::from(level));
        // The job restarts: armed now, or by the dispatch that must follow.
        self.armed = self.waiting >> level >> 1 == 0;
        if !self.armed {
            return None;
        }
        Some(now + work.cycles)
    }

    /// Right after the running job started at `now`, before its work
    /// began: it is `work` instead (of the same bin). Its completion time,
    /// to arm again.
    pub fn replace(&mut self, now: Time, work: Work<J>) -> Time {
        let act = &mut self.slots[at(self.running.expect("a running job to replace"))].active;
        debug_assert!(now == self.seg_start && act.work.bin == work.bin);
        (act.work, act.remaining) = (work, work.cycles);
        act.end(now)
    }

    /// After [`Thread::complete`] at `now`, with nothing for the activity
    /// at `level` to go on with: at a software-interrupt level it takes the
    /// next work queued there in the same activation (a softirq loop, as
    /// [`Thread::go_on`]); otherwise it ends and frees its context.
    ///
    /// When nothing waits above what runs next (the next queued work, or,
    /// if `may_resume`, the activity it had preempted), nothing else can
    /// run: that completion time is returned at once and armed, and no
    /// [`Thread::dispatch`] is needed. `None`: the caller must dispatch.
    #[inline]
    pub fn proceed(&mut self, now: Time, level: Level, may_resume: bool) -> Option<Time> {
        if level == SOFT
            && let Some(work) = self.pop_pending(level)
        {
            return self.go_on(now, level, work);
        }
        // Its context's registers stay marked as its own: a start
        // saves them only while their level's `started` bit is set.
        self.started &= !(1 << level);
        self.running = None;
        if !may_resume || self.started == 0 {
            return None;
        }
        let top = (31 - self.started.leading_zeros()) as Level;
        if self.waiting >> top >> 1 != 0 {
            return None;
        }
        // Charged already at `now` by `complete`.
        Some(self.resume(now, top))
    }

    /// Decides what runs from `now` on. Returns the completion time when
    /// that changed and the thread's timer must be set again.
    #[inline]
    pub fn dispatch(&mut self, now: Time, timeline: &mut Timeline) -> Option<Time> {
        let top_started = (self.started != 0).then(|| 31 - self.started.leading_zeros());
        // Waiting levels above every started one.
        let above = top_started.map_or(u32::MAX, |l| !((2u32 << l).wrapping_sub(1)));
        let startable = self.waiting & above;
        let start = (startable != 0).then(|| 31 - startable.leading_zeros());
        let (level, fresh) = match (start, top_started) {
            (Some(l), _) => (l as Level, true),
            (None, Some(l)) => (l as Level, false),
            (None, None) => {
                if self.running.is_some() {
                    self.charge(now, timeline);
                    self.running = None;
                    self.armed = false;
                }
                return None;
            }
        };
        if self.running == Some(level) && !fresh {
            // Unchanged: only a job that `proceed` restarted needs arming.
            if !self.armed {
                self.charge(now, timeline);
            }
            return self.arm_if_needed(now);
        }
        self.charge(now, timeline);
        if !fresh {
            return Some(self.resume(now, level));
        }
        let work = self.pop_pending(level).expect("waiting bit implies pending work");
        self.start(now, level, work, timeline)
    }

    /// Whether work posted at `level` would start at once: nothing started
    /// or waiting at or above it (an interrupt preempting the protocol).
    #[inline]
    pub fn starts_at_once(&self, level: Level) -> bool {
        let at_or_above = !((1u32 << level) - 1);
        (self.started | self.waiting) & at_or_above == 0
    }

    /// [`Thread::post`] then [`Thread::dispatch`] when
    /// [`Thread::starts_at_once`], without queueing `work`.
    #[inline(always)]
    pub fn start_at_once(&mut self, now: Time, level: Level, work: Work<J>, timeline: &mut Timeline) -> Option<Time> {
        debug_assert!(self.starts_at_once(level));
        self.charge(now, timeline);
        self.start(now, level, work, timeline)
    }

    /// A new activity starts with `work` at `level` (charged up to `now`);
    /// returns its completion time.
    #[inline(always)]
    fn start(&mut self, now: Time, level: Level, work: Work<J>, timeline: &mut Timeline) -> Option<Time> {
        let ctx = self.context_of(level);
        let switch = self.enter(ctx);
        let mut overhead = match level {
            USER => 0,
            SOFT => self.costs.swi_entry,
            _ => self.costs.irq_entry,
        };
        // Live registers of another unfinished activity in this context must be saved.
        // (A level's activity is unfinished while its `started` bit is set.)
        if let Some(owner) = self.live[ctx]
            && owner != level
            && self.started & (1 << owner) != 0
        {
            overhead += self.costs.save_restore;
        }
        let act = Active { work, switch, overhead, remaining: work.cycles };
        self.slots[at(level)].active = act;
        self.started |= 1 << level;
        timeline.flow_to(self.id, level, ctx, now);
        self.live[ctx] = Some(level);
        self.running = Some(level);
        self.armed = true;
        Some(act.end(now))
    }

    /// Execution returns to the started activity at `level` (charged up to
    /// `now`); returns its completion time.
    #[inline(always)]
    fn resume(&mut self, now: Time, level: Level) -> Time {
        let ctx = self.context_of(level);
        let switch = self.enter(ctx);
        debug_assert!(self.started & (1 << level) != 0);
        let act = &mut self.slots[at(level)].active;
        act.switch = switch;
        let end = act.end(now);
        self.live[ctx] = Some(level);
        self.running = Some(level);
        self.armed = true;
        end
    }

    #[inline(always)]
    fn context_of(&self, level: Level) -> usize {
        usize::from(self.ctx_of[at(level)] & 3)
    }

    /// Execution moves into hardware context `ctx`: the switch cycles that costs.
    #[inline(always)]
    fn enter(&mut self, ctx: usize) -> u64 {
        if ctx == self.last_ctx {
            return 0;
        }
        self.last_ctx = ctx;
        self.costs.context_switch
    }

    /// Hands out the completion of the running activity once per start.
    /// Valid only right after `charge(now)`.
    fn arm_if_needed(&mut self, now: Time) -> Option<Time> {
        if self.armed {
            return None;
        }
        let level = self.running?;
        let act = &self.slots[at(level)].active;
        self.armed = true;
        Some(act.end(now))
    }
}

/// A short name for a job, shown on timelines.
pub trait Label {
    fn label(&self) -> &'static str;

    /// What the job is about, for the timeline (the frame, the input).
    fn args(&self) -> crate::timeline::Args {
        [None, None]
    }
}
