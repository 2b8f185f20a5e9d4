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
//! Two busy threads of a round-robin pair with perfect memory run by
//! schedules computed once for where they are ([`crate::duet`]), one after
//! another while each runs as computed; the cycle loop goes on where none
//! does.
//!
//! Only the thread that issued lacks its next instruction afterwards, so
//! it is fetched right after it issues (before any access of the next
//! cycle, as the cycle's fetches would come first), and one data bus
//! serves the run of cycles. With caches, a pair's fetches are counted
//! when the run ends and looked up only where a thread changes lines
//! ([`crate::hierarchy::Lines`]). An instruction that touches no memory, leaves
//! nothing in flight and goes on in order (most of them) issues without
//! the general step's bookkeeping; with caches, so do loads, stores and
//! transfers (kernel code's pairs run here, not by schedules).

use crate::bus::{DataBus, Timing, Who};
use crate::core::{Core, HwThread, Two};
use crate::decode::Inst;
use crate::device::Devices;
use crate::duet::{Duets, Entry, Key, MAX_AHEAD, Schedule};
use crate::error::Fault;
use crate::exec::{Exit, Flow, access, compute, cond, decide, transfer};
use crate::plain;
use crate::system::{Stop, System, ready_after, step};
use crate::timing::Pipeline;

/// The fewest cycles a thread given the slot alone runs by blocks
/// (`System::run_thread`); measured on the smt-hot-thread study's pairs
/// with caches (docs/performance/smt.md, twenty-fourth session: 16 to 48
/// within 0.1% on the round-robin pair, 32 and 48 0.9% below 16 on the
/// reserved one, 96 above both).
const ALONE_CYCLES: u64 = 32;

/// Cycles the loop goes on by picks after the pair's threads had no
/// schedule ([`crate::duet`]) before it looks for one again.
const DUET_RETRY: u64 = 2;

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
        let run = Run { k, id: k * self.threads, limit, now: 0, last: 0, busy: 0, retry: 0 };
        let pipeline = self.pipeline;
        if T::CACHED {
            // The schedules go unused.
            let (mut bus, core, duets) = self.bus(k, timing);
            return run.on(core, &mut bus, &pipeline, duets);
        }
        // The schedules are a local meanwhile.
        let mut duets = std::mem::take(&mut self.duets);
        let (mut bus, core, _) = self.bus(k, timing);
        let end = run.on(core, &mut bus, &pipeline, &mut duets);
        self.duets = duets;
        end
    }

    /// One data bus for core `k`'s run of cycles, the core and the pair's schedules.
    fn bus<'a, T: Timing>(&'a mut self, k: usize, timing: &'a mut T) -> (DataBus<'a, T, D>, &'a mut Core, &'a mut Duets) {
        let topology = ((self.cores.len() as u32) << 8) | self.threads as u32;
        let core = &mut self.cores[k];
        let who = Who { core: k, thread: 0, id: k * self.threads, now: core.now, instret: 0, topology };
        (DataBus::new(&mut self.mem, &mut self.code, &mut self.links, timing, &mut self.devices, who), core, &mut self.duets)
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
    /// The cycle from which to look for the pair's schedule again.
    retry: u64,
}

impl Run {
    /// Issues on `core` from its cycle ([`System::cycles`]), a pair by [`Pair`] or [`Reserved`].
    #[inline(always)]
    fn on<T: Timing, D: Devices>(mut self, core: &mut Core, bus: &mut DataBus<'_, T, D>, pipeline: &Pipeline, duets: &mut Duets) -> Ended {
        (self.now, self.last, self.busy) = (core.now, core.last, core.busy_cycles);
        let end = if let Some(two) = core.two()
            && let [x, y] = &mut core.threads[..]
        {
            if T::CACHED
                && let Some(h) = bus.timing.hierarchy()
            {
                h.pair_starts([x.instructions, y.instructions]);
            }
            let end = match two {
                Two::RoundRobin => self.cycles(&mut Pair(x, y), bus, pipeline, duets),
                Two::Reserved(r) => self.cycles(&mut Reserved { r, pair: Pair(x, y) }, bus, pipeline, duets),
            };
            if T::CACHED
                && let Some(h) = bus.timing.hierarchy()
            {
                h.pair_ends(self.k, self.id, [x.instructions, y.instructions]);
            }
            end
        } else {
            self.cycles(&mut *core, bus, pipeline, duets)
        };
        (core.now, core.last, core.busy_cycles) = (self.now, self.last, self.busy);
        end
    }

