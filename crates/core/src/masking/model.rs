//! The event loop of the masking model: one hardware thread running
//! activities whose programs contain nested critical sections at interrupt
//! priority levels, under conventional or optimistic protection.
//!
//! Priority `p` (1..=levels) is CPU level `IRQ + p - 1`. An activity's
//! program is a list of [`Step`]s: work, `Enter(p)` (open a section that
//! masks priorities `<= p`) and `Exit` (close the innermost one). Sections are
//! balanced inside each activity, so the CPU's masking level is the highest
//! section open in any started activity.
//!
//! - *Conventional*: `Enter`/`Exit` write the hardware mask (Table 1 cost);
//!   an interrupt at or below it is held by the hardware and delivered when
//!   a section exit lowers it.
//! - *Optimistic*: `Enter`/`Exit` write a software mask (Table 2 cost). Every
//!   interrupt is taken; its prologue tests the software mask, and when the
//!   interrupt is masked builds a continuation, raises the hardware mask to
//!   the software level and returns. The section exit that unmasks it runs
//!   the deferred handler, then restores the hardware mask.
//!
//! Interrupts above the masking level preempt at once in both schemes: the
//! [`Thread`] runs the highest started-or-pending level. The model keeps its
//! own held queues (the interrupt lines) instead of the thread's mask, so a
//! deferred handler, which arrived first, runs before any held one of its
//! level.

use super::profiles::Costs;
use crate::cpu::{Bin, EntryCosts, IRQ, Label, Level, Thread, USER, Work};
use crate::engine::{EventQueue, Time};
use crate::timeline::Timeline;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// How critical sections are protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    Conventional,
    Optimistic,
}

/// One step of an activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Work of some cycles.
    Run(u64),
    /// Open a critical section masking priorities at or below this one.
    Enter(u8),
    /// Close the innermost open section.
    Exit,
}

/// What an activity runs. The base program (index 0) runs at user level
/// and, when `repeat`, starts over at its end (one pass = one RPC).
#[derive(Debug, Clone)]
pub struct Program {
    pub steps: Vec<Step>,
    /// The bin its `Run` steps count in.
    pub bin: Bin,
    pub repeat: bool,
}

/// An interrupt raised at `at` with priority `priority` whose handler runs `program`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    pub at: Time,
    pub priority: u8,
    pub program: usize,
}

/// Why [`Model::run_with`] stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// An arrival names a priority or program that does not exist.
    Invalid(String),
    /// The monitor stopped the run at this cycle.
    Cancelled(Time),
}

/// One handler's life, kept when a log is asked for (tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandlerRun {
    /// Arrival order (0, 1, ...).
    pub id: u32,
    pub priority: u8,
    pub arrived: Time,
    /// When its handler program began (after any deferral).
    pub started: Time,
    pub finished: Time,
    /// The CPU's masking level (highest open section) when it began.
    pub masking_level: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum What {
    Run,
    Enter,
    Exit,
    /// Start of an interrupt activity: the optimistic prologue's mask test
    /// (free under conventional protection, and for a resumed continuation).
    Prologue { check: bool },
    /// Build the continuation and raise the hardware mask.
    Defer,
    /// After deferred handlers ran: lower the hardware mask.
    Restore,
}

/// A job on the thread: which program, where in it, for which interrupt.
#[derive(Debug, Clone, Copy)]
pub struct Job {
    program: u32,
    pc: u32,
    irq: Irq,
    what: What,
}

/// The interrupt an activity serves (`NONE` for the base program).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Irq {
    id: u32,
    priority: u8,
    arrived: Time,
}

impl Irq {
    const NONE: Irq = Irq { id: u32::MAX, priority: 0, arrived: 0 };
}

