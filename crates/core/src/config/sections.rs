//! The sections every model shares (`[run]`, `[cpu]`, `[stats]`) and those
//! of the network model (`[nic]`, `[driver]`, `[stack]`, `[app]`): each
//! struct beside the table that declares its keys. The structs carry no
//! serde defaults: the tables fill them in (params.rs), so a default is
//! written once.

use crate::params::{Param, REQ, Range, Type, d};
use crate::cpu::ContextPolicy;
use serde::{Deserialize, Deserializer, Serialize};

/// Workload kinds whose models keep per-packet records.
const RECORDING_KINDS: &[&str] = &["flood", "arrivals", "trace", "script", "synthetic", "exerciser"];

/// Largest thread index: `cpu.threads` is at most 64.
pub(crate) const MAX_THREAD: i128 = 63;

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
            "guard against settings that would run for hours: a run whose workload rates alone offer more stimuli is refused at load, and one that handles more events stops with an error naming this key (checked every 65,536 events)",
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

/// `[cpu]`; keys: [`CpuConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CpuConfig {
    pub clock_mhz: f64,
    pub threads: usize,
    pub context_policy: ContextPolicy,
    pub irq_entry_cycles: u64,
    pub swi_entry_cycles: u64,
    pub save_restore_cycles: u64,
    pub context_switch_cycles: u64,
}

impl CpuConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::float("clock_mhz", "MHz", REQ, true, 0.0, 100_000.0, "core clock; simulated time is counted in cycles of this clock"),
        Param::int("threads", "", d("1"), 1, MAX_THREAD + 1, "hardware threads (cores; SMT issue sharing is not modelled)"),
        Param::choice(
            "context_policy",
            &["single", "multithreaded"],
            d("\"single\""),
            "`single`: one register context, a preemption of running code costs `save_restore_cycles`; `multithreaded`: a context each for application (C1), interrupts (C2) and protocol/software interrupts (C3), switching costs `context_switch_cycles`",
        ),
        Param::cycles("irq_entry_cycles", d("6"), "interrupt-entry pipeline sequence (AE32000: nullify, push SR and PC, acknowledge, vector, load)"),
        Param::cycles("swi_entry_cycles", d("6"), "entry of a software interrupt (system call, queued SWI)"),
        Param::cycles("save_restore_cycles", d("186"), "saving and restoring a register context when a preemption needs it"),
        Param::cycles("context_switch_cycles", d("0"), "moving execution to another hardware context (a pointer change)")
            .when("cpu.context_policy", &["multithreaded"]),
    ];
}

/// `[nic]`; keys: [`NicConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NicConfig {
    pub rx_buffer_bytes: u64,
    pub tx_queue_packets: usize,
    pub link_mbps: f64,
    pub wire_queue_packets: u64,
    pub dma_bytes_per_cycle: f64,
    pub irq_thread: usize,
    pub rx_ring_frames: Option<u64>,
}

impl NicConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::int("rx_buffer_bytes", "bytes", d("16384"), 1, 1 << 30, "on-card receive buffer; a frame that does not fit is dropped (`rx_dropped_nic`)"),
        Param::int(
            "tx_queue_packets",
            "packets",
            d("64"),
            1,
            1_000_000,
            "the driver's transmit-pending queue in kernel memory; a send finding it full is dropped (`tx_dropped`)",
        ),
        Param::float(
            "link_mbps",
            "Mb/s",
            d("10.0"),
            true,
            0.0,
            1_000_000.0,
            "line rate, both ways: a frame occupies the wire for `bytes × 8 / link_mbps` µs, so received frames land at least that far apart",
        ),
        Param::int(
            "wire_queue_packets",
            "packets",
            d("1000"),
            1,
            1_000_000,
            "received frames that may wait for the wire (the sending switch port's queue); more are dropped (`rx_dropped_wire`)",
        ),
        Param::float(
            "dma_bytes_per_cycle",
            "bytes/cycle",
            d("4.0"),
            true,
            0.0,
            4096.0,
            "DMA rate between NIC buffer and memory; runs beside the CPU, never charged to it",
        ),
        Param::int("irq_thread", "", d("0"), 0, MAX_THREAD, "hardware thread taking the NIC interrupt and its protocol work (below `cpu.threads`)"),
        Param::int(
            "rx_ring_frames",
            "",
            crate::params::absent("no limit but `rx_buffer_bytes`"),
            1,
            1 << 20,
            "receive descriptors: frames waiting for the driver beyond this many are dropped (`rx_dropped_nic`), whatever their size",
        ),
    ];
}

