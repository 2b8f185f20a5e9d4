//! Which metrics are counts.
//!
//! The core reports every metric as an `f64`. A metric is a count, and
//! crosses into Python and JSON as an integer, unless its name marks a
//! quantity: a time (`_us`, `_seconds`), a rate (`_mbps`, `_per_s`), a
//! share (`_share`) or an average (`_per_`, as in `cycles_per_rpc`). The
//! rule is by name so that a metric's type never depends on the run; a value
//! that is not a whole number stays a float all the same.

use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyInt};
use serde_json::Value;

const QUANTITY_SUFFIXES: [&str; 4] = ["_us", "_seconds", "_mbps", "_share"];

/// Whether the metric `name` counts something (see the module notes).
pub fn is_count(name: &str) -> bool {
    !(QUANTITY_SUFFIXES.iter().any(|s| name.ends_with(s)) || name.contains("_per_"))
}

/// The integer a count holds, if `value` is one.
fn as_count(name: &str, value: f64) -> Option<i64> {
    let whole = value.is_finite() && value.fract() == 0.0 && value.abs() < 9.0e15;
    (is_count(name) && whole).then_some(value as i64)
}

/// `value` as a Python int (a count) or float.
pub fn to_py<'py>(py: Python<'py>, name: &str, value: f64) -> Bound<'py, PyAny> {
    match as_count(name, value) {
        Some(n) => PyInt::new(py, n).into_any(),
        None => PyFloat::new(py, value).into_any(),
    }
}

/// Rewrites the counts in a report's `{"metrics": {...}}` as JSON integers.
pub fn counts_as_integers(doc: &mut Value) {
    if let Some(Value::Object(metrics)) = doc.get_mut("metrics") {
        for (name, v) in metrics.iter_mut() {
            if let Some(n) = v.as_f64().and_then(|x| as_count(name, x)) {
                *v = Value::from(n);
            }
        }
    }
}

/// The metric table (`irqsim_core::metrics::METRICS`) as JSON text.
#[pyfunction]
pub fn declared() -> String {
    serde_json::to_string(irqsim_core::metrics::METRICS).expect("plain data")
}
