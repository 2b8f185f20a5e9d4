//! `[workload]`: what drives a run. `kind` selects a variant; each variant's
//! keys are a struct of their own, deserialized apart so that an error names
//! the key inside `[workload]` (serde's internally tagged enums lose it).

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
    /// ISR and a tasklet (the delivery model; keys in `delivery::ExerciserConfig`).
    Exerciser(crate::delivery::ExerciserConfig),
}

const KINDS: &[&str] = &["flood", "arrivals", "trace", "script", "synthetic", "null_rpc", "exerciser"];

/// Marks an error message with the key it is about, for `load.rs` to lift
/// into the error's key path.
pub(super) const AT_KEY: &str = "at key `";

impl<'de> Deserialize<'de> for WorkloadConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut table = toml::Table::deserialize(d)?;
        let kind = match table.remove("kind") {
            Some(toml::Value::String(k)) => k,
            Some(other) => return Err(de::Error::custom(format!("{AT_KEY}kind`: expected a string, got {}", other.type_str()))),
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
        if path == "." { msg.to_string() } else { format!("{AT_KEY}{path}`: {msg}") }
    })
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FloodConfig {
    pub direction: Direction,
    pub packet_bytes: u32,
    /// Extra delay before offering the next packet.
    #[serde(default)]
    pub gap_cycles: u64,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ArrivalsConfig {
    #[serde(default = "poisson")]
    pub process: Process,
    pub rate_pps: f64,
    pub packet_bytes: u32,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    /// pcap file (µs or ns timestamps), relative to the scenario file.
    pub pcap: String,
    /// strace log (`strace -f -ttt -T` or `-tt -T`); optional.
    #[serde(default)]
    pub strace: Option<String>,
    /// IPv4 address of the simulated host: packets to it are received,
    /// packets from it are sent.
    pub host: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptConfig {
    pub events: Vec<ScriptEvent>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SyntheticConfig {
    #[serde(default = "rx_mbps")]
    pub rx_mbps: f64,
    #[serde(default = "packet_interrupts")]
    pub packet_interrupts_per_s: u64,
    #[serde(default = "syscalls")]
    pub syscalls_per_s: u64,
    /// Share of packet interrupts that are transmit completions.
    #[serde(default = "tx_share")]
    pub tx_share: f64,
    /// Size of each sent packet.
    #[serde(default = "tx_bytes")]
    pub tx_packet_bytes: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Rx,
    Tx,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Process {
    Poisson,
    Periodic,
}


/// One scripted stimulus.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptEvent {
    pub at_cycle: u64,
    /// `receive` (a frame reaches the NIC), `send` (the application calls
    /// send) or `syscall` (any other system call).
    pub action: Action,
    /// Frame size for `receive` and `send`.
    #[serde(default)]
    pub bytes: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Receive,
    Send,
    Syscall,
}

fn poisson() -> Process {
    Process::Poisson
}
fn rx_mbps() -> f64 {
    8.6
}
fn packet_interrupts() -> u64 {
    1080
}
fn syscalls() -> u64 {
    1652
}
fn tx_share() -> f64 {
    0.1
}
fn tx_bytes() -> u32 {
    100
}