impl Label for Job {
    fn label(&self) -> &'static str {
        match self.what {
            What::Run if self.irq == Irq::NONE => "null RPC path",
            What::Run => "interrupt handler",
            What::Enter => "section enter (mask raise)",
            What::Exit => "section exit (mask lower)",
            What::Prologue { .. } => "interrupt prologue",
            What::Defer => "build continuation",
            What::Restore => "restore hardware mask",
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Event {
    Arrive(Arrival),
    Done { epoch: u64 },
    End,
}

/// Counts a run yields.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counters {
    pub events: u64,
    pub raised: u64,
    pub handled: u64,
    /// Interrupts that arrived while the hardware mask held them.
    pub held: u64,
    /// Interrupts the optimistic prologue deferred.
    pub deferred: u64,
    /// Base-program passes completed, and when the last one ended.
    pub passes: u64,
    pub last_pass_end: Time,
    /// Cycles of mask manipulation (enter, exit, prologue, continuation, restore).
    pub masking_cycles: u64,
    /// Of those, the base program's own, in completed passes.
    pub base_masking_cycles: u64,
    /// The base program's masking cycles in the pass under way.
    pass_masking_cycles: u64,
    /// Interrupts on the thread (queued or running) whose activity has not ended.
    pub posted: u64,
}

pub struct Model<I> {
    queue: EventQueue<Event>,
    thread: Thread<Job>,
    programs: Vec<Program>,
    arrivals: I,
    scheme: Scheme,
    costs: Costs,
    /// Open sections (priorities, innermost last) of the activity at each CPU level.
    open: Vec<Vec<u8>>,
    /// Hardware mask: priorities at or below it are held (0: none).
    hw: u8,
    /// Interrupts held by the hardware mask, per priority, in arrival order.
    held: Vec<VecDeque<(Irq, u32)>>,
    /// Interrupts with continuations (and their handler programs), in arrival order.
    deferred: VecDeque<(Irq, u32)>,
    /// When the handler at each CPU level began, and the masking level then.
    began: Vec<(Time, u8)>,
    next_id: u32,
    end: Time,
    pub counters: Counters,
    /// Every handler's life, when `Some` (tests).
    pub log: Option<Vec<HandlerRun>>,
    pub timeline: Timeline,
    levels: u8,
}

impl<I: Iterator<Item = Arrival>> Model<I> {
    /// A model over `levels` priorities; `programs[0]` is the base program.
    /// Refuses a program whose sections do not balance or name a priority
    /// outside `1..=levels`.
    pub fn new(levels: u8, entry: EntryCosts, programs: Vec<Program>, arrivals: I, scheme: Scheme, costs: Costs, end: Time) -> Result<Self, String> {
        if levels == 0 || IRQ as usize + levels as usize > Thread::<Job>::MAX_LEVELS {
            return Err(format!("{levels} priority levels: must be 1..={}", Thread::<Job>::MAX_LEVELS - IRQ as usize));
        }
        for (i, p) in programs.iter().enumerate() {
            let mut depth = 0usize;
            for step in &p.steps {
                match *step {
                    Step::Enter(l) if l == 0 || l > levels => return Err(format!("program {i}: section at priority {l}, outside 1..={levels}")),
                    Step::Enter(_) => depth += 1,
                    Step::Exit if depth == 0 => return Err(format!("program {i}: exit without an open section")),
                    Step::Exit => depth -= 1,
                    Step::Run(_) => {}
                }
            }
            if depth != 0 {
                return Err(format!("program {i}: {depth} section(s) left open"));
            }
        }
        let cpu_levels = IRQ as usize + levels as usize;
        Ok(Self {
            queue: EventQueue::new(),
            thread: Thread::new(0, cpu_levels, crate::cpu::ContextPolicy::Single, entry),
            programs,
            arrivals,
            scheme,
            costs,
            open: (0..cpu_levels).map(|_| Vec::with_capacity(8)).collect(),
            hw: 0,
            held: (0..=levels).map(|_| VecDeque::new()).collect(),
            deferred: VecDeque::new(),
            began: vec![(0, 0); cpu_levels],
            next_id: 0,
            end,
            counters: Counters::default(),
            log: None,
            timeline: Timeline::disabled(),
            levels,
        })
    }

    /// Runs until `end`, or until nothing is left to happen. Stops at an
    /// arrival with a priority outside `1..=levels` or an unknown program.
    pub fn run(&mut self) -> Result<(), String> {
        self.run_with(&mut crate::Unwatched).map_err(|e| match e {
            Stop::Invalid(msg) => msg,
            Stop::Cancelled(at) => format!("cancelled at {at}"),
        })
    }

