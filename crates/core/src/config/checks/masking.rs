//! Rules of the masking part: the null-RPC machine's programs, levels and
//! rates, and critical sections in the network path.

use crate::config::Scenario;
use crate::masking::{NullRpcConfig, check_costs};

/// Checks of `[masking]` and the `null_rpc` workload that span keys (each
/// key's own range is in its table): `(key, message)`.
pub(crate) fn null_rpc(s: &Scenario, w: &NullRpcConfig) -> std::result::Result<(), (String, String)> {
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

/// Checks of critical sections in the NIC path: `(key, message)`. They run
/// on any controller, path and number of threads, with a mask per CPU.
pub(crate) fn nic(s: &Scenario) -> std::result::Result<(), (String, String)> {
    let m = &s.masking;
    if m.code_sections && !s.code.selected() {
        return Err((
            "masking.code_sections".into(),
            "only kernel code has sections of its own: set code.program, or use driver_section_cycles and friends".into(),
        ));
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
        return err(
            "masking.driver_section_cycles",
            format!("{} exceeds driver.isr_rx_done_cycles = {}", m.driver_section_cycles, s.driver.isr_rx_done_cycles),
        );
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
                "{section_level} leaves the NIC's priority {} unmasked, which only the bare wire's priority levels can do; behind a controller (intc.kind, irq_path.kind, sources.others or nics.others) a section masks every interrupt on its CPU",
                m.nic_priority
            ),
        );
    }
    Ok(())
}
