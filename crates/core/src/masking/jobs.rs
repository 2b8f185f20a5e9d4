//! Critical sections and interrupt masking: activities whose programs contain
//! nested critical sections at interrupt priority levels, under conventional
//! or optimistic protection (Stodolsky, Chen and Bershad 1993).
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
//! thread runs the highest started-or-pending level. The held queues (the
//! interrupt lines) live here rather than in the thread, so a deferred
//! handler, which arrived first, runs before any held one of its level. The
//! state is `machine::Masking`, a mask per CPU; this file is what the CPU
//! runs.
//!
//! Behind a controller (`Masking::wired`) a section masks every interrupt
//! its CPU's controller delivers: conventional protection keeps the CPU
//! from taking any (`Machine::accept`) until its mask drops; optimistic
//! protection takes each, and the interrupt path's prologue
//! ([`crate::kernel::IrqJob::Prologue`]) defers the whole path to the
//! section's exit.

use crate::cpu::{Bin, Label};
use crate::engine::Time;
use serde::{Deserialize, Serialize};

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
pub(crate) enum What {
    Run,
    Enter,
    Exit,
    /// Start of an interrupt activity: the optimistic prologue's mask test
    /// (free under conventional protection, and for a resumed continuation).
    Prologue {
        check: bool,
    },
    /// Build the continuation and raise the hardware mask.
    Defer,
    /// After deferred handlers ran: lower the hardware mask.
    Restore,
}

/// A job on the thread: which program, where in it, for which interrupt
/// (its fields unpacked, so that a job is 12 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    pub(crate) program: u16,
    pub(crate) pc: u16,
    pub(crate) id: u32,
    pub(crate) priority: u8,
    pub(crate) what: What,
}

impl Job {
    pub(crate) fn new(program: u16, pc: u16, irq: Irq, what: What) -> Self {
        Self { program, pc, id: irq.id, priority: irq.priority, what }
    }

    pub(crate) fn irq(&self) -> Irq {
        Irq { id: self.id, priority: self.priority }
    }
}

/// The interrupt an activity serves (`NONE` for the base program).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Irq {
    pub id: u32,
    pub priority: u8,
}

impl Irq {
    pub const NONE: Irq = Irq { id: u32::MAX, priority: 0 };
}

impl Label for Job {
    fn label(&self) -> &'static str {
        match self.what {
            What::Run if self.irq() == Irq::NONE => "null RPC path",
            What::Run => "interrupt handler",
            What::Enter => "section enter (mask raise)",
            What::Exit => "section exit (mask lower)",
            What::Prologue { .. } => "interrupt prologue",
            What::Defer => "build continuation",
            What::Restore => "restore hardware mask",
        }
    }

    fn args(&self) -> crate::timeline::Args {
        if self.irq() == Irq::NONE {
            return [None, None];
        }
        [Some(("interrupt", u64::from(self.id))), Some(("priority", u64::from(self.priority)))]
    }
}

/// Counts a run yields.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counters {
    pub raised: u64,
    pub handled: u64,
    /// Interrupts merged into one already waiting because
    /// [`MAX_WAITING`] were (real lines latch one each).
    pub merged: u64,
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
    pub(crate) pass_masking_cycles: u64,
    /// Interrupts on the thread (queued or running) whose activity has not ended.
    pub posted: u64,
}

/// Most interrupts waiting at once (held, deferred or posted and not yet
/// done). A real interrupt line latches one pending request; the model keeps
/// each arrival apart up to this many, so an overloaded run holds bounded
/// memory, and merges the rest (counted).
pub const MAX_WAITING: u64 = 4096;

/// The handler "program" of the NIC's interrupt: its Driver ISR.
pub(crate) const NIC_HANDLER: u16 = u16::MAX;

/// Checks that every program's sections balance and name a priority in
/// `1..=levels`.
pub(crate) fn check_programs(programs: &[Program], levels: u8) -> Result<(), String> {
    // Jobs number programs and steps in 16 bits.
    if programs.len() >= usize::from(u16::MAX) {
        return Err(format!("{} programs: at most {}", programs.len(), u16::MAX - 1));
    }
    for (i, p) in programs.iter().enumerate() {
        if p.steps.len() >= usize::from(u16::MAX) {
            return Err(format!("program {i}: {} steps, at most {}", p.steps.len(), u16::MAX - 1));
        }
        let mut depth = 0usize;
        for step in &p.steps {
            match *step {
                Step::Enter(l) if l == 0 || l > levels => {
                    return Err(format!("program {i}: section at priority {l}, outside 1..={levels}"));
                }
                Step::Enter(_) => depth += 1,
                Step::Exit if depth == 0 => {
                    return Err(format!("program {i}: exit without an open section"));
                }
                Step::Exit => depth -= 1,
                Step::Run(_) => {}
            }
        }
        if depth != 0 {
            return Err(format!("program {i}: {depth} section(s) left open"));
        }
    }
    Ok(())
}
