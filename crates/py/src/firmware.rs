//! `irqsim._core.nic_firmware` and `vliw_table`: the programmable NIC of
//! irqsim-firmware. Results cross as JSON text; errors become
//! `InputError` (the ELF or profile file), `ConfigError` (a setting),
//! `InvariantError` (a frame lost or reordered) or `IrqsimError`; Ctrl-C
//! during a run raises `KeyboardInterrupt` (the run polls for signals as
//! the core's runs do, see [`crate::monitor`]).

use crate::error::{ConfigError, InputError, InvariantError, IrqsimError, internal};
use crate::monitor::PyMonitor;
use irqsim_firmware::ilp::{Memory, Units};
use irqsim_firmware::vliw::{BlockProfile, evaluate};
use irqsim_firmware::{Error, NicConfig, run, task_owners, watched};
use irqsim_mips::Program;
use pyo3::prelude::*;
use serde_json::json;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

fn to_py(e: Error) -> PyErr {
    match e {
        Error::Input(m) => InputError::new_err(m),
        Error::Config(m) => ConfigError::new_err(m),
        Error::Invariant(m) => InvariantError::new_err(m),
        Error::Stopped(m) => IrqsimError::new_err(m),
        Error::Cancelled(m) => pyo3::exceptions::PyKeyboardInterrupt::new_err(m),
    }
}

fn load(path: &Path) -> Result<Program, Error> {
    Program::load(path).map_err(|e| Error::Input(e.to_string()))
}

/// Runs the firmware ELF at `path` with `KEY=VALUE` settings; task-level
/// runs take `owners` or, failing that, `handler_cycles` of a 1-core run.
#[pyfunction]
#[pyo3(signature = (path, sets=vec![], owners=None, handler_cycles=None))]
pub fn nic_firmware(py: Python<'_>, path: PathBuf, sets: Vec<String>, owners: Option<Vec<u32>>, handler_cycles: Option<Vec<u64>>) -> PyResult<String> {
    let signals = PyMonitor::on_main_thread(py)?;
    let (out, raised) = py.detach(|| {
        // What Python's signal handlers raised (KeyboardInterrupt), re-raised in place of the run's `Cancelled`.
        let raised: Rc<RefCell<Option<PyErr>>> = Rc::default();
        let into = Rc::clone(&raised);
        let poll = move || Python::attach(|py| py.check_signals().map_err(|e| *into.borrow_mut() = Some(e)).is_ok());
        let go = || {
            let cfg = NicConfig::from_sets(&sets).map_err(Error::Config)?;
            let program = load(&path)?;
            let owners = owners.or_else(|| handler_cycles.map(|h| task_owners(&h, cfg.cores)));
            let o = run(&program, &cfg, owners.as_deref())?;
            Ok::<_, Error>(o.to_json(&program.name).to_string())
        };
        // Off the main thread signals never arrive: nothing to poll.
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| if signals { watched(poll, go) } else { go() }));
        let raised = raised.take();
        (out, raised)
    });
    if let Some(e) = raised {
        return Err(e);
    }
    out.map_err(internal)?.map_err(to_py)
}

/// Table 1: schedules the blocks of `path` for each `INT/MEM/BRANCH` unit
/// mix, weighted by the profile (JSON text from a 1-core run, read from `name`),
/// under the `memory` rule (`registers`, the seed's, or `ordered`).
#[pyfunction]
#[pyo3(signature = (path, profile, name, units, memory="registers"))]
pub fn vliw_table(py: Python<'_>, path: PathBuf, profile: String, name: String, units: Vec<String>, memory: &str) -> PyResult<String> {
    let out = py.detach(|| {
        std::panic::catch_unwind(|| {
            let memory = Memory::parse(memory).ok_or_else(|| Error::Config(format!("memory: {memory:?}: expected registers or ordered")))?;
            let configs = units
                .iter()
                .map(|u| Units::parse(u).ok_or_else(|| Error::Config(format!("units: {u:?}: expected INT/MEM/BRANCH, each at least 1 (e.g. 3/3/1)"))))
                .collect::<Result<Vec<_>, _>>()?;
            let program = load(&path)?;
            let p = BlockProfile::parse(&profile, &name).map_err(Error::Input)?;
            let rows = evaluate(&program, &p, &configs, memory).map_err(Error::Input)?;
            let rows: Vec<_> = rows
                .iter()
                .map(|r| {
                    let u = r.units;
                    json!({"units": format!("{}/{}/{}", u.int, u.mem, u.branch), "width": u.width(), "bundles": r.bundles, "instructions": r.instructions,
                           "ipc": r.ipc(), "frames_per_kcycle": p.frames as f64 * 1000.0 / r.bundles as f64})
                })
                .collect();
            let base = json!({"cycles": p.cycles, "instructions": p.instructions, "frames": p.frames, "ipc": p.instructions as f64 / p.cycles.max(1) as f64,
                              "frames_per_kcycle": p.frames as f64 * 1000.0 / p.cycles.max(1) as f64});
            Ok::<_, Error>(json!({"profile": base, "memory": memory.name(), "rows": rows}).to_string())
        })
    });
    out.map_err(internal)?.map_err(to_py)
}
