//! What a run reports: metrics, cycle bins per hardware thread, per-packet
//! latencies and, when recorded, the timeline. Also the run's invariants.

use crate::cpu::{Bin, Bins};
use crate::sim::Sim;
use crate::stats::Counters;
use crate::timeline::Timeline;
use hdrhistogram::Histogram;
use serde_json::{Map, Value, json};

pub struct Report {
    pub clock_mhz: f64,
    pub elapsed_cycles: u64,
    pub counters: Counters,
    pub rx_in_flight: u64,
    pub tx_in_flight: u64,
    /// Cycle bins of each hardware thread.
    pub bins: Vec<Bins>,
    /// Hardware context names, for timelines and tables.
    pub contexts: Vec<&'static str>,
    pub latency: Histogram<u64>,
    /// `(arrival cycle, latency cycles)` of the first received packets.
    pub records: Vec<(u64, u64)>,
    pub timeline: Timeline,
    pub reordered: u64,
}

impl Report {
    pub(crate) fn new(sim: Sim) -> Self {
        let policy = sim.threads[0].policy();
        let contexts = (0..policy.contexts()).map(|c| policy.context_name(c)).collect();
        Self {
            clock_mhz: sim.scenario().cpu.clock_mhz,
            elapsed_cycles: sim.end,
            rx_in_flight: sim.nic.rx_waiting() as u64 + sim.counters.rx_in_stack,
            tx_in_flight: sim.nic.tx_in_flight() as u64 + sim.counters.tx_in_stack,
            counters: sim.counters.clone(),
            bins: sim.threads.iter().map(|t| *t.bins()).collect(),
            contexts,
            latency: sim.latencies.histogram().clone(),
            records: sim.latencies.records().to_vec(),
            timeline: sim.timeline,
            reordered: sim.reordered,
        }
    }

    pub fn seconds(&self) -> f64 {
        self.elapsed_cycles as f64 / (self.clock_mhz * 1e6)
    }

    fn us(&self, cycles: u64) -> f64 {
        cycles as f64 / self.clock_mhz
    }

    /// Named metrics, in a fixed order. Throughputs count delivered
    /// (received) or transmitted bits only; drops never count.
    pub fn metrics(&self) -> Vec<(&'static str, f64)> {
        let c = &self.counters;
        let s = self.seconds();
        let h = &self.latency;
        let (min, p50, p99, max) = if h.is_empty() {
            (f64::NAN, f64::NAN, f64::NAN, f64::NAN)
        } else {
            (self.us(h.min()), self.us(h.value_at_quantile(0.5)), self.us(h.value_at_quantile(0.99)), self.us(h.max()))
        };
        vec![
            ("sim_seconds", s),
            ("sim_cycles", self.elapsed_cycles as f64),
            ("events", c.events as f64),
            ("rx_offered", c.rx_offered as f64),
            ("rx_delivered", c.rx_delivered as f64),
            ("rx_dropped_nic", c.rx_dropped_nic as f64),
            ("rx_dropped_backlog", c.rx_dropped_backlog as f64),
            ("rx_in_flight", self.rx_in_flight as f64),
            ("rx_throughput_mbps", c.rx_delivered_bytes as f64 * 8.0 / s / 1e6),
            ("tx_offered", c.tx_offered as f64),
            ("tx_sent", c.tx_sent as f64),
            ("tx_dropped", c.tx_dropped as f64),
            ("tx_in_flight", self.tx_in_flight as f64),
            ("tx_throughput_mbps", c.tx_sent_bytes as f64 * 8.0 / s / 1e6),
            ("interrupts", c.interrupts as f64),
            ("syscalls", c.syscalls as f64),
            ("latency_min_us", min),
            ("latency_p50_us", p50),
            ("latency_p99_us", p99),
            ("latency_max_us", max),
            ("reordered_stimuli", self.reordered as f64),
        ]
    }

    /// Checks the invariants every run must keep: packets are conserved in
    /// each direction and each thread's bins sum to the elapsed cycles.
    pub fn check_invariants(&self) -> Result<(), String> {
        let c = &self.counters;
        let rx_out = c.rx_delivered + c.rx_dropped_nic + c.rx_dropped_backlog + self.rx_in_flight;
        if c.rx_offered != rx_out {
            return Err(format!("rx not conserved: offered {} != delivered + dropped + in flight {rx_out}", c.rx_offered));
        }
        let tx_out = c.tx_sent + c.tx_dropped + self.tx_in_flight;
        if c.tx_offered != tx_out {
            return Err(format!("tx not conserved: offered {} != sent + dropped + in flight {tx_out}", c.tx_offered));
        }
        for (i, b) in self.bins.iter().enumerate() {
            if b.total() != self.elapsed_cycles {
                return Err(format!("thread {i}: bins sum to {} cycles, elapsed {}", b.total(), self.elapsed_cycles));
            }
        }
        Ok(())
    }

    /// Metrics and bins as JSON (the `irqsim run --json` schema).
    pub fn to_json(&self) -> Value {
        let metrics: Map<String, Value> = self.metrics().into_iter().map(|(k, v)| (k.to_string(), json_num(v))).collect();
        let bins: Vec<Value> = self
            .bins
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let mut m: Map<String, Value> = Bin::ALL.iter().map(|&bin| (bin.name().to_string(), json!(b.get(bin)))).collect();
                m.insert("thread".into(), json!(i));
                Value::Object(m)
            })
            .collect();
        json!({"metrics": metrics, "bins": bins})
    }

    pub fn chrome_trace(&self) -> Value {
        let names = self.contexts.clone();
        self.timeline.to_chrome(self.clock_mhz, self.bins.len(), names.len(), |c| names[c].to_string())
    }
}

fn json_num(v: f64) -> Value {
    if v.is_finite() { json!(v) } else { Value::Null }
}
