//! Basic blocks of the predecoded text with their timing computed once.
//!
//! A block is the straight run of instructions from an entry address up to
//! the first control transfer, `syscall`, `break` or undecodable word, plus
//! the delay slot of a branch or jump when the slot is an ordinary
//! instruction. A forward conditional branch that neither links nor annuls
//! its slot ([`Cond::inner`]) does not end it: the block goes on along the
//! branch's fall-through path, past its slot, and leaves there if it is
//! taken
//! (see docs/performance.md, issue 24, fourteenth session).
//!
//! Entered with nothing in flight in the thread's scoreboard and with no
//! memory stall, each instruction's issue cycle relative to the block's
//! entry is fixed by the pipeline's interlocks alone, so it is computed when
//! the block is first entered and reused: the thread's slice then runs the
//! block without per-instruction timing (see [`crate::system`]). The
//! closing delay slot has two offsets, for the branch taken and not, since
//! the taken-branch penalty comes before it; the slot of a branch within
//! the block has its fall-through offset, and when the branch is taken
//! issues no earlier than the branch's penalty allows.
//!
//! Blocks are built lazily by entry address and all dropped when the text
//! is written (self-modifying code: [`Code::generation`] moves on).

use crate::code::Code;
use crate::decode::{Inst, Op};
use crate::exec::{Cond, Simple};
use crate::hierarchy::HierarchyConfig;
use crate::plain::Plain;
use crate::timing::{Pipeline, Scoreboard};

/// Most ordinary instructions in a block: keeps its span small against a slice's limit.
const MAX_ORDINARY: usize = 32;

/// One instruction of a block with its issue offset from the block's entry.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    pub inst: Inst,
    pub off: u32,
    /// Its fetch may miss: the block's first instruction or the first in
    /// its instruction-cache line. The others hit the line fetched before
    /// them (within a block only data accesses come between two fetches).
    pub fetch: bool,
    /// Its operation as [`Simple::run`] runs it, if it can.
    pub simple: Simple,
    /// A transfer as [`crate::exec::cond`] decides it, if it can.
    pub cond: Cond,
    /// A load or store the block may run by [`crate::plain::whole`].
    pub(crate) plain: Plain,
    /// If its access stalls, every later step issues that much later than
    /// its offset: each waits, if at all, for this step or a later one, so
    /// that the stall moves what holds it back as much as it moves the step
    /// itself (see [`Relative::issue`]). The block may then go on after it.
    pub resumes: bool,
}

impl Step {
    /// `inst` at issue offset `off`; `fetch`: see [`Step::fetch`].
    pub fn new(inst: Inst, off: u32, fetch: bool) -> Step {
        Step { inst, off, fetch, simple: Simple::of(inst), cond: Cond::of(inst), plain: Plain::of(inst), resumes: false }
    }
}

/// One block.
#[derive(Clone, Debug, Default)]
pub struct Block {
    /// Instructions that go on in order before the end: ordinary ones
    /// ([`Op::transfers`] is false), and branches within the block, each
    /// followed by its slot.
    pub ordinary: u32,
    /// The latest issue offset: the block runs whole if entered before `limit - span`.
    pub span: u32,
    /// The offset after the ordinary instructions: where the transfer's fetch starts.
    pub after: u32,
    /// A loop's body: the block ends with a conditional branch back to its
    /// own entry with an ordinary slot, and the devices are told each
    /// instruction on its own. A round taken goes round again with no
    /// lookup and no decision of what the transfer was.
    pub looping: bool,
    /// Bytes from its entry to its last instruction (the slot, if it has one).
    pub reach: u32,
    /// The ordinary instructions (see [`Block::ordinary`]), then the control transfer ending the block
    /// if any (else it ends at the length limit or the end of the text and
    /// the next block follows in order), then, if the transfer's delay slot
    /// belongs to the block, the slot's step after a fall-through and after
    /// a taken branch. Empty until the block is built.
    pub steps: Box<[Step]>,
}

impl Block {
    /// Where the block starts when entered at `t0` with a result still in
    /// flight until `drained` (> `t0`): its first step may wait for it (the
    /// block starts later), no other (it would wait mid-block). Steps are in
    /// issue order, so only those issuing before everything has arrived can
    /// wait. None: a later step would wait, so it cannot run whole.
    #[inline(always)]
    pub(crate) fn held_start(&self, board: &Scoreboard, t0: u64, drained: u64) -> Option<u64> {
        let start = t0.max(self.steps.first().map_or(t0, |s| board.ready(s.inst)));
        let early = self.steps.iter().take_while(|s| start + u64::from(s.off) < drained);
        let waits = early.skip(1).any(|s| board.ready(s.inst) > start + u64::from(s.off));
        if waits { None } else { Some(start) }
    }
}

