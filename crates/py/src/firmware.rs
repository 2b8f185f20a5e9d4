//! `irqsim._core.vliw_table`: irqsim-firmware's offline VLIW scheduler
//! (Table 1 of the nic-firmware study) over a profile a machine run of the
//! programmable NIC recorded. Results cross as JSON text; errors become
//! `InputError` (the ELF or profile file) or `ConfigError` (a setting).
//! The NIC itself runs on the machine (`irqsim._core.run`).

use crate::error::{ConfigError, InputError, internal};
use irqsim_firmware::Error;
use irqsim_firmware::ilp::{Memory, Units};
use irqsim_firmware::vliw::{BlockProfile, evaluate};
use irqsim_mips::Program;
use pyo3::prelude::*;
use serde_json::json;
use std::path::{Path, PathBuf};

fn to_py(e: Error) -> PyErr {
    match e {
        Error::Config(m) => ConfigError::new_err(m),
        e => InputError::new_err(e.to_string()),
    }
}

fn load(path: &Path) -> Result<Program, Error> {
    Program::load(path).map_err(|e| Error::Input(e.to_string()))
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
