//! One hardware thread's slice: the hot path of [`System::run`]. Blocks
//! (see [`crate::block`]) run whole at their precomputed issue cycles when
//! no result still in flight holds back a step but the first (with caches:
//! none in flight) and they fit before the limit; a loop's block (see
//! [`crate::block::Block::looping`]) goes round again with no lookup while
//! that holds (with caches, once its lines are known to hit); any other
//! block, one that goes back to its own entry too, is looked up again.
//! Anything else goes one instruction at a time, with the same result. Either way
//! each instruction that issues is reported once to [`Devices::issued`],
//! after it executes, with its PC and issue cycle (or, with
//! [`Devices::BLOCK_HOOK`], a block's instructions at once to
//! [`Devices::issued_block`]).

use crate::block::Step;
use crate::bus::{DataBus, Timing, Who};
use crate::core::HwThread;
use crate::decode::Inst;
use crate::device::Devices;
use crate::error::Fault;
use crate::exec::{Cond, Exit, Flow, access, compute, cond, decide, taken};
use crate::plain;
use crate::system::{Stop, System, step};
use crate::timing::{Pipeline, Scoreboard};

impl<D: Devices> System<D> {
    /// Runs hardware thread `t`, the only one of core `k` that may issue
    /// before `limit`, until the core's cycle reaches `limit` or the thread
    /// stops: the hot path.
    /// A block (see [`crate::block`]) that fits before the limit, entered
    /// with no result in flight that a step but the first waits for (with
    /// caches: none in flight), runs
    /// at its precomputed issue cycles (from the first step's), its body
    /// with no PC kept; anything else (such a result, a stall, a pending
    /// delay slot, the limit near) goes one instruction at a time, with the
    /// same result.
    pub(crate) fn run_thread<T: Timing>(&mut self, k: usize, t: usize, limit: u64, timing: &mut T) -> Option<Stop> {
        let id = self.thread_id(k, t);
        let topology = ((self.cores.len() as u32) << 8) | self.threads as u32;
        let (pipeline, shared) = (self.pipeline, self.threads > 1);
        let core = &mut self.cores[k];
        let th = &mut core.threads[t];
        if !th.active {
            return None;
        }
        let who = Who { core: k, thread: t, id, now: core.now, instret: 0, topology };
        // One bus for the whole slice: building it per instruction costs more than the instruction.
        let mut bus = DataBus::new(&mut self.mem, &mut self.code, &mut self.links, timing, &mut self.devices, who);
        let blocks = &mut self.blocks;
        let (mut now, mut ready, mut pending) = (core.now, th.ready, th.next.take());
        let mut instret = th.instructions;
        // A block did not fit before the limit: the few cycles left go one instruction at a
        // time (looking up the next blocks, which seldom fit either, costs more than it saves).
        let mut near = false;
        let end = 'run: loop {
            // Blocks one after another, with the PC in a local, while each may run whole.
            'blocks: {
                if !near && pending.is_none() && th.ctx.npc == th.ctx.pc.wrapping_add(4) {
                    let mut pc = th.ctx.pc;
                    // Only a store leaves the chain having written the text (see `Ordinary::timed`).
                    blocks.sync(bus.code);
                    let (shift, sets) = blocks.lines();
                    let generation = bus.code.generation();
                    let mut run = Ordinary { core: k, id, pipeline: &pipeline, generation, warm: false, shift, sets, lo: u32::MAX, hi: 0 };
                    // The later of `ready` and `now`, kept as they change: where each block starts.
                    let mut t0 = ready.max(now);
                    // Each instruction the blocks fetch is counted once, when the run of blocks ends.
                    if T::CACHED {
                        bus.chain = Some(instret);
                    }
                    // Where the run leaves a block early: why, the instruction, its
                    // issue cycle and where its fetch started. The context's PC and
                    // next PC are then the instruction's, as if it were to run next.
                    let left = 'chain: loop {
                        // A result still in flight (a load in the last slot, a miss's): only the
                        // block's first step may wait for it (`Block::held_start`).
                        let (mut start, drained) = (t0, th.board.drained());
                        let Some(b) = blocks.get_synced(bus.code, pc, &pipeline) else { break 'chain None };
                        if drained > t0 {
                            let Some(s) = b.held_start(&th.board, t0, drained) else { break 'chain None };
                            start = s;
                        }
                        let latest = limit.saturating_sub(u64::from(b.span));
                        if start >= latest {
                            near = true;
                            break 'chain None;
                        }
                        // The first step's fetch starts at `t0`, before it waits (with caches it may stall).
                        let mut fetch0 = t0;
                        t0 = start;
                        let (body, end) = b.steps.split_at(b.ordinary as usize);
                        let entry = pc;
                        run.warm = T::CACHED && run.covers(pc, b.reach);
                        {
                            // A loop's rounds out of line, their values in registers (with caches only
                            // warm ones: their lines known, they fetch nothing).
                            let ran = if (!T::CACHED || run.warm) && !D::BLOCK_HOOK && b.looping {
                                let mut r = Round { t0, instret, fetch0 };
                                let how = if matches!(end[0].cond, Cond::Bne | Cond::Bnel) {
                                    run.rounds::<true, T, D>(th, body, end, entry, latest, &mut r, &mut bus)
                                } else {
                                    run.rounds::<false, T, D>(th, body, end, entry, latest, &mut r, &mut bus)
                                };
                                if r.instret != instret {
                                    (ready, now) = (r.fetch0, r.fetch0);
                                }
                                (t0, instret, fetch0) = (r.t0, r.instret, r.fetch0);
                                match how {
                                    Rounds::Left(j, leave) => Err((j, leave)),
                                    Rounds::Out => Ok(()),
                                    Rounds::Again => continue 'chain,
                                    Rounds::Slot(leave, at, from) => {
                                        pc = entry.wrapping_add(4 * (body.len() as u32 + 1));
                                        instret += body.len() as u64 + 1;
                                        (th.ctx.pc, th.ctx.npc) = (pc, entry);
                                        break 'chain Some((leave, end[2].inst, at, from));
                                    }
                                }
                            } else if T::CACHED && run.warm {
                                // A warm round's body makes no fetch: a copy of its loop without the test.
                                run.resuming::<false, false, T, D>(th, body, &mut t0, pc, || instret, latest, &mut bus)
                            } else {
                                run.resuming::<true, false, T, D>(th, body, &mut t0, pc, || instret, latest, &mut bus)
                            };
                            if let Err((j, leave)) = ran {
                                if let Leave::Taken(target) = leave {
                                    // A branch within the block taken: its slot, the next step, at its
                                    // offset after a taken branch, then the target.
                                    let (last, s) = (&body[j], &body[j + 1]);
                                    if D::BLOCK_HOOK {
                                        bus.devices.issued_block(id, pc, t0, &body[..=j]);
                                    }
                                    (pc, instret) = (pc.wrapping_add(4 * j as u32), instret + j as u64 + 1);
                                    let (penalty, at) = (pipeline.branch_taken_cycles, t0 + u64::from(last.off));
                                    if !D::BLOCK_HOOK {
                                        bus.devices.issued(id, pc, at);
                                    }
                                    let from = at + 1 + u64::from(penalty);
                                    pc = pc.wrapping_add(4);
                                    let at = t0 + u64::from(s.off.max(last.off + 1 + penalty));
                                    if let Err(leave) = run.step::<true, T, D>(th, s, at, pc, || instret, &mut bus) {
                                        (th.ctx.pc, th.ctx.npc) = (pc, target);
                                        break 'chain Some((leave, s.inst, at, from));
                                    }
                                    run.fetched::<T>(entry, pc);
                                    (pc, instret) = (target, instret + 1);
                                    (ready, now, t0) = (at + 1, at + 1, at + 1);
                                    continue 'chain;
                                }
                                if D::BLOCK_HOOK {
                                    // The steps before the leave, and the leaving one if it ran.
                                    let ran = j + usize::from(matches!(leave, Leave::After { .. }));
                                    bus.devices.issued_block(id, pc, t0, &body[..ran]);
                                }
                                if T::CACHED
                                    && let Leave::After { stall, stop: false } = leave
                                    && stall != 0
                                    && bus.code.generation() == run.generation
                                {
                                    // An access that stalled (a miss, or a device's cycles: no built-in register,
                                    // which could change the caches), the text as it was: on at the next
                                    // instruction, its result in flight.
                                    let at = t0 + u64::from(body[j].off);
                                    run.fetched::<T>(entry, pc.wrapping_add(4 * j as u32));
                                    (pc, instret) = (pc.wrapping_add(4 * (j as u32 + 1)), instret + j as u64 + 1);
                                    (ready, now, t0) = (at + 1 + u64::from(stall), at + 1, at + 1 + u64::from(stall));
                                    continue 'chain;
                                }
                                let s = &body[j];
                                let from = body[..j].last().map_or(fetch0, |p| t0 + u64::from(p.off) + 1);
                                (pc, instret) = (pc.wrapping_add(4 * j as u32), instret + j as u64);
                                (th.ctx.pc, th.ctx.npc) = (pc, pc.wrapping_add(4));
                                break 'chain Some((leave, s.inst, t0 + u64::from(s.off), from));
                            }
                            (pc, instret) = (pc.wrapping_add(4 * body.len() as u32), instret + body.len() as u64);
                            let mut from = t0 + u64::from(b.after);
                            let Some((last, slot)) = end.split_first() else {
                                if D::BLOCK_HOOK {
                                    bus.devices.issued_block(id, entry, t0, body);
                                }
                                run.fetched::<T>(entry, pc.wrapping_sub(4));
                                (ready, now, t0) = (from, from, from);
                                continue 'chain;
                            };
                            // The transfer (never a memory access), decided before its slot runs.
                            let at = t0 + u64::from(last.off);
                            let f = run.fetch(last, || pc, &mut bus);
                            let exit = if f != 0 {
                                // (The block's first fetch if its body is empty.)
                                if body.is_empty() {
                                    from = fetch0;
                                }
                                Err(Leave::Fetch(f))
                            } else if let Some(exit) = cond(&th.ctx, last.cond, last.inst) {
                                Ok(exit)
                            } else {
                                decide(&mut th.ctx, last.inst, pc).map_err(Leave::Fault)
                            };
                            let exit = match exit {
                                Ok(exit) => exit,
                                Err(leave) => {
                                    if D::BLOCK_HOOK {
                                        bus.devices.issued_block(id, entry, t0, body);
                                    }
                                    (th.ctx.pc, th.ctx.npc) = (pc, pc.wrapping_add(4));
                                    break 'chain Some((leave, last.inst, at, from));
                                }
                            };
                            if D::BLOCK_HOOK {
                                bus.devices.issued_block(id, entry, t0, &b.steps[..=body.len()]);
                            } else {
                                bus.devices.issued(id, pc, at);
                            }
                            instret += 1;
                            let (s, next, from) = match exit {
                                Exit::Taken(target) => (slot.get(1), target, at + 1 + u64::from(pipeline.branch_taken_cycles)),
                                Exit::NotTaken => (slot.first(), pc.wrapping_add(8), at + 1),
                                Exit::Annulled => {
                                    run.fetched::<T>(entry, pc);
                                    pc = pc.wrapping_add(8);
                                    (ready, now, t0) = (at + 2, at + 1, at + 2);
                                    continue 'chain;
                                }
                                Exit::Syscall => {
                                    (th.ctx.pc, th.ctx.npc) = (pc.wrapping_add(4), pc.wrapping_add(8));
                                    (ready, now) = (at + 1, at + 1);
                                    bus.fetched(instret);
                                    break 'run Ok(Some(Stop::Syscall { core: k, thread: t }));
                                }
                            };
                            // Then its delay slot, at its offset after a fall-through or a taken branch.
                            pc = pc.wrapping_add(4);
                            let Some(s) = s else {
                                // The slot is not ordinary: it goes on alone.
                                (th.ctx.pc, th.ctx.npc) = (pc, next);
                                (ready, now) = (from, at + 1);
                                bus.fetched(instret);
                                continue 'run;
                            };
                            let at = t0 + u64::from(s.off);
                            if let Err(leave) = run.step::<true, T, D>(th, s, at, pc, || instret, &mut bus) {
                                (th.ctx.pc, th.ctx.npc) = (pc, next);
                                break 'chain Some((leave, s.inst, at, from));
                            }
                            run.fetched::<T>(entry, pc);
                            instret += 1;
                            pc = next;
                            (ready, now, t0) = (at + 1, at + 1, at + 1);
                            continue 'chain;
                        }
                    };
                    // A block left at an instruction has fetched it.
                    bus.fetched(instret + u64::from(left.is_some()));
                    let Some((leave, inst, at, from)) = left else {
                        // No block may run whole here: one instruction.
                        (th.ctx.pc, th.ctx.npc) = (pc, pc.wrapping_add(4));
                        break 'blocks;
                    };
                    match leave {
                        Leave::Fetch(f) => (ready, now, pending) = (fetched(&th.board, from, f, inst), from, Some(inst)),
                        Leave::Fault(f) => {
                            (ready, now) = (at, at);
                            break 'run Err(Some((th.ctx.pc, f, std::mem::take(&mut bus.device_error))));
                        }
                        Leave::After { stall, stop } => {
                            instret += 1;
                            (th.ctx.pc, th.ctx.npc) = (th.ctx.npc, th.ctx.npc.wrapping_add(4));
                            (ready, now) = (at + 1 + u64::from(stall), at + 1);
                            if stop {
                                break 'run Ok(Some(Stop::Device { core: k, thread: t }));
                            }
                        }
                        Leave::Taken(_) => unreachable!("the chain runs a taken branch's slot itself"),
                    }
                    continue 'run;
                }
            }
            let t0 = ready.max(now);
            // One instruction. A core of several threads fetches nothing at the limit (see `crate::interleave`).
            if shared && now >= limit && pending.is_none() {
                break Ok(None);
            }
            let inst = match pending.take() {
                Some(i) => i,
                None => {
                    let pc = th.ctx.pc;
                    let Some(i) = bus.code.get(pc) else {
                        break Err(None);
                    };
                    let fetched = t0 + u64::from(bus.timing.fetch(k, id, pc));
                    // Nothing in flight by then (the common case): no register to look up.
                    ready = if fetched >= th.board.drained() { fetched } else { fetched.max(th.board.ready(i)) };
                    i
                }
            };
            now = now.max(ready);
            if now >= limit {
                th.next = Some(inst);
                // A core of several threads stops at the limit, one of one where it would issue next.
                if shared {
                    now = limit;
                }
                break Ok(None);
            }
            let pc = th.ctx.pc;
            (bus.who.now, bus.who.instret, bus.stall) = (now, instret, 0);
            let flow = match alone(th, inst, &mut bus, &pipeline) {
                Ok((f, r)) => {
                    ready = r;
                    f
                }
                Err(f) => break Err(Some((pc, f, std::mem::take(&mut bus.device_error)))),
            };
            (instret, now) = (instret + 1, now + 1);
            if flow == Flow::Syscall {
                break Ok(Some(Stop::Syscall { core: k, thread: t }));
            }
            if std::mem::take(&mut bus.mmio) && bus.devices.take_stop() {
                break Ok(Some(Stop::Device { core: k, thread: t }));
            }
        };
        bus.settle();
        th.ready = ready;
        // One instruction issued per busy cycle.
        let issued = instret - th.instructions;
        th.instructions = instret;
        core.issued_alone(t, issued);
        core.now = now;
        match end {
            Ok(stop) => stop,
            // Fetch outside the text (or the return address): the general path reports it.
            Err(None) => self.prepare(k, t, timing),
            Err(Some((pc, f, msg))) => Some(self.fault(k, t, pc, f, &msg)),
        }
    }
}

