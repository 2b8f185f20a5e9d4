//! irqsim._core: the Python face of irqsim-core. Glue only: scenarios in,
//! reports out; errors cross the boundary in `error.rs`.

mod error;
mod exec;

use error::{IrqsimError, to_py};
use irqsim_core::{Override, Record, Report, Scenario, parse_override};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::{Path, PathBuf};

/// A finished run.
#[pyclass(module = "irqsim._core", frozen)]
struct RunReport(Report);

#[pymethods]
impl RunReport {
    /// `[(name, value)]` in a fixed order.
    fn metrics(&self) -> Vec<(String, f64)> {
        self.0.metrics.clone()
    }

    /// `{"metrics": {...}, "bins": [...]}` as JSON text.
    fn to_json(&self) -> String {
        self.0.to_json().to_string()
    }

    /// Per-packet `(arrival cycle, latency cycles)` as little-endian u64 pairs.
    fn records<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let mut buf = Vec::with_capacity(self.0.records.len() * 16);
        for &(a, l) in &self.0.records {
            buf.extend_from_slice(&a.to_le_bytes());
            buf.extend_from_slice(&l.to_le_bytes());
        }
        PyBytes::new(py, &buf)
    }

    fn chrome_trace(&self) -> String {
        self.0.chrome_trace().to_string()
    }

    /// The first violated invariant, or None.
    fn check_invariants(&self) -> Option<String> {
        self.0.check_invariants().err()
    }

    #[getter]
    fn clock_mhz(&self) -> f64 {
        self.0.clock_mhz
    }

    #[getter]
    fn elapsed_cycles(&self) -> u64 {
        self.0.elapsed_cycles
    }

    #[getter]
    fn contexts(&self) -> Vec<String> {
        self.0.contexts.clone()
    }

    #[getter]
    fn timeline_dropped(&self) -> u64 {
        self.0.timeline.dropped()
    }
}

fn overrides(items: Vec<String>) -> PyResult<Vec<Override>> {
    items.iter().map(|s| parse_override(s).map_err(to_py)).collect()
}

/// Loads a scenario from a file (`path`) or from TOML text (`text`, named
/// `name` in errors, relative paths resolved from `base`).
fn load(path: Option<PathBuf>, text: Option<String>, name: &str, sets: &[Override]) -> Result<(Scenario, PathBuf), irqsim_core::Error> {
    match (path, text) {
        (Some(p), _) => {
            let s = Scenario::from_file(&p, sets)?;
            Ok((s, p.parent().unwrap_or(Path::new(".")).to_path_buf()))
        }
        (None, Some(t)) => Ok((Scenario::from_toml(&t, name, sets)?, PathBuf::from("."))),
        (None, None) => Err(irqsim_core::Error::Config { file: name.into(), key: "scenario".into(), line: None, msg: "no scenario given".into() }),
    }
}

/// Runs a scenario; the GIL is released while it simulates.
#[pyfunction]
#[pyo3(signature = (path=None, text=None, name="<string>".to_string(), sets=vec![], timeline=false, base=None))]
fn run(py: Python<'_>, path: Option<PathBuf>, text: Option<String>, name: String, sets: Vec<String>, timeline: bool, base: Option<PathBuf>) -> PyResult<RunReport> {
    let sets = overrides(sets)?;
    let outcome = py.detach(|| {
        std::panic::catch_unwind(|| {
            let (scenario, dir) = load(path, text, &name, &sets)?;
            irqsim_core::simulate(&scenario, &base.unwrap_or(dir), Record { timeline })
        })
    });
    match outcome {
        Ok(r) => r.map(RunReport).map_err(to_py),
        Err(panic) => Err(error::internal(panic)),
    }
}

/// Loads and checks a scenario without running it; returns it as JSON text
/// with every default filled in.
#[pyfunction]
#[pyo3(signature = (path=None, text=None, name="<string>".to_string(), sets=vec![]))]
fn validate(path: Option<PathBuf>, text: Option<String>, name: String, sets: Vec<String>) -> PyResult<String> {
    let sets = overrides(sets)?;
    let (scenario, _) = load(path, text, &name, &sets).map_err(to_py)?;
    serde_json::to_string(&scenario).map_err(|e| IrqsimError::new_err(e.to_string()))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RunReport>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(exec::exec_program, m)?)?;
    error::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
