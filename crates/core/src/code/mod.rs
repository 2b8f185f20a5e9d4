//! Kernel activities that are code: the NIC's interrupt handler, the NET_RX
//! bottom half or the NAPI poll, the receive system call and the application
//! as entry points of a MIPS program, run instruction by instruction on the
//! execution-driven cores of `irqsim-mips`, one simulated hardware thread per
//! machine thread.
//!
//! The machine's CPU model still decides what runs (levels, preemption,
//! entry and context costs, cycle bins); an activity that is code has no
//! cycle count of its own: it ends when its code returns. Each started
//! activity keeps its own register file ([`irqsim_mips::Context`]), saved
//! at the instruction boundary where a higher level preempts it and given
//! back when it resumes, so multithreaded contexts are literal register
//! files. The counts of instructions and cache misses go to the bin of the
//! activity that ran them.
//!
//! Files: `config.rs` (the `[code]` keys), `ports.rs` (the device registers
//! code drives), `fold.rs` (stops a run need not make), `frame.rs` (the
//! bytes the NIC writes); the machine's side
//! is `machine/code.rs`.

pub mod config;
pub mod fold;
pub mod frame;
pub mod ports;
mod watchdog;

pub use config::CodeConfig;
pub use watchdog::Watchdog;

use crate::cpu::{Bin, Level};
use irqsim_mips::config::ExecConfig;
use irqsim_mips::hierarchy::{HierarchyConfig, Level as Cache};
use irqsim_mips::mem::PAGE_BYTES;
use irqsim_mips::{Context, Program, System};
use ports::Ports;
use serde::Serialize;

/// Work cycles of a code job: it ends when the code returns, never by count.
pub const UNTIL_RETURN: u64 = crate::cpu::NEVER;

/// Stack bytes of each activity (per thread and level), the first below
/// this address, each next one [`stack_stride`] below the last.
const STACK_TOP: u32 = 0x7FF0_0000;
const STACK_BYTES: u32 = 64 * 1024;

/// How far apart two activities' stack tops are: the stack, then a guard
/// below it (a write there is a stack overflow fault naming the function
/// and PC) of at least a page and a whole number of every cache's way span,
/// so that each stack maps to the same cache sets as when the stacks were
/// adjacent, with no guard: results do not move.
fn stack_stride(caches: Option<&HierarchyConfig>) -> u32 {
    let span = caches.map_or(0, |c| [c.l1i, c.l1d, c.l2].iter().map(|g| g.size_bytes / g.ways).max().unwrap_or(0));
    STACK_BYTES + span.max(PAGE_BYTES)
}

/// The first interrupt number of the timer ticks: thread `t`'s tick calls
/// the `isr` entry with `TICK_IRQ + t` (the NICs are 0 and 1).
pub const TICK_IRQ: u32 = 2;

/// The system-call number of `read`, which the application's `recv` uses.
pub const SYS_READ: u32 = 4003;
/// What the receive system call returns when nothing is queued.
pub const EAGAIN: u32 = (-11i32) as u32;

/// A core setting's error, its key under `code.core` (`code.core.l1d.way_masks`).
pub(crate) fn core_problem(e: irqsim_mips::Error) -> (String, String) {
    match e {
        irqsim_mips::Error::Config { key, msg } => (format!("code.core.{key}"), msg),
        other => ("code.core".into(), other.to_string()),
    }
}

/// `SYMBOL[+OFFSET]=VALUE`: the word to write before the program starts.
fn poke(program: &Program, p: &str) -> Result<(u32, u32), String> {
    let want = "expected SYMBOL[+OFFSET]=VALUE";
    let (place, value) = p.split_once('=').ok_or(want)?;
    let (name, off) = place.split_once('+').unwrap_or((place, "0"));
    let num = |s: &str| irqsim_mips::config::parse_u64(s).and_then(|v| u32::try_from(v).ok()).ok_or(want);
    let base = program.symbol(name.trim()).ok_or_else(|| format!("no symbol `{}` in the program", name.trim()))?;
    let addr = base.wrapping_add(num(off)?);
    if !addr.is_multiple_of(4) {
        return Err(format!("address {addr:#x} is not word-aligned"));
    }
    Ok((addr, num(value)?))
}

