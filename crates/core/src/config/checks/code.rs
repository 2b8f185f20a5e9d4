//! Rules of kernel code: the cores' keys, checked at load where errors get
//! their line.

use crate::config::Scenario;

/// Checks between the cores' keys (a thread a pin names, a cache's
/// geometry, a pin's syntax) at load, where errors get their line. The
/// workloads' sends all go through the program's send entry (`code.send`).
pub(crate) fn code(s: &Scenario) -> Result<(), (String, String)> {
    if !s.code.selected() {
        return Ok(());
    }
    irqsim_mips::config::ExecConfig::from_table(&s.code.core).map_err(crate::code::core_problem)?;
    Ok(())
}
