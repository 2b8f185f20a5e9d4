//! Pipeline timing of an in-order, single-issue R4000-class integer
//! pipeline: one instruction per cycle, plus the interlocks the R4000
//! User's Manual describes (load delay, HI/LO busy after multiply/divide,
//! taken-branch delay beyond the one architectural delay slot). The
//! numbers and their sources are in docs/models/cores.md.

use crate::decode::Inst;

/// Latencies in cycles; defaults follow the MIPS R4000.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pipeline {
    /// Cycles an instruction that uses a loaded register waits after the load (R4000: 2).
    pub load_use_cycles: u32,
    /// Extra cycles after a taken branch or jump (R4000: 3-cycle branch delay, one hidden by the slot: 2).
    pub branch_taken_cycles: u32,
    /// Cycles from `mult`/`multu` issue until HI/LO can be read.
    pub mult_cycles: u32,
    /// Cycles from `div`/`divu` issue until HI/LO can be read.
    pub div_cycles: u32,
}

impl Default for Pipeline {
    fn default() -> Self {
        Pipeline { load_use_cycles: 2, branch_taken_cycles: 2, mult_cycles: 10, div_cycles: 69 }
    }
}

/// Per hardware thread: when results of long operations become usable.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scoreboard {
    /// Cycle from which each general register's pending load result can be used.
    reg_ready: [u64; 32],
    /// The latest of those (for ICOUNT's count of results in flight).
    load_ready: u64,
    /// Cycle from which HI/LO can be read (or a new multiply/divide start).
    hilo_ready: u64,
    /// The later of `load_ready` and `hilo_ready`, set with either: a
    /// block's entry tests it (see [`Scoreboard::drained`]).
    drained: u64,
}

impl Scoreboard {
    /// The earliest cycle `i` may issue given results still in flight.
    #[inline(always)]
    pub fn ready(&self, i: Inst) -> u64 {
        let (a, b) = i.sources();
        let t = self.reg_ready[a as usize & 31].max(self.reg_ready[b as usize & 31]);
        if i.class & Inst::USES_HILO != 0 { t.max(self.hilo_ready) } else { t }
    }

    /// Records what `i`, issued at `now` and finishing its memory access at `done`, leaves in flight.
    #[inline(always)]
    pub fn issued(&mut self, p: &Pipeline, i: Inst, now: u64, done: u64) {
        if i.class & Inst::IN_FLIGHT == 0 {
            return;
        }
        if i.class & Inst::MULT != 0 {
            self.hilo_ready = now + p.mult_cycles as u64;
        } else if i.class & Inst::DIV != 0 {
            self.hilo_ready = now + p.div_cycles as u64;
        } else if i.class & Inst::LOAD != 0 && i.rt != 0 {
            self.load_ready = done + p.load_use_cycles as u64;
            self.reg_ready[i.rt as usize & 31] = self.load_ready;
        }
        self.drained = self.load_ready.max(self.hilo_ready);
    }

    /// [`Scoreboard::issued`] for a load or store (never a multiply or divide) whose access ends at `done`.
    #[inline(always)]
    pub fn accessed(&mut self, p: &Pipeline, i: Inst, done: u64) {
        if i.class & Inst::LOAD != 0 && i.rt != 0 {
            self.loaded(p, i.rt, done);
        }
    }

    /// [`Scoreboard::accessed`] for a load into `rt` (not `$zero`).
    #[inline(always)]
    pub fn loaded(&mut self, p: &Pipeline, rt: u8, done: u64) {
        self.load_ready = done + p.load_use_cycles as u64;
        self.reg_ready[rt as usize & 31] = self.load_ready;
        self.drained = self.load_ready.max(self.hilo_ready);
    }

    /// The cycle by which every result in flight has arrived: from then on
    /// [`Scoreboard::ready`] holds nothing back.
    #[inline(always)]
    pub fn drained(&self) -> u64 {
        self.drained
    }

    /// Results in flight that the thread may wait for: ICOUNT's measure of a clogged thread.
    pub fn in_flight(&self, now: u64) -> u32 {
        (self.load_ready > now) as u32 + (self.hilo_ready > now) as u32
    }
}
