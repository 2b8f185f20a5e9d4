//! Several hardware threads of one core taking turns at its issue slot,
//! cycle by cycle: the path of [`System::run`] for a core with more than one
//! thread at work. Each cycle every thread has its next instruction fetched
//! (in thread order), the SMT policy picks a ready one ([`crate::core::Core::select`])
//! and it issues. A thread ready while all others wait runs alone, by
//! blocks, until the first of them is ready ([`crate::slice`]).
//!
//! Only the thread that issued lacks its next instruction afterwards, so
//! it is fetched right after it issues (before any access of the next
//! cycle, as the cycle's fetches would come first), and one data bus
//! serves the run of cycles.

use crate::bus::{DataBus, Timing, Who};
use crate::device::Devices;
use crate::error::Fault;
use crate::exec::Flow;
use crate::system::{Stop, System, step};

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
        loop {
            let Some(t) = core.select() else {
                core.now = core.next_ready().unwrap_or(limit).min(limit).max(core.now + 1);
                if core.now >= limit {
                    return Ended::Limit;
                }
                continue;
            };
            // Ready while every other thread waits (for a miss, a result, a
            // fetch): it has the issue slot to itself until the first is ready.
            let others = core.others_ready(t);
            if others > core.now + 1 {
                return Ended::Alone { t, until: limit.min(others) };
            }
            let now = core.now;
            let th = &mut core.threads[t];
            let Some(inst) = th.next.take() else { return Ended::Fetch };
            let pc = th.ctx.pc;
            let id = k * threads + t;
            bus.who = Who { core: k, thread: t, id, now, instret: th.instructions, topology };
            bus.stall = 0;
            let flow = match step(th, inst, &mut bus, &pipeline) {
                Ok((f, ready)) => {
                    th.ready = ready;
                    f
                }
                Err(f) => return Ended::Fault { t, pc, f, msg: std::mem::take(&mut bus.device_error) },
            };
            th.instructions += 1;
            core.issued(t);
            core.now = now + 1;
            if flow == Flow::Syscall {
                return Ended::Stop(Stop::Syscall { core: k, thread: t });
            }
            if std::mem::take(&mut bus.mmio) && bus.devices.take_stop() {
                return Ended::Stop(Stop::Device { core: k, thread: t });
            }
            if core.now >= limit {
                return Ended::Limit;
            }
            // Its next instruction, fetched as the next cycle begins.
            let th = &mut core.threads[t];
            let pc = th.ctx.pc;
            let Some(inst) = bus.code.get(pc) else { return Ended::Fetch };
            let fetched = th.ready.max(core.now) + u64::from(bus.timing.fetch(k, id, pc));
            th.ready = fetched.max(th.board.ready(inst));
            th.next = Some(inst);
        }
    }
}
