//! `irqsim._core.exec_program`: runs a MIPS program on the execution-driven
//! cores (irqsim-mips). Returns the report as JSON text plus the program's
//! stdout and stderr bytes; errors become `InputError` (the ELF),
//! `ConfigError` (a setting) or `IrqsimError` (execution stopped).

use crate::error::{ConfigError, InputError, IrqsimError, internal};
use irqsim_mips::config::ExecConfig;
use irqsim_mips::{Error, Program, run::run_program};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;
use std::time::Instant;

fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Elf { .. } => InputError::new_err(msg),
        Error::Config { .. } => ConfigError::new_err(msg),
        Error::Fault { .. } => IrqsimError::new_err(msg),
    }
}

/// Runs `path` with `KEY=VALUE` settings; the GIL is released meanwhile.
#[pyfunction]
#[pyo3(signature = (path, sets=vec![]))]
pub fn exec_program<'py>(py: Python<'py>, path: PathBuf, sets: Vec<String>) -> PyResult<(String, Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let outcome = py.detach(|| {
        std::panic::catch_unwind(|| {
            let config = ExecConfig::from_sets(&sets)?;
            let program = Program::load(&path)?;
            let t = Instant::now();
            let out = run_program(program, &config)?;
            Ok::<_, Error>((out, t.elapsed().as_secs_f64()))
        })
    });
    let (out, wall) = outcome.map_err(internal)?.map_err(to_py)?;
    let mut report = out.system.0;
    report["exit_code"] = out.exit_code.into();
    report["wall_seconds"] = wall.into();
    Ok((report.to_string(), PyBytes::new(py, &out.stdout), PyBytes::new(py, &out.stderr)))
}