/// Backs a context that made the receive call up onto its `syscall`, with
/// `$v0` restored: Linux restarts a system call so (arch/mips/kernel/signal.c).
fn restart(ctx: &mut Context) {
    ctx.pc = ctx.pc.wrapping_sub(4);
    ctx.npc = ctx.pc.wrapping_add(4);
    ctx.r[irqsim_mips::context::reg::V0] = SYS_READ;
}

/// Which entry point an activity runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    Init,
    /// NIC `irq`'s interrupt: `code.isr`, or for another NIC
    /// (`[[nics.others]]`, NIC `irq` >= 1) `code.other_isr`.
    Isr {
        irq: u8,
    },
    /// On the NAPI path, the top half of receive queue `q` (its vector):
    /// NIC 0's, or past them another NIC's.
    QueueIsr {
        q: u8,
    },
    /// The timer tick of a thread: the interrupt entry with [`TICK_IRQ`] + its index.
    Tick,
    BottomHalf,
    /// The driver's NAPI poll of receive queue `q`, called by NET_RX or the NAPI thread.
    Poll {
        q: u8,
    },
    /// The same poll called by the application's recv, busy polling (process context).
    BusyPoll {
        q: u8,
    },
    Syscall,
    /// A send the workload makes: the kernel's send entry with the frame's size.
    Send {
        bytes: u16,
    },
    App,
}

impl Activity {
    pub fn bin(self) -> Bin {
        match self {
            Activity::Init | Activity::Syscall | Activity::Send { .. } | Activity::BusyPoll { .. } => Bin::Kernel,
            Activity::Isr { .. } | Activity::QueueIsr { .. } | Activity::Tick => Bin::Interrupt,
            Activity::BottomHalf | Activity::Poll { .. } => Bin::BottomHalf,
            Activity::App => Bin::User,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Activity::Init => "kernel init",
            Activity::Isr { .. } => "NIC ISR (code)",
            Activity::QueueIsr { .. } => "NIC queue top half (code)",
            Activity::Tick => "timer tick (code)",
            Activity::BottomHalf => "NET_RX (code)",
            Activity::Poll { .. } => "NAPI poll (code)",
            Activity::BusyPoll { .. } => "busy poll (code)",
            Activity::Syscall => "recv (code)",
            Activity::Send { .. } => "send (code)",
            Activity::App => "application (code)",
        }
    }
}

/// Instructions and cache misses counted in one bin.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub instructions: u64,
    pub l1i_misses: u64,
    pub l1d_misses: u64,
    pub l2_misses: u64,
}

impl Counts {
    fn add(&mut self, d: [u64; 4]) {
        self.instructions += d[0];
        self.l1i_misses += d[1];
        self.l1d_misses += d[2];
        self.l2_misses += d[3];
    }
}

struct Entries {
    init: u32,
    isr: u32,
    /// Beside other NICs: their interrupts' entry (off the NAPI path).
    other_isr: Option<u32>,
    bottom_half: u32,
    syscall: u32,
    /// The workload's sends (`code.send`), if the program has the entry.
    send: Option<u32>,
    app: Option<u32>,
    /// On the NAPI path: the top half and the poll.
    napi: Option<NapiEntries>,
}

/// The NAPI path as code sees it: the budgets its polls get, NIC 0's
/// receive queues (RSS) and the CPUs RPS steers to.
#[derive(Debug, Clone, Copy)]
pub struct NapiPath {
    pub weight: u32,
    pub busy_budget: u32,
    pub queues: usize,
    pub rps_cpus: u32,
}

/// The NAPI driver's entries and the budgets its polls get.
struct NapiEntries {
    isr: u32,
    poll: u32,
    /// `napi.weight` from NET_RX or the thread; `napi.busy_poll_budget` from recv.
    weight: u32,
    busy_budget: u32,
}

