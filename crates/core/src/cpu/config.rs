//! `[cpu]`: the clock, the hardware threads and their context policy, and
//! what entering an interrupt or software interrupt costs.

use super::ContextPolicy;
use crate::params::{Param, REQ, d};
use serde::{Deserialize, Serialize};

/// Largest thread index: `cpu.threads` is at most 64.
pub const MAX_THREAD: i128 = 63;

/// `[cpu]`; keys: [`CpuConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CpuConfig {
    pub clock_mhz: f64,
    pub threads: usize,
    pub context_policy: ContextPolicy,
    pub irq_entry_cycles: u64,
    pub swi_entry_cycles: u64,
    pub save_restore_cycles: u64,
    pub context_switch_cycles: u64,
}

impl CpuConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::float("clock_mhz", "MHz", REQ, true, 0.0, 100_000.0, "core clock; simulated time is counted in cycles of this clock"),
        Param::int("threads", "", d("1"), 1, MAX_THREAD + 1, "hardware threads (cores; SMT issue sharing is not modelled)"),
        Param::choice(
            "context_policy",
            &["single", "multithreaded"],
            d("\"single\""),
            "`single`: one register context, a preemption of running code costs `save_restore_cycles`; `multithreaded`: a context each for application (C1), interrupts (C2) and protocol/software interrupts (C3), switching costs `context_switch_cycles`",
        ),
        Param::cycles("irq_entry_cycles", d("6"), "interrupt-entry pipeline sequence (AE32000: nullify, push SR and PC, acknowledge, vector, load)"),
        Param::cycles("swi_entry_cycles", d("6"), "entry of a software interrupt (system call, queued SWI)"),
        Param::cycles("save_restore_cycles", d("186"), "saving and restoring a register context when a preemption needs it"),
        Param::cycles("context_switch_cycles", d("0"), "moving execution to another hardware context (a pointer change)")
            .when("cpu.context_policy", &["multithreaded"]),
    ];
}
