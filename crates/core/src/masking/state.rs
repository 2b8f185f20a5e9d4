//! Interrupt masking state and the priority-level interrupt sources of the
//! masking study's machines (Mach on the Luna88k and DECstations).
//!
//! The sources raise interrupts by a Poisson or periodic process with a
//! priority mix; each runs a handler program on thread 0. What the CPU runs
//! for sections, prologues and continuations is `masking/jobs.rs`, and its
//! steps on the machine are `machine/masking/`.
//! `machine::masking::Model` runs programs and arrivals given directly (the
//! property tests).

use super::jobs::{Arrival, Counters, HandlerRun, Irq, Job as MaskStep, MAX_WAITING, Program, Scheme, Step, check_programs};
use super::{Costs, MaskingConfig, NullRpcConfig};
use crate::cpu::{IRQ, Thread};
use crate::engine::Time;
use crate::workload::config::Process;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::collections::VecDeque;

pub(crate) struct Masking {
    pub programs: Vec<Program>,
    pub arrivals: Box<dyn Iterator<Item = Arrival>>,
    pub scheme: Scheme,
    pub costs: Costs,
    /// Each CPU's masks: a mask is a CPU's, as in an SMP kernel.
    pub cpus: Vec<CpuMask>,
    /// Sections mask the interrupts a controller delivers (any controller,
    /// the Linux and NAPI paths): the CPU takes none while its hardware
    /// mask is up. Otherwise they mask priority levels on the direct wire.
    pub wired: bool,
    /// The kernel code's sections are this part's (`masking.code_sections`).
    pub code: bool,
    pub next_id: u32,
    pub levels: u8,
    pub counters: Counters,
    /// Every handler's life, when `Some` (tests), and each interrupt's arrival.
    pub log: Option<Vec<HandlerRun>>,
    pub arrived: Vec<Time>,
}

/// One CPU's masking state.
pub(crate) struct CpuMask {
    /// Open sections (priorities, innermost last) of the activity at each CPU level.
    pub open: Vec<Vec<u8>>,
    /// Hardware mask: priorities at or below it are held (0: none).
    pub hw: u8,
    /// Interrupts held by the hardware mask, per priority, in arrival order.
    pub held: Vec<VecDeque<(Irq, u16)>>,
    /// Interrupts with continuations (and their handler programs), in arrival order.
    pub deferred: VecDeque<(Irq, u16)>,
    /// The controller input of an interrupt taken through a controller whose
    /// handler waits for the section's exit (optimistic, `Masking::wired`).
    pub deferred_input: Option<u16>,
    /// When the handler at each CPU level began, and the masking level then.
    pub began: Vec<(Time, u8)>,
}

impl CpuMask {
    fn new(levels: u8) -> Self {
        let cpu_levels = IRQ as usize + levels as usize;
        Self {
            open: (0..cpu_levels).map(|_| Vec::with_capacity(8)).collect(),
            hw: 0,
            held: (0..=levels).map(|_| VecDeque::new()).collect(),
            deferred: VecDeque::new(),
            deferred_input: None,
            began: vec![(0, 0); cpu_levels],
        }
    }

    /// The masking level: the highest section open in any activity.
    pub fn level(&self) -> u8 {
        self.open.iter().filter_map(|s| s.iter().max()).max().copied().unwrap_or(0)
    }

    fn waiting(&self) -> u64 {
        self.held.iter().map(|q| q.len() as u64).sum::<u64>() + self.deferred.len() as u64 + u64::from(self.deferred_input.is_some())
    }
}

impl Masking {
    pub fn idle() -> Self {
        Self {
            programs: Vec::new(),
            arrivals: Box::new(std::iter::empty()),
            scheme: Scheme::Conventional,
            costs: Costs::default(),
            cpus: Vec::new(),
            wired: false,
            code: false,
            next_id: 0,
            levels: 0,
            counters: Counters::default(),
            log: None,
            arrived: Vec::new(),
        }
    }

    /// Programs over `levels` priorities (`programs[0]` the base program)
    /// and the interrupts that run the others, on `cpus` CPUs.
    pub fn new(
        cpus: usize,
        levels: u8,
        programs: Vec<Program>,
        arrivals: Box<dyn Iterator<Item = Arrival>>,
        scheme: Scheme,
        costs: Costs,
    ) -> std::result::Result<Self, String> {
        if levels == 0 || IRQ as usize + levels as usize > Thread::<MaskStep>::MAX_LEVELS {
            return Err(format!("{levels} priority levels: must be 1..={}", Thread::<MaskStep>::MAX_LEVELS - IRQ as usize));
        }
        check_programs(&programs, levels)?;
        Ok(Self { programs, arrivals, scheme, costs, cpus: (0..cpus).map(|_| CpuMask::new(levels)).collect(), levels, ..Self::idle() })
    }

