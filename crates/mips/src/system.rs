//! A system of N cores x M hardware threads running one program image in
//! shared memory. [`System::run`] advances every core until a cycle limit
//! or until some thread needs the caller (a system call, a returned
//! activity, a fault): the machine's scheduler drives it in slices, giving
//! threads contexts with [`System::start`] and taking them back with
//! [`System::stop`] at instruction boundaries.

use crate::block::Blocks;
use crate::bus::{DataBus, Links, Perfect, Timing, Who};
use crate::code::Code;
use crate::context::{Context, RETURN_ADDRESS};
use crate::core::{Core, HwThread, Policy};
use crate::decode::Inst;
use crate::device::{Devices, NoDevices};
use crate::duet::Duets;
use crate::elf::Program;
use crate::error::{Error, Fault};
use crate::exec::{Flow, execute};
use crate::hierarchy::{Hierarchy, HierarchyConfig};
use crate::mem::Memory;
use crate::timing::Pipeline;

/// Shape and timing of a system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SystemConfig {
    pub cores: usize,
    pub threads: usize,
    pub policy: Policy,
    pub interrupt_thread: Option<usize>,
    pub pipeline: Pipeline,
    /// None: perfect memory (every access within the pipeline's cycle).
    pub caches: Option<HierarchyConfig>,
}

impl Default for SystemConfig {
    fn default() -> Self {
        SystemConfig { cores: 1, threads: 1, policy: Policy::RoundRobin, interrupt_thread: None, pipeline: Pipeline::default(), caches: None }
    }
}

/// Why [`System::run`] returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every core with work reached the cycle limit.
    Limit,
    /// No hardware thread has work.
    Idle,
    /// A thread executed `syscall` (its PC is past it); service it and run again.
    Syscall { core: usize, thread: usize },
    /// A device register access by this thread asked the caller to act
    /// (see [`Devices::take_stop`]); the thread goes on when run again.
    Device { core: usize, thread: usize },
    /// A thread's activity returned to [`RETURN_ADDRESS`]; the thread is idle.
    Returned { core: usize, thread: usize },
    /// A thread stopped on an instruction it cannot run; the thread is idle.
    Fault { core: usize, thread: usize, error: Error },
}

pub struct System<D: Devices = NoDevices> {
    pub program: Program,
    pub mem: Memory,
    pub cores: Vec<Core>,
    /// Boxed: [`System::run`] takes it out and puts it back at every call.
    pub caches: Option<Box<Hierarchy>>,
    pub devices: D,
    pub pipeline: Pipeline,
    pub(crate) code: Code,
    pub(crate) blocks: Blocks,
    pub(crate) links: Links,
    pub(crate) threads: usize,
    /// [`System::interleave`]'s order of cores, kept between runs for its allocation.
    turns: Turns,
    /// Two threads' schedules ([`crate::duet`]).
    pub(crate) duets: Duets,
}

impl<D: Devices> System<D> {
    /// Loads `program` into a fresh memory; every thread starts idle.
    pub fn new(program: Program, config: &SystemConfig, devices: D) -> Self {
        let mut mem = Memory::new();
        program.load_into(&mut mem);
        let code = Code::new(&program, &mem);
        let (n, m) = (config.cores, config.threads);
        System {
            program,
            mem,
            cores: (0..n).map(|k| Core::new(k, m, config.policy, config.interrupt_thread)).collect(),
            caches: config.caches.map(|c| Box::new(Hierarchy::new(c, n, m))),
            devices,
            pipeline: config.pipeline,
            blocks: Blocks::new(&code, config.caches, !D::BLOCK_HOOK),
            code,
            links: Links::new(n * m),
            threads: m,
            turns: Turns::default(),
            duets: Duets::default(),
        }
    }

    /// Gives hardware thread `(core, thread)` the context `ctx`, runnable from cycle `at`.
    pub fn start(&mut self, core: usize, thread: usize, ctx: Context, at: u64) {
        self.links.clear(core * self.threads + thread);
        let c = &mut self.cores[core];
        if !c.has_work() {
            c.now = c.now.max(at);
        }
        c.threads[thread].start(ctx, at);
    }

    /// Takes the context away from a thread at an instruction boundary.
    pub fn stop(&mut self, core: usize, thread: usize) -> Context {
        self.links.clear(core * self.threads + thread);
        self.cores[core].threads[thread].stop()
    }