/// The blocks built so far, by entry index, for one [`Code`].
#[derive(Default)]
pub struct Blocks {
    /// Per instruction index: the block entered there (no steps until first entered).
    at: Vec<Block>,
    /// The indices of the blocks built, so that dropping them is not a pass over the whole
    /// text at each store into it (a fuzzed 1 M-instruction text took 10 s for 60,000 cycles).
    built: Vec<usize>,
    /// Bytes in an instruction-cache line (0: no cache, or one where a
    /// step may not skip its fetch: every step fetches).
    line_bytes: u32,
    /// The instruction cache's sets (lines known to hit again: `slice.rs`'s `Ordinary`).
    sets: u32,
    /// The text's generation they were built from.
    generation: u32,
    /// The text's first address.
    base: u32,
    /// Loops marked (see [`Block::looping`]): not where the devices are
    /// told a block's instructions at once.
    rounds: bool,
}

/// A scoreboard of cycles relative to a block's entry, for [`Blocks::build`].
struct Relative<'p> {
    p: &'p Pipeline,
    reg: [u32; 32],
    hilo: u32,
    /// The step whose result each of those waits for (-1: none).
    reg_by: [i32; 32],
    hilo_by: i32,
}

impl Relative<'_> {
    /// The issue offset of `i` fetched at `at` (no earlier than step `after`
    /// allows), as [`crate::timing::Scoreboard::ready`] would give, and the
    /// latest step among those that hold it there.
    fn issue(&self, i: Inst, at: u32, after: i32) -> (u32, i32) {
        let (a, b) = i.sources();
        let hilo = (i.class & Inst::USES_HILO != 0).then_some((self.hilo, self.hilo_by));
        let waits = [(at, after), (self.reg[a as usize & 31], self.reg_by[a as usize & 31]), (self.reg[b as usize & 31], self.reg_by[b as usize & 31])];
        let waits = waits.into_iter().chain(hilo);
        let t = waits.clone().map(|w| w.0).max().unwrap_or(at);
        (t, waits.filter(|w| w.0 == t).map(|w| w.1).max().unwrap_or(after))
    }

    /// As [`crate::timing::Scoreboard::issued`] with no memory stall, for step `k`.
    fn issued(&mut self, i: Inst, t: u32, k: i32) {
        if i.class & Inst::MULT != 0 {
            (self.hilo, self.hilo_by) = (t + self.p.mult_cycles, k);
        } else if i.class & Inst::DIV != 0 {
            (self.hilo, self.hilo_by) = (t + self.p.div_cycles, k);
        } else if i.class & Inst::LOAD != 0 && i.rt != 0 {
            (self.reg[i.rt as usize & 31], self.reg_by[i.rt as usize & 31]) = (t + 1 + self.p.load_use_cycles, k);
        }
    }
}

impl Blocks {
    /// The blocks of `code` under `caches` (if any); `rounds`: see [`Block::looping`].
    pub fn new(code: &Code, caches: Option<HierarchyConfig>, rounds: bool) -> Self {
        // Fetches within a line (and a known line's again: `slice.rs`) are counted, not looked up,
        // where a hit costs nothing and a miss stalls: a fetch that did not stall hit or allocated.
        // (Not so a free miss in a set reserved for another thread.)
        let l1i = caches.filter(|c| c.l1i.hit_cycles == 0 && c.l2.hit_cycles > 0);
        let (line_bytes, sets) = l1i.map_or((0, 0), |c| (c.l1i.line_bytes, c.l1i.sets()));
        let mut b = Blocks { line_bytes, sets, rounds, ..Blocks::default() };
        b.renew(code);
        b
    }

    /// The instruction cache's line size as a shift and its sets (0: no
    /// line's fetch may be skipped), for [`Block::reach`]'s lines.
    pub(crate) fn lines(&self) -> (u32, u32) {
        if self.line_bytes == 0 { (0, 0) } else { (self.line_bytes.trailing_zeros(), self.sets) }
    }

    /// The block entered at `pc`, built if need be; None where `code` has no instruction.
    #[inline(always)]
    pub fn get(&mut self, code: &Code, pc: u32, p: &Pipeline) -> Option<&Block> {
        self.sync(code);
        self.get_synced(code, pc, p)
    }

    /// Drops the blocks if the text changed since they were built.
    #[inline(always)]
    pub(crate) fn sync(&mut self, code: &Code) {
        if self.generation != code.generation() {
            self.renew(code);
        }
    }

