//! Rules of kernel code: the cores' keys, checked at load where errors get
//! their line, and the workloads code can take.

use crate::config::{Action, Direction, Scenario, ScriptConfig, WorkloadConfig};

/// Checks between the cores' keys (a thread a pin names, a cache's
/// geometry, a pin's syntax) at load, where errors get their line, and
/// the workload's sends: code's application is the program's, which
/// sends when its code does, so a workload that makes it send is
/// refused (its received frames and other system calls drive code as
/// they drive the abstract kernel; a trace's sent frames are refused
/// when the capture is read, a script file's when its line is).
pub(crate) fn code(s: &Scenario) -> Result<(), (String, String)> {
    if !s.code.selected() {
        return Ok(());
    }
    irqsim_mips::config::ExecConfig::from_table(&s.code.core).map_err(crate::code::core_problem)?;
    let sends = |key: String, what: &str| Err((key, format!("{what} with code (`code.program`): the program's application sends when its code does, not when the workload says")));
    match &s.workload {
        WorkloadConfig::Flood(f) if f.direction == Direction::Tx => sends("workload.direction".into(), "a send flood"),
        WorkloadConfig::Synthetic(g) if g.tx_share > 0.0 => sends("workload.tx_share".into(), "transmitted packets"),
        WorkloadConfig::Script(ScriptConfig { events: Some(events), .. }) => match events.iter().position(|e| e.action == Action::Send) {
            Some(i) => sends(format!("workload.events[{i}].action"), "a `send` event"),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}