/// The simulated cores and what the machine keeps about their code.
pub struct Code {
    pub sys: System<Ports>,
    entries: Entries,
    levels: usize,
    /// Distance between two activities' stack tops ([`stack_stride`]).
    stack_stride: u32,
    threads_per_core: usize,
    /// Registers of a preempted or blocked activity, per (thread, level).
    saved: Vec<Option<Context>>,
    /// The level whose registers each hardware thread holds, and its bin.
    on_cpu: Vec<Option<(Level, Bin)>>,
    /// Each thread's counters when its current stretch began.
    mark: Vec<[u64; 4]>,
    /// Per thread, per [`Bin`] index: what code did there.
    pub counts: Vec<[Counts; 6]>,
    pub app_thread: usize,
    /// Per hardware thread, whether its kernel is this program, when
    /// `code.cpus` names them (`None`: every one); the others run the
    /// abstract costs.
    pub cpus: Option<Vec<bool>>,
    /// Per other NIC (`[[nics.others]]`), whether its driver is this
    /// program (its interrupts go to a CPU that runs it).
    pub drives_port: Vec<bool>,
    /// The thread NIC 1 interrupts, if not `nic.irq_thread`.
    pub tx_irq_thread: Option<usize>,
    /// The socket the application waits on, while it is blocked.
    pub app_blocked: Option<u32>,
    /// The application's `syscall` arguments ($a0..$a2), until it runs.
    pub syscall_args: [u32; 3],
    /// NET_RX raised and not yet started, per thread.
    pub softirq_pending: Vec<bool>,
    /// Cycles between timer ticks (0: none), and each thread's tick posted and not yet returned.
    pub tick: u64,
    pub tick_posted: Vec<bool>,
    /// A tick came while the thread's critical section was open: it runs
    /// when the section closes.
    pub tick_held: Vec<bool>,
    /// Each NIC's interrupt is posted and not yet ended (EOI).
    pub irq_posted: Vec<bool>,
    /// On the NAPI path: each receive queue's top half (NIC 0's queues,
    /// then the other NICs') is posted and has not returned (which ends
    /// its interrupt).
    pub rxq_posted: Vec<bool>,
    /// A NIC's interrupt on the bare wire waits for its CPU's mask to drop
    /// (a critical section of code was open when it came).
    pub irq_held: Vec<bool>,
    /// A NIC is sending a frame.
    pub tx_busy: Vec<bool>,
    pub flows: u32,
    pub next_tag: u32,
    pub frame: Vec<u8>,
    /// DMA writes update the L2's copies instead of invalidating them.
    dma_updates_l2: bool,
    pub dropped_software: u64,
    pub forwarded: u64,
    /// Frames the send entry put on NIC 0's ring that the NIC has not sent.
    pub sends_queued: u64,
    /// Whether the frame each NIC has on the wire is a forwarded one (a
    /// received frame's tag), counted as offered when it started.
    pub tx_forwarding: Vec<bool>,
    /// A WAKE that came while its reader was not blocked, kept for its next EAGAIN.
    pub wake_pending: Option<u32>,
    /// An error code caused outside a register access, reported at the next look.
    pub fault: Option<String>,
    /// What the last activity to return at each (thread, level) left in
    /// `$v0` (a poll's frames), kept until its completion reads it.
    results: Vec<u32>,
    /// The receive call found its socket empty and busy-polls before it sleeps.
    pub busy_recv: bool,
    /// The lockup watchdog (`watchdog.rs`).
    pub watchdog: Watchdog,
    /// Runs fold the stops they need not make (`fold.rs`); tests compare
    /// with runs that do not.
    pub folds: bool,
}

/// A problem with `[code]`: the key and what is wrong.
pub type Problem = (String, String);