/// [`step`] out of line: the one-instruction path's registers apart from the blocks'.
#[inline(never)]
fn alone<T: Timing, D: Devices>(th: &mut HwThread, inst: Inst, bus: &mut DataBus<'_, T, D>, p: &Pipeline) -> Result<(Flow, u64), Fault> {
    step(th, inst, bus, p)
}

/// The count `k` rounds of `each` instructions after `base` (see [`Ordinary::rounds`]).
#[cold]
#[inline(never)]
fn counted(base: u64, k: u64, each: u64) -> u64 {
    base + k * each
}

/// When an instruction fetched from `from` with `stall` cycles may issue.
#[inline(always)]
fn fetched(board: &Scoreboard, from: u64, stall: u32, inst: Inst) -> u64 {
    (from + u64::from(stall)).max(board.ready(inst))
}

/// Why a block's run stops before its end.
enum Leave {
    /// The instruction's fetch stalls this many cycles: it goes on alone.
    Fetch(u32),
    /// The instruction faulted.
    Fault(Fault),
    /// The instruction ran, but its access stalled (cycles), wrote the text
    /// or (`stop`) asked the caller to act: on one instruction at a time.
    After { stall: u32, stop: bool },
    /// A branch within the block (see [`crate::exec::Cond::inner`]) was
    /// decided taken, to this address: the block ends after its slot.
    Taken(u32),
}

