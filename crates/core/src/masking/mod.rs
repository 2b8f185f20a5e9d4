//! Interrupt priority levels and optimistic interrupt protection
//! (Stodolsky, Chen and Bershad, "Fast Interrupt Priority Management in
//! Operating System Kernels", 1993).
//!
//! - [`profiles`]: the machines of Tables 1 and 2 and the cost of every
//!   masking step, idealized or with the modelled memory-system effects.
//! - `kernel/masking.rs`: activities with nested critical sections under
//!   conventional or optimistic protection; `machine/masking.rs`: the
//!   masking state and the priority-level interrupt sources.
//! - This file: the scenario keys (`[masking]` and the `null_rpc` workload),
//!   their checks and the null-RPC program.
//!
//! The null RPC is one activity looping over the Mach cross-address-space
//! RPC path, which holds one interrupt-protected critical section (the
//! paper, after Draves et al. 1991). Interrupts arrive by a Poisson or
//! periodic process with a priority mix; each runs a handler of fixed cost.

pub mod profiles;

pub use crate::kernel::masking::{Arrival, Counters, HandlerRun, Program, Scheme, Step};
pub use crate::machine::masking::Model;
pub use profiles::{Costs, Effects, Machine, Profile, Sequence};

use crate::config::{Process, Scenario};
use crate::cpu::Bin;
use serde::{Deserialize, Serialize};

/// `[masking]`: the machine and the protection scheme.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct MaskingConfig {
    /// Machine profile (Tables 1 and 2): `luna88k`, `flamingo`,
    /// `decstation_5000_120`, `decstation_5000_200`, `pc386`, `gateway_66v`.
    pub machine: Machine,
    /// `conventional` (hardware mask) or `optimistic` (software mask).
    pub scheme: Scheme,
    /// Memory-system stall cycles per instruction of mask-management code
    /// (cache, TLB, write-buffer); 0 is the tables' no-miss idealization.
    pub stall_cycles_per_instruction: f64,
    /// Extra stall cycles per off-chip mask-register access.
    pub off_chip_stall_cycles: f64,
    /// An optimistic fast path for a machine Table 2 does not cover
    /// (instructions and cycles, both or neither).
    pub optimistic_pair_instructions: Option<u64>,
    pub optimistic_pair_cycles: Option<u64>,
}

impl Default for MaskingConfig {
    fn default() -> Self {
        Self {
            machine: Machine::Luna88k,
            scheme: Scheme::Conventional,
            stall_cycles_per_instruction: 0.0,
            off_chip_stall_cycles: 0.0,
            optimistic_pair_instructions: None,
            optimistic_pair_cycles: None,
        }
    }
}

impl MaskingConfig {
    pub fn effects(&self) -> Effects {
        Effects { stall_cycles_per_instruction: self.stall_cycles_per_instruction, off_chip_stall_cycles: self.off_chip_stall_cycles }
    }

    /// The Table 2 figure the scenario supplies, if any.
    pub fn optimistic_override(&self) -> Option<Sequence> {
        Some(Sequence { instructions: self.optimistic_pair_instructions?, cycles: self.optimistic_pair_cycles? })
    }

    pub fn costs(&self) -> Costs {
        Costs::new(self.machine.profile(), self.effects(), self.optimistic_override())
    }
}

/// `[workload] kind = "null_rpc"`: back-to-back null RPCs under interrupts.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NullRpcConfig {
    // Cycle counts are signed so that a negative one is refused by `check`
    // with its key named (serde loses the path inside a tagged enum).
    /// One null RPC's cycles outside interrupt-mask management.
    pub rpc_path_cycles: i64,
    /// The part of `rpc_path_cycles` inside the critical section.
    pub section_cycles: i64,
    /// Priority the section masks up to (1..=the machine's levels).
    pub section_level: u8,
    /// Interrupt arrivals per second (0: none).
    #[serde(default)]
    pub interrupt_rate_per_s: f64,
    /// `poisson` or `periodic` arrivals.
    #[serde(default = "poisson")]
    pub interrupt_process: Process,
    /// Priorities of the arriving interrupts (each 1..=the machine's levels).
    #[serde(default = "one_level")]
    pub interrupt_levels: Vec<u8>,
    /// Relative frequency of each of `interrupt_levels` (empty: equal).
    #[serde(default)]
    pub interrupt_weights: Vec<f64>,
    /// Each interrupt handler's own work.
    #[serde(default = "handler_cycles")]
    pub handler_cycles: i64,
}