    /// [`Blocks::get`] where the text has not changed since the last [`Blocks::sync`].
    #[inline(always)]
    pub(crate) fn get_synced(&mut self, code: &Code, pc: u32, p: &Pipeline) -> Option<&Block> {
        // A misaligned PC's low bits rotate to the top: past the text, built (refused) on the cold path.
        let k = pc.wrapping_sub(self.base).rotate_right(2) as usize;
        match self.at.get(k) {
            Some(b) if !b.steps.is_empty() => Some(&self.at[k]),
            _ => self.build(k, pc, code.insts(), p),
        }
    }

    /// Drops every block: the text changed (or is seen for the first time).
    #[cold]
    fn renew(&mut self, code: &Code) {
        if self.at.len() == code.insts().len() {
            for k in self.built.drain(..) {
                self.at[k] = Block::default();
            }
        } else {
            self.at.clear();
            self.at.resize(code.insts().len(), Block::default());
            self.built.clear();
        }
        self.generation = code.generation();
        self.base = code.base();
    }

    /// Builds the block at text index `first` (`pc`), if `pc` is in the text and aligned.
    #[cold]
    fn build(&mut self, first: usize, pc: u32, insts: &[Inst], p: &Pipeline) -> Option<&Block> {
        if pc & 3 != 0 || first >= insts.len() {
            return None;
        }
        // Whether the instruction `k` places after the entry starts a new line.
        let line = |k: usize| k == 0 || self.line_bytes == 0 || (pc + 4 * k as u32).is_multiple_of(self.line_bytes);
        let mut rel = Relative { p, reg: [0; 32], hilo: 0, reg_by: [-1; 32], hilo_by: -1 };
        // Per step: the latest step among those holding it at its offset (see `Step::resumes`).
        let mut held = Vec::new();
        let mut steps = Vec::new();
        let (mut at, mut span, mut len, mut end, mut after) = (0, 0, 0, None, 0);
        let mut k = first;
        while let Some(&inst) = insts.get(k) {
            if len == MAX_ORDINARY && !inst.op.transfers() {
                break;
            }
            let k_step = steps.len() as i32;
            let (t, h) = rel.issue(inst, at, k_step - 1);
            rel.issued(inst, t, k_step);
            held.push(h);
            let step = Step::new(inst, t, line(len));
            let cond = step.cond;
            steps.push(step);
            (span, len, at, k) = (span.max(t), len + 1, t + 1, k + 1);
            if inst.op.transfers() {
                // A forward branch (a backward one closes a loop: mostly taken) with its ordinary
                // slot: the block goes on past both along the fall-through path (the slot at its
                // offset after a fall-through; if the branch is taken, at its offset after a taken
                // one, no earlier than the branch's penalty).
                let slot = insts.get(k).filter(|s| !s.op.transfers());
                match slot {
                    Some(&s) if cond.inner() && inst.imm > pc + 4 * len as u32 && len < MAX_ORDINARY => {
                        let (u, h) = rel.issue(s, at, k_step);
                        rel.issued(s, u, k_step + 1);
                        held.push(h);
                        steps.push(Step::new(s, u, line(len)));
                        (span, len, at, k) = (span.max(u).max(at + p.branch_taken_cycles), len + 1, u + 1, k + 1);
                    }
                    _ => {
                        end = Some(inst.op);
                        break;
                    }
                }
            }
            after = at;
        }
        let transfer = end.is_some();
        // The slot, if ordinary: its offsets after a fall-through and after a taken branch.
        let slot = end.is_some_and(Op::has_delay_slot) && insts.get(first + len).is_some_and(|s| !s.op.transfers());
        let looping = self.rounds && slot && steps.last().is_some_and(|b: &Step| b.cond.conditional() && b.inst.imm == pc);
        if slot {
            let (inst, transfer) = (insts[first + len], steps.len() as i32 - 1);
            for penalty in [0, p.branch_taken_cycles] {
                let (t, h) = rel.issue(inst, at + penalty, transfer);
                steps.push(Step::new(inst, t, line(len)));
                held.push(h);
                span = span.max(t);
            }
        }
        // A step resumes if every later one is held by it or by a later one.
        let mut least = i32::MAX;
        for (j, s) in steps.iter_mut().enumerate().rev() {
            s.resumes = least >= j as i32;
            least = least.min(held[j]);
        }
        // Its lines, from the entry's to the last instruction's (the slot's, if it has one).
        let reach = 4 * (len + slot as usize - 1) as u32;
        self.at[first] = Block { ordinary: (len - transfer as usize) as u32, span, after, looping, reach, steps: steps.into() };
        self.built.push(first);
        Some(&self.at[first])
    }
}