    /// Issues cycle by cycle, each cycle's thread picked by `slots`, or a
    /// round-robin pair's schedule at a time where there is one.
    #[inline(always)]
    fn cycles<S: Slots, T: Timing, D: Devices>(&mut self, slots: &mut S, bus: &mut DataBus<'_, T, D>, pipeline: &Pipeline, duets: &mut Duets) -> Ended {
        loop {
            if S::DUETS && !T::CACHED && self.now >= self.retry {
                let (a, b) = slots.pair();
                // Every instruction issued is a busy cycle: the schedules leave the busy count to the end.
                let idle = self.busy.wrapping_sub(a.instructions + b.instructions);
                let ran = self.duet(a, b, duets, bus, pipeline);
                self.busy = idle.wrapping_add(a.instructions + b.instructions);
                match ran {
                    Ok(true) => continue,
                    Ok(false) => self.retry = self.now + DUET_RETRY,
                    Err(end) => return end,
                }
            }
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
            let mut turn = Turn { k: self.k, t, id: self.id + t, now: self.now, limit: self.limit, pair: S::PAIR };
            loop {
                let issued = turn.take(th, bus, pipeline);
                if !matches!(issued, Err(Ended::Fault { .. } | Ended::Fetch)) {
                    (self.last, self.now, self.busy) = (t, self.now + 1, self.busy + 1);
                }
                if let Err(end) = issued {
                    if T::CACHED && S::PAIR && !matches!(end, Ended::Fault { .. } | Ended::Fetch) {
                        // It issued and fetched nothing.
                        if let Some(from) = bus.timing.hierarchy().and_then(|h| h.lines.from.as_mut()) {
                            from[t & 1] += 1;
                        }
                    }
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

impl Run {
    /// Runs the schedules of threads `a` and `b` from where they are, one
    /// after another while there is one that runs as computed
    /// ([`crate::duet`]): true if one ran, the threads and the run left as
    /// the cycle loop would leave them but for the busy count (the caller's).
    #[inline(always)]
    fn duet<T: Timing, D: Devices>(
        &mut self,
        a: &mut HwThread,
        b: &mut HwThread,
        duets: &mut Duets,
        bus: &mut DataBus<'_, T, D>,
        pipeline: &Pipeline,
    ) -> Result<bool, Ended> {
        let now = self.now;
        let ahead = [a.ready.saturating_sub(now), b.ready.saturating_sub(now)];
        if ahead[0] > MAX_AHEAD || ahead[1] > MAX_AHEAD || a.next.is_none() || b.next.is_none() {
            return Ok(false);
        }
        let Some(mut k) = duets.find(Key::new(a, b, ahead, self.last), bus.code, pipeline) else { return Ok(false) };
        let mut s = duets.at(k);
        if now + u64::from(s.last.off) >= self.limit || !s.fits(a, b, now) {
            return Ok(false);
        }
        // A store into the text ends the chain, so the text's generation is the same all along it.
        let generation = bus.code.generation();
        // (The schedule is carried with its index: a link gives both, no second lookup.)
        loop {
            let (now, last) = (self.now, &s.last);
            if !self.body(s, [&mut *a, &mut *b], generation, bus, pipeline)? {
                return Ok(true);
            }
            // (0 or 1: the mask spares the counts' bounds checks.)
            let t = usize::from(last.t) & 1;
            // A branch or jump (no system call, break or fault) in place; anything else by the cycle
            // loop's turn. (A pair, nearly every schedule of two busy threads, branches: tested first.)
            if s.pair {
                // Both threads' transfers, the other's first (at the cycle before), decided in place.
                let [x, y] = if t == 0 { [&mut *b, &mut *a] } else { [&mut *a, &mut *b] };
                let first = &s.other;
                // (The pair's last issues right after its first: `Schedule::build`.)
                let at = now + u64::from(first.off);
                let at1 = at + 1;
                let (hx, pcx, nx, rx) = self.decided(x, first, at, bus, pipeline);
                let (hy, pcy, ny, ry) = self.decided(y, last, at1, bus, pipeline);
                (x.ready, y.ready) = (rx, ry);
                x.instructions += s.count[t ^ 1];
                y.instructions += s.count[t];
                (self.last, self.now) = (t, at1 + 1);
                let (how, next) = (3 * hx + hy, [nx, ny]);
                let linked = x.board.drained() <= rx && y.board.drained() <= ry;
                if linked
                    && let Some((j, to)) = duets.link_pair(s, how, next)
                    && at1 + 1 + u64::from(to.last.off) < self.limit
                {
                    (k, s) = (j, to);
                    continue;
                }
                // As the cycle loop: each fetches right after its transfer (the first's is in the text).
                (x.ctx.pc, x.ctx.npc) = (pcx, nx);
                Turn { k: self.k, t: t ^ 1, id: self.id + (t ^ 1), now: at, limit: self.limit, pair: false }.fetch(x, bus)?;
                (y.ctx.pc, y.ctx.npc) = (pcy, ny);
                Turn { k: self.k, t, id: self.id + t, now: at1, limit: self.limit, pair: false }.fetch(y, bus)?;
                let Some(j) = self.next_schedule([a, b], duets, linked.then_some((k, how, next)), bus, pipeline) else { return Ok(true) };
                (k, s) = (j, duets.at(j));
                continue;
            }
            if !s.branches {
                return self.end(s, [a, b], bus, pipeline).map(|()| true);
            }
            let [x, y] = if t == 0 { [&mut *a, &mut *b] } else { [&mut *b, &mut *a] };
            let at = now + u64::from(last.off);
            let (how, pc, next, ready) = self.decided(x, last, at, bus, pipeline);
            x.ready = ready;
            let after = &s.other;
            if s.count[t ^ 1] > 0 {
                y.ready = now + u64::from(after.ready);
            }
            x.instructions += s.count[t];
            y.instructions += s.count[t ^ 1];
            (self.last, self.now) = (t, at + 1);
            // The schedule that followed this one the last time it went this way starts here
            // if nothing in flight holds the thread back (the text is the same meanwhile).
            // Both threads are then at its first instructions, fetched: their PCs and
            // `next` are left as they were until the chain ends ([`Run::leave`], [`Run::end`]).
            let linked = x.board.drained() <= ready;
            if linked
                && let Some((j, to)) = duets.link(s, how, next)
                && at + 1 + u64::from(to.last.off) < self.limit
                && to.arrive(y, t ^ 1, at + 1)
            {
                (k, s) = (j, to);
                continue;
            }
            (x.ctx.pc, x.ctx.npc) = (pc, next);
            (y.next, y.ctx.pc, y.ctx.npc) = (Some(after.inst), after.pc, after.npc);
            let turn = Turn { k: self.k, t, id: self.id + t, now: at, limit: self.limit, pair: false };
            turn.fetch(x, bus)?;
            let Some(j) = self.next_schedule([a, b], duets, linked.then_some((k, how, [next, 0])), bus, pipeline) else { return Ok(true) };
            (k, s) = (j, duets.at(j));
        }
    }

    /// Decides `e`, a branch or jump of thread `th` issuing at `at`, in
    /// place: how it went (taken, not taken, annulled: 0, 1, 2), and the
    /// thread's PC, next PC and ready cycle after it.
    #[inline(always)]
    fn decided<T: Timing, D: Devices>(
        &self,
        th: &mut HwThread,
        e: &Entry,
        at: u64,
        bus: &mut DataBus<'_, T, D>,
        pipeline: &Pipeline,
    ) -> (usize, u32, u32, u64) {
        let exit = match cond(&th.ctx, e.cond, e.inst) {
            Some(exit) => exit,
            None => decide(&mut th.ctx, e.inst, e.pc).expect("a branch or jump decides"),
        };
        bus.devices.issued(self.id + usize::from(e.t), e.pc, at);
        let npc = e.npc;
        match exit {
            Exit::Taken(target) => (0, npc, target, at + 1 + u64::from(pipeline.branch_taken_cycles)),
            Exit::NotTaken => (1, npc, npc.wrapping_add(4), at + 1),
            Exit::Annulled => (2, npc.wrapping_add(4), npc.wrapping_add(8), at + 2),
            Exit::Syscall => unreachable!("a system call has no delay slot"),
        }
    }

    /// The schedule that runs next from where threads `a` and `b` are,
    /// fetched, after a chain's schedule `from` whose transfers went `how`
    /// to `next` if that is to be linked ([`Duets::follow`]); None if there
    /// is none that runs as computed.
    #[inline(always)]
    fn next_schedule<T: Timing, D: Devices>(
        &self,
        [a, b]: [&mut HwThread; 2],
        duets: &mut Duets,
        from: Option<(u32, usize, [u32; 2])>,
        bus: &mut DataBus<'_, T, D>,
        pipeline: &Pipeline,
    ) -> Option<u32> {
        let now = self.now;
        let ahead = [a.ready.saturating_sub(now), b.ready.saturating_sub(now)];
        if ahead[0] > MAX_AHEAD || ahead[1] > MAX_AHEAD {
            return None;
        }
        let key = Key::new(a, b, ahead, self.last);
        let j = match from {
            Some(from) => duets.follow(from, key, bus.code, pipeline),
            None => duets.find(key, bus.code, pipeline),
        }?;
        let s = duets.at(j);
        (now + u64::from(s.last.off) < self.limit && s.fits(a, b, now)).then_some(j)
    }

    /// Issues the entries of `s`'s body ([`Schedule::body`]), at cycles from the run's:
    /// false if one stalled or wrote the text (of `generation` before), the
    /// threads left as the cycle loop would leave them.
    #[inline(always)]
    fn body<T: Timing, D: Devices>(
        &mut self,
        s: &Schedule,
        [a, b]: [&mut HwThread; 2],
        generation: u32,
        bus: &mut DataBus<'_, T, D>,
        pipeline: &Pipeline,
    ) -> Result<bool, Ended> {
        let now = self.now;
        for e in s.body() {
            let t = usize::from(e.t);
            let th = if t == 0 { &mut *a } else { &mut *b };
            let (at, id) = (now + u64::from(e.off), self.id + t);
            if e.simple.run(&mut th.ctx, &e.inst) {
                bus.devices.issued(id, e.pc, at);
            } else if e.inst.class & Inst::MEMORY == 0 {
                if let Err(f) = compute(&mut th.ctx, e.inst) {
                    return Err(self.fault(s, s.position(e), [a, b], f, String::new()));
                }
                bus.devices.issued(id, e.pc, at);
                th.board.issued(pipeline, e.inst, at, at + 1);
            } else {
                // The commonest loads and stores without the general path's bus ([`crate::plain`]):
                // of the accessing thread, only its id matters there (the `ll` links a store breaks).
                bus.who.id = id;
                // A plain one writes no text (a store there goes the general way) and touches no
                // device register: only the general way (`general`) needs those tests after it.
                let (stall, general) = match plain::run(e.plain, &mut th.ctx, &e.inst, bus, false) {
                    Some(stall) => (stall, false),
                    None => {
                        (bus.who.thread, bus.who.now, bus.who.instret) = (t, at, th.instructions + u64::from(e.k));
                        bus.stall = 0;
                        if let Err(f) = access(&mut th.ctx, e.inst, bus) {
                            let msg = std::mem::take(&mut bus.device_error);
                            return Err(self.fault(s, s.position(e), [a, b], f, msg));
                        }
                        (bus.stall, true)
                    }
                };
                bus.devices.issued(id, e.pc, at);
                th.board.accessed(pipeline, e.inst, at + 1 + u64::from(stall));
                let stop = general && std::mem::take(&mut bus.mmio) && bus.devices.take_stop();
                // What the schedule does not foresee: the cycle loop goes on after it.
                if stall != 0 || stop || (general && bus.code.generation() != generation) {
                    return self.after(s, s.position(e), [a, b], (stall, stop), bus).map(|()| false);
                }
            }
        }
        Ok(true)
    }

    /// Issues the last entry of `s`, its body run, by the cycle loop's own
    /// turn (which fetches what comes next).
    fn end<T: Timing, D: Devices>(&mut self, s: &Schedule, [a, b]: [&mut HwThread; 2], bus: &mut DataBus<'_, T, D>, pipeline: &Pipeline) -> Result<(), Ended> {
        let (last, body) = s.entries.split_last().expect("a schedule issues");
        let now = self.now;
        for (t, th) in [&mut *a, &mut *b].into_iter().enumerate() {
            match &s.before_last[t] {
                Some(e) => {
                    (th.next, th.ready, th.instructions) = (Some(e.inst), now + u64::from(e.ready), th.instructions + u64::from(e.k));
                    (th.ctx.pc, th.ctx.npc) = (e.pc, e.npc);
                }
                None => (th.next, th.ctx.pc, th.ctx.npc) = (Some(s.first[t].inst), s.first[t].pc, s.first[t].npc),
            }
        }
        let t = usize::from(last.t);
        self.last = body.last().map_or(self.last, |e| usize::from(e.t));
        self.now = now + u64::from(last.off);
        let turn = Turn { k: self.k, t, id: self.id + t, now: self.now, limit: self.limit, pair: false };
        let issued = turn.take(if t == 0 { a } else { b }, bus, pipeline);
        if !matches!(issued, Err(Ended::Fault { .. } | Ended::Fetch)) {
            (self.last, self.now) = (t, self.now + 1);
        }
        issued
    }

    /// Leaves threads `th` as the cycle loop would after entries `..issued`
    /// of `s` issued at cycles from `now`, their counts from `base`; a
    /// thread that issued none is at the schedule's first instruction, fetched.
    fn leave(&mut self, s: &Schedule, issued: usize, th: [&mut HwThread; 2], base: [u64; 2]) {
        let now = self.now;
        for (t, th) in th.into_iter().enumerate() {
            match issued.checked_sub(1).and_then(|i| s.next_of(t, i)) {
                Some(e) => {
                    (th.next, th.ready, th.instructions) = (Some(e.inst), now + u64::from(e.ready), base[t] + u64::from(e.k));
                    (th.ctx.pc, th.ctx.npc) = (e.pc, e.npc);
                }
                None => (th.next, th.ctx.pc, th.ctx.npc) = (Some(s.first[t].inst), s.first[t].pc, s.first[t].npc),
            }
        }
        if let Some(i) = issued.checked_sub(1) {
            self.last = usize::from(s.entries[i].t);
        }
    }

    /// Entry `i` of `s` faulted (`f`, `msg`) where it was to issue: nothing of it issued.
    #[cold]
    fn fault(&mut self, s: &Schedule, i: usize, [a, b]: [&mut HwThread; 2], f: Fault, msg: String) -> Ended {
        // The threads' counts as the schedule found them (its body leaves them to its end).
        let base = [a.instructions, b.instructions];
        let e = s.entries[i];
        let t = usize::from(e.t);
        self.leave(s, i, [&mut *a, &mut *b], base);
        let th = if t == 0 { a } else { b };
        (th.next, th.ready, th.instructions) = (None, self.now + u64::from(e.ready), base[t] + u64::from(e.k));
        (th.ctx.pc, th.ctx.npc) = (e.pc, e.npc);
        self.now += u64::from(e.off);
        Ended::Fault { t, pc: e.pc, f, msg }
    }

    /// Entry `i` of `s`, an access, issued but stalled `stall` cycles,
    /// asked the caller to act (`stop`) or wrote the text: its thread
    /// fetches its next instruction as the cycle loop's turn would.
    #[cold]
    fn after<T: Timing, D: Devices>(
        &mut self,
        s: &Schedule,
        i: usize,
        [a, b]: [&mut HwThread; 2],
        (stall, stop): (u32, bool),
        bus: &mut DataBus<'_, T, D>,
    ) -> Result<(), Ended> {
        let base = [a.instructions, b.instructions];
        let e = s.entries[i];
        let t = usize::from(e.t);
        self.leave(s, i + 1, [&mut *a, &mut *b], base);
        let at = self.now + u64::from(e.off);
        let th = if t == 0 { a } else { b };
        (th.next, th.ready, th.instructions) = (None, at + 1 + u64::from(stall), base[t] + u64::from(e.k) + 1);
        (th.ctx.pc, th.ctx.npc) = (e.npc, e.npc.wrapping_add(4));
        self.now = at + 1;
        if stop {
            return Err(Ended::Stop(Stop::Device { core: self.k, thread: t }));
        }
        Turn { k: self.k, t, id: self.id + t, now: at, limit: self.limit, pair: false }.fetch(th, bus)
    }
}

/// Thread `t` (global `id`) of core `k` at cycle `now` of a run of cycles to
/// `limit`, of a pair whose fetches [`crate::hierarchy::Lines`] keeps with caches (`pair`).
struct Turn {
    k: usize,
    t: usize,
    id: usize,
    now: u64,
    limit: u64,
    pair: bool,
}

impl Turn {
    /// Issues `th`'s fetched instruction and fetches its next. An `Err`
    /// ends the run: [`Ended::Fetch`] (no instruction fetched) and
    /// [`Ended::Fault`] with nothing issued, any other after the issue.
    #[inline(always)]
    fn take<T: Timing, D: Devices>(&self, th: &mut HwThread, bus: &mut DataBus<'_, T, D>, pipeline: &Pipeline) -> Result<(), Ended> {
        let Turn { k, t, id, now, .. } = *self;
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
        } else if T::CACHED && inst.class & Inst::MEMORY != 0 {
            // A load or store (two in five of kernel code's): its access, without the general step's flow.
            // Only with caches: with perfect memory a round-robin pair runs by schedules, and these
            // paths cost the schedules' loop (the same function) more registers than they save.
            (bus.who.thread, bus.who.id, bus.who.now, bus.who.instret) = (t, id, now, th.instructions);
            bus.stall = 0;
            if let Err(f) = access(&mut th.ctx, inst, bus) {
                th.next = None;
                return Err(Ended::Fault { t, pc, f, msg: std::mem::take(&mut bus.device_error) });
            }
            (th.ctx.pc, th.ctx.npc) = (th.ctx.npc, th.ctx.npc.wrapping_add(4));
            bus.devices.issued(id, pc, now);
            let done = now + 1 + u64::from(bus.stall);
            th.board.accessed(pipeline, inst, done);
            (th.instructions, th.ready) = (th.instructions + 1, done);
            if std::mem::take(&mut bus.mmio) && bus.devices.take_stop() {
                th.next = None;
                return Err(Ended::Stop(Stop::Device { core: k, thread: t }));
            }
        } else if T::CACHED && inst.op.transfers() {
            // A jump, branch or system call: no access, nothing in flight.
            let flow = match transfer(&mut th.ctx, inst) {
                Ok(flow) => flow,
                Err(f) => {
                    th.next = None;
                    return Err(Ended::Fault { t, pc, f, msg: std::mem::take(&mut bus.device_error) });
                }
            };
            bus.devices.issued(id, pc, now);
            (th.instructions, th.ready) = (th.instructions + 1, ready_after(flow, now + 1, pipeline));
            if flow == Flow::Syscall {
                th.next = None;
                return Err(Ended::Stop(Stop::Syscall { core: k, thread: t }));
            }
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
        self.fetch(th, bus)
    }

    /// Fetches `th`'s next instruction, having issued at `now`, as the next
    /// cycle begins (none at the limit).
    #[inline(always)]
    fn fetch<T: Timing, D: Devices>(&self, th: &mut HwThread, bus: &mut DataBus<'_, T, D>) -> Result<(), Ended> {
        let Turn { k, id, now, limit, .. } = *self;
        if now + 1 >= limit {
            th.next = None;
            return Err(Ended::Limit);
        }
        let pc = th.ctx.pc;
        th.next = bus.code.get(pc);
        let Some(next) = &th.next else { return Err(Ended::Refetch) };
        // A pair's are counted when the run ends.
        let stall = if T::CACHED && self.pair { bus.timing.fetch_pair(k, id, pc, self.t & 1) } else { bus.timing.fetch(k, id, pc) };
        let fetched = th.ready.max(now + 1) + u64::from(stall);
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
    /// Whether the two threads may run by schedules ([`crate::duet`]): a round-robin pair's.
    const DUETS: bool = false;
    /// Whether these are the core's only two threads, both at work (with
    /// caches, [`crate::hierarchy::Lines`] keeps their fetches).
    const PAIR: bool = false;
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
    /// The two threads, with [`Slots::DUETS`].
    fn pair(&mut self) -> (&mut HwThread, &mut HwThread) {
        unreachable!("only a pair runs by schedules")
    }
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
    const DUETS: bool = true;
    const PAIR: bool = true;

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

    #[inline(always)]
    fn pair(&mut self) -> (&mut HwThread, &mut HwThread) {
        (&mut *self.0, &mut *self.1)
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
    const PAIR: bool = true;

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
