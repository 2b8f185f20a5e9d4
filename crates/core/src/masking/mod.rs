//! Interrupt priority levels and optimistic interrupt protection
//! (Stodolsky, Chen and Bershad, "Fast Interrupt Priority Management in
//! Operating System Kernels", 1993).
//!
//! - [`profiles`]: the machines of Tables 1 and 2 and the cost of every
//!   masking step, idealized or with the modelled memory-system effects.
//! - [`jobs`]: what the CPU runs for activities with nested critical
//!   sections under conventional or optimistic protection, and the
//!   sections of the NIC path and of kernel code.
//! - [`state`]: the masking state (a mask per CPU) and the priority-level
//!   interrupt sources.
//! - This file: the scenario keys (`[masking]` and the `null_rpc` workload),
//!   their checks and the null-RPC program.
//!
//! The null RPC is one activity looping over the Mach cross-address-space
//! RPC path, which holds one interrupt-protected critical section (the
//! paper, after Draves et al. 1991). Interrupts arrive by a Poisson or
//! periodic process with a priority mix; each runs a handler of fixed cost.

pub mod jobs;
pub mod profiles;
pub mod state;

pub use jobs::{Arrival, Counters, HandlerRun, Program, Scheme, Step};
pub use profiles::{Costs, Effects, Machine, Profile, Sequence};

use crate::cpu::Bin;
use crate::params::{Param, REQ, Range, Type, absent, d};
use crate::workload::config::Process;
use serde::{Deserialize, Serialize};

/// `[masking]`: the machine and the protection scheme.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MaskingConfig {
    pub machine: Machine,
    pub scheme: Scheme,
    pub stall_cycles_per_instruction: f64,
    pub off_chip_stall_cycles: f64,
    pub optimistic_pair_instructions: Option<u64>,
    pub optimistic_pair_cycles: Option<u64>,
    /// Of the Driver ISR's receive work per frame, the cycles inside a
    /// critical section (NIC workloads).
    pub driver_section_cycles: u64,
    /// Of the socket layer's receive work per frame, the cycles inside a
    /// critical section (NIC workloads).
    pub protocol_section_cycles: u64,
    /// Of a replayed system call's kernel work, the cycles inside a critical
    /// section (NIC workloads).
    pub syscall_section_cycles: u64,
    /// The priority of the NIC's interrupt (NIC workloads).
    pub nic_priority: u8,
    /// The priority those sections mask up to (absent: the NIC's).
    pub section_level: Option<u8>,
    /// The kernel code's own sections (`spin_lock_irqsave`) use this
    /// part's scheme and costs.
    pub code_sections: bool,
}

/// Workload kinds that drive the NIC: the ones whose path can hold sections.
const NIC_KINDS: &[&str] = &["flood", "arrivals", "trace", "script", "synthetic"];

impl MaskingConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::choice(
            "machine",
            &["luna88k", "flamingo", "decstation_5000_120", "decstation_5000_200", "pc386", "gateway_66v"],
            d("\"luna88k\""),
            "machine profile: Table 1 (conventional pair), Table 2 (optimistic pair, first three machines only), interrupt priority levels",
        ),
        Param::choice(
            "scheme",
            &["conventional", "optimistic"],
            d("\"conventional\""),
            "hardware mask written on every section enter and exit, or software mask with deferral when an interrupt really arrives inside a section",
        ),
        Param::float(
            "stall_cycles_per_instruction",
            "cycles/instruction",
            d("0.0"),
            false,
            0.0,
            1000.0,
            "memory-system stall cycles per instruction of mask-management code (cache, TLB); 0 is the tables' no-miss idealization",
        ),
        Param::float(
            "off_chip_stall_cycles",
            "cycles",
            d("0.0"),
            false,
            0.0,
            1e6,
            "extra stall cycles per off-chip mask-register access (write-buffer drain, bus round trip)",
        ),
        Param::int(
            "optimistic_pair_instructions",
            "instructions",
            absent("the machine's Table 2 figure"),
            0,
            1_000_000,
            "instructions of an optimistic fast path for a machine Table 2 does not cover; give `optimistic_pair_cycles` too",
        ),
        Param::cycles("optimistic_pair_cycles", absent("the machine's Table 2 figure"), "cycles of that fast path; give `optimistic_pair_instructions` too"),
        Param::cycles(
            "driver_section_cycles",
            d("0"),
            "of the driver's receive work per frame (`driver.isr_rx_done_cycles`: in the ISR, the NET_RX bottom half, a NAPI or busy poll), the cycles inside a critical section on that CPU; with `protocol_section_cycles`, turns masking on for the NIC path",
        )
        .when("workload.kind", NIC_KINDS),
        Param::cycles(
            "protocol_section_cycles",
            d("0"),
            "of the socket layer's receive work per frame (`stack.socket_cycles`), the cycles inside a critical section (the stack must be on)",
        )
        .when("workload.kind", NIC_KINDS),
        Param::cycles(
            "syscall_section_cycles",
            d("0"),
            "of a replayed system call's kernel work (`app.syscall_cycles`), the cycles inside a critical section",
        )
        .when("workload.kind", &["trace", "script", "synthetic"]),
        Param::int("nic_priority", "", d("1"), 1, MAX_LEVEL, "the priority of the NIC's interrupt (one of the machine's levels; behind a controller every section masks every interrupt)").when("workload.kind", NIC_KINDS),
        Param::int("section_level", "", absent("`nic_priority`: the sections hold off the NIC"), 1, MAX_LEVEL, "the sections mask priorities at or below this one")
            .when("workload.kind", NIC_KINDS),
        Param::flag(
            "code_sections",
            d("false"),
            "with kernel code (`code.program`): its own critical sections (`local_irq_save` / `restore`, the kernel services IRQ_SAVE and IRQ_RESTORE) use this part's scheme and the machine profile's raise and lower costs; false: they mask every interrupt of their CPU at the cost of their own instructions",
        )
        .when("workload.kind", NIC_KINDS),
    ];

    pub fn effects(&self) -> Effects {
        Effects { stall_cycles_per_instruction: self.stall_cycles_per_instruction, off_chip_stall_cycles: self.off_chip_stall_cycles }
    }

    /// The Table 2 figure the scenario supplies, if any.
    pub fn optimistic_override(&self) -> Option<Sequence> {
        Some(Sequence { instructions: self.optimistic_pair_instructions?, cycles: self.optimistic_pair_cycles? })
    }

    /// Whether the NIC path has critical sections (and so uses this part).
    pub fn nic_sections(&self) -> bool {
        self.driver_section_cycles > 0 || self.protocol_section_cycles > 0 || self.syscall_section_cycles > 0
    }

    pub fn costs(&self) -> Costs {
        Costs::new(self.machine.profile(), self.effects(), self.optimistic_override())
    }
}

