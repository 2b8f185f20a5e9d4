//! `irqsim._core.exec_program`: runs a MIPS program on the execution-driven
//! cores (irqsim-mips). Returns the report as JSON text plus the program's
//! stdout and stderr bytes: the first 1 MiB of each (the report counts the
//! rest), or nothing when `stream` sends them to this process's own stdout
//! and stderr as the program writes them. Ctrl-C stops the run within a
//! poll (`irqsim_mips::run::POLL_CYCLES` simulated cycles). Errors become
//! `InputError` (the ELF), `ConfigError` (a setting) or `IrqsimError`
//! (execution stopped).

use crate::error::{ConfigError, InputError, IrqsimError, internal};
use crate::monitor::PyMonitor;
use irqsim_mips::config::ExecConfig;
use irqsim_mips::run::{CAPTURE_BYTES, Captured, Host, run_with};
use irqsim_mips::{Error, Program};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Elf { .. } => InputError::new_err(msg),
        Error::Config { .. } => ConfigError::new_err(msg),
        Error::Fault { .. } => IrqsimError::new_err(msg),
        Error::Cancelled { .. } => pyo3::exceptions::PyKeyboardInterrupt::new_err(msg),
    }
}

/// The program's output: kept (capped) or written through; Python's
/// signal handlers run at each poll when on the main thread.
struct PyHost {
    captured: Captured,
    stream: bool,
    signals: bool,
    raised: Option<PyErr>,
}

impl Host for PyHost {
    fn wants(&self, fd: u32, len: u32) -> u32 {
        if self.stream { len } else { self.captured.wants(fd, len) }
    }

    fn write(&mut self, fd: u32, bytes: &[u8], len: u32) -> Result<(), u32> {
        if !self.stream {
            return self.captured.write(fd, bytes, len);
        }
        let done = if fd == 1 { std::io::stdout().write_all(bytes) } else { std::io::stderr().write_all(bytes) };
        // A closed or broken stream fails the guest's write, as it would natively.
        done.map_err(|e| e.raw_os_error().map_or(5, |n| n as u32))
    }

    fn poll(&mut self) -> bool {
        if !self.signals {
            return true;
        }
        match Python::attach(|py| py.check_signals()) {
            Ok(()) => true,
            Err(e) => {
                self.raised = Some(e);
                false
            }
        }
    }
}

/// Runs `path` with `KEY=VALUE` settings; the GIL is released meanwhile.
#[pyfunction]
#[pyo3(signature = (path, sets=vec![], stream=false))]
pub fn exec_program<'py>(py: Python<'py>, path: PathBuf, sets: Vec<String>, stream: bool) -> PyResult<(String, Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let signals = PyMonitor::on_main_thread(py)?;
    let mut host = PyHost { captured: Captured::new(CAPTURE_BYTES), stream, signals, raised: None };
    let outcome = py.detach(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let config = ExecConfig::from_sets(&sets)?;
            let program = Program::load(&path)?;
            let t = Instant::now();
            let out = run_with(program, &config, &mut host);
            if stream {
                // Flushed whatever happened: output written before a fault is kept, as under qemu.
                let _ = std::io::stdout().flush();
            }
            Ok::<_, Error>((out?, t.elapsed().as_secs_f64()))
        }))
    });
    let result = outcome.map_err(internal)?;
    if let Some(e) = host.raised.take() {
        return Err(e);
    }
    let (out, wall) = result.map_err(to_py)?;
    let mut report = out.system.0;
    report["exit_code"] = out.exit_code.into();
    report["wall_seconds"] = wall.into();
    report["stdout_dropped_bytes"] = host.captured.dropped.0.into();
    report["stderr_dropped_bytes"] = host.captured.dropped.1.into();
    Ok((report.to_string(), PyBytes::new(py, &host.captured.stdout), PyBytes::new(py, &host.captured.stderr)))
}
