//! Blocks (see [`crate::block`]) in a core's turn and in the private
//! stretch after it ([`crate::ahead`]'s `run_turn`), at their precomputed
//! issue cycles on perfect memory.
//!
//! Each step is checked as it comes, at its issue cycle: before the turn
//! ends it may run if the block can run it (plain memory, no device
//! register, nothing that traps, stops or orders memory); from then on only
//! if it is also private ([`private`]) and issues before the limit. The
//! block is left *before* the first step that may not run, with the thread
//! as one instruction at a time would have left it (that instruction
//! fetched, its issue cycle in `ready`), so the general step runs or
//! defers it: every shared access, fault and stop happens where
//! [`crate::System::run`] would make it, at the same cycle. A store that
//! writes the text leaves the block after it (the blocks are stale).

use crate::block::{Blocks, Step};
use crate::bus::{DataBus, Perfect};
use crate::context::Context;
use crate::core::HwThread;
use crate::decode::{Inst, Op};
use crate::device::Devices;
use crate::exec::{Cond, Exit, compute, cond, decide};
use crate::plain;
use crate::timing::Pipeline;
use std::ops::Range;

/// Where a core in `run_turn` may issue what: anything a block can run
/// before `turn`, then private work only, before `limit`: accesses within
/// `range`, and loads within `read_only` (memory no core writes: a store
/// there faults, see [`Bounds::store_into_read_only`]), whose words read the
/// same at any cycle. `read_only` ends below `read_only_end`.
pub(crate) struct Bounds<'r> {
    pub turn: u64,
    pub limit: u64,
    pub range: &'r Range<u32>,
    pub read_only: &'r [Range<u32>],
    pub read_only_end: u32,
}

impl Bounds<'_> {
    /// Whether `i`, issuing at `at` in context `ctx`, is past what the core may issue now.
    #[inline(always)]
    pub(crate) fn past(&self, at: u64, i: Inst, ctx: &Context) -> bool {
        at >= self.turn && (at >= self.limit || !private(i, ctx, self))
    }

    /// The address `i` stores to in context `ctx`, if within `read_only`.
    #[inline(always)]
    pub(crate) fn store_into_read_only(&self, i: Inst, ctx: &Context) -> Option<u32> {
        if i.class & Inst::STORE == 0 {
            return None;
        }
        let ea = ctx.r[i.rs as usize & 31].wrapping_add(i.imm);
        self.read_only(ea).then_some(ea)
    }

    #[inline(always)]
    pub(crate) fn read_only(&self, ea: u32) -> bool {
        ea & !3 < self.read_only_end && self.read_only.iter().any(|r| r.contains(&(ea & !3)))
    }
}

/// Why a step did not go on in its block.
enum Leave {
    /// It did not run: one instruction at a time takes it from here.
    Before,
    /// It ran and wrote the text: the blocks are stale.
    After,
}