/// A NAPI driver that serves a fixed number of instances says so in a word
/// `nic_napi_instances` (programs/kernel's: its one receive ring, no RPS
/// backlog); RSS queues, other NICs and RPS backlogs beyond it are refused
/// at load.
/// A driver may also say how many rings it gives the first NIC
/// (`nic_first_queues`) and how many RPS backlogs it keeps
/// (`nic_rps_backlogs`), which its total does not tell apart
/// (programs/kernel/nics.c).
fn napi_instances_fit(sys: &System<Ports>, given: &str, p: NapiPath, others: usize) -> Result<(), Problem> {
    let word = |name: &str| sys.program.symbol(name).map(|a| sys.mem.read_u32(a) as usize);
    if let Some(n) = word("nic_first_queues").filter(|&n| p.queues > n) {
        return Err(("rss.queues".into(), format!("{given}'s driver gives the first NIC {n} receive ring(s) (its nic_first_queues), not {}", p.queues)));
    }
    if let Some(n) = word("nic_rps_backlogs").filter(|&n| p.rps_cpus as usize > n) {
        let msg = match n {
            0 => format!(
                "{given}'s driver keeps no RPS backlog (its nic_rps_backlogs is 0): use one that does (programs/kernel/host-nics-rss.elf), or remove the key"
            ),
            n => format!("{given}'s driver keeps {n} RPS backlog(s) (its nic_rps_backlogs), not {}", p.rps_cpus),
        };
        return Err(("rss.rps_cpus".into(), msg));
    }
    let Some(addr) = sys.program.symbol("nic_napi_instances") else { return Ok(()) };
    let (serves, need) = (sys.mem.read_u32(addr) as usize, p.queues + others + p.rps_cpus as usize);
    if need <= serves {
        return Ok(());
    }
    let key = if p.queues > serves {
        "rss.queues"
    } else if p.queues + others > serves {
        "nics.others"
    } else {
        "rss.rps_cpus"
    };
    Err((
        key.into(),
        format!(
            "{given}'s NAPI driver serves {serves} instance(s) (its nic_napi_instances), but {} receive queue(s), {others} other NIC(s) and {} RPS backlog(s) need {need}",
            p.queues, p.rps_cpus
        ),
    ))
}

/// A driver that serves other NICs' own RSS queues, and RPS for their
/// frames, says how many queues a NIC it serves at most in a word
/// `nic_other_queues` (rx_min built with `-DRX_NICS_RSS`, which numbers
/// every NIC's queues as the machine does). Without it a driver gives each
/// other NIC one ring, numbered one per NIC, and steers only NIC 0's
/// frames: more queues on a NIC it drives, or before one (the numbers
/// would shift), and RPS beside other NICs are refused at load. `others`:
/// each other NIC's queues and whether the program drives it.
fn other_queues_fit(sys: &System<Ports>, given: &str, others: &[(usize, bool)], rps: bool) -> Result<(), Problem> {
    let word = sys.program.symbol("nic_other_queues");
    let serves = word.map_or(1, |a| sys.mem.read_u32(a) as usize);
    let why = if word.is_some() { "its nic_other_queues" } else { "it has no nic_other_queues" };
    let last_driven = others.iter().rposition(|&(_, on_code)| on_code);
    let unserved = others.iter().enumerate().position(|(i, &(n, on_code))| n > serves && (on_code || (word.is_none() && last_driven.is_some_and(|l| l > i))));
    if let Some(i) = unserved {
        let what = if others[i].1 { "this one has" } else { "a NIC it drives comes after this one, which has" };
        let msg = format!(
            "{given}'s driver gives another NIC {serves} receive queue(s) ({why}), but {what} {}: use a driver that serves more (programs/system/rx_nics_rss.elf, or the kernel's programs/kernel/host-nics-rss.elf)",
            others[i].0
        );
        return Err((format!("nics.others[{i}].queues"), msg));
    }
    if rps && !others.is_empty() && word.is_none() {
        let msg = format!(
            "{given}'s driver steers only the first NIC's frames to RPS backlogs (it has no nic_other_queues): use a driver that steers theirs (programs/system/rx_nics_rss.elf, or the kernel's programs/kernel/host-nics-rss.elf), or remove the key"
        );
        return Err(("rss.rps_cpus".into(), msg));
    }
    Ok(())
}

