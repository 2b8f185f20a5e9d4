//! What the scenario tests share: a bundled scenario loaded with overrides,
//! run with its invariants checked, and a metric read by name.

use irqsim_core::{Record, Report, Scenario, parse_override, simulate};
use std::path::{Path, PathBuf};

/// Bundled scenario `name` (e.g. "compose/two-nics") with `sets` applied,
/// and its path; the load's error as text.
pub fn load(name: &str, sets: &[&str]) -> Result<(Scenario, PathBuf), String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios").join(format!("{name}.toml"));
    let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    Scenario::from_file(&path, &o).map(|s| (s, path)).map_err(|e| e.to_string())
}

/// Runs bundled scenario `name` with `sets`; panics on an error or a
/// broken invariant.
pub fn run(name: &str, sets: &[&str]) -> Report {
    let (s, path) = load(name, sets).unwrap_or_else(|e| panic!("{e}"));
    let r = simulate(&s, path.parent().unwrap(), Record::default()).unwrap_or_else(|e| panic!("{name} {sets:?}: {e}"));
    r.check_invariants().unwrap_or_else(|e| panic!("{name} {sets:?}: {e}"));
    r
}

/// Metric `k` of `r`; panics if the report has none.
pub fn m(r: &Report, k: &str) -> f64 {
    r.metric(k).unwrap_or_else(|| panic!("no metric {k}"))
}