/// Device-driver routine costs (the paper's Figure 6, 500-byte packets, the
/// same for 50–1,500 bytes because DMA copies the data).
/// Keys: [`DriverConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DriverConfig {
    pub send_cycles: u64,
    pub isr_tx_done_cycles: u64,
    pub isr_rx_done_cycles: u64,
    pub isr_rx_spread: Vec<f64>,
}

impl DriverConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::cycles("send_cycles", d("2756"), "Driver Send: check the NIC, set up the DMA (or queue the frame), start the transmit"),
        Param::cycles("isr_tx_done_cycles", d("536"), "Driver ISR, transmit-done part (also starts the next queued frame)"),
        Param::cycles("isr_rx_done_cycles", d("2228"), "Driver ISR, receive part, per frame taken from the NIC buffer"),
        Param::of(
            "isr_rx_spread",
            Type::FloatList,
            "",
            d("[]"),
            Range::Float { min: 0.0, min_open: false, max: 1000.0, max_open: false },
            "per-frame receive cost as multiples of `isr_rx_done_cycles`, scaled to a mean of 1: each frame draws one (seeded by `run.seed`), a measured spread such as cache misses'; empty: every frame costs the same",
        ),
    ];
}

/// Protocol layers above the driver (socket, UDP, IP). Defaults are derived
/// in docs/models/mt-interrupts.md from the paper's Figure 7 percentages.
/// Keys: [`StackConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StackConfig {
    pub enabled: bool,
    pub socket_cycles: u64,
    pub udp_cycles: u64,
    pub ip_cycles: u64,
    pub copy_cycles_per_byte: f64,
    pub recv_wakeup_cycles: u64,
    pub backlog_packets: usize,
}

const ENABLED: &[&str] = &["true"];

impl StackConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::flag(
            "enabled",
            d("false"),
            "run socket, UDP and IP above the driver; when false a received frame is delivered once the driver has moved it to memory, and the other keys of this section are refused",
        ),
        Param::cycles("socket_cycles", d("3090"), "socket layer, per packet, each direction").when("stack.enabled", ENABLED),
        Param::cycles("udp_cycles", d("3090"), "UDP header work, per packet, each direction").when("stack.enabled", ENABLED),
        Param::cycles("ip_cycles", d("3090"), "IP, per packet, each direction").when("stack.enabled", ENABLED),
        Param::float("copy_cycles_per_byte", "cycles/byte", d("1.0"), false, 0.0, 1e6, "copy between user and socket buffer (IP on send, UDP on receive)")
            .when("stack.enabled", ENABLED),
        Param::cycles("recv_wakeup_cycles", d("5139"), "receive only: demultiplexing and waking the reader").when("stack.enabled", ENABLED),
        Param::int(
            "backlog_packets",
            "packets",
            d("1000"),
            1,
            10_000_000,
            "frames waiting for protocol processing; more are dropped (`rx_dropped_backlog`; Linux `netdev_max_backlog`)",
        )
        .when("stack.enabled", ENABLED),
    ];
}

/// `[app]`; keys: [`AppConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AppConfig {
    pub background: bool,
    pub syscall_cycles: u64,
    pub thread: usize,
    pub max_waiting_calls: u64,
}

impl AppConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::flag(
            "background",
            d("true"),
            "a CPU-bound application runs at user level whenever nothing else does, so interrupts preempt running code (the paper's Figure 4)",
        ),
        Param::cycles("syscall_cycles", d("400"), "kernel work of a system call that moves no packet").when("workload.kind", &["trace", "script", "synthetic"]),
        Param::int("thread", "", d("0"), 0, MAX_THREAD, "hardware thread of the application and its system calls (below `cpu.threads`)"),
        Param::int(
            "max_waiting_calls",
            "",
            d("1000"),
            1,
            1_000_000,
            "replayed send and other system calls that may wait for the CPU at once; more are dropped and counted (`tx_dropped`, `syscalls_dropped`), so an overloaded CPU holds bounded memory",
        )
        .when("workload.kind", &["trace", "script", "synthetic"]),
    ];
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