impl Code {
    /// The cores for `threads` machine threads of `levels` levels each;
    /// `napi`: the NAPI path's weight and busy-poll budget, when it is
    /// chosen; `others`: the receive queues of each NIC beside NIC 0
    /// (`[[nics.others]]`, numbered after NIC 0's) and whether this
    /// program drives it (its interrupts go to a CPU that runs it).
    pub fn new(
        c: &CodeConfig,
        threads: usize,
        levels: usize,
        napi: Option<NapiPath>,
        others: &[(usize, bool)],
        base_dir: &std::path::Path,
    ) -> Result<Code, Problem> {
        let given = c.program.as_deref().expect("code part selected");
        let path = base_dir.join(given);
        let program = Program::load(&path).map_err(|e| ("code.program".to_string(), format!("{}: {e}", path.display())))?;
        let exec = ExecConfig::from_table(&c.core).map_err(core_problem)?;
        let (cores, tpc) = (exec.system.cores, exec.system.threads);
        if cores * tpc != threads {
            return Err(("code.core.core.threads".into(), format!("{cores} core(s) x {tpc} thread(s) is {}, but cpu.threads is {threads}", cores * tpc)));
        }
        for (key, t) in [("app_thread", Some(c.app_thread)), ("tx_irq_thread", c.tx_irq_thread)] {
            if let Some(t) = t.filter(|&t| t >= threads) {
                return Err((format!("code.{key}"), format!("thread {t} does not exist (cpu.threads is {threads})")));
            }
        }
        let stride = stack_stride(exec.system.caches.as_ref());
        let stacks = (threads * levels) as u64 * u64::from(stride);
        match u64::from(STACK_TOP).checked_sub(stacks) {
            Some(lowest) if u64::from(program.end()) <= lowest => {}
            lowest => {
                let (n, guard) = (threads * levels, stride - STACK_BYTES);
                let from = lowest.map_or("beyond the address space".into(), |a| format!("from {a:#x}"));
                return Err((
                    "code.program".into(),
                    format!("{given} ends at {:#x}, above the activities' {n} stacks (64 KiB each and a {guard}-byte guard) {from}", program.end()),
                ));
            }
        }
        let symbol = |key: &str, name: &str| program.symbol(name).ok_or_else(|| (format!("code.{key}"), format!("no symbol `{name}` in {given}")));
        // Its presence says the driver serves other NICs, on the NAPI path too.
        let other_isr =
            match !others.is_empty() {
                true => Some(program.symbol(&c.other_isr).ok_or_else(|| {
                    ("nics.others".to_string(), format!("{given} has no `{}` (`code.other_isr`): its driver serves NIC 0 only", c.other_isr))
                })?),
                false => None,
            };
        let entries = Entries {
            init: symbol("init", &c.init)?,
            isr: symbol("isr", &c.isr)?,
            other_isr,
            bottom_half: symbol("bottom_half", &c.bottom_half)?,
            syscall: symbol("syscall", &c.syscall)?,
            send: program.symbol(&c.send),
            app: if c.app.is_empty() { None } else { Some(symbol("app", &c.app)?) },
            napi: match napi {
                Some(p) => Some(NapiEntries {
                    isr: symbol("napi_isr", &c.napi_isr)?,
                    poll: symbol("napi_poll", &c.napi_poll)?,
                    weight: p.weight,
                    busy_budget: p.busy_budget,
                }),
                None => None,
            },
        };
        let mut ports = Ports::new(c.mmio_read_cycles, tpc);
        let queues = napi.map_or(1, |p| p.queues);
        let counts: Vec<usize> = others.iter().map(|o| o.0).collect();
        ports.set_queues(queues, &counts);
        ports.rps_cpus = napi.map_or(0, |p| p.rps_cpus);
        ports.answers = vec![None; threads];
        let nics = ports.nics.len();
        let other_queues: usize = counts.iter().sum();
        let mut sys = System::new(program, &exec.system, ports);
        if let Some(p) = napi {
            napi_instances_fit(&sys, given, p, other_queues)?;
        }
        other_queues_fit(&sys, given, others, napi.is_some_and(|p| p.rps_cpus > 0))?;
        for i in 0..(threads * levels) as u32 {
            let top = STACK_TOP - i * stride;
            sys.mem.guard(top - stride, top - STACK_BYTES);
        }
        irqsim_mips::run::apply_pins(&mut sys, &exec.pins).map_err(core_problem)?;
        for (i, p) in c.poke.iter().enumerate() {
            let (addr, value) = poke(&sys.program, p).map_err(|msg| (format!("code.poke[{i}]"), format!("{p:?}: {msg}")))?;
            sys.mem.write_u32(addr, value);
        }
        Ok(Code {
            sys,
            entries,
            levels,
            stack_stride: stride,
            threads_per_core: tpc,
            saved: vec![None; threads * levels],
            on_cpu: vec![None; threads],
            mark: vec![[0; 4]; threads],
            counts: vec![[Counts::default(); 6]; threads],
            app_thread: c.app_thread,
            cpus: c.cpus.as_ref().map(|_| c.runs(threads)),
            drives_port: others.iter().map(|o| o.1).collect(),
            tx_irq_thread: c.tx_irq_thread,
            app_blocked: None,
            syscall_args: [0; 3],
            softirq_pending: vec![false; threads],
            tick: 0,
            tick_posted: vec![false; threads],
            tick_held: vec![false; threads],
            irq_posted: vec![false; nics],
            rxq_posted: vec![false; queues + other_queues],
            irq_held: vec![false; nics],
            tx_busy: vec![false; nics],
            sends_queued: 0,
            tx_forwarding: vec![false; nics],
            flows: c.flows,
            next_tag: 1,
            frame: Vec::new(),
            dma_updates_l2: c.dma == "update",
            dropped_software: 0,
            forwarded: 0,
            wake_pending: None,
            fault: None,
            results: vec![0; threads * levels],
            busy_recv: false,
            watchdog: Watchdog::new(threads * levels),
            folds: true,
        })
    }

