//! Assembling a machine from a scenario: which devices exist, how their
//! interrupts are wired, which kernel software runs on which thread.
//!
//! The workload selects the devices it drives: the NIC (floods, arrivals,
//! scripts, traces, synthetic load), the PCIe exerciser with its fellow
//! interrupt sources (`exerciser`), or the priority-level interrupt sources
//! of the Mach machines (`null_rpc`). Every other part is built from its own
//! section: the controller from `[intc]`, the interrupt path from
//! `[irq_path]`, the CPU from `[cpu]`.

use super::{Delivery, Machine, Masking, Net, Record, Route};
use crate::config::{Scenario, WorkloadConfig};
use crate::cpu::{EntryCosts, IRQ, Thread};
use crate::engine::EventQueue;
use crate::error::Result;
use crate::kernel::IrqPathKind;
use crate::kernel::Job;
use crate::timeline::Timeline;

impl Machine {
    pub fn new(s: &Scenario, base_dir: &std::path::Path, record: Record) -> Result<Self> {
        let sections = s.masking.nic_sections();
        let levels = match &s.workload {
            WorkloadConfig::NullRpc(_) => IRQ as usize + s.masking.machine.profile().interrupt_levels as usize,
            WorkloadConfig::Exerciser(_) => IRQ as usize + 1,
            _ if sections => IRQ as usize + s.masking.machine.profile().interrupt_levels as usize,
            _ => IRQ as usize + 1,
        };
        let device = match &s.workload {
            WorkloadConfig::Exerciser(_) => "exerciser",
            WorkloadConfig::NullRpc(_) => "interrupt source",
            _ => "NIC",
        };
        let timeline = if record.timeline { Timeline::recording(s.stats.timeline_max_items, device) } else { Timeline::disabled() };
        let mut m = Self::shell(&s.file, s.cpu.clock_mhz, s.duration_cycles(), s.cpu.threads, levels, s.cpu.context_policy, entry_costs(s), timeline);
        let invalid = |msg: String| crate::Error::Config { file: s.file.clone(), key: "workload".into(), line: None, msg };
        match &s.workload {
            WorkloadConfig::Exerciser(w) => {
                m.delivery = Delivery::exerciser(s, w).map_err(|(key, msg)| crate::Error::Config { file: s.file.clone(), key, line: None, msg })?
            }
            WorkloadConfig::NullRpc(w) => m.masking = Masking::null_rpc(&s.masking, w, s.cpu.clock_mhz, s.run.seed).map_err(invalid)?,
            _ => {
                m.net = Net::new(s, base_dir, record)?;
                // Code's sections under the masking part's optimistic scheme
                // need the interrupt path's prologue: through a controller
                // (the direct one on the bare wire).
                let code_sections = s.code.selected() && s.masking.code_sections;
                let (linux, wired) = (matches!(s.irq_path.kind, Some(IrqPathKind::Linux | IrqPathKind::Napi)), s.nic_wired() || code_sections);
                if sections {
                    // Behind a controller a section masks what the controller
                    // delivers to its CPU; on the bare wire, priority levels.
                    m.masking = Masking::nic(&s.masking, s.cpu.threads, wired);
                    if !wired {
                        m.net.route = Route::Masked(s.masking.nic_priority);
                    }
                }
                if s.code.selected() {
                    let napi = (s.irq_path.kind == Some(IrqPathKind::Napi)).then_some(crate::code::NapiPath {
                        weight: s.napi.weight,
                        busy_budget: s.napi.busy_poll_budget,
                        queues: s.rss.vectors() as usize,
                        rps_cpus: if s.rss.rps() { s.rss.rps_cpus } else { 0 },
                    });
                    let others: Vec<(usize, bool)> = s.nics.others.iter().map(|n| (n.queues as usize, s.port_on_code(n))).collect();
                    let mut code = crate::code::Code::new(&s.code, s.cpu.threads, levels, napi, &others, base_dir)
                        .map_err(|(key, msg)| crate::Error::Config { file: s.file.clone(), key, line: None, msg })?;
                    // Code's own sections (`local_irq_save`) mask every
                    // interrupt of their CPU, a mask per CPU.
                    m.masking = Masking::nic(&s.masking, s.cpu.threads, wired);
                    m.masking.code = code_sections;
                    if code_sections {
                        code.sys.devices.mask_cycles = m.masking.raise_lower();
                    }
                    code.sys.devices.report_rx_enable = s.coalesce.adaptive_rx || s.nics.others.iter().any(|n| n.adaptive_rx);
                    if s.code.ticks_per_s > 0.0 {
                        code.tick = ((s.cpu.clock_mhz * 1e6 / s.code.ticks_per_s).round() as u64).max(1);
                    }
                    code.watchdog.arm(s.code.watchdog_thresh_ms, s.cpu.clock_mhz);
                    m.code = Some(Box::new(code));
                    m.firmware_driver_fits(s)?;
                    // The application is code; an abstract one runs only on a
                    // CPU `code.cpus` leaves (checks/code.rs), when asked.
                    // A workload's other system calls interrupt code's.
                    m.net.background = s.app.background.then_some(s.app.thread).filter(|_| s.code.cpus.is_some());
                    m.net.app_thread = s.code.app_thread;
                }
                if s.napi_used() {
                    m.net.napi = Some(crate::kernel::napi::Napi::new(
                        &s.napi,
                        &s.rss,
                        s.nics.others.iter().map(|n| n.queues as usize).sum(),
                        &s.cpu,
                        &s.stack,
                        s.irq_path.softirq_entry_cycles,
                    ));
                }
                if wired {
                    m.delivery = Delivery::nic(s, linux);
                    m.net.route = Route::Controller;
                }
            }
        }
        m.stepped = m.code.is_some() || m.net.firmware.is_some();
        // The NIC's interrupt is posted on `irq_thread` without a bounds
        // check (`raise_irq`): checked here (the configuration refuses it too).
        assert!(m.net.irq_thread < m.threads.len(), "nic.irq_thread {} past cpu.threads {}", m.net.irq_thread, m.threads.len());
        Ok(m)
    }

    /// A machine of `threads` hardware threads with `levels` priority levels
    /// each, and no device yet.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn shell(
        name: &str,
        clock_mhz: f64,
        end: u64,
        threads: usize,
        levels: usize,
        policy: crate::cpu::ContextPolicy,
        entry: EntryCosts,
        timeline: Timeline,
    ) -> Self {
        let threads: Box<[Thread<Job>]> = (0..threads).map(|i| Thread::new(i, levels, policy, entry)).collect();
        Self {
            queue: EventQueue::new(),
            timers: super::timers::Timers::new(threads.len(), end),
            threads,
            end,
            clock_mhz,
            timeline,
            events: 0,
            name: name.to_string(),
            net: Net::idle(),
            delivery: Delivery::idle(),
            masking: Masking::idle(),
            code: None,
            stepped: false,
            sliced: false,
            marks_step_ends: false,
            folds_claims: false,
            #[cfg(test)]
            marked_ends: [0; 2],
        }
    }
}

fn entry_costs(s: &Scenario) -> EntryCosts {
    EntryCosts {
        irq_entry: s.cpu.irq_entry_cycles,
        swi_entry: s.cpu.swi_entry_cycles,
        save_restore: s.cpu.save_restore_cycles,
        context_switch: s.cpu.context_switch_cycles,
    }
}