/// Where [`Ordinary::rounds`] is: the cycle its round's body runs from (the
/// round's start, moved by any stall it went on after), the count before the
/// round, and where the round's first fetch started (the last round's end).
struct Round {
    t0: u64,
    instret: u64,
    fetch0: u64,
}

/// How [`Ordinary::rounds`] stopped.
enum Rounds {
    /// The body left at this step (see [`Ordinary::body`]).
    Left(usize, Leave),
    /// The body ran and the transfer does not go round again.
    Out,
    /// The round's slot left: why, its issue cycle and where its fetch started.
    Slot(Leave, u64, u64),
    /// A round ran, and the next may not run whole from the entry.
    Again,
}

/// What a block's ordinary instructions share.
struct Ordinary<'p> {
    core: usize,
    id: usize,
    pipeline: &'p Pipeline,
    /// The text's generation when the block was entered.
    generation: u32,
    /// The block's fetches would hit with nothing changed but the count: none made.
    /// Its lines are among those known to be their sets' most recently used (`lo..=hi`).
    warm: bool,
    /// The instruction cache's line size as a shift, and its sets (0: no line is known).
    shift: u32,
    sets: u32,
    /// Lines of the instruction cache (addresses shifted) each its set's most recently
    /// used since this run of blocks fetched it: consecutive ones, no more than the sets
    /// (each in a set of its own), so that fetching one changes none of the others. Only
    /// this thread fetches while the run lasts, and a fetch that did not stall hit (see
    /// [`crate::block::Blocks::new`]). Empty when `lo > hi`.
    lo: u32,
    hi: u32,
}

