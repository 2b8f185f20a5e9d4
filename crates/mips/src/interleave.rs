//! Several hardware threads of one core taking turns at its issue slot,
//! cycle by cycle: the path of [`System::run`] for a core with more than one
//! thread at work. Each cycle every thread has its next instruction fetched
//! (in thread order), the SMT policy picks a ready one ([`crate::core::Core::pick`];
//! a pair under round-robin by [`Pair`], a pair with one reserved by [`Reserved`]) and it
//! issues. A thread ready while all others wait for at least
//! [`ALONE_CYCLES`] runs alone, by blocks, until the first of them is ready
//! ([`crate::slice`]); a shorter wait goes on here, as entering the slice
//! costs more than the cycles it would save.
//!
//! Only the thread that issued lacks its next instruction afterwards, so
//! it is fetched right after it issues (before any access of the next
//! cycle, as the cycle's fetches would come first), and one data bus
//! serves the run of cycles. An instruction that touches no memory, leaves
//! nothing in flight and goes on in order (most of them) issues without
//! the general step's bookkeeping.
//!
//! Each thread keeps a cursor into its block ([`crate::block`]): the
//! instructions from its next one to the block's end (through the delay
//! slot), so that going on in order takes the next step rather than
//! looking the PC up in the text. Only the instructions are taken from the
//! block, not its issue offsets: the threads' turns shift them, so every
//! instruction's ready cycle still comes from its fetch and the
//! scoreboard, as cycle by cycle. A block not yet built ends the run to be
//! built; a store into the text ends it too (the cursors would read the
//! old text), each thread keeping the instruction it had fetched.
use crate::block::{Blocks, Step};
use crate::bus::{DataBus, Timing, Who};
use crate::core::{Core, HwThread, Two};
use crate::decode::Inst;
use crate::device::Devices;
use crate::error::Fault;
use crate::exec::{Flow, Simple, compute, simple};
use crate::system::{Stop, System, step};
use crate::timing::Pipeline;

/// The fewest cycles a thread given the slot alone runs by blocks
/// (`System::run_thread`); measured on two busy threads of `bench/kernels`
/// (docs/performance.md, issue 24's third session).
const ALONE_CYCLES: u64 = 16;

/// Threads with a cursor: `core.threads`' most (a core of more fetches every
/// instruction from the text).
const CURSORS: usize = 16;

/// Why a run of cycles on the shared bus ended.
enum Ended {
    /// The core reached the limit.
    Limit,
    /// Thread `t` runs alone until `until`.
    Alone {
        t: usize,
        until: u64,
    },
    /// A thread's next instruction is to be fetched the general way
    /// (outside the text: a return or a fault).
    Fetch,
    /// As [`Ended::Fetch`], after the thread issued.
    Refetch,
    /// A thread issued and goes on at `pc`, where no block is built yet.
    Build {
        pc: u32,
    },
    /// A thread issued and wrote the text: the blocks are to be rebuilt.
    Text,
    /// Thread `t` faulted at `pc`.
    Fault {
        t: usize,
        pc: u32,
        f: Fault,
        msg: String,
    },
    Stop(Stop),
}

impl<D: Devices> System<D> {
    /// Runs core `k`, more than one of whose threads has work, until its
    /// cycle reaches `limit`, it runs out of work, or a thread stops.
    pub(crate) fn run_shared<T: Timing>(&mut self, k: usize, limit: u64, timing: &mut T) -> Option<Stop> {
        loop {
            if self.cores[k].now >= limit || !self.cores[k].has_work() {
                return None;
            }
            for t in 0..self.threads {
                if self.cores[k].threads[t].active
                    && let Some(s) = self.prepare(k, t, timing)
                {
                    return Some(s);
                }
            }
            match self.cycles(k, limit, timing) {
                Ended::Limit => return None,
                Ended::Alone { t, until } => {
                    if let Some(s) = self.run_thread(k, t, until, timing) {
                        return Some(s);
                    }
                }
                Ended::Fetch | Ended::Refetch | Ended::Text => {}
                Ended::Build { pc } => _ = self.blocks.get(&self.code, pc, &self.pipeline),
                Ended::Fault { t, pc, f, msg } => return Some(self.fault(k, t, pc, f, &msg)),
                Ended::Stop(s) => return Some(s),
            }
        }
    }

