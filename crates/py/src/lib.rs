//! irqsim._core: the Python face of irqsim-core. Glue only: scenarios in,
//! reports out; errors cross the boundary in `error.rs`.

mod error;
mod exec;
mod firmware;
mod metric;
mod monitor;
mod parts;

use error::to_py;
use irqsim_core::config::parse_override_as;
use irqsim_core::{Override, Record, Report, Scenario};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A finished run.
#[pyclass(module = "irqsim._core", frozen)]
struct RunReport(Report);

#[pymethods]
impl RunReport {
    /// `{name: value}` in a fixed order; counts are ints (`metric.rs`).
    /// Built as a dict here, once: a list of pairs cost twice as much.
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.0.metrics {
            d.set_item(k, metric::to_py(py, k, *v))?;
        }
        Ok(d)
    }

    /// `{"metrics": {...}, "bins": [...]}` as JSON text.
    fn to_json(&self) -> String {
        let mut doc = self.0.to_json();
        metric::counts_as_integers(&mut doc);
        doc.to_string()
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

    /// Writes the Chrome trace to `path` as it is produced (never whole in
    /// memory); returns `(events written, events not recorded)`.
    fn write_chrome_trace(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<(u64, u64)> {
        py.detach(|| {
            let mut w = std::io::BufWriter::new(std::fs::File::create(&path)?);
            let n = self.0.write_chrome_trace(&mut w)?;
            w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
            Ok((n, self.0.timeline.dropped()))
        })
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

/// Parses `key=value` overrides; errors about them name `origin`.
fn overrides(items: Vec<String>, origin: &str) -> PyResult<Vec<Override>> {
    items.iter().map(|s| parse_override_as(s, origin).map_err(to_py)).collect()
}

/// Loads a scenario from a file (`path`) or from TOML text (`text`, named
/// `name` in errors, relative paths resolved from `base`).
fn load(path: Option<PathBuf>, text: Option<String>, name: &str, sets: &[Override]) -> Result<(Arc<Scenario>, PathBuf), irqsim_core::Error> {
    match (path, text) {
        (Some(p), _) => {
            let s = Scenario::shared_from_file(&p, sets)?;
            Ok((s, p.parent().unwrap_or(Path::new(".")).to_path_buf()))
        }
        (None, Some(t)) => Ok((Scenario::shared_from_toml(&t, name, sets)?, PathBuf::from("."))),
        (None, None) => Err(irqsim_core::Error::Config { file: name.into(), key: "scenario".into(), line: None, msg: "no scenario given".into() }),
    }
}

/// Runs a scenario; the GIL is released while it simulates. Ctrl-C stops
/// it (KeyboardInterrupt); `progress(now_cycle, end_cycle)` is called every
/// 65,536 events and stops the run by raising.
#[pyfunction]
#[pyo3(signature = (path=None, text=None, name="<string>".to_string(), sets=vec![], timeline=false, base=None, progress=None, origin="overrides"))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    path: Option<PathBuf>,
    text: Option<String>,
    name: String,
    sets: Vec<String>,
    timeline: bool,
    base: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
    origin: &str,
) -> PyResult<RunReport> {
    let sets = overrides(sets, origin)?;
    let mut monitor = monitor::PyMonitor::new(progress, monitor::PyMonitor::on_main_thread(py)?);
    let outcome = py.detach(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let (scenario, dir) = load(path, text, &name, &sets)?;
            irqsim_core::simulate_with(&scenario, &base.unwrap_or(dir), Record { timeline }, &mut monitor)
        }))
    });
    match outcome {
        Ok(Ok(r)) => Ok(RunReport(r)),
        Ok(Err(e)) => Err(monitor.take_raised().unwrap_or_else(|| to_py(e))),
        Err(panic) => Err(error::internal(panic)),
    }
}

/// Loads and checks a scenario without running it; returns it as JSON text
/// with every default filled in, only the parts its run uses.
#[pyfunction]
#[pyo3(signature = (path=None, text=None, name="<string>".to_string(), sets=vec![], origin="overrides"))]
fn validate(path: Option<PathBuf>, text: Option<String>, name: String, sets: Vec<String>, origin: &str) -> PyResult<String> {
    let sets = overrides(sets, origin)?;
    let (scenario, _) = load(path, text, &name, &sets).map_err(to_py)?;
    Ok(scenario.to_json())
}

/// The files a run of the scenario reads besides its text (kernel code,
/// firmware, traces, script events), as `(key, path)` pairs; `base` is the
/// directory relative paths resolve from (the scenario's own by default).
#[pyfunction]
#[pyo3(signature = (path=None, text=None, name="<string>".to_string(), sets=vec![], base=None, origin="overrides"))]
fn inputs(
    path: Option<PathBuf>,
    text: Option<String>,
    name: String,
    sets: Vec<String>,
    base: Option<PathBuf>,
    origin: &str,
) -> PyResult<Vec<(&'static str, PathBuf)>> {
    let sets = overrides(sets, origin)?;
    let (scenario, dir) = load(path, text, &name, &sets).map_err(to_py)?;
    Ok(scenario.inputs(&base.unwrap_or(dir)).into_iter().map(|i| (i.key, i.path)).collect())
}

/// What the extension was built from (`build.rs`): `commit` (or
/// `"unknown"`), `dirty` (True, False or None when unknown), `source` (where
/// the commit came from) and `digest` (of the source files, when the commit
/// does not name them; else empty).
fn build_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("commit", env!("IRQSIM_GIT_COMMIT"))?;
    let dirty = match env!("IRQSIM_GIT_DIRTY") {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    };
    d.set_item("dirty", dirty)?;
    d.set_item("source", env!("IRQSIM_GIT_SOURCE"))?;
    d.set_item("digest", env!("IRQSIM_SOURCE_DIGEST"))?;
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RunReport>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(inputs, m)?)?;
    m.add("INPUT_KEYS", irqsim_core::INPUT_KEYS.to_vec())?;
    m.add_function(wrap_pyfunction!(parts::parts, m)?)?;
    m.add_function(wrap_pyfunction!(metric::declared, m)?)?;
    m.add_function(wrap_pyfunction!(exec::exec_program, m)?)?;
    m.add_function(wrap_pyfunction!(firmware::vliw_table, m)?)?;
    error::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("BUILD", build_info(m.py())?)?;
    Ok(())
}
