//! The sections every model shares (`[run]`, `[cpu]`, `[stats]`) and those
//! of the network model (`[nic]`, `[driver]`, `[stack]`, `[app]`): each
//! struct beside the table that declares its keys. The structs carry no
//! serde defaults: the tables fill them in (params.rs), so a default is
//! written once.

use crate::params::{Param, Range, Type, d};
use serde::{Deserialize, Deserializer, Serialize};

/// Workload kinds whose models keep per-packet records.
const RECORDING_KINDS: &[&str] = &["flood", "arrivals", "trace", "script", "synthetic", "exerciser"];

/// `[run]`; keys: [`RunConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    #[serde(deserialize_with = "u64_or_string")]
    pub seed: u64,
    pub duration_ms: f64,
    pub max_events: u64,
}

/// Longest run, in simulated milliseconds: one hour.
pub const MAX_DURATION_MS: f64 = 3_600_000.0;

impl RunConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::of(
            "seed",
            Type::U64,
            "",
            d("1"),
            Range::Int(0, u64::MAX as i128),
            "seed of every random stream; TOML integers stop at 2^63−1, so write a larger seed as a decimal string (`seed = \"18446744073709551615\"`)",
        ),
        Param::float("duration_ms", "ms", d("1000.0"), true, 0.0, MAX_DURATION_MS, "simulated time to run (at most one simulated hour)"),
        Param::of(
            "max_events",
            Type::U64,
            "events",
            d("1_000_000_000"),
            Range::Int(1, 1_000_000_000_000),
            "guard against settings that would run for hours: a run whose workload rates alone offer more stimuli is refused at load, and one whose event loop takes more turns stops with an error naming this key (checked every 65,536 turns; steps the loop runs as one, such as an interrupt's entry to exit when nothing comes between them, are one turn)",
        ),
    ];
}

fn u64_or_string<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Seed {
        Int(u64),
        Text(String),
    }
    match Seed::deserialize(d)? {
        Seed::Int(n) => Ok(n),
        Seed::Text(s) => s.parse().map_err(serde::de::Error::custom),
    }
}

/// `[stats]`; keys: [`StatsConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StatsConfig {
    pub max_packet_records: usize,
    pub timeline_max_items: usize,
}

impl StatsConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::int(
            "max_packet_records",
            "records",
            d("1_000_000"),
            0,
            10_000_000,
            "per-packet latencies kept for `Result.latencies`, 16 bytes each (the histogram and metrics see every packet)",
        )
        .when("workload.kind", RECORDING_KINDS),
        Param::int(
            "timeline_max_items",
            "items",
            d("100_000"),
            0,
            1_000_000,
            "spans and marks kept by `irqsim timeline` (exporting costs about 3.5 KB of memory per item); what is cut is reported",
        ),
    ];
}