    /// Issues cycle by cycle on one bus, every active thread of core `k`
    /// fetched, until something needs more than that. The core's cycle,
    /// last thread to issue and busy cycles are locals meanwhile.
    fn cycles<T: Timing>(&mut self, k: usize, limit: u64, timing: &mut T) -> Ended {
        let (pipeline, id) = (self.pipeline, k * self.threads);
        self.blocks.sync(&self.code);
        let (mut bus, core, blocks) = self.bus(k, timing);
        let blocks = (core.cursors && core.threads.len() <= CURSORS).then_some(blocks);
        let generation = bus.code.generation();
        let mut run = Run { k, id, limit, now: core.now, last: core.last, busy: core.busy_cycles, blocks, generation };
        let end = if let Some(two) = core.two()
            && let [x, y] = &mut core.threads[..]
        {
            let pair = Pair(x, y, [&[]; 2]);
            match two {
                Two::RoundRobin => run.cycles(pair, &mut bus, &pipeline),
                Two::Reserved(r) => run.cycles(Reserved { r, pair }, &mut bus, &pipeline),
            }
        } else {
            run.cycles(General { core: &mut *core, cur: [&[]; CURSORS] }, &mut bus, &pipeline)
        };
        (core.now, core.last, core.busy_cycles) = (run.now, run.last, run.busy);
        end
    }

    /// One data bus for core `k`'s run of cycles, the core and the blocks.
    fn bus<'a, T: Timing>(&'a mut self, k: usize, timing: &'a mut T) -> (DataBus<'a, T, D>, &'a mut Core, &'a Blocks) {
        let topology = ((self.cores.len() as u32) << 8) | self.threads as u32;
        let core = &mut self.cores[k];
        let who = Who { core: k, thread: 0, id: k * self.threads, now: core.now, instret: 0, topology };
        (DataBus::new(&mut self.mem, &mut self.code, &mut self.links, timing, &mut self.devices, who), core, &self.blocks)
    }
}

/// A run of cycles of core `k` (its first thread's global index `id`) to
/// `limit`: the core's cycle, last thread to issue and busy cycles, and the
/// threads' cursors into `blocks` (None: every instruction from the text).
struct Run<'b> {
    k: usize,
    id: usize,
    limit: u64,
    now: u64,
    last: usize,
    busy: u64,
    blocks: Option<&'b Blocks>,
    /// The text's generation the blocks were built from.
    generation: u32,
}

impl<'b> Run<'b> {
    /// Issues cycle by cycle, each cycle's thread picked by `slots`, then
    /// leaves each thread its fetched instruction.
    #[inline(always)]
    fn cycles<S: Slots<'b>, T: Timing, D: Devices>(&mut self, mut slots: S, bus: &mut DataBus<'_, T, D>, pipeline: &Pipeline) -> Ended {
        let end = self.turns(&mut slots, bus, pipeline);
        slots.settle();
        end
    }

    #[inline(always)]
    fn turns<S: Slots<'b>, T: Timing, D: Devices>(&mut self, slots: &mut S, bus: &mut DataBus<'_, T, D>, pipeline: &Pipeline) -> Ended {
        loop {
            let Some((t, shared)) = slots.pick(self.now, self.last) else {
                self.now = slots.next_ready().min(self.limit).max(self.now + 1);
                if self.now >= self.limit {
                    return Ended::Limit;
                }
                continue;
            };
            // Ready while every other thread waits (for a miss, a result, a
            // fetch): it has the issue slot to itself until the first is ready.
            if !shared {
                let until = self.limit.min(slots.others_ready(t));
                if until > self.now + ALONE_CYCLES {
                    return Ended::Alone { t, until };
                }
            }
            let turn = Turn { k: self.k, t, id: self.id + t, now: self.now, limit: self.limit };
            let (th, cur) = slots.thread(t);
            let issued = turn.take(th, cur, (self.blocks, self.generation), bus, pipeline);
            if !matches!(issued, Err(Ended::Fault { .. } | Ended::Fetch)) {
                (self.last, self.now, self.busy) = (t, self.now + 1, self.busy + 1);
            }
            if let Err(end) = issued {
                return end;
            }
        }
    }
}

/// Thread `t` (global `id`) of core `k` at cycle `now` of a run of cycles to `limit`.
struct Turn {
    k: usize,
    t: usize,
    id: usize,
    now: u64,
    limit: u64,
}

