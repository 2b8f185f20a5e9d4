//! `[workload]`: what drives a run. `kind` selects a variant; each variant's
//! keys are a struct of their own with its table of parameters
//! ([`VARIANTS`]), deserialized apart (serde's internally tagged enums
//! lose the path of a bad key).

use super::MAX_PACKET_BYTES;
use super::params::{Param, REQ, absent, d};
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

/// `kind = "flood"`; keys: [`FloodConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FloodConfig {
    pub direction: Direction,
    pub packet_bytes: u32,
    pub gap_cycles: u64,
}

const FRAME: i128 = MAX_PACKET_BYTES as i128;
const PROCESSES: &[&str] = &["poisson", "periodic"];

impl FloodConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::choice(
            "direction",
            &["rx", "tx"],
            REQ,
            "`rx`: the next frame arrives when the driver has taken the previous one; `tx`: the application calls send again when the previous call returns",
        ),
        Param::int("packet_bytes", "bytes", REQ, 1, FRAME, "frame size"),
        Param::cycles("gap_cycles", d("0"), "extra delay before offering the next frame"),
    ];
}

/// `kind = "arrivals"`; keys: [`ArrivalsConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ArrivalsConfig {
    pub process: Process,
    /// Frames per second (the key `rate_per_s`).
    #[serde(rename = "rate_per_s")]
    pub rate_pps: f64,
    pub packet_bytes: u32,
    pub first_ns: f64,
}

impl ArrivalsConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::choice("process", PROCESSES, d("\"poisson\""), "arrival process"),
        Param::float("rate_per_s", "/s", REQ, true, 0.0, 1e9, "frames arriving per second (at most one per cycle)"),
        Param::int("packet_bytes", "bytes", REQ, 1, FRAME, "frame size"),
        Param::float("first_ns", "ns", d("0.0"), false, 0.0, 1e9, "when the first frame arrives, the rest following at the rate (a wire that starts idle delivers its first frame's last bit a frame time in)"),
    ];
}

/// `kind = "trace"`; keys: [`TraceConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    pub pcap: String,
    pub strace: Option<String>,
    pub host: String,
}

impl TraceConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::text("pcap", REQ, "pcap capture (µs or ns timestamps), relative to the scenario file"),
        Param::text("strace", absent("no system calls"), "strace log (`strace -f -ttt -T` or `-tt -T`), relative to the scenario file"),
        Param::text("host", REQ, "IPv4 address of the simulated host: frames to it are received, frames from it are sent"),
    ];
}

/// `kind = "script"`; keys: [`ScriptConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptConfig {
    pub events: Option<Vec<ScriptEvent>>,
    pub events_file: Option<String>,
}

impl ScriptConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::items("events", ScriptEvent::PARAMS, absent("none: `events_file` gives them"), "stimuli in time order, one `[[workload.events]]` table each"),
        Param::text(
            "events_file",
            absent("none: `events` gives them"),
            "stimuli in time order in a CSV file, one `at_cycle,action,bytes` line each, relative to the scenario file; read as the run advances, so any number of events takes bounded memory",
        ),
    ];
}

/// `kind = "synthetic"`; keys: [`SyntheticConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SyntheticConfig {
    pub rx_mbps: f64,
    pub packet_interrupts_per_s: u64,
    pub syscalls_per_s: u64,
    pub tx_share: f64,
    pub tx_packet_bytes: u32,
}

impl SyntheticConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::float(
            "rx_mbps",
            "Mb/s",
            d("8.6"),
            true,
            0.0,
            100_000.0,
            "received bit rate; each received frame is `rx_mbps × 10^6 / 8 / received-frames` bytes",
        ),
        Param::int("packet_interrupts_per_s", "/s", d("1080"), 1, 1_000_000_000, "packet interrupts per second, at uniformly random instants"),
        Param::int("syscalls_per_s", "/s", d("1652"), 0, 1_000_000_000, "system calls per second that move no packet"),
        Param::float("tx_share", "", d("0.1"), false, 0.0, 1.0, "share of packet interrupts that are transmit completions").below(),
        Param::int("tx_packet_bytes", "bytes", d("100"), 1, FRAME, "size of each sent frame"),
    ];
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
/// Keys: [`ScriptEvent::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptEvent {
    pub at_cycle: u64,
    pub action: Action,
    pub bytes: u32,
}

impl ScriptEvent {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::int("at_cycle", "cycles", REQ, 0, i64::MAX as i128, "when, in cycles from the start"),
        Param::choice(
            "action",
            &["receive", "send", "syscall"],
            REQ,
            "`receive` (a frame reaches the NIC), `send` (the application calls send) or `syscall` (any other system call)",
        ),
        Param::int("bytes", "bytes", d("0"), 0, FRAME, "frame size for `receive` and `send`"),
    ];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Receive,
    Send,
    Syscall,
}
