//! Cycle accounting: every elapsed cycle of a hardware thread lands in exactly
//! one bin, so the bins of a thread always sum to its elapsed cycles.

use serde::Serialize;

/// What a hardware thread spent a cycle on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bin {
    /// Application code.
    User,
    /// System calls and protocol processing entered by a software interrupt.
    Kernel,
    /// Interrupt service routines (top halves).
    Interrupt,
    /// Deferred kernel work: tasklets, softirqs (bottom halves).
    BottomHalf,
    /// Interrupt entry, register save/restore, context switches, masking.
    Overhead,
    /// Nothing to run.
    Idle,
}

impl Bin {
    pub const ALL: [Bin; 6] = [Bin::User, Bin::Kernel, Bin::Interrupt, Bin::BottomHalf, Bin::Overhead, Bin::Idle];

    pub fn name(self) -> &'static str {
        match self {
            Bin::User => "user",
            Bin::Kernel => "kernel",
            Bin::Interrupt => "interrupt",
            Bin::BottomHalf => "bottom_half",
            Bin::Overhead => "overhead",
            Bin::Idle => "idle",
        }
    }
}

/// Cycles per bin for one hardware thread. Eight words, two of them
/// never used: a power of two, so that a thread's per-level bins are
/// found by a shift, not a multiply by six words.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bins([u64; 8]);

impl Bins {
    #[inline]
    pub fn add(&mut self, bin: Bin, cycles: u64) {
        self.0[bin as usize] += cycles;
    }

    pub fn get(&self, bin: Bin) -> u64 {
        self.0[bin as usize]
    }

    pub fn merge(&mut self, other: &Bins) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}