    /// Whether hardware thread `t` runs this program.
    pub fn runs(&self, t: usize) -> bool {
        self.cpus.as_ref().is_none_or(|c| c[t])
    }

    pub fn has_app(&self) -> bool {
        self.entries.app.is_some()
    }

    /// Whether the program has the entry that takes the workload's sends.
    pub fn sends(&self) -> bool {
        self.entries.send.is_some()
    }

    /// The simulated (core, hardware thread) of machine thread `t`.
    pub fn hw(&self, t: usize) -> (usize, usize) {
        (t / self.threads_per_core, t % self.threads_per_core)
    }

    /// The machine thread of a simulated hardware thread.
    pub fn thread_of(&self, core: usize, thread: usize) -> usize {
        core * self.threads_per_core + thread
    }

    /// The level whose registers thread `t` runs, if any.
    pub fn on_cpu(&self, t: usize) -> Option<Level> {
        self.on_cpu[t].map(|(l, _)| l)
    }

    /// Gives thread `t` the registers of `activity` at `level` from cycle
    /// `at`: those saved when it was preempted, or a fresh call of its entry.
    pub fn start(&mut self, t: usize, level: Level, activity: Activity, at: u64) {
        let slot = t * self.levels + level as usize;
        let ctx = self.saved[slot].take().unwrap_or_else(|| {
            self.watchdog.began(slot, level, activity, at);
            self.fresh(t, level, activity)
        });
        let (k, h) = self.hw(t);
        self.mark[t] = self.counters(t);
        self.on_cpu[t] = Some((level, activity.bin()));
        self.sys.start(k, h, ctx, at);
    }

    /// Takes thread `t`'s registers away at an instruction boundary and
    /// keeps them for the activity's resumption.
    pub fn preempt(&mut self, t: usize) {
        let (k, h) = self.hw(t);
        let ctx = self.sys.stop(k, h);
        if let Some((level, _)) = self.on_cpu[t] {
            self.saved[t * self.levels + level as usize] = Some(ctx);
        }
        self.settle(t);
    }

    /// Thread `t`'s activity returned `v0` (its hardware thread is idle).
    pub fn returned(&mut self, t: usize, v0: u32) {
        if let Some(level) = self.on_cpu(t) {
            let slot = t * self.levels + level as usize;
            self.results[slot] = v0;
            self.watchdog.ended(slot);
        }
        self.settle(t);
    }

    /// What the activity at `level` of thread `t` returned last.
    pub fn result(&self, t: usize, level: Level) -> u32 {
        self.results[t * self.levels + level as usize]
    }

    /// Counts what thread `t` did since its stretch began, in its bin.
    pub fn settle(&mut self, t: usize) {
        if let Some((_, bin)) = self.on_cpu[t].take() {
            let now = self.counters(t);
            let d = std::array::from_fn(|i| now[i] - self.mark[t][i]);
            self.counts[t][bin as usize].add(d);
        }
    }