impl Turn {
    /// Issues `th`'s fetched instruction (`cur`'s first step, else
    /// `th.next`) and fetches its next, from `blocks` if some (built from
    /// the text's `generation`). An `Err` ends the run:
    /// [`Ended::Fetch`] (no instruction fetched) and [`Ended::Fault`] with
    /// nothing issued, any other after the issue.
    #[inline(always)]
    fn take<'b, T: Timing, D: Devices>(
        &self,
        th: &mut HwThread,
        cur: &mut &'b [Step],
        (blocks, generation): (Option<&'b Blocks>, u32),
        bus: &mut DataBus<'_, T, D>,
        pipeline: &Pipeline,
    ) -> Result<(), Ended> {
        let Turn { k, t, id, now, limit } = *self;
        let (inst, kind) = match cur.first() {
            Some(s) => (s.inst, s.simple),
            None => match th.next {
                Some(inst) => (inst, Simple::Other),
                None => return Err(Ended::Fetch),
            },
        };
        let pc = th.ctx.pc;
        // Most instructions touch no memory, leave nothing in flight and go on in order.
        if inst.class == 0 && !inst.op.transfers() {
            if !simple(&mut th.ctx, kind, inst)
                && let Err(f) = compute(&mut th.ctx, inst)
            {
                (th.next, *cur) = (None, &[]);
                return Err(Ended::Fault { t, pc, f, msg: String::new() });
            }
            (th.ctx.pc, th.ctx.npc) = (th.ctx.npc, th.ctx.npc.wrapping_add(4));
            bus.devices.issued(id, pc, now);
            (th.instructions, th.ready) = (th.instructions + 1, now + 1);
        } else {
            bus.who = Who { thread: t, id, now, instret: th.instructions, ..bus.who };
            bus.stall = 0;
            let flow = match step(th, inst, bus, pipeline) {
                Ok((flow, ready)) => {
                    (th.instructions, th.ready) = (th.instructions + 1, ready);
                    flow
                }
                Err(f) => {
                    (th.next, *cur) = (None, &[]);
                    return Err(Ended::Fault { t, pc, f, msg: std::mem::take(&mut bus.device_error) });
                }
            };
            let stop = if flow == Flow::Syscall {
                Some(Stop::Syscall { core: k, thread: t })
            } else if std::mem::take(&mut bus.mmio) && bus.devices.take_stop() {
                Some(Stop::Device { core: k, thread: t })
            } else {
                None
            };
            if let Some(stop) = stop {
                (th.next, *cur) = (None, &[]);
                return Err(Ended::Stop(stop));
            }
        }
        // Its next instruction, fetched as the next cycle begins (none at the limit).
        if now + 1 >= limit {
            (th.next, *cur) = (None, &[]);
            return Err(Ended::Limit);
        }
        if inst.class != 0 && bus.code.generation() != generation {
            // The cursors' blocks are of the old text: this thread's next comes from the new.
            *cur = &[];
            return match self.fetch(th, bus) {
                Some(_) => Err(Ended::Text),
                None => Err(Ended::Refetch),
            };
        }
        let next = th.ctx.pc;
        // In order within its block: the cursor's next step; else the block entered there.
        *cur = match cur.get(1..) {
            Some(rest) if next == pc.wrapping_add(4) && !rest.is_empty() => rest,
            _ => match blocks.and_then(|b| b.built(next)) {
                // Through the first of the delay slot's two steps (the same instruction).
                Some(b) => &b.steps[..b.steps.len().min(b.ordinary as usize + 2)],
                None => &[],
            },
        };
        if let Some(s) = cur.first() {
            self.fetched(th, s.inst, bus);
            return Ok(());
        }
        match self.fetch(th, bus) {
            None => Err(Ended::Refetch),
            Some(_) if blocks.is_some() => Err(Ended::Build { pc: next }),
            Some(_) => Ok(()),
        }
    }

    /// Fetches `th`'s next instruction from the text into `th.next` (None outside it).
    #[inline(always)]
    fn fetch<T: Timing, D: Devices>(&self, th: &mut HwThread, bus: &mut DataBus<'_, T, D>) -> Option<()> {
        th.next = bus.code.get(th.ctx.pc);
        self.fetched(th, th.next?, bus);
        Some(())
    }

    /// Charges the fetch of `th`'s next instruction `next` and sets when it may issue.
    #[inline(always)]
    fn fetched<T: Timing, D: Devices>(&self, th: &mut HwThread, next: Inst, bus: &mut DataBus<'_, T, D>) {
        let fetched = th.ready.max(self.now + 1) + u64::from(bus.timing.fetch(self.k, self.id, th.ctx.pc));
        // Nothing in flight by then (the common case): no register to look up.
        th.ready = if fetched >= th.board.drained() { fetched } else { fetched.max(th.board.ready(next)) };
    }
}

