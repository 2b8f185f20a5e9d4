//! `irqsim parts`: every part of a scenario with its keys, from the core's
//! parameter tables.

use pyo3::prelude::*;

/// Every part and its keys: JSON text, or docs/config.md when `markdown`.
#[pyfunction]
#[pyo3(signature = (markdown=false))]
pub fn parts(markdown: bool) -> String {
    if markdown { irqsim_core::config::markdown(&[]) } else { irqsim_core::config::parts_json(&[]).to_string() }
}
