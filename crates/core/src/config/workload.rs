//! `[workload]`: what drives a run. `kind` selects a variant; each variant's
//! keys are a struct of their own with its table of parameters
//! ([`VARIANTS`]), deserialized apart (serde's internally tagged enums
//! lose the path of a bad key).

use crate::params::Param;
use crate::workload::config::{ArrivalsConfig, FloodConfig, ScriptConfig, SyntheticConfig, TraceConfig};
use serde::de::{self, DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};

/// What drives the run.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkloadConfig {
    /// Closed loop at the driver: the next packet is offered the moment the
    /// previous one leaves the driver (receive) or its send call returns (send).
    Flood(FloodConfig),
    /// Open-loop arrivals of received packets.
    Arrivals(ArrivalsConfig),
    /// A real capture: packets from a pcap file, system calls from an strace log.
    Trace(TraceConfig),
    /// Stimuli at exact cycles, for scripted sequences (the paper's Figures 4 and 5).
    Script(ScriptConfig),
    /// The paper's busiest second, generated: received bit rate, packet
    /// interrupts and system calls per second.
    Synthetic(SyntheticConfig),
    /// Back-to-back Mach null RPCs with one protected critical section, under
    /// interrupt arrivals (the masking model; keys in `masking::NullRpcConfig`).
    NullRpc(crate::masking::NullRpcConfig),
    /// A PCIe exerciser raising interrupts through `[intc]`, serviced by an
    /// ISR and a tasklet (the delivery model; keys in `device::sources::ExerciserConfig`).
    Exerciser(crate::device::sources::ExerciserConfig),
}

pub const KINDS: &[&str] = &["flood", "arrivals", "trace", "script", "synthetic", "null_rpc", "exerciser"];

/// One `kind` of workload and the keys it takes beside `kind`.
pub struct Variant {
    pub kind: &'static str,
    pub help: &'static str,
    pub params: &'static [Param],
    /// Rules between keys that the table cannot state.
    pub notes: &'static str,
}

/// Every kind, in the order of [`KINDS`].
pub const VARIANTS: &[Variant] = &[
    Variant {
        kind: "flood",
        help: "closed loop at the driver: the next frame is offered the moment the previous one leaves the driver (`rx`) or its send call returns (`tx`)",
        params: FloodConfig::PARAMS,
        notes: "",
    },
    Variant { kind: "arrivals", help: "open-loop arrivals of received frames", params: ArrivalsConfig::PARAMS, notes: "" },
    Variant {
        kind: "trace",
        help: "a real capture: frames to `host` are received, from `host` sent; system calls that move no packet become SWIs",
        params: TraceConfig::PARAMS,
        notes: "`host` must be an IPv4 address. Paths are relative to the scenario file.",
    },
    Variant {
        kind: "script",
        help: "stimuli at exact cycles (the paper's Figures 4 and 5)",
        params: ScriptConfig::PARAMS,
        notes: "Exactly one of `events` and `events_file`. Events must be in time order; a `receive` or `send` needs `bytes` of 1..=9216. An events file has one event a line, `at_cycle,action,bytes` (`bytes` may be left out of a `syscall`); blank lines, lines starting with `#` and a first line `at_cycle,action,bytes` are skipped.",
    },
    Variant {
        kind: "synthetic",
        help: "the paper's busiest second, generated: received bit rate, packet interrupts and system calls per second",
        params: SyntheticConfig::PARAMS,
        notes: "Refused: received frames larger than 9,216 bytes (`rx_mbps` too high for the received packet interrupts); more packet interrupts or system calls per second than cycles.",
    },
    Variant {
        kind: "null_rpc",
        help: "back-to-back Mach null RPCs with one interrupt-protected critical section, under interrupt arrivals (the masking model)",
        params: crate::masking::NullRpcConfig::PARAMS,
        notes: "Refused: `section_level` or an `interrupt_levels` entry that the machine does not have; `section_cycles` above `rpc_path_cycles`; `interrupt_weights` of another length than `interrupt_levels`, or all 0. The CPU's `irq_entry_cycles` and `save_restore_cycles` are paid by every interrupt taken, and a second time by a deferred handler that a section exit resumes from its continuation.",
    },
    Variant {
        kind: "exerciser",
        help: "a PCIe exerciser raising interrupts through `[intc]`, serviced by an ISR and a tasklet (the interrupt-delivery model)",
        params: crate::device::sources::ExerciserConfig::PARAMS,
        notes: "Refused with the key named: a line out of range or the XT-PIC cascade line (`workload.line`, `workload.others[i].line`), no free line left for a device (share one by giving `line`), two MSI sources on one vector (never shared), a CPU that does not exist.",
    },
];

impl WorkloadConfig {
    /// The `kind` key's value.
    pub fn kind(&self) -> &'static str {
        KINDS[match self {
            Self::Flood(_) => 0,
            Self::Arrivals(_) => 1,
            Self::Trace(_) => 2,
            Self::Script(_) => 3,
            Self::Synthetic(_) => 4,
            Self::NullRpc(_) => 5,
            Self::Exerciser(_) => 6,
        }]
    }
}

/// The variant of `kind`, if it is one.
pub fn variant(kind: &str) -> Option<&'static Variant> {
    VARIANTS.iter().find(|v| v.kind == kind)
}

impl<'de> Deserialize<'de> for WorkloadConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut table = toml::Table::deserialize(d)?;
        let kind = match table.remove("kind") {
            Some(toml::Value::String(k)) => k,
            Some(other) => return Err(de::Error::custom(format!("`kind`: expected a string, got {}", other.type_str()))),
            None => return Err(de::Error::missing_field("kind")),
        };
        let r = match kind.as_str() {
            "flood" => keys(table).map(Self::Flood),
            "arrivals" => keys(table).map(Self::Arrivals),
            "trace" => keys(table).map(Self::Trace),
            "script" => keys(table).map(Self::Script),
            "synthetic" => keys(table).map(Self::Synthetic),
            "null_rpc" => keys(table).map(Self::NullRpc),
            "exerciser" => keys(table).map(Self::Exerciser),
            other => return Err(de::Error::unknown_variant(other, KINDS)),
        };
        r.map_err(de::Error::custom)
    }
}

/// Deserializes one variant's keys, keeping the path of a bad key.
fn keys<T: DeserializeOwned>(table: toml::Table) -> Result<T, String> {
    serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
        let path = e.path().to_string();
        let msg = e.into_inner().to_string();
        let msg = msg.lines().next().unwrap_or_default();
        if path == "." { msg.to_string() } else { format!("`{path}`: {msg}") }
    })
}
