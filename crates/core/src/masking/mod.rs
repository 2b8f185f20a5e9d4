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

use crate::params::{Param, REQ, Range, Type, absent, d};
use crate::config::{Process, Scenario};
use crate::cpu::Bin;
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
        .when("workload.kind", &["arrivals"]),
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

/// Checks of `[masking]` and the `null_rpc` workload that span keys (each
/// key's own range is in its table): `(key, message)`.
pub fn check(s: &Scenario, w: &NullRpcConfig) -> std::result::Result<(), (String, String)> {
    let err = |k: &str, m: String| Err((k.to_string(), m));
    let m = &s.masking;
    let p = m.machine.profile();
    if s.cpu.threads > 1 {
        return err("cpu.threads", format!("the masking model runs one hardware thread, got {}; remove the key or set it to 1", s.cpu.threads));
    }
    check_costs(m)?;
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
    if w.section_cycles > w.rpc_path_cycles {
        return err("workload.section_cycles", format!("{} exceeds workload.rpc_path_cycles = {}", w.section_cycles, w.rpc_path_cycles));
    }
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
        if w.interrupt_weights.iter().sum::<f64>() <= 0.0 {
            return err("workload.interrupt_weights", "must not all be zero".into());
        }
    }
    Ok(())
}

/// The scheme has its costs: an optimistic figure from Table 2 or from the
/// scenario, given whole. Shared by the null RPC and the NIC path.
fn check_costs(m: &MaskingConfig) -> std::result::Result<(), (String, String)> {
    if m.optimistic_pair_instructions.is_some() != m.optimistic_pair_cycles.is_some() {
        return Err(("masking.optimistic_pair_cycles".into(), "give both masking.optimistic_pair_instructions and masking.optimistic_pair_cycles, or neither".into()));
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

/// Checks of critical sections in the NIC path: `(key, message)`. They run
/// on any controller, path and number of threads, with a mask per CPU.
pub fn check_nic(s: &Scenario) -> std::result::Result<(), (String, String)> {
    let m = &s.masking;
    if m.code_sections && !s.code.selected() {
        return Err(("masking.code_sections".into(), "only kernel code has sections of its own: set code.program, or use driver_section_cycles and friends".into()));
    }
    if m.code_sections {
        return check_costs(m);
    }
    if !m.nic_sections() {
        return Ok(());
    }
    let err = |k: &str, msg: String| Err((k.to_string(), msg));
    check_costs(m)?;
    if m.driver_section_cycles > s.driver.isr_rx_done_cycles {
        return err("masking.driver_section_cycles", format!("{} exceeds driver.isr_rx_done_cycles = {}", m.driver_section_cycles, s.driver.isr_rx_done_cycles));
    }
    if m.protocol_section_cycles > 0 && !s.stack.enabled {
        return err("masking.protocol_section_cycles", "needs the protocol stack (stack.enabled = true)".into());
    }
    if m.syscall_section_cycles > s.app.syscall_cycles {
        return err("masking.syscall_section_cycles", format!("{} exceeds app.syscall_cycles = {}", m.syscall_section_cycles, s.app.syscall_cycles));
    }
    if m.protocol_section_cycles > s.stack.socket_cycles {
        return err("masking.protocol_section_cycles", format!("{} exceeds stack.socket_cycles = {}", m.protocol_section_cycles, s.stack.socket_cycles));
    }
    let levels = m.machine.profile().interrupt_levels;
    let section_level = m.section_level.unwrap_or(m.nic_priority);
    for (k, l) in [("masking.nic_priority", m.nic_priority), ("masking.section_level", section_level)] {
        if l == 0 || l > levels {
            return err(k, format!("priority {l} does not exist on the {} (levels 1..={levels})", m.machine.profile().machine));
        }
    }
    // Behind a controller a section is spin_lock_irqsave: it masks every
    // interrupt its CPU's controller delivers, the NIC's among them.
    if s.nic_wired() && section_level < m.nic_priority {
        return err(
            "masking.section_level",
            format!(
                "{section_level} leaves the NIC's priority {} unmasked, which only the bare wire's priority levels can do; behind a controller (intc.kind, irq_path.kind or sources.others) a section masks every interrupt on its CPU",
                m.nic_priority
            ),
        );
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
