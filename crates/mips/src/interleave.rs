//! Several hardware threads of one core taking turns at its issue slot,
//! cycle by cycle: the path of [`System::run`] for a core with more than one
//! thread at work. Each cycle every thread has its next instruction fetched
//! (in thread order), the SMT policy picks a ready one ([`crate::core::Core::pick`];
//! a pair under round-robin by [`Pair`], a pair with one reserved by [`Reserved`]) and it
//! issues. A thread ready while all others wait for at least
//! [`ALONE_CYCLES`] runs alone, by blocks, until the first of them is ready
//! ([`crate::slice`]); a shorter wait goes on here, as entering the slice
//! costs more than the cycles it would save. In a pair with one thread
//! reserved, a thread that issued goes on issuing while the pick would
//! choose it again (the reserved thread whenever it is ready, the other
//! until the reserved one is), without a pick per cycle.
//!
//! Only the thread that issued lacks its next instruction afterwards, so
//! it is fetched right after it issues (before any access of the next
//! cycle, as the cycle's fetches would come first), and one data bus
//! serves the run of cycles. An instruction that touches no memory, leaves
//! nothing in flight and goes on in order (most of them) issues without
//! the general step's bookkeeping.

use crate::bus::{DataBus, Timing, Who};
use crate::core::{Core, HwThread, Two};
use crate::device::Devices;
use crate::error::Fault;
use crate::exec::{Flow, compute};
use crate::system::{Stop, System, step};
use crate::timing::Pipeline;

/// The fewest cycles a thread given the slot alone runs by blocks
/// (`System::run_thread`); measured on two busy threads of `bench/kernels`
/// (docs/performance.md, issue 24's third session).
const ALONE_CYCLES: u64 = 16;

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
                Ended::Fetch | Ended::Refetch => {}
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
        let (mut bus, core) = self.bus(k, timing);
        let mut run = Run { k, id, limit, now: core.now, last: core.last, busy: core.busy_cycles };
        let end = if let Some(two) = core.two()
            && let [x, y] = &mut core.threads[..]
        {
            match two {
                Two::RoundRobin => run.cycles(&mut Pair(x, y), &mut bus, &pipeline),
                Two::Reserved(r) => run.cycles(&mut Reserved { r, pair: Pair(x, y) }, &mut bus, &pipeline),
            }
        } else {
            run.cycles(&mut *core, &mut bus, &pipeline)
        };
        (core.now, core.last, core.busy_cycles) = (run.now, run.last, run.busy);
        end
    }

    /// One data bus for core `k`'s run of cycles, and the core.
    fn bus<'a, T: Timing>(&'a mut self, k: usize, timing: &'a mut T) -> (DataBus<'a, T, D>, &'a mut Core) {
        let topology = ((self.cores.len() as u32) << 8) | self.threads as u32;
        let core = &mut self.cores[k];
        let who = Who { core: k, thread: 0, id: k * self.threads, now: core.now, instret: 0, topology };
        (DataBus::new(&mut self.mem, &mut self.code, &mut self.links, timing, &mut self.devices, who), core)
    }
}

/// A run of cycles of core `k` (its first thread's global index `id`) to
/// `limit`: the core's cycle, last thread to issue and busy cycles.
struct Run {
    k: usize,
    id: usize,
    limit: u64,
    now: u64,
    last: usize,
    busy: u64,
}