/// `[workload] kind = "null_rpc"`: back-to-back null RPCs under interrupts.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NullRpcConfig {
    pub rpc_path_cycles: i64,
    pub section_cycles: i64,
    pub section_level: u8,
    pub interrupt_rate_per_s: f64,
    pub interrupt_process: Process,
    pub interrupt_levels: Vec<u8>,
    pub interrupt_weights: Vec<f64>,
    pub handler_cycles: i64,
}

/// Most interrupt priority levels of any machine (the PCs').
const MAX_LEVEL: i128 = 15;

impl NullRpcConfig {
    /// The variant's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::cycles("rpc_path_cycles", REQ, "one null RPC's cycles outside interrupt-mask management"),
        Param::cycles("section_cycles", REQ, "the part of the path inside the critical section (at most `rpc_path_cycles`)"),
        Param::int(
            "section_level",
            "",
            REQ,
            1,
            MAX_LEVEL,
            "the section masks priorities at or below this one (Luna88k and Flamingo have 7 levels, DECstations 6, PCs 15)",
        ),
        Param::float("interrupt_rate_per_s", "/s", d("0.0"), false, 0.0, 1e9, "interrupt arrivals per second, 0 for none (at most one per cycle)"),
        Param::choice("interrupt_process", &["poisson", "periodic"], d("\"poisson\""), "arrival process"),
        Param::of(
            "interrupt_levels",
            Type::IntList,
            "",
            d("[1]"),
            Range::Int(1, MAX_LEVEL),
            "priorities of arriving interrupts (each one of the machine's levels)",
        ),
        Param::of(
            "interrupt_weights",
            Type::FloatList,
            "",
            d("[]"),
            Range::Float { min: 0.0, min_open: false, max: 1e9, max_open: false },
            "relative frequency of each of `interrupt_levels` (same length, not all 0; empty: equal)",
        ),
        Param::cycles("handler_cycles", d("500"), "each interrupt handler's own work"),
    ];
}

/// The scheme has its costs: an optimistic figure from Table 2 or from the
/// scenario, given whole. Shared by the null RPC and the NIC path.
pub(crate) fn check_costs(m: &MaskingConfig) -> std::result::Result<(), (String, String)> {
    if m.optimistic_pair_instructions.is_some() != m.optimistic_pair_cycles.is_some() {
        return Err((
            "masking.optimistic_pair_cycles".into(),
            "give both masking.optimistic_pair_instructions and masking.optimistic_pair_cycles, or neither".into(),
        ));
    }
    let p = m.machine.profile();
    if m.scheme == Scheme::Optimistic && p.optimistic.is_none() && m.optimistic_override().is_none() {
        return Err((
            "masking.scheme".into(),
            format!(
                "the paper gives no optimistic (Table 2) figure for the {} (`{}`); Table 2 covers luna88k, decstation_5000_120 and decstation_5000_200. \
                 Supply one with masking.optimistic_pair_instructions and masking.optimistic_pair_cycles",
                p.machine,
                m.machine.key()
            ),
        ));
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