    /// Runs until every core with work reaches cycle `until`, or a thread stops.
    pub fn run(&mut self, until: u64) -> Stop {
        match self.caches.take() {
            Some(mut h) => {
                let s = self.run_with(&mut *h, until);
                self.caches = Some(h);
                s
            }
            None => self.run_with(&mut Perfect, until),
        }
    }

    fn run_with<T: Timing>(&mut self, timing: &mut T, until: u64) -> Stop {
        self.interleave(until, |sys, k, turns| sys.run_core(k, until.min(turns.next()), timing))
    }

    /// [`System::run`]'s loop; `turn(self, k, turns)` runs core `k`, the
    /// laggard, up to its turn's end (`turns.next()`; see [`crate::ahead`]
    /// for what else it may run).
    #[inline(always)]
    pub(crate) fn interleave(&mut self, until: u64, mut turn: impl FnMut(&mut Self, usize, &Turns) -> Option<Stop>) -> Stop {
        // The laggard core runs next, until another core's turn: cores
        // interleave in cycle order, and within a cycle in index order
        // (core k may issue at another's cycle only if its index is lower),
        // as if every core were stepped one cycle at a time. Cores with work
        // are kept by (cycle, index); only the core that ran moves.
        let mut turns = std::mem::take(&mut self.turns);
        turns.fill(&self.cores);
        let stop = loop {
            let Some((now, k)) = turns.laggard() else {
                break Stop::Idle;
            };
            if now >= until {
                break Stop::Limit;
            }
            if let Some(stop) = turn(self, k, &turns) {
                break stop;
            }
            turns.ran(&self.cores[k]);
        };
        self.turns = turns;
        stop
    }

    /// Runs core `k` until its cycle reaches `limit`, it runs out of work, or a thread stops.
    pub(crate) fn run_core<T: Timing>(&mut self, k: usize, limit: u64, timing: &mut T) -> Option<Stop> {
        // A thread alone with work (the others idle) runs as on a core of its own.
        if let Some(t) = if self.threads == 1 { Some(0) } else { self.cores[k].alone() } {
            // Cores in lockstep get slices of one cycle: with free fetches (no
            // instruction cache) one step gives what the slice would, without
            // the slice's set-up.
            if !T::CACHED && limit == self.cores[k].now + 1 {
                return self.step_alone(k, t, timing);
            }
            return self.run_thread(k, t, limit, timing);
        }
        self.run_shared(k, limit, timing)
    }

    /// Issues the next instruction of thread `t`, alone with work on core
    /// `k`, if it is ready this cycle; else moves the core on to when it is.
    fn step_alone<T: Timing>(&mut self, k: usize, t: usize, timing: &mut T) -> Option<Stop> {
        if !self.cores[k].threads[t].active {
            return None;
        }
        if let Some(s) = self.prepare(k, t, timing) {
            return Some(s);
        }
        let c = &mut self.cores[k];
        if c.threads[t].ready > c.now {
            c.now = c.threads[t].ready;
            return None;
        }
        self.issue(k, t, timing)
    }

    /// Issues thread `t`'s fetched instruction at core `k`'s cycle.
    pub(crate) fn issue<T: Timing>(&mut self, k: usize, t: usize, timing: &mut T) -> Option<Stop> {
        let topology = ((self.cores.len() as u32) << 8) | self.threads as u32;
        let id = self.thread_id(k, t);
        let core = &mut self.cores[k];
        let now = core.now;
        let th = &mut core.threads[t];
        let inst = th.next.take()?;
        let pc = th.ctx.pc;
        let who = Who { core: k, thread: t, id, now, instret: th.instructions, topology };
        let mut bus = DataBus::new(&mut self.mem, &mut self.code, &mut self.links, timing, &mut self.devices, who);
        let flow = match step(th, inst, &mut bus, &self.pipeline) {
            Ok((f, ready)) => {
                th.ready = ready;
                f
            }
            Err(f) => {
                let msg = std::mem::take(&mut bus.device_error);
                return Some(self.fault(k, t, pc, f, &msg));
            }
        };
        let stop = bus.mmio && bus.devices.take_stop();
        th.instructions += 1;
        core.issued(t);
        core.now = now + 1;
        if flow == Flow::Syscall {
            return Some(Stop::Syscall { core: k, thread: t });
        }
        stop.then_some(Stop::Device { core: k, thread: t })
    }

    pub(crate) fn fault(&mut self, k: usize, t: usize, pc: u32, f: Fault, device: &str) -> Stop {
        self.cores[k].threads[t].active = false;
        let word = self.mem.read_u32(pc & !3);
        let what = f.describe(device) + &self.program.place(pc);
        Stop::Fault { core: k, thread: t, error: Error::Fault { program: self.program.name.clone(), pc, word, what } }
    }