impl Run {
    /// Issues cycle by cycle, each cycle's thread picked by `slots`.
    #[inline(always)]
    fn cycles<S: Slots, T: Timing, D: Devices>(&mut self, slots: &mut S, bus: &mut DataBus<'_, T, D>, pipeline: &Pipeline) -> Ended {
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
            let yields = if S::KEEPS { slots.yields(t) } else { 0 };
            let th = slots.thread(t);
            let mut turn = Turn { k: self.k, t, id: self.id + t, now: self.now, limit: self.limit };
            loop {
                let issued = turn.take(th, bus, pipeline);
                if !matches!(issued, Err(Ended::Fault { .. } | Ended::Fetch)) {
                    (self.last, self.now, self.busy) = (t, self.now + 1, self.busy + 1);
                }
                if let Err(end) = issued {
                    return end;
                }
                // Ready again and picked again (the other's ready cycle does not move meanwhile).
                if !S::KEEPS || th.ready > self.now || self.now >= yields {
                    break;
                }
                turn.now = self.now;
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
    /// Issues `th`'s fetched instruction and fetches its next. An `Err`
    /// ends the run: [`Ended::Fetch`] (no instruction fetched) and
    /// [`Ended::Fault`] with nothing issued, any other after the issue.
    #[inline(always)]
    fn take<T: Timing, D: Devices>(&self, th: &mut HwThread, bus: &mut DataBus<'_, T, D>, pipeline: &Pipeline) -> Result<(), Ended> {
        let Turn { k, t, id, now, limit } = *self;
        let Some(inst) = th.next else { return Err(Ended::Fetch) };
        let pc = th.ctx.pc;
        // Most instructions touch no memory, leave nothing in flight and go on in order.
        if inst.class == 0 && !inst.op.transfers() {
            if let Err(f) = compute(&mut th.ctx, inst) {
                th.next = None;
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
                    th.next = None;
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
                th.next = None;
                return Err(Ended::Stop(stop));
            }
        }
        // Its next instruction, fetched as the next cycle begins (none at the limit).
        if now + 1 >= limit {
            th.next = None;
            return Err(Ended::Limit);
        }
        let pc = th.ctx.pc;
        th.next = bus.code.get(pc);
        let Some(next) = &th.next else { return Err(Ended::Refetch) };
        let fetched = th.ready.max(now + 1) + u64::from(bus.timing.fetch(k, id, pc));
        // Nothing in flight by then (the common case): no register to look up.
        th.ready = if fetched >= th.board.drained() { fetched } else { fetched.max(th.board.ready(*next)) };
        Ok(())
    }
}

/// The threads of a core in a run of cycles, as the cycle loop sees them.
trait Slots {
    /// Whether a thread that issued goes on issuing, while [`Slots::yields`]
    /// allows, without a pick per cycle: only where that is often the case
    /// (elsewhere the test costs more than the picks it saves).
    const KEEPS: bool = false;
    /// The thread to issue at `now`, `last` having issued last, and whether
    /// another may issue by the next cycle ([`Core::pick`]).
    fn pick(&self, now: u64, last: usize) -> Option<(usize, bool)>;
    /// The earliest cycle an active thread other than `t` may issue.
    fn others_ready(&self, t: usize) -> u64;
    /// The earliest cycle any active thread may issue.
    fn next_ready(&self) -> u64;
    /// From which cycle thread `t`, having issued and ready, may lose the
    /// slot to another: until then it issues whenever ready (with [`Slots::KEEPS`]).
    fn yields(&self, _t: usize) -> u64 {
        0
    }
    fn thread(&mut self, t: usize) -> &mut HwThread;
}

impl Slots for Core {
    #[inline(always)]
    fn pick(&self, now: u64, last: usize) -> Option<(usize, bool)> {
        Core::pick(self, now, last)
    }

    fn others_ready(&self, t: usize) -> u64 {
        Core::others_ready(self, t)
    }

    fn next_ready(&self) -> u64 {
        Core::next_ready(self).unwrap_or(u64::MAX)
    }

    #[inline(always)]
    fn thread(&mut self, t: usize) -> &mut HwThread {
        &mut self.threads[t]
    }
}

/// A core that [`Core::is_pair`]: the thread that did not issue last goes
/// first if ready, by two comparisons of the threads' ready cycles, each
/// thread reached through its own reference.
struct Pair<'a>(&'a mut HwThread, &'a mut HwThread);

impl Slots for Pair<'_> {
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
    fn thread(&mut self, t: usize) -> &mut HwThread {
        if t == 0 { &mut *self.0 } else { &mut *self.1 }
    }
}

/// A core of two threads at work, thread `r` reserved for interrupts
/// ([`Two::Reserved`]): `r` goes first if ready, else the other, as in
/// [`Pair`] with the other always having issued last.
struct Reserved<'a> {
    r: usize,
    pair: Pair<'a>,
}

impl Slots for Reserved<'_> {
    /// The reserved thread issues in runs of cycles (its stretches between
    /// a load's or a taken branch's waits), the other in its gaps.
    const KEEPS: bool = true;

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

    /// Never for `r`, which goes first; for the other, when `r` is ready.
    #[inline(always)]
    fn yields(&self, t: usize) -> u64 {
        if t == self.r { u64::MAX } else { self.pair.others_ready(t) }
    }

    #[inline(always)]
    fn thread(&mut self, t: usize) -> &mut HwThread {
        self.pair.thread(t)
    }
}