/// The threads of a core in a run of cycles, as the cycle loop sees them,
/// with their cursors into blocks of lifetime `'b`.
trait Slots<'b> {
    /// The thread to issue at `now`, `last` having issued last, and whether
    /// another may issue by the next cycle ([`Core::pick`]).
    fn pick(&self, now: u64, last: usize) -> Option<(usize, bool)>;
    /// The earliest cycle an active thread other than `t` may issue.
    fn others_ready(&self, t: usize) -> u64;
    /// The earliest cycle any active thread may issue.
    fn next_ready(&self) -> u64;
    /// Thread `t` and its cursor.
    fn thread(&mut self, t: usize) -> (&mut HwThread, &mut &'b [Step]);
    /// As the run ends: each cursor's first step is its thread's fetched instruction.
    fn settle(self);
}

/// Any core: [`Core::pick`]'s walk over its threads.
struct General<'a, 'b> {
    core: &'a mut Core,
    cur: [&'b [Step]; CURSORS],
}

impl<'b> Slots<'b> for General<'_, 'b> {
    #[inline(always)]
    fn pick(&self, now: u64, last: usize) -> Option<(usize, bool)> {
        self.core.pick(now, last)
    }

    fn others_ready(&self, t: usize) -> u64 {
        self.core.others_ready(t)
    }

    fn next_ready(&self) -> u64 {
        self.core.next_ready().unwrap_or(u64::MAX)
    }

    #[inline(always)]
    fn thread(&mut self, t: usize) -> (&mut HwThread, &mut &'b [Step]) {
        // (`t` is below CURSORS where any cursor is set: the mask only spares a bounds check.)
        (&mut self.core.threads[t], &mut self.cur[t & (CURSORS - 1)])
    }

    fn settle(self) {
        for (th, cur) in self.core.threads.iter_mut().zip(self.cur) {
            settle(th, cur);
        }
    }
}

/// A core that [`Core::is_pair`]: the thread that did not issue last goes
/// first if ready, by two comparisons of the threads' ready cycles, each
/// thread reached through its own reference.
struct Pair<'a, 'b>(&'a mut HwThread, &'a mut HwThread, [&'b [Step]; 2]);

impl<'b> Slots<'b> for Pair<'_, 'b> {
    #[inline(always)]
    fn pick(&self, now: u64, last: usize) -> Option<(usize, bool)> {
        let (a, ra, rb) = if last == 0 { (1, self.1.ready, self.0.ready) } else { (0, self.0.ready, self.1.ready) };
        if ra <= now {
            Some((a, rb <= now + 1))
        } else if rb <= now {
            Some((a ^ 1, ra <= now + 1))
        } else {
            None
        }
    }

    #[inline(always)]
    fn others_ready(&self, t: usize) -> u64 {
        if t == 0 { self.1.ready } else { self.0.ready }
    }

    #[inline(always)]
    fn next_ready(&self) -> u64 {
        self.0.ready.min(self.1.ready)
    }

    #[inline(always)]
    fn thread(&mut self, t: usize) -> (&mut HwThread, &mut &'b [Step]) {
        let [c0, c1] = &mut self.2;
        if t == 0 { (&mut *self.0, c0) } else { (&mut *self.1, c1) }
    }

    fn settle(self) {
        settle(self.0, self.2[0]);
        settle(self.1, self.2[1]);
    }
}

/// A core of two threads at work, thread `r` reserved for interrupts
/// ([`Two::Reserved`]): `r` goes first if ready, else the other, as in
/// [`Pair`] with the other always having issued last.
struct Reserved<'a, 'b> {
    r: usize,
    pair: Pair<'a, 'b>,
}

impl<'b> Slots<'b> for Reserved<'_, 'b> {
    #[inline(always)]
    fn pick(&self, now: u64, _: usize) -> Option<(usize, bool)> {
        // As if the other had issued last: `r` is asked first.
        self.pair.pick(now, self.r ^ 1)
    }

    #[inline(always)]
    fn others_ready(&self, t: usize) -> u64 {
        self.pair.others_ready(t)
    }

    #[inline(always)]
    fn next_ready(&self) -> u64 {
        self.pair.next_ready()
    }

    #[inline(always)]
    fn thread(&mut self, t: usize) -> (&mut HwThread, &mut &'b [Step]) {
        self.pair.thread(t)
    }

    fn settle(self) {
        self.pair.settle();
    }
}

/// Leaves the first step of `th`'s cursor `cur`, if any, as its fetched instruction.
fn settle(th: &mut HwThread, cur: &[Step]) {
    if let Some(s) = cur.first() {
        th.next = Some(s.inst);
    }
}