/// Runs blocks from thread `th`'s PC (no delay slot pending, nothing
/// fetched) while they may run (see the module's note), from cycle `now`
/// (the thread's cycle; `th.ready` its earliest issue). Returns the
/// thread's new cycle and, if a block was left before a step, that step's
/// instruction, fetched (`th.ready` is when it may issue). Each
/// instruction run is counted in `th.instructions` and reported to the
/// devices' hooks in issue order.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn run<D: Devices>(
    th: &mut HwThread,
    blocks: &mut Blocks,
    bus: &mut DataBus<'_, Perfect, D>,
    p: &Pipeline,
    id: usize,
    mut now: u64,
    b: &Bounds,
) -> (u64, Option<Inst>) {
    blocks.sync(bus.code);
    let generation = bus.code.generation();
    let (mut pc, mut ready) = (th.ctx.pc, th.ready);
    // Leaves before the instruction `inst` at `pc`, next after `npc`, which may issue from `from`.
    macro_rules! before {
        ($pc:expr, $npc:expr, $inst:expr, $from:expr) => {{
            (th.ctx.pc, th.ctx.npc) = ($pc, $npc);
            th.ready = $from.max(th.board.ready($inst));
            return (now, Some($inst));
        }};
    }
    'chain: loop {
        let mut t0 = ready.max(now);
        let Some(blk) = blocks.get_synced(bus.code, pc, p) else { break };
        // A result in flight may hold back the first step (the block starts later), no other.
        let drained = th.board.drained();
        if drained > t0 {
            let Some(start) = blk.held_start(&th.board, t0, drained) else { break };
            t0 = start;
        }
        let (body, end) = blk.steps.split_at(blk.ordinary as usize);
        let entry = pc;
        for (j, s) in body.iter().enumerate() {
            let at = t0 + u64::from(s.off);
            #[cfg(feature = "store-log")]
            let probe = crate::ahead::store_log::probe(&s.inst, &th.ctx, b);
            let left = one(th, s, at, bus, p, generation, b);
            #[cfg(feature = "store-log")]
            if !matches!(left, Err(Leave::Before)) {
                crate::ahead::store_log::log(probe, id, at, th.instructions + j as u64, &th.ctx, s.inst.rt, bus.mem);
            }
            let ran = match left {
                Ok(None) => continue,
                Ok(Some(_)) | Err(Leave::After) => j + 1,
                Err(Leave::Before) => j,
            };
            let last = pc.wrapping_add(4 * j as u32);
            if ran > 0 {
                bus.devices.issued_block(id, entry, t0, &body[..ran]);
                th.instructions += ran as u64;
                ready = t0 + u64::from(body[ran - 1].off) + 1;
                now = ready;
            }
            match left {
                Err(Leave::Before) => before!(last, last.wrapping_add(4), s.inst, ready.max(now)),
                Err(Leave::After) => {
                    (th.ctx.pc, th.ctx.npc, th.ready) = (last.wrapping_add(4), last.wrapping_add(8), ready);
                    return (now, None);
                }
                Ok(Some(target)) => {
                    // A branch within the block taken: its slot (the next step), then the target.
                    let slot = &body[j + 1];
                    let (spc, from) = (last.wrapping_add(4), at + 1 + u64::from(p.branch_taken_cycles));
                    let at = t0 + u64::from(slot.off.max(s.off + 1 + p.branch_taken_cycles));
                    match self::slot(th, slot, spc, target, at, bus, p, id, generation, b) {
                        Some(()) if bus.code.generation() == generation => (pc, ready, now) = (target, at + 1, at + 1),
                        Some(()) => return (at + 1, None),
                        None => before!(spc, target, slot.inst, from),
                    }
                    continue 'chain;
                }
                Ok(None) => unreachable!(),
            }
        }
        th.instructions += body.len() as u64;
        pc = pc.wrapping_add(4 * body.len() as u32);
        let Some((last, slot)) = end.split_first() else {
            bus.devices.issued_block(id, entry, t0, body);
            (ready, now) = (t0 + u64::from(blk.after), t0 + u64::from(blk.after));
            continue;
        };
        // The transfer (never a memory access), decided before its slot runs.
        let at = t0 + u64::from(last.off);
        // A transfer is private unless it traps or stops (a `Cond` never does).
        let ordinary = last.cond != Cond::Other || ordinary(last.inst.op);
        let exit = if (at >= b.turn && at >= b.limit) || !ordinary {
            None
        } else {
            cond(&th.ctx, last.cond, last.inst).or_else(|| decide(&mut th.ctx, last.inst, pc).ok())
        };
        let Some(exit) = exit else {
            let from = t0 + u64::from(blk.after);
            if !body.is_empty() {
                bus.devices.issued_block(id, entry, t0, body);
                now = from;
            }
            before!(pc, pc.wrapping_add(4), last.inst, from)
        };
        bus.devices.issued_block(id, entry, t0, &blk.steps[..=body.len()]);
        th.instructions += 1;
        let (s, next, from) = match exit {
            Exit::Taken(target) => (slot.get(1), target, at + 1 + u64::from(p.branch_taken_cycles)),
            Exit::NotTaken => (slot.first(), pc.wrapping_add(8), at + 1),
            Exit::Annulled => {
                pc = pc.wrapping_add(8);
                (ready, now) = (at + 2, at + 1);
                continue;
            }
            Exit::Syscall => unreachable!("a syscall is not ordinary"),
        };
        pc = pc.wrapping_add(4);
        now = at + 1;
        let Some(s) = s else {
            // The slot is not ordinary: it goes on alone.
            (th.ctx.pc, th.ctx.npc, th.ready) = (pc, next, from);
            return (now, None);
        };
        let at = t0 + u64::from(s.off);
        match self::slot(th, s, pc, next, at, bus, p, id, generation, b) {
            Some(()) if bus.code.generation() == generation => (pc, ready, now) = (next, at + 1, at + 1),
            Some(()) => return (at + 1, None),
            None => before!(pc, next, s.inst, from),
        }
    }
    (th.ctx.pc, th.ctx.npc, th.ready) = (pc, pc.wrapping_add(4), ready);
    (now, None)
}

