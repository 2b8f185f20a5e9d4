//! The workload variants' keys: floods, arrivals, traces, scripts and the
//! generated busiest second, each a struct with its table of parameters.
//! Which variant a scenario runs is the scenario's choice
//! (`config::WorkloadConfig`, which also names the other parts' workloads).

use crate::params::{Param, REQ, absent, d};
use serde::{Deserialize, Serialize};

/// Largest frame a scenario may name (jumbo frames included).
pub const MAX_PACKET_BYTES: u32 = 9216;

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
        Param::float(
            "first_ns",
            "ns",
            d("0.0"),
            false,
            0.0,
            1e9,
            "when the first frame arrives, the rest following at the rate (a wire that starts idle delivers its first frame's last bit a frame time in)",
        ),
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
