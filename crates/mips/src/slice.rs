//! One hardware thread's slice: the hot path of [`System::run`]. Blocks
//! (see [`crate::block`]) run whole at their precomputed issue cycles when
//! entered with nothing in flight and fitting before the limit; anything
//! else goes one instruction at a time, with the same result.

use crate::bus::{DataBus, Timing, Who};
use crate::core::HwThread;
use crate::decode::Inst;
use crate::device::Devices;
use crate::error::Fault;
use crate::exec::{Flow, access, compute, transfer};
use crate::system::{Stop, System, step};
use crate::timing::{Pipeline, Scoreboard};

impl<D: Devices> System<D> {
    /// Runs hardware thread `t`, the only one of core `k` that may issue
    /// before `limit`, until the core's cycle reaches `limit` or the thread
    /// stops: the hot path.
    /// A block (see [`crate::block`]) entered with nothing in flight that
    /// fits before the limit runs at its precomputed issue cycles, its body
    /// with no PC kept; anything else (a result in flight, a stall, a
    /// pending delay slot, the limit near) goes one instruction at a time,
    /// with the same result.
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
        let penalty = |flow| match flow {
            Flow::Taken => u64::from(pipeline.branch_taken_cycles),
            Flow::Annulled => 1,
            Flow::Next | Flow::Syscall => 0,
        };
        let end = 'run: loop {
            let t0 = ready.max(now);
            if pending.is_none()
                && th.ctx.npc == th.ctx.pc.wrapping_add(4)
                && th.board.drained() <= t0
                && let Some(b) = blocks.get(bus.code, th.ctx.pc, &pipeline)
                && t0 + u64::from(b.span) < limit
            {
                let steps = blocks.steps(&b);
                let generation = bus.code.generation();
                let (body, end) = steps.split_at(b.ordinary as usize);
                let run = Ordinary { core: k, id, pipeline: &pipeline, generation };
                // `pc` is the instruction's, `fetch_from` where its fetch starts.
                let (mut pc, mut fetch_from) = (b.pc, t0);
                // The body runs with no PC kept: it is set where the run leaves the block.
                let (leave, s, at, in_slot) = 'block: {
                    for s in body {
                        let at = t0 + u64::from(s.off);
                        match run.step(th, s.inst, at, pc, instret, &mut bus) {
                            Ok(()) => instret += 1,
                            Err(leave) => break 'block (leave, s, at, false),
                        }
                        (pc, fetch_from) = (pc.wrapping_add(4), at + 1);
                    }
                    (th.ctx.pc, th.ctx.npc) = (pc, pc.wrapping_add(4));
                    let Some((last, slot)) = end.split_first() else {
                        (ready, now) = (fetch_from, fetch_from);
                        continue 'run;
                    };
                    // The transfer (never a memory access).
                    let at = t0 + u64::from(last.off);
                    let f = bus.timing.fetch(k, id, pc);
                    if f != 0 {
                        break 'block (Leave::Fetch(f), last, at, true);
                    }
                    let flow = match transfer(&mut th.ctx, last.inst) {
                        Ok(flow) => flow,
                        Err(f) => break 'block (Leave::Fault(f), last, at, true),
                    };
                    bus.devices.issued(id, pc, at);
                    instret += 1;
                    fetch_from = at + 1 + penalty(flow);
                    // Then its delay slot: the step after a fall-through, or after a taken branch.
                    let s = match flow {
                        Flow::Next if !slot.is_empty() => &slot[0],
                        Flow::Taken if !slot.is_empty() => &slot[1],
                        Flow::Syscall => {
                            (ready, now) = (at + 1, at + 1);
                            break 'run Ok(Some(Stop::Syscall { core: k, thread: t }));
                        }
                        _ => {
                            (ready, now) = (fetch_from, at + 1);
                            continue 'run;
                        }
                    };
                    let (at, pc) = (t0 + u64::from(s.off), pc.wrapping_add(4));
                    match run.step(th, s.inst, at, pc, instret, &mut bus) {
                        Ok(()) => instret += 1,
                        Err(leave) => break 'block (leave, s, at, true),
                    }
                    (th.ctx.pc, th.ctx.npc) = (th.ctx.npc, th.ctx.npc.wrapping_add(4));
                    (ready, now) = (at + 1, at + 1);
                    continue 'run;
                };
                // Leaving the block early at `s`, the instruction at `pc`. In the
                // body its PC is set here; the transfer and the slot have theirs.
                match leave {
                    Leave::Fetch(f) => {
                        if !in_slot {
                            (th.ctx.pc, th.ctx.npc) = (pc, pc.wrapping_add(4));
                        }
                        (ready, now, pending) = (fetched(&th.board, fetch_from, f, s.inst), fetch_from, Some(s.inst));
                        continue 'run;
                    }
                    Leave::Fault(f) => {
                        if !in_slot {
                            (th.ctx.pc, th.ctx.npc) = (pc, pc.wrapping_add(4));
                        }
                        (ready, now) = (at, at);
                        let pc = th.ctx.pc;
                        break 'run Err(Some((pc, f, std::mem::take(&mut bus.device_error))));
                    }
                    Leave::After { stall, stop } => {
                        instret += 1;
                        (th.ctx.pc, th.ctx.npc) = if in_slot { (th.ctx.npc, th.ctx.npc.wrapping_add(4)) } else { (pc.wrapping_add(4), pc.wrapping_add(8)) };
                        (ready, now) = (at + 1 + u64::from(stall), at + 1);
                        if stop {
                            break 'run Ok(Some(Stop::Device { core: k, thread: t }));
                        }
                        continue 'run;
                    }
                }
            }
            // One instruction. A core of several threads fetches nothing at the limit (see run_core).
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
            let flow = match step(th, inst, &mut bus, &pipeline) {
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
            if bus.devices.take_stop() {
                break Ok(Some(Stop::Device { core: k, thread: t }));
            }
        };
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
}

/// What a block's ordinary instructions share.
struct Ordinary<'p> {
    core: usize,
    id: usize,
    pipeline: &'p Pipeline,
    /// The text's generation when the block was entered.
    generation: u32,
}

impl Ordinary<'_> {
    /// Runs `inst` (at `pc`, not a control transfer) at cycle `at` of a block:
    /// fetch, execute and what it leaves in flight.
    #[inline(always)]
    fn step<T: Timing, D: Devices>(&self, th: &mut HwThread, inst: Inst, at: u64, pc: u32, instret: u64, bus: &mut DataBus<'_, T, D>) -> Result<(), Leave> {
        let f = bus.timing.fetch(self.core, self.id, pc);
        if f != 0 {
            return Err(Leave::Fetch(f));
        }
        if inst.class & Inst::MEMORY == 0 {
            compute(&mut th.ctx, inst).map_err(Leave::Fault)?;
            if inst.class != 0 {
                th.board.issued(self.pipeline, inst, at, at + 1);
            }
            bus.devices.issued(self.id, pc, at);
            return Ok(());
        }
        (bus.who.now, bus.who.instret, bus.stall) = (at, instret, 0);
        access(&mut th.ctx, inst, bus).map_err(Leave::Fault)?;
        bus.devices.issued(self.id, pc, at);
        let stall = bus.stall;
        th.board.issued(self.pipeline, inst, at, at + 1 + u64::from(stall));
        let stop = bus.devices.take_stop();
        if stall != 0 || stop || bus.code.generation() != self.generation { Err(Leave::After { stall, stop }) } else { Ok(()) }
    }
}
