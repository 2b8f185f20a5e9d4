//! The one place where core errors become Python exceptions: each
//! `irqsim_core::Error` variant maps to one class, all under `IrqsimError`.

use irqsim_core::Error;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt};
use pyo3::prelude::*;

create_exception!(_core, IrqsimError, PyException, "Base class of every irqsim error.");
create_exception!(_core, ConfigError, IrqsimError, "A scenario or override is invalid (names the file, key and line).");
create_exception!(_core, TraceError, IrqsimError, "A pcap or strace file is malformed (names the file and where).");
create_exception!(_core, InputError, IrqsimError, "A file could not be read.");
create_exception!(_core, ProgramError, IrqsimError, "The scenario's MIPS program did something the machine cannot run (names the program, pc and address).");
create_exception!(_core, InvariantError, IrqsimError, "A run broke a conservation law or its cycle bins (a simulator bug).");

pub fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Syntax { .. } | Error::Config { .. } | Error::Stalled { .. } => ConfigError::new_err(msg),
        Error::Trace(_) => TraceError::new_err(msg),
        Error::Io { .. } => InputError::new_err(msg),
        Error::Cancelled { .. } => PyKeyboardInterrupt::new_err(msg),
        Error::Invariant { .. } => InvariantError::new_err(msg),
        Error::Code { .. } => ProgramError::new_err(msg),
    }
}

/// A panic in the core is a bug; it reaches Python as an ordinary error
/// that says so, never as a `PanicException`.
pub fn internal(payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let what =
        payload.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| payload.downcast_ref::<String>().cloned()).unwrap_or_else(|| "unknown panic".into());
    IrqsimError::new_err(format!("internal error in irqsim (please report): {what}"))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("IrqsimError", py.get_type::<IrqsimError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("InvariantError", py.get_type::<InvariantError>())?;
    m.add("ProgramError", py.get_type::<ProgramError>())?;
    Ok(())
}