/// Runs the delay slot `s` at `pc` (then `next`) at cycle `at`, if it may
/// run: reported, counted, and the context's PC moved past it. None: not run.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn slot<D: Devices>(
    th: &mut HwThread,
    s: &Step,
    pc: u32,
    next: u32,
    at: u64,
    bus: &mut DataBus<'_, Perfect, D>,
    p: &Pipeline,
    id: usize,
    generation: u32,
    b: &Bounds,
) -> Option<()> {
    #[cfg(feature = "store-log")]
    let probe = crate::ahead::store_log::probe(&s.inst, &th.ctx, b);
    if matches!(one(th, s, at, bus, p, generation, b), Err(Leave::Before)) {
        return None;
    }
    #[cfg(feature = "store-log")]
    crate::ahead::store_log::log(probe, id, at, th.instructions, &th.ctx, s.inst.rt, bus.mem);
    bus.devices.issued(id, pc, at);
    th.instructions += 1;
    (th.ctx.pc, th.ctx.npc, th.ready) = (next, next.wrapping_add(4), at + 1);
    Some(())
}

/// Runs step `s` (not the block's closing transfer) at cycle `at`, if the
/// block can and `b` allows: Some(target) for a branch within the block
/// taken (its slot not yet run).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn one<D: Devices>(
    th: &mut HwThread,
    s: &Step,
    at: u64,
    bus: &mut DataBus<'_, Perfect, D>,
    p: &Pipeline,
    generation: u32,
    b: &Bounds,
) -> Result<Option<u32>, Leave> {
    let inst = s.inst;
    let after = at >= b.turn;
    if after && at >= b.limit {
        return Err(Leave::Before);
    }
    // A simple step is private (no memory, no fault).
    if s.simple.run(&mut th.ctx, &inst) {
        return Ok(None);
    }
    if after && !private(inst, &th.ctx, b) {
        return Err(Leave::Before);
    }
    if inst.class & Inst::MEMORY == 0 {
        if let Some(exit) = cond(&th.ctx, s.cond, inst) {
            return Ok(if let Exit::Taken(target) = exit { Some(target) } else { None });
        }
        if !ordinary(inst.op) {
            return Err(Leave::Before);
        }
        // A fault (an overflow, a trap) writes nothing: the general step makes it again.
        compute(&mut th.ctx, inst).map_err(|_| Leave::Before)?;
        th.board.issued(p, inst, at, at + 1);
        return Ok(None);
    }
    // A store into read-only memory faults in the general step.
    if b.store_into_read_only(inst, &th.ctx).is_some() {
        return Err(Leave::Before);
    }
    // Plain memory only; no stall on perfect memory, so the block's offsets hold.
    plain::access(&mut th.ctx, &inst, bus).ok_or(Leave::Before)?;
    if inst.class & Inst::STORE == 0 {
        th.board.loaded(p, inst.rt, at + 1);
    } else if bus.code.generation() != generation {
        return Err(Leave::After);
    }
    Ok(None)
}

/// Whether `i`, next for a thread in context `ctx`, is invisible to other
/// cores: a memory access only if aligned and within `b.range` (or a plain
/// load within `b.read_only`), no device register, and nothing that traps,
/// stops or orders memory.
#[inline(always)]
fn private(i: Inst, ctx: &Context, b: &Bounds) -> bool {
    use Op::*;
    if i.class & Inst::MEMORY != 0 {
        let ea = ctx.r[i.rs as usize & 31].wrapping_add(i.imm);
        let aligned = match i.op {
            Lw | Sw | Ll | Sc => ea & 3 == 0,
            Lh | Lhu | Sh => ea & 1 == 0,
            _ => true,
        };
        return aligned && (b.range.contains(&(ea & !3)) || (matches!(i.op, Lw | Lh | Lhu | Lb | Lbu) && b.read_only(ea)));
    }
    ordinary(i.op)
}

/// Whether a non-memory operation neither traps, stops nor orders memory.
#[inline(always)]
fn ordinary(op: Op) -> bool {
    use Op::*;
    !matches!(
        op,
        Sync | CacheOp | Syscall | Break | Unsupported | Add | Sub | Addi | Tge | Tgeu | Tlt | Tltu | Teq | Tne | Tgei | Tgeiu | Tlti | Tltiu | Teqi | Tnei
    )
}
