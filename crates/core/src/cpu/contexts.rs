//! Context policies: which hardware register context each priority level runs
//! in, and so when a preemption must save and restore registers.
//!
//! The rule is the same for every policy: starting an activity in a context
//! whose registers are live with another, unfinished activity costs a register
//! save/restore; moving execution to a different context costs a context
//! switch. *Single context* maps every level to one context, so every
//! preemption of running code pays the save/restore (and an activity that
//! starts after the preempting one finished pays nothing, its predecessor's
//! registers being already saved). *Multithreaded* gives the application, the
//! protocol (software-interrupt) level and the interrupt levels a context each
//! (the paper's C1, C3 and C2), so a switch is a pointer change.

use super::Level;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ContextPolicy {
    /// One register context; preemption saves and restores registers.
    Single,
    /// One context per priority class: application, protocol, interrupt.
    Multithreaded,
}

/// Most contexts any policy uses.
pub const MAX_CONTEXTS: usize = 3;

impl ContextPolicy {
    /// The hardware context that code at `level` runs in.
    #[inline]
    pub fn context_of(self, level: Level) -> usize {
        match self {
            ContextPolicy::Single => 0,
            ContextPolicy::Multithreaded => match level {
                super::USER => 0,
                super::SOFT => 2,
                _ => 1,
            },
        }
    }

    pub fn contexts(self) -> usize {
        match self {
            ContextPolicy::Single => 1,
            ContextPolicy::Multithreaded => 3,
        }
    }

    /// Context name for timelines: the paper's C1 (application), C2 (driver
    /// ISR), C3 (protocol).
    pub fn context_name(self, ctx: usize) -> &'static str {
        match (self, ctx) {
            (ContextPolicy::Single, _) => "C0",
            (_, 0) => "C1 app",
            (_, 1) => "C2 isr",
            _ => "C3 protocol",
        }
    }
}