impl Ordinary<'_> {
    /// Whether the lines of a block entered at `pc` reaching `reach` bytes are all known.
    #[inline(always)]
    fn covers(&self, pc: u32, reach: u32) -> bool {
        self.lo <= pc >> self.shift && pc.wrapping_add(reach) >> self.shift <= self.hi
    }

    /// A block entered at `entry` ran to `last` (its instructions in between
    /// fetched, none stalling) unless it ran warm: their lines join the known ones.
    #[inline(always)]
    fn fetched<T: Timing>(&mut self, entry: u32, last: u32) {
        if T::CACHED && !self.warm {
            self.join(entry >> self.shift, last >> self.shift);
        }
    }

    /// [`Ordinary::fetched`] for lines `a..=z`: with the known ones if together they are
    /// consecutive and no more than the sets, else alone (if no more than the sets).
    fn join(&mut self, a: u32, z: u32) {
        let (lo, hi) = if self.lo <= z + 1 && a <= self.hi + 1 { (self.lo.min(a), self.hi.max(z)) } else { (a, z) };
        (self.lo, self.hi) = if hi - lo < self.sets {
            (lo, hi)
        } else if z - a < self.sets {
            (a, z)
        } else {
            (u32::MAX, 0)
        };
    }

    /// Runs the rounds of a loop's block (see [`crate::block::Block::looping`]) entered at
    /// `entry`, `body` then `end` (the branch and its two slots), on perfect
    /// memory with each instruction told to the devices, as the chain would
    /// one after another: while the branch goes back to the entry and the
    /// next round may run whole (nothing in flight, before `latest`). Out of
    /// line, so that a round's few values stay in registers. `BNE`: the
    /// branch is a `bne` or `bnel` (the commonest), tested with no jump table
    /// (a `bnel` goes round as a `bne`: only its fall-through differs).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn rounds<const BNE: bool, T: Timing, D: Devices>(
        &self,
        th: &mut HwThread,
        body: &[Step],
        end: &[Step],
        entry: u32,
        latest: u64,
        r: &mut Round,
        bus: &mut DataBus<'_, T, D>,
    ) -> Rounds {
        let (last, slot, n) = (&end[0], &end[2], body.len() as u64);
        // `fetch0`: where the round started (a stall within it may move `t0`).
        // Rounds run, `k`: the count before the round is found from it only where
        // asked for (out of line, so that it is not computed ahead in the loop).
        let (mut t0, mut k, mut fetch0, each, base) = (r.t0, 0, r.fetch0, n + 2, r.instret);
        let how = loop {
            let instret = || counted(if T::CACHED { r.instret } else { base }, k, each);
            if let Err((j, leave)) = self.resuming::<false, true, T, D>(th, body, &mut t0, entry, instret, latest, bus) {
                break Rounds::Left(j, leave);
            }
            if !taken(&th.ctx, if BNE { Cond::Bne } else { last.cond }, last.inst) {
                break Rounds::Out;
            }
            let (pc, taken_at) = (entry.wrapping_add(4 * n as u32), t0 + u64::from(last.off));
            bus.devices.issued(self.id, pc, taken_at);
            let at = t0 + u64::from(slot.off);
            if let Err(leave) = self.step::<false, T, D>(th, slot, at, pc.wrapping_add(4), || instret() + n + 1, bus) {
                // Its fetch started after the branch's penalty.
                break Rounds::Slot(leave, at, taken_at + 1 + u64::from(self.pipeline.branch_taken_cycles));
            }
            (t0, k) = (at + 1, k + 1);
            if T::CACHED {
                fetch0 = t0;
            }
            if th.board.drained() > t0 || t0 >= latest {
                break Rounds::Again;
            }
        };
        // Without caches nothing moves `t0` within a round: the last round ran from it, if one ran.
        if !T::CACHED && k != 0 {
            fetch0 = t0;
        }
        (r.t0, r.instret, r.fetch0) = (t0, base + k * each, fetch0);
        how
    }

    /// [`Ordinary::body`] from `t0`: with caches, on past a step whose access
    /// stalled where the stall moves every later step as much (see
    /// [`Step::resumes`]), `t0` moved by the stall, while before `latest`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn resuming<const FETCH: bool, const APART: bool, T: Timing, D: Devices>(
        &self,
        th: &mut HwThread,
        body: &[Step],
        t0: &mut u64,
        pc: u32,
        instret: impl Fn() -> u64 + Copy,
        latest: u64,
        bus: &mut DataBus<'_, T, D>,
    ) -> Result<(), (usize, Leave)> {
        // Where the body goes on from.
        let mut k0 = 0;
        loop {
            let (rest, at_pc, at_n) = (&body[k0..], pc.wrapping_add(4 * k0 as u32), move || instret() + k0 as u64);
            let r = self.body::<FETCH, APART, T, D>(th, rest, *t0, at_pc, at_n, bus);
            let r = if T::CACHED { r.map_err(|(a, leave)| ((a - rest.as_ptr().addr()) / size_of::<Step>(), leave)) } else { r };
            match r {
                Err((j, Leave::After { stall, stop: false }))
                    if T::CACHED
                        && !D::BLOCK_HOOK
                        && stall != 0
                        && rest[j].resumes
                        && bus.code.generation() == self.generation
                        && *t0 + u64::from(stall) < latest =>
                {
                    (*t0, k0) = (*t0 + u64::from(stall), k0 + j + 1);
                }
                r => return r.map_err(|(j, leave)| (k0 + j, leave)),
            }
        }
    }

    /// Runs a block's body (`pc` is its first instruction's, `instret` the
    /// count before it): on an early leave, the step it left at (with caches
    /// its address, else its index).
    /// With [`Devices::BLOCK_HOOK`] the caller reports its instructions.
    /// `FETCH`: its steps that start a line fetch it (false in a warm round);
    /// `APART`: the rarer steps by [`Ordinary::apart`].
    #[inline(always)]
    fn body<const FETCH: bool, const APART: bool, T: Timing, D: Devices>(
        &self,
        th: &mut HwThread,
        body: &[Step],
        t0: u64,
        pc: u32,
        instret: impl Fn() -> u64 + Copy,
        bus: &mut DataBus<'_, T, D>,
    ) -> Result<(), (usize, Leave)> {
        let each = !D::BLOCK_HOOK;
        // A step's index from its address: no counter carried through the loop for the rare uses.
        let index = |s: &Step| (std::ptr::from_ref(s).addr() - body.as_ptr().addr()) / size_of::<Step>();
        // On a leave with caches, the step's address: its index is found by the caller (computed
        // here, LLVM finds it ahead of every step's access, two instructions a step).
        let addr = |s: &Step| if T::CACHED { std::ptr::from_ref(s).addr() } else { index(s) };
        let first = pc;
        for s in body {
            let pc = || pc.wrapping_add(4 * index(s) as u32);
            let f = if FETCH { self.line(s, pc, bus) } else { 0 };
            if f != 0 {
                return Err((addr(s), Leave::Fetch(f)));
            }
            let at = t0 + u64::from(s.off);
            // Most instructions leave nothing in flight and cannot fault (the cycle only for the device's hook).
            if s.simple.run(&mut th.ctx, &s.inst) {
                if each {
                    bus.devices.issued(self.id, pc(), at);
                }
                continue;
            }
            // (A branch within the block not taken, too: without caches, where it costs less.)
            if !T::CACHED && (plain::whole(s.plain, th, s, at, bus, self.pipeline) || (s.cond.inner() && !taken(&th.ctx, s.cond, s.inst))) {
                if each {
                    bus.devices.issued(self.id, pc(), at);
                }
                continue;
            }
            if APART && !T::CACHED {
                self.apart(th, body, s, t0, first, instret(), bus, each)?;
            } else {
                self.rest(th, s, at, pc(), || instret() + index(s) as u64, bus, each).map_err(|leave| (addr(s), leave))?;
            }
        }
        Ok(())
    }

    /// Runs body step `s` (at `pc`, issued at `at`) that is neither
    /// [`crate::exec::Simple`] nor, on perfect memory, plain nor a branch
    /// within the block not taken; `instret`: the count before it, asked
    /// for only on the general path.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn rest<T: Timing, D: Devices>(
        &self,
        th: &mut HwThread,
        s: &Step,
        at: u64,
        pc: u32,
        instret: impl FnOnce() -> u64,
        bus: &mut DataBus<'_, T, D>,
        each: bool,
    ) -> Result<(), Leave> {
        if s.inst.class == 0 {
            // A branch within the block (see `Cond::inner`): on along its fall-through path, or out.
            if let Some(exit) = cond(&th.ctx, s.cond, s.inst) {
                if let Exit::Taken(target) = exit {
                    return Err(Leave::Taken(target));
                }
                if each {
                    bus.devices.issued(self.id, pc, at);
                }
                return Ok(());
            }
            compute(&mut th.ctx, s.inst).map_err(Leave::Fault)?;
            if each {
                bus.devices.issued(self.id, pc, at);
            }
            return Ok(());
        }
        self.timed(th, s, at, pc, instret, bus, each)
    }

    /// [`Ordinary::rest`] out of line, for [`Ordinary::rounds`]: step `s` of
    /// `body` run from `t0` at `pc` with `instret` before it (on a leave, with
    /// its index). Its index, issue cycle and address are found here, so that
    /// the caller keeps nothing of them.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn apart<T: Timing, D: Devices>(
        &self,
        th: &mut HwThread,
        body: &[Step],
        s: &Step,
        t0: u64,
        pc: u32,
        instret: u64,
        bus: &mut DataBus<'_, T, D>,
        each: bool,
    ) -> Result<(), (usize, Leave)> {
        let j = (std::ptr::from_ref(s).addr() - body.as_ptr().addr()) / size_of::<Step>();
        self.rest(th, s, t0 + u64::from(s.off), pc.wrapping_add(4 * j as u32), || instret + j as u64, bus, each).map_err(|leave| (j, leave))
    }

    /// Stall cycles of the fetch of step `s` at `pc()`: none if it hits the
    /// line of the fetch before it. Counted in [`DataBus::hits`] when the
    /// run of blocks ends (see [`DataBus::fetched`]). Only a step that
    /// starts a line fetches, so only it asks for its address.
    #[inline(always)]
    fn fetch<T: Timing, D: Devices>(&self, s: &Step, pc: impl FnOnce() -> u32, bus: &mut DataBus<'_, T, D>) -> u32 {
        if T::CACHED && !self.warm { self.line(s, pc, bus) } else { 0 }
    }

    /// [`Ordinary::fetch`] outside a warm round.
    #[inline(always)]
    fn line<T: Timing, D: Devices>(&self, s: &Step, pc: impl FnOnce() -> u32, bus: &mut DataBus<'_, T, D>) -> u32 {
        if T::CACHED && s.fetch { bus.timing.fetch_uncounted(self.core, self.id, pc()) } else { 0 }
    }

    /// Runs `s` (at `pc`, not a control transfer) at cycle `at` of a block:
    /// fetch (unless not `FETCH`: a warm round), execute and what it leaves in flight.
    #[inline(always)]
    fn step<const FETCH: bool, T: Timing, D: Devices>(
        &self,
        th: &mut HwThread,
        s: &Step,
        at: u64,
        pc: u32,
        instret: impl FnOnce() -> u64,
        bus: &mut DataBus<'_, T, D>,
    ) -> Result<(), Leave> {
        let f = if FETCH { self.fetch(s, || pc, bus) } else { 0 };
        if f != 0 {
            return Err(Leave::Fetch(f));
        }
        if s.simple.run(&mut th.ctx, &s.inst) {
            bus.devices.issued(self.id, pc, at);
            return Ok(());
        }
        if !T::CACHED && plain::whole(s.plain, th, s, at, bus, self.pipeline) {
            bus.devices.issued(self.id, pc, at);
            return Ok(());
        }
        if s.inst.class == 0 {
            compute(&mut th.ctx, s.inst).map_err(Leave::Fault)?;
            bus.devices.issued(self.id, pc, at);
            return Ok(());
        }
        self.timed(th, s, at, pc, instret, bus, true)
    }

    /// Executes step `s` (at `pc`), fetched, which may leave a result in
    /// flight or access memory; `report`: to [`Devices::issued`]; `instret`:
    /// the count before it, asked for only on the general path.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn timed<T: Timing, D: Devices>(
        &self,
        th: &mut HwThread,
        s: &Step,
        at: u64,
        pc: u32,
        instret: impl FnOnce() -> u64,
        bus: &mut DataBus<'_, T, D>,
        report: bool,
    ) -> Result<(), Leave> {
        // Read where used, not copied first: a copy is loaded before the calls that come between.
        let inst = &s.inst;
        if inst.class & Inst::MEMORY == 0 {
            compute(&mut th.ctx, *inst).map_err(Leave::Fault)?;
            if report {
                bus.devices.issued(self.id, pc, at);
            }
            th.board.issued(self.pipeline, *inst, at, at + 1);
            return Ok(());
        }
        // Plain memory (the common case): no register reached, so nothing to ask the caller.
        if let Some(stall) = plain::run(s.plain, &mut th.ctx, inst, bus, false) {
            if report {
                bus.devices.issued(self.id, pc, at);
            }
            // Its loads write a register other than `$zero`; a store into the text is left to `access`.
            if inst.class & Inst::STORE == 0 {
                th.board.loaded(self.pipeline, inst.rt, at + 1 + u64::from(stall));
            }
            if stall != 0 {
                return Err(Leave::After { stall, stop: false });
            }
            return Ok(());
        }
        (bus.who.now, bus.who.instret, bus.stall) = (at, instret(), 0);
        access(&mut th.ctx, *inst, bus).map_err(Leave::Fault)?;
        let stall = bus.stall;
        if report {
            bus.devices.issued(self.id, pc, at);
        }
        th.board.accessed(self.pipeline, *inst, at + 1 + u64::from(stall));
        // Only a store can write the text; only a device access can ask to stop.
        if stall != 0 || bus.mmio || (inst.class & Inst::STORE != 0 && bus.code.generation() != self.generation) {
            let stop = std::mem::take(&mut bus.mmio) && bus.devices.take_stop();
            return Err(Leave::After { stall, stop });
        }
        Ok(())
    }
}