    /// Registers of the blocked application, to restart its system call.
    pub fn block_app(&mut self, socket: u32, mut ctx: Context) {
        restart(&mut ctx);
        let slot = self.app_slot();
        self.saved[slot] = Some(ctx);
        self.app_blocked = Some(socket);
    }

    /// Where the application's saved registers live (its thread, user level).
    fn app_slot(&self) -> usize {
        self.app_thread * self.levels + crate::cpu::USER as usize
    }

    /// The application's receive call restarts instead of returning.
    pub fn restart_app(&mut self) {
        if let Some(ctx) = self.app_context() {
            restart(ctx);
        }
    }

    /// The application's saved registers (it is preempted by its system call).
    pub fn app_context(&mut self) -> Option<&mut Context> {
        let slot = self.app_slot();
        self.saved[slot].as_mut()
    }

    /// Takes the application's saved registers (it blocks).
    pub fn take_app_context(&mut self) -> Option<Context> {
        let slot = self.app_slot();
        self.saved[slot].take()
    }

    fn fresh(&self, t: usize, level: Level, activity: Activity) -> Context {
        let sp = STACK_TOP - (t * self.levels + level as usize) as u32 * self.stack_stride;
        let e = &self.entries;
        let napi = || e.napi.as_ref().expect("polls run only on the NAPI path");
        match activity {
            Activity::Init => Context::call(e.init, sp, &[]),
            Activity::QueueIsr { q } => Context::call(napi().isr, sp, &[u32::from(q)]),
            Activity::Isr { irq } if self.sys.devices.is_other(usize::from(irq)) => {
                Context::call(e.other_isr.expect("other NICs interrupt only with the entry"), sp, &[u32::from(irq)])
            }
            Activity::Isr { irq } => Context::call(e.isr, sp, &[u32::from(irq)]),
            Activity::Tick => Context::call(e.isr, sp, &[TICK_IRQ + t as u32]),
            Activity::BottomHalf => Context::call(e.bottom_half, sp, &[]),
            Activity::Poll { q } => Context::call(napi().poll, sp, &[u32::from(q), napi().weight]),
            Activity::BusyPoll { q } => Context::call(napi().poll, sp, &[u32::from(q), napi().busy_budget]),
            Activity::Syscall => Context::call(e.syscall, sp, &self.syscall_args),
            Activity::Send { bytes } => Context::call(e.send.expect("sends start only with the entry"), sp, &[u32::from(bytes)]),
            Activity::App => Context::call(e.app.expect("an application"), sp, &[]),
        }
    }

    /// Instructions and L1I, L1D, L2 misses of thread `t` so far.
    pub(crate) fn counters(&self, t: usize) -> [u64; 4] {
        let (k, h) = self.hw(t);
        let instructions = self.sys.cores[k].threads[h].instructions;
        let Some(c) = &self.sys.caches else {
            return [instructions, 0, 0, 0];
        };
        let l2 = if c.config.l2_shared { 0 } else { k };
        [instructions, c.l1i[k].counts[t].misses, c.l1d[k].counts[t].misses, c.l2[l2].counts[t].misses]
    }

    /// A DMA write of `[addr, addr + len)`: the bytes go to memory and the
    /// cached copies are invalidated (DMA is cache-coherent), except the
    /// L2's under `code.dma = "update"`, which stay valid (caches here hold
    /// tags only: the data is memory's).
    pub fn dma_write(&mut self, addr: u32, bytes: &[u8]) {
        self.sys.mem.write_bytes(addr, bytes);
        let Some(h) = self.sys.caches.as_mut() else { return };
        let levels: &[Cache] = if self.dma_updates_l2 { &[Cache::L1d] } else { &[Cache::L1d, Cache::L2] };
        for &level in levels {
            for cache in h.all(level) {
                cache.invalidate_range(addr, bytes.len() as u32);
            }
        }
    }

    /// Counts of every bin, summed over threads.
    pub fn totals(&self) -> [Counts; 6] {
        let mut out = [Counts::default(); 6];
        for per in &self.counts {
            for (o, c) in out.iter_mut().zip(per) {
                o.add([c.instructions, c.l1i_misses, c.l1d_misses, c.l2_misses]);
            }
        }
        out
    }
}
