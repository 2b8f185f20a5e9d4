//! What a run reports: named metrics, cycle bins per hardware thread,
//! per-packet latencies and, when recorded, the timeline, plus the
//! conservation laws the run must satisfy. The machine builds it
//! (`machine/report.rs`); the CLI, the Python API and the tests read it.

use crate::cpu::{Bin, Bins};
use crate::stats::Distribution;
use crate::timeline::Timeline;
use serde_json::{Map, Value, json};
use std::borrow::Cow;

/// A metric's name: most are constants, borrowed, so that a tiny run
/// formats and frees none (docs/performance.md); a family's member
/// (`thread3_busy_share`) is made when reported.
pub type Name = Cow<'static, str>;

/// A conservation law: `lhs` must equal `rhs`.
#[derive(Debug, Clone)]
pub struct Law {
    pub what: &'static str,
    pub lhs: u64,
    pub rhs: u64,
}

pub struct Report {
    pub clock_mhz: f64,
    pub elapsed_cycles: u64,
    /// Named metrics in a fixed order; NaN where undefined (no samples).
    pub metrics: Vec<(Name, f64)>,
    /// Cycle bins of each hardware thread.
    pub bins: Vec<Bins>,
    /// Cycle bins of each hardware context of each thread (no idle).
    pub context_bins: Vec<Vec<Bins>>,
    /// Per hardware thread, per [`Bin`] index: the instructions and cache
    /// misses of code that ran in that bin (empty without `[code]`).
    pub code_bins: Vec<[crate::code::Counts; 6]>,
    /// The programmable NIC's measured window (`nic_firmware.window_frames`) as JSON.
    pub nic_firmware: Option<Value>,
    /// Hardware context names (timeline tracks).
    pub contexts: Vec<String>,
    /// `(arrival cycle, latency cycles)` of the first packets delivered.
    pub records: Vec<(u64, u64)>,
    pub laws: Vec<Law>,
    pub timeline: Timeline,
}

/// Metrics from `(name, value)` pairs.
pub fn named<const N: usize>(pairs: [(&'static str, f64); N]) -> Vec<(Name, f64)> {
    pairs.into_iter().map(|(k, v)| (Cow::Borrowed(k), v)).collect()
}

/// The names [`latency_metrics`] gives a distribution: `latency_names!("isr_latency")`
/// is `isr_latency_min_us` and so on.
macro_rules! latency_names {
    ($prefix:literal) => {
        [concat!($prefix, "_min_us"), concat!($prefix, "_p50_us"), concat!($prefix, "_p99_us"), concat!($prefix, "_p999_us"), concat!($prefix, "_max_us")]
    };
}
pub(crate) use latency_names;

/// Latency summary metrics (µs) of a distribution in cycles, named by
/// [`latency_names`]; the minimum and maximum are exact.
pub fn latency_metrics(names: [&'static str; 5], d: &Distribution, clock_mhz: f64) -> Vec<(Name, f64)> {
    let us = |c: u64| if d.is_empty() { f64::NAN } else { c as f64 / clock_mhz };
    let (min, max) = d.extremes().unwrap_or_default();
    let [n_min, p50, p99, p999, n_max] = names;
    named([(n_min, us(min)), (p50, us(d.quantile(0.5))), (p99, us(d.quantile(0.99))), (p999, us(d.quantile(0.999))), (n_max, us(max))])
}

impl Report {
    /// A metric by name.
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics.iter().find(|(k, _)| k == name).map(|&(_, v)| v)
    }

    /// Checks the conservation laws and that each thread's bins sum to the
    /// elapsed cycles.
    pub fn check_invariants(&self) -> Result<(), String> {
        for law in &self.laws {
            if law.lhs != law.rhs {
                return Err(format!("{} violated: {} != {}", law.what, law.lhs, law.rhs));
            }
        }
        for (i, b) in self.bins.iter().enumerate() {
            if b.total() != self.elapsed_cycles {
                return Err(format!("thread {i}: bins sum to {} cycles, elapsed {}", b.total(), self.elapsed_cycles));
            }
            let by_context: u64 = self.context_bins[i].iter().map(Bins::total).sum();
            if by_context + b.get(Bin::Idle) != self.elapsed_cycles {
                return Err(format!("thread {i}: context bins sum to {by_context} cycles + idle, elapsed {}", self.elapsed_cycles));
            }
        }
        Ok(())
    }

    /// Metrics and bins as JSON (the `irqsim run --json` schema).
    pub fn to_json(&self) -> Value {
        let metrics: Map<String, Value> = self.metrics.iter().map(|(k, v)| (k.to_string(), json_num(*v))).collect();
        let row = |b: &Bins, thread: usize| {
            let mut m: Map<String, Value> = Bin::ALL.iter().map(|&bin| (bin.name().to_string(), json!(b.get(bin)))).collect();
            m.insert("thread".into(), json!(thread));
            m
        };
        let bins: Vec<Value> = self.bins.iter().enumerate().map(|(i, b)| Value::Object(row(b, i))).collect();
        let mut context_bins = Vec::new();
        for (i, contexts) in self.context_bins.iter().enumerate() {
            for (c, b) in contexts.iter().enumerate() {
                let mut m = row(b, i);
                m.remove(Bin::Idle.name());
                m.insert("context".into(), json!(self.contexts[c]));
                context_bins.push(Value::Object(m));
            }
        }
        let mut doc = json!({"metrics": metrics, "bins": bins, "context_bins": context_bins});
        if !self.code_bins.is_empty() {
            let mut rows = Vec::new();
            for (i, per) in self.code_bins.iter().enumerate() {
                for bin in [Bin::User, Bin::Kernel, Bin::Interrupt, Bin::BottomHalf] {
                    let mut m = serde_json::to_value(per[bin as usize]).expect("plain counts");
                    m["thread"] = json!(i);
                    m["bin"] = json!(bin.name());
                    rows.push(m);
                }
            }
            doc["code_bins"] = Value::Array(rows);
        }
        if let Some(w) = &self.nic_firmware {
            doc["nic_firmware"] = w.clone();
        }
        doc
    }

    pub fn chrome_trace(&self) -> Value {
        self.timeline.to_chrome(self.clock_mhz, self.bins.len(), self.contexts.len(), |c| self.contexts[c].clone())
    }

    /// [`Self::chrome_trace`] written to `w` as it is produced; the number of
    /// events written (metadata aside).
    pub fn write_chrome_trace(&self, w: &mut impl std::io::Write) -> std::io::Result<u64> {
        self.timeline.write_chrome(w, self.clock_mhz, self.bins.len(), self.contexts.len(), |c| self.contexts[c].clone())
    }
}

fn json_num(v: f64) -> Value {
    if v.is_finite() { json!(v) } else { Value::Null }
}