    /// [`Model::run`], polling `monitor` as it goes.
    pub fn run_with(&mut self, monitor: &mut dyn crate::Monitor) -> Result<(), Stop> {
        self.queue.schedule(self.end, Event::End);
        if let Some(job) = self.step_job(0, 0, Irq::NONE) {
            let work = self.work(job);
            self.thread.post(USER, work);
        }
        self.schedule_arrival();
        self.dispatch();
        while let Some((now, event)) = self.queue.pop() {
            self.counters.events += 1;
            if crate::monitor::due(self.counters.events) && !monitor.poll(now, self.end) {
                return Err(Stop::Cancelled(now));
            }
            match event {
                Event::Arrive(a) => {
                    if a.priority == 0 || a.priority > self.levels || a.program >= self.programs.len() {
                        return Err(Stop::Invalid(format!("arrival at {now}: priority {} (levels 1..={}), program {}", a.priority, self.levels, a.program)));
                    }
                    self.arrive(now, a);
                    self.schedule_arrival();
                }
                Event::Done { epoch } => self.complete(now, epoch),
                Event::End => break,
            }
            self.dispatch();
        }
        let now = self.queue.now();
        self.thread.charge(now, &mut self.timeline);
        Ok(())
    }

    pub fn thread(&self) -> &Thread<Job> {
        &self.thread
    }

    /// Interrupts raised and not yet handled: held, deferred or on the thread.
    pub fn in_flight(&self) -> u64 {
        self.held.iter().map(|q| q.len() as u64).sum::<u64>() + self.deferred.len() as u64 + self.counters.posted
    }

    /// The CPU's masking level: the highest section open in any activity.
    fn masking_level(&self) -> u8 {
        self.open.iter().filter_map(|s| s.iter().max()).max().copied().unwrap_or(0)
    }

    fn schedule_arrival(&mut self) {
        if let Some(a) = self.arrivals.next()
            && a.at < self.end
        {
            self.queue.schedule(a.at.max(self.queue.now()), Event::Arrive(a));
        }
    }

    fn arrive(&mut self, now: Time, a: Arrival) {
        let irq = Irq { id: self.next_id, priority: a.priority, arrived: now };
        self.next_id += 1;
        self.counters.raised += 1;
        if a.priority <= self.hw {
            self.counters.held += 1;
            self.held[a.priority as usize].push_back((irq, a.program as u32));
        } else {
            self.post(irq, a.program as u32, self.scheme == Scheme::Optimistic);
        }
    }

    /// Hands an interrupt to the thread, which starts it at once if it is
    /// above what runs. `check`: its prologue tests the software mask.
    fn post(&mut self, irq: Irq, program: u32, check: bool) {
        self.counters.posted += 1;
        let work = self.work(Job { program, pc: 0, irq, what: What::Prologue { check } });
        self.thread.post(IRQ + irq.priority - 1, work);
    }

    /// Posts the interrupts the hardware mask no longer holds.
    fn deliver_held(&mut self) {
        let check = self.scheme == Scheme::Optimistic;
        for p in (self.hw as usize + 1)..self.held.len() {
            while let Some((irq, program)) = self.held[p].pop_front() {
                self.post(irq, program, check);
            }
        }
    }

    fn complete(&mut self, now: Time, epoch: u64) {
        let Some((level, job)) = self.thread.complete(now, epoch, &mut self.timeline) else {
            return;
        };
        let cost = self.work(job).cycles;
        if !matches!(job.what, What::Run) {
            self.counters.masking_cycles += cost;
            if job.irq == Irq::NONE {
                self.counters.pass_masking_cycles += cost;
            }
        }
        let next = self.after(now, level, job);
        let next = next.map(|j| self.work(j));
        self.thread.proceed(level, next);
    }

    /// What the activity at `level` does after `job`: `None` ends it.
    fn after(&mut self, now: Time, level: Level, job: Job) -> Option<Job> {
        let l = level as usize;
        match job.what {
            What::Run => self.next_step(now, level, job),
            What::Prologue { check } => {
                let masking = self.masking_level();
                if check && job.irq.priority <= masking {
                    // Masked in software: keep a continuation, mask in hardware, return.
                    self.counters.deferred += 1;
                    self.deferred.push_back((job.irq, job.program));
                    self.hw = self.hw.max(masking);
                    return Some(Job { what: What::Defer, ..job });
                }
                self.began[l] = (now, masking);
                self.step_job(job.program, 0, job.irq).or_else(|| self.finish(now, level, job))
            }
            What::Defer => {
                // The interrupted activity resumes; the handler waits in `deferred`.
                self.counters.posted -= 1;
                None
            }
            What::Enter => {
                if let Some(Step::Enter(p)) = self.step(job) {
                    self.open[l].push(p);
                }
                if self.scheme == Scheme::Conventional {
                    self.hw = self.masking_level();
                }
                self.next_step(now, level, job)
            }
            What::Exit => {
                self.open[l].pop();
                let masking = self.masking_level();
                match self.scheme {
                    Scheme::Conventional => {
                        self.hw = masking;
                        self.deliver_held();
                        self.next_step(now, level, job)
                    }
                    Scheme::Optimistic => {
                        if !self.release_deferred(masking) {
                            return self.next_step(now, level, job);
                        }
                        Some(Job { what: What::Restore, ..job })
                    }
                }
            }
            What::Restore => {
                // Deferred handlers have run (they preempted this activity):
                // lower the hardware mask as far as the remaining ones allow.
                self.hw = if self.deferred.is_empty() { 0 } else { self.masking_level() };
                self.deliver_held();
                self.next_step(now, level, job)
            }
        }
    }

