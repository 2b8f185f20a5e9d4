//! Several hardware threads of one core taking turns at its issue slot,
//! cycle by cycle: the path of [`System::run`] for a core with more than one
//! thread at work. Each cycle every thread has its next instruction fetched
//! (in thread order), the SMT policy picks a ready one ([`crate::core::Core::pick`];
//! a pair under round-robin by [`crate::core::Core::pick_pair`]) and it
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

use crate::bus::{DataBus, Timing, Who};
use crate::device::Devices;
use crate::error::Fault;
use crate::exec::{Flow, compute};
use crate::system::{Stop, System, step};

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
                Ended::Fetch => {}
                Ended::Fault { t, pc, f, msg } => return Some(self.fault(k, t, pc, f, &msg)),
                Ended::Stop(s) => return Some(s),
            }
        }
    }

    /// Issues cycle by cycle on one bus, every active thread of core `k`
    /// fetched, until something needs more than that.
    fn cycles<T: Timing>(&mut self, k: usize, limit: u64, timing: &mut T) -> Ended {
        let topology = ((self.cores.len() as u32) << 8) | self.threads as u32;
        let (pipeline, threads) = (self.pipeline, self.threads);
        let core = &mut self.cores[k];
        let who = Who { core: k, thread: 0, id: k * threads, now: core.now, instret: 0, topology };
        let mut bus = DataBus::new(&mut self.mem, &mut self.code, &mut self.links, timing, &mut self.devices, who);
        let pair = core.is_pair();
        loop {
            let picked = if pair { core.pick_pair() } else { core.pick() };
            let Some((t, shared)) = picked else {
                core.now = core.next_ready().unwrap_or(limit).min(limit).max(core.now + 1);
                if core.now >= limit {
                    return Ended::Limit;
                }
                continue;
            };
            // Ready while every other thread waits (for a miss, a result, a
            // fetch): it has the issue slot to itself until the first is ready.
            if !shared {
                let until = limit.min(core.others_ready(t));
                if until > core.now + ALONE_CYCLES {
                    return Ended::Alone { t, until };
                }
            }
            let now = core.now;
            let th = &mut core.threads[t];
            let Some(inst) = th.next else { return Ended::Fetch };
            let (pc, id) = (th.ctx.pc, k * threads + t);
            // Most instructions touch no memory, leave nothing in flight and go on in order.
            if inst.class == 0 && !inst.op.transfers() {
                if let Err(f) = compute(&mut th.ctx, inst) {
                    th.next = None;
                    return Ended::Fault { t, pc, f, msg: String::new() };
                }
                (th.ctx.pc, th.ctx.npc) = (th.ctx.npc, th.ctx.npc.wrapping_add(4));
                bus.devices.issued(id, pc, now);
                (th.instructions, th.ready) = (th.instructions + 1, now + 1);
            } else {
                bus.who = Who { thread: t, id, now, instret: th.instructions, ..bus.who };
                bus.stall = 0;
                let flow = match step(th, inst, &mut bus, &pipeline) {
                    Ok((flow, ready)) => {
                        (th.instructions, th.ready) = (th.instructions + 1, ready);
                        flow
                    }
                    Err(f) => {
                        th.next = None;
                        return Ended::Fault { t, pc, f, msg: std::mem::take(&mut bus.device_error) };
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
                    core.issued(t);
                    core.now = now + 1;
                    return Ended::Stop(stop);
                }
            }
            core.issued(t);
            core.now = now + 1;
            let th = &mut core.threads[t];
            // Its next instruction, fetched as the next cycle begins (none at the limit).
            if now + 1 >= limit {
                th.next = None;
                return Ended::Limit;
            }
            let pc = th.ctx.pc;
            th.next = bus.code.get(pc);
            let Some(next) = &th.next else { return Ended::Fetch };
            let fetched = th.ready.max(now + 1) + u64::from(bus.timing.fetch(k, id, pc));
            // Nothing in flight by then (the common case): no register to look up.
            th.ready = if fetched >= th.board.drained() { fetched } else { fetched.max(th.board.ready(*next)) };
        }
    }
}
