//! Rules of kernel code: the cores' keys, checked at load where errors get
//! their line, and the workloads code can take.

use crate::config::{Direction, Scenario, WorkloadConfig};

/// Checks between the cores' keys (a thread a pin names, a cache's
/// geometry, a pin's syntax) at load, where errors get their line, and
/// the send flood: its sender is the application's own loop, and with
/// code the application is the program's. The other workloads' sends (a
/// script's, a trace's, a synthetic load's) go through the program's send
/// entry (`code.send`).
pub(crate) fn code(s: &Scenario) -> Result<(), (String, String)> {
    if !s.code.selected() {
        return Ok(());
    }
    irqsim_mips::config::ExecConfig::from_table(&s.code.core).map_err(crate::code::core_problem)?;
    match &s.workload {
        WorkloadConfig::Flood(f) if f.direction == Direction::Tx => Err((
            "workload.direction".into(),
            "a send flood with code (`code.program`): the flood's sender is the application's own loop, and with code the application is the program's (`code.app`); a script's `send` events, a trace or a synthetic load's `tx_share` send through the program's `code.send` entry".into(),
        )),
        _ => Ok(()),
    }
}