    /// The null-RPC workload on `m`'s machine profile, at `clock_mhz`;
    /// `seed` draws the arrivals.
    pub fn null_rpc(m: &MaskingConfig, w: &NullRpcConfig, clock_mhz: f64, seed: u64) -> std::result::Result<Self, String> {
        let handler = Program { steps: vec![Step::Run(w.handler_cycles.max(0) as u64)], bin: crate::cpu::Bin::Interrupt, repeat: false };
        let programs = vec![crate::masking::null_rpc_program(w), handler];
        let levels = m.machine.profile().interrupt_levels;
        Self::new(1, levels, programs, Box::new(Arrivals::new(w, clock_mhz, seed)), m.scheme, m.costs())
    }

    /// Critical sections in the kernel's network path: no programs; a mask
    /// per CPU of `cpus`. `wired`: the interrupts come through a controller.
    pub fn nic(m: &MaskingConfig, cpus: usize, wired: bool) -> Self {
        let levels = m.machine.profile().interrupt_levels;
        let masking = Self::new(cpus, levels, Vec::new(), Box::new(std::iter::empty()), m.scheme, m.costs());
        Self { wired, ..masking.expect("levels checked at load") }
    }

    /// The stall of a section's mask raise and lower under the scheme, for
    /// code's `local_irq_save` and `restore`.
    pub fn raise_lower(&self) -> [u32; 2] {
        let c = &self.costs;
        let pair = match self.scheme {
            Scheme::Conventional => (c.conventional_raise, c.conventional_lower),
            Scheme::Optimistic => (c.optimistic_enter.unwrap_or(0), c.optimistic_leave.unwrap_or(0)),
        };
        [pair.0, pair.1].map(|x| u32::try_from(x).unwrap_or(u32::MAX))
    }

    /// Whether the masking study's programs run (the null RPC).
    pub fn active(&self) -> bool {
        !self.programs.is_empty()
    }

    /// Counts a raised interrupt, and whether it merges into one already
    /// waiting because [`MAX_WAITING`] are.
    pub fn merge_if_full(&mut self) -> bool {
        self.counters.raised += 1;
        let full = self.in_flight() >= MAX_WAITING;
        self.counters.merged += u64::from(full);
        full
    }

    /// Interrupts raised and not yet handled: held, deferred or on a thread.
    pub fn in_flight(&self) -> u64 {
        self.cpus.iter().map(CpuMask::waiting).sum::<u64>() + self.counters.posted
    }

    /// Whether anything on `cpu` masks it: its hardware mask, or an open
    /// section (the software mask, optimistic). What has no prologue to
    /// test the software mask (code's bare-wire devices, the tick) waits.
    pub fn holds(&self, cpu: usize) -> bool {
        self.cpus.get(cpu).is_some_and(|c| c.hw > 0 || c.level() > 0)
    }

    /// Whether `cpu`'s hardware mask keeps it from taking an interrupt from
    /// its controller (`wired`; without sections no CPU has a mask).
    #[inline(always)]
    pub fn masks(&self, cpu: usize) -> bool {
        self.cpus.get(cpu).is_some_and(|c| c.hw > 0)
    }
}

/// Lazily generated interrupt arrivals: one pending at a time.
struct Arrivals {
    rng: Pcg64Mcg,
    /// Next arrival, in cycles (fractional, so periodic gaps do not drift).
    next: f64,
    mean_gap: f64,
    periodic: bool,
    levels: Vec<u8>,
    /// Cumulative weights, last = 1.
    cumulative: Vec<f64>,
}

impl Arrivals {
    fn new(w: &NullRpcConfig, clock_mhz: f64, seed: u64) -> Self {
        let weights = if w.interrupt_weights.is_empty() { vec![1.0; w.interrupt_levels.len()] } else { w.interrupt_weights.clone() };
        let total: f64 = weights.iter().sum();
        let cumulative = weights.iter().scan(0.0, |acc, x| {
            *acc += x / total;
            Some(*acc)
        });
        let mean_gap = if w.interrupt_rate_per_s > 0.0 { clock_mhz * 1e6 / w.interrupt_rate_per_s } else { f64::INFINITY };
        Self {
            rng: Pcg64Mcg::seed_from_u64(seed),
            next: 0.0,
            mean_gap,
            periodic: w.interrupt_process == Process::Periodic,
            levels: w.interrupt_levels.clone(),
            cumulative: cumulative.collect(),
        }
    }
}

impl Iterator for Arrivals {
    type Item = Arrival;

    fn next(&mut self) -> Option<Arrival> {
        if !self.mean_gap.is_finite() {
            return None;
        }
        let gap = if self.periodic { self.mean_gap } else { -self.mean_gap * (1.0 - self.rng.random::<f64>()).ln() };
        self.next += gap;
        let u = self.rng.random::<f64>();
        let i = self.cumulative.iter().position(|&c| u < c).unwrap_or(self.levels.len() - 1);
        Some(Arrival { at: self.next.round() as u64, priority: self.levels[i], program: 1 })
    }
}