fn poisson() -> Process {
    Process::Poisson
}
fn one_level() -> Vec<u8> {
    vec![1]
}
fn handler_cycles() -> i64 {
    500
}

/// Range checks of `[masking]` and the `null_rpc` workload: `(key, message)`.
pub fn check(s: &Scenario, w: &NullRpcConfig) -> std::result::Result<(), (String, String)> {
    let err = |k: &str, m: String| Err((k.to_string(), m));
    let m = &s.masking;
    let p = m.machine.profile();
    let non_negative = |k: &str, v: f64| {
        if v.is_finite() && v >= 0.0 { Ok(()) } else { err(k, format!("must be a non-negative number, got {v}")) }
    };
    non_negative("masking.stall_cycles_per_instruction", m.stall_cycles_per_instruction)?;
    non_negative("masking.off_chip_stall_cycles", m.off_chip_stall_cycles)?;
    if m.optimistic_pair_instructions.is_some() != m.optimistic_pair_cycles.is_some() {
        return err("masking.optimistic_pair_cycles", "give both masking.optimistic_pair_instructions and masking.optimistic_pair_cycles, or neither".into());
    }
    if m.scheme == Scheme::Optimistic && p.optimistic.is_none() && m.optimistic_override().is_none() {
        return err(
            "masking.scheme",
            format!(
                "the paper gives no optimistic (Table 2) figure for the {} (`{}`); Table 2 covers luna88k, decstation_5000_120 and decstation_5000_200. \
                 Supply one with masking.optimistic_pair_instructions and masking.optimistic_pair_cycles",
                p.machine,
                m.machine.key()
            ),
        );
    }
    if (s.cpu.clock_mhz - p.clock_mhz).abs() > 1e-9 {
        return err("cpu.clock_mhz", format!("the {} runs at {} MHz, not {}", p.machine, p.clock_mhz, s.cpu.clock_mhz));
    }
    let level = |k: &str, l: u8| {
        if l == 0 || l > p.interrupt_levels {
            err(k, format!("priority {l} does not exist on the {} (levels 1..={})", p.machine, p.interrupt_levels))
        } else {
            Ok(())
        }
    };
    level("workload.section_level", w.section_level)?;
    for (k, v) in
        [("workload.rpc_path_cycles", w.rpc_path_cycles), ("workload.section_cycles", w.section_cycles), ("workload.handler_cycles", w.handler_cycles)]
    {
        if v < 0 {
            return err(k, format!("must be a non-negative number of cycles, got {v}"));
        }
    }
    if w.section_cycles > w.rpc_path_cycles {
        return err("workload.section_cycles", format!("{} exceeds workload.rpc_path_cycles = {}", w.section_cycles, w.rpc_path_cycles));
    }
    non_negative("workload.interrupt_rate_per_s", w.interrupt_rate_per_s)?;
    if w.interrupt_rate_per_s > s.cpu.clock_mhz * 1e6 {
        return err("workload.interrupt_rate_per_s", format!("{} per second is more than one per cycle", w.interrupt_rate_per_s));
    }
    if w.interrupt_levels.is_empty() {
        return err("workload.interrupt_levels", "must name at least one priority".into());
    }
    for (i, &l) in w.interrupt_levels.iter().enumerate() {
        level(&format!("workload.interrupt_levels[{i}]"), l)?;
    }
    if !w.interrupt_weights.is_empty() {
        if w.interrupt_weights.len() != w.interrupt_levels.len() {
            return err("workload.interrupt_weights", format!("has {} weights for {} interrupt_levels", w.interrupt_weights.len(), w.interrupt_levels.len()));
        }
        for (i, &x) in w.interrupt_weights.iter().enumerate() {
            non_negative(&format!("workload.interrupt_weights[{i}]"), x)?;
        }
        if w.interrupt_weights.iter().sum::<f64>() <= 0.0 {
            return err("workload.interrupt_weights", "must not all be zero".into());
        }
    }
    Ok(())
}

/// The null-RPC path as a program: the section sits mid-path.
pub fn null_rpc_program(w: &NullRpcConfig) -> Program {
    let (path, section) = (w.rpc_path_cycles.max(0) as u64, w.section_cycles.max(0) as u64);
    let outside = path.saturating_sub(section);
    let before = outside / 2;
    Program {
        steps: vec![Step::Run(before), Step::Enter(w.section_level), Step::Run(section), Step::Exit, Step::Run(outside - before)],
        bin: Bin::Kernel,
        repeat: true,
    }
}