    /// Fetches thread `t`'s next instruction if not yet done, charging the fetch.
    #[inline(always)]
    pub(crate) fn prepare<T: Timing>(&mut self, k: usize, t: usize, timing: &mut T) -> Option<Stop> {
        let who = k * self.threads + t;
        let core = &mut self.cores[k];
        let now = core.now;
        let th = &mut core.threads[t];
        if th.next.is_some() {
            return None;
        }
        let pc = th.ctx.pc;
        let Some(inst) = self.code.get(pc) else {
            if pc == RETURN_ADDRESS {
                th.active = false;
                return Some(Stop::Returned { core: k, thread: t });
            }
            let what = if pc & 3 != 0 { "misaligned instruction fetch" } else { "instruction fetch outside the program's code" };
            self.cores[k].threads[t].active = false;
            let error = Error::Fault { program: self.program.name.clone(), pc, word: 0, what: what.into() };
            return Some(Stop::Fault { core: k, thread: t, error });
        };
        let fetched = th.ready.max(now) + timing.fetch(k, who, pc) as u64;
        th.ready = fetched.max(th.board.ready(inst));
        th.next = Some(inst);
        None
    }

    /// Global index of a hardware thread (the requester id in cache statistics).
    pub fn thread_id(&self, core: usize, thread: usize) -> usize {
        core * self.threads + thread
    }
}

/// Cores with work by (cycle, index), the laggard first: whose turn it is
/// when cores interleave in cycle order and within a cycle in index order.
#[derive(Default)]
pub(crate) struct Turns(Vec<(u64, usize)>);

impl Turns {
    /// The cores of `cores` with work, in order (the vector is reused: a
    /// new one per run cost an allocation per `System::run` call).
    fn fill(&mut self, cores: &[Core]) {
        self.0.clear();
        self.0.extend(cores.iter().filter(|c| c.has_work()).map(|c| (c.now, c.id)));
        self.0.sort_unstable();
    }

    /// The laggard: its cycle and index.
    #[inline(always)]
    pub(crate) fn laggard(&self) -> Option<(u64, usize)> {
        self.0.first().copied()
    }

    /// Where the laggard's turn ends: the next laggard's, the first by (cycle, index) after it.
    #[inline(always)]
    pub(crate) fn next(&self) -> u64 {
        let k = self.0[0].1;
        self.0.get(1).map_or(u64::MAX, |&(t, j)| t + (j > k) as u64)
    }

    /// The cycle of the next laggard (the first other core).
    #[inline(always)]
    pub(crate) fn others(&self) -> u64 {
        self.0.get(1).map_or(u64::MAX, |&(t, _)| t)
    }

    /// The laggard, `core`, has run: it moves to its new place (only it moves), or leaves without work.
    #[inline(always)]
    pub(crate) fn ran(&mut self, core: &Core) {
        if !core.has_work() {
            self.0.remove(0);
            return;
        }
        self.0[0].0 = core.now;
        let mut i = 0;
        while i + 1 < self.0.len() && self.0[i + 1] < self.0[i] {
            self.0.swap(i, i + 1);
            i += 1;
        }
    }
}

/// Executes `inst` for `th` at the bus's cycle; returns the flow and the
/// cycle from which the thread's next instruction may issue.
#[inline(always)]
pub(crate) fn step<T: Timing, D: Devices>(th: &mut HwThread, inst: Inst, bus: &mut DataBus<'_, T, D>, p: &Pipeline) -> Result<(Flow, u64), Fault> {
    let (now, pc) = (bus.who.now, th.ctx.pc);
    let flow = execute(&mut th.ctx, inst, bus)?;
    bus.devices.issued(bus.who.id, pc, now);
    let done = now + 1 + bus.stall as u64;
    th.board.issued(p, inst, now, done);
    Ok((flow, ready_after(flow, done, p)))
}

/// The cycle from which the next instruction may issue after one that went
/// `flow` and finished at `done`: a taken branch's penalty, an annulled slot's cycle.
#[inline(always)]
pub(crate) fn ready_after(flow: Flow, done: u64, p: &Pipeline) -> u64 {
    // A match, not a table indexed by the flow: the table was rebuilt on the stack for every instruction.
    done + match flow {
        Flow::Taken => u64::from(p.branch_taken_cycles),
        Flow::Annulled => 1,
        Flow::Next | Flow::Syscall => 0,
    }
}
