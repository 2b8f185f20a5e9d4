//! The network software's keys: the NIC driver's routines (`[driver]`), the
//! protocol layers (`[stack]`) and the application (`[app]`).

use crate::cpu::MAX_THREAD;
use crate::params::{Param, Range, Type, d};
use serde::{Deserialize, Serialize};

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
