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

pub fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Syntax { file, msg } => ConfigError::new_err(format!("{file}: {}", one_line(&msg))),
        Error::Config { .. } | Error::Stalled { .. } => ConfigError::new_err(msg),
        Error::Trace(_) => TraceError::new_err(msg),
        Error::Io { .. } => InputError::new_err(msg),
        Error::Cancelled { .. } => PyKeyboardInterrupt::new_err(msg),
    }
}

/// A TOML parse error spans several lines (position, a source excerpt with
/// a caret, the message); this keeps the position and the message on one.
fn one_line(msg: &str) -> String {
    let excerpt = |l: &str| l.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start().starts_with('|');
    msg.lines().map(str::trim).filter(|l| !l.is_empty() && !excerpt(l)).collect::<Vec<_>>().join(": ")
}

/// Names overrides as the caller knows them: the core calls them `--set`,
/// the Python API `overrides`.
pub fn relabel(e: Error, label: &str) -> Error {
    match e {
        Error::Config { file, key, line, msg } if file == "--set" => Error::Config { file: label.into(), key, line, msg },
        e => e,
    }
}

/// A panic in the core is a bug; it reaches Python as an ordinary error
/// that says so, never as a `PanicException`.
pub fn internal(payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    IrqsimError::new_err(format!("internal error in irqsim (please report): {what}"))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("IrqsimError", py.get_type::<IrqsimError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    Ok(())
}