    /// Posts the deferred interrupts above `masking`, oldest first; whether any.
    fn release_deferred(&mut self, masking: u8) -> bool {
        let mut any = false;
        let mut i = 0;
        while i < self.deferred.len() {
            if self.deferred[i].0.priority > masking {
                if let Some((irq, program)) = self.deferred.remove(i) {
                    self.post(irq, program, false);
                    any = true;
                }
            } else {
                i += 1;
            }
        }
        any
    }

    fn step(&self, job: Job) -> Option<Step> {
        self.programs.get(job.program as usize)?.steps.get(job.pc as usize).copied()
    }

    /// The job for step `pc` of `program`, if it has one.
    fn step_job(&self, program: u32, pc: u32, irq: Irq) -> Option<Job> {
        let step = self.programs.get(program as usize)?.steps.get(pc as usize)?;
        let what = match step {
            Step::Run(_) => What::Run,
            Step::Enter(_) => What::Enter,
            Step::Exit => What::Exit,
        };
        Some(Job { program, pc, irq, what })
    }

    fn next_step(&mut self, now: Time, level: Level, job: Job) -> Option<Job> {
        if let Some(next) = self.step_job(job.program, job.pc + 1, job.irq) {
            return Some(next);
        }
        if job.irq == Irq::NONE {
            self.counters.passes += 1;
            self.counters.last_pass_end = now;
            self.counters.base_masking_cycles += std::mem::take(&mut self.counters.pass_masking_cycles);
            if self.programs[job.program as usize].repeat {
                return self.step_job(job.program, 0, job.irq);
            }
            return None;
        }
        self.finish(now, level, job)
    }

    /// A handler's activity ends.
    fn finish(&mut self, now: Time, level: Level, job: Job) -> Option<Job> {
        self.counters.handled += 1;
        self.counters.posted -= 1;
        if let Some(log) = self.log.as_mut() {
            let (started, masking_level) = self.began[level as usize];
            log.push(HandlerRun { id: job.irq.id, priority: job.irq.priority, arrived: job.irq.arrived, started, finished: now, masking_level });
        }
        None
    }

    fn work(&self, job: Job) -> Work<Job> {
        let c = &self.costs;
        let opt = self.scheme == Scheme::Optimistic;
        let bin = if job.irq == Irq::NONE { self.programs[job.program as usize].bin } else { Bin::Interrupt };
        let (cycles, bin) = match job.what {
            What::Run => match self.step(job) {
                Some(Step::Run(n)) => (n, bin),
                _ => (0, bin),
            },
            What::Enter if opt => (c.optimistic_enter.unwrap_or(0), Bin::Overhead),
            What::Enter => (c.conventional_raise, Bin::Overhead),
            What::Exit if opt => (c.optimistic_leave.unwrap_or(0), Bin::Overhead),
            What::Exit => (c.conventional_lower, Bin::Overhead),
            What::Prologue { check: true } => (c.prologue_check, Bin::Overhead),
            What::Prologue { check: false } => (0, Bin::Overhead),
            What::Defer => (c.continuation + c.conventional_raise, Bin::Overhead),
            What::Restore => (c.conventional_lower, Bin::Overhead),
        };
        Work { job, cycles, bin }
    }

    fn dispatch(&mut self) {
        let now = self.queue.now();
        if let Some((t, epoch)) = self.thread.dispatch(now, &mut self.timeline)
            && t <= self.end
        {
            self.queue.schedule(t, Event::Done { epoch });
        }
    }
}
