//! NICs beside the first, as a scenario configures them (`[[nics.others]]`):
//! each an e1000-like receive side of its own (buffer, descriptors, wire,
//! DMA), fed by its own arrivals, interrupting through its own controller
//! input, drained by its own ISR (mt path), bottom half (Linux) or NAPI
//! instance, with coalescing and DIM of its own. The first NIC is `[nic]` with
//! `[workload]`, `[rss]` and `[coalesce]`; the host's software (driver and
//! stack costs, application, NAPI's weight and budget) serves them all.
//! What they do at run time is `machine/nics.rs`.

use crate::device::coalesce::{CoalesceConfig, DimMode};
use crate::device::rss::{RssConfig, RssKind};
use crate::intc::IntcKind;
use crate::params::{Param, REQ, absent, d};
use crate::workload::config::{ArrivalsConfig, MAX_PACKET_BYTES, Process};
use serde::{Deserialize, Serialize};

/// `[nics]`: the NICs beside the first.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NicsConfig {
    pub others: Vec<NicPortConfig>,
}

impl NicsConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[Param::items(
        "others",
        NicPortConfig::PARAMS,
        d("[]"),
        "NICs beside the first (`[nic]`), one `[[nics.others]]` table each: each its own arrivals, buffer, wire and interrupt, drained by its own ISR, bottom half or NAPI instance",
    )];
}

/// One more NIC: its arrivals, its receive side and its interrupt.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NicPortConfig {
    pub process: Process,
    /// Frames per second (the key `rate_per_s`).
    #[serde(rename = "rate_per_s")]
    pub rate_pps: f64,
    pub packet_bytes: u32,
    pub first_ns: f64,
    pub irq_thread: usize,
    pub rx_buffer_bytes: u64,
    pub rx_ring_frames: Option<u64>,
    pub link_mbps: f64,
    pub wire_queue_packets: u64,
    pub dma_bytes_per_cycle: f64,
    pub line: Option<u32>,
    pub priority: u8,
    /// Its own controller (absent: `intc.kind`'s).
    pub intc: Option<IntcKind>,
    /// Its own receive-interrupt coalescing and DIM, as `[coalesce]`'s keys.
    pub rx_usecs: u32,
    pub rx_frames: u32,
    pub adaptive_rx: bool,
    pub dim_mode: DimMode,
    /// Its own receive-side scaling: queues, and the flows it hashes
    /// (as `[rss]`'s keys; absent: `[rss]`'s defaults).
    pub queues: u32,
    pub flows: Option<u32>,
    pub flow_skew: Option<f64>,
    /// Its driver's receive path (absent: `irq_path.kind`'s).
    pub irq_path: Option<DriverPath>,
    /// The NIC its received frames leave by (absent: the local stack), and
    /// its own transmitter's queue when frames leave by it.
    pub forward_to: Option<u32>,
    pub tx_queue_packets: Option<usize>,
}

/// A NIC's own receive path, by `irq_path.kind`'s names: the kernel's
/// `IrqPathKind` (`From`), named here as the devices sit below the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DriverPath {
    Mt,
    Linux,
    Napi,
}

const VECTORED: &[&str] = &["ioapic", "msi", "msix"];

impl NicPortConfig {
    /// The keys of each `[[nics.others]]` table.
    pub const PARAMS: &'static [Param] = &[
        Param::choice("process", &["periodic", "poisson"], d("\"poisson\""), "arrival process of its received frames"),
        Param::float(
            "rate_per_s",
            "/s",
            REQ,
            false,
            0.0,
            1e9,
            "frames arriving per second (at most one per cycle; 0: none, a NIC that only transmits what others forward to it)",
        ),
        Param::int("packet_bytes", "bytes", REQ, 1, MAX_PACKET_BYTES as i128, "frame size"),
        Param::float("first_ns", "ns", d("0.0"), false, 0.0, 1e9, "when its first frame arrives"),
        Param::int(
            "irq_thread",
            "",
            d("0"),
            0,
            crate::cpu::MAX_THREAD,
            "hardware thread its interrupt goes to (below `cpu.threads`); its NAPI instance polls there",
        ),
        Param::int("rx_buffer_bytes", "bytes", d("16384"), 1, 1 << 30, "on-card receive buffer; a frame that does not fit is dropped"),
        Param::int(
            "rx_ring_frames",
            "",
            absent("no limit but `rx_buffer_bytes`"),
            1,
            1 << 20,
            "receive descriptors: frames waiting for the driver beyond this many are dropped",
        ),
        Param::float("link_mbps", "Mb/s", d("10.0"), true, 0.0, 1_000_000.0, "line rate: received frames land at least a frame time apart"),
        Param::int("wire_queue_packets", "packets", d("1000"), 1, 1_000_000, "received frames that may wait for the wire; more are dropped"),
        Param::float("dma_bytes_per_cycle", "bytes/cycle", d("4.0"), true, 0.0, 4096.0, "DMA rate between its buffer and memory"),
        Param::int("line", "", absent("first free"), 0, 2047, "controller input; equal to another device's line: shared (legacy only)"),
        Param::int("priority", "", d("4"), 0, 13, "vector priority class").when("intc.kind", VECTORED),
        Param::choice(
            "intc",
            &["direct", "xtpic", "ioapic", "msi", "msix"],
            absent("`intc.kind`"),
            "its own controller beside the first NIC's: e.g. this NIC on the IO-APIC while the first uses MSI-X",
        ),
        Param::int("rx_usecs", "µs", d("0"), 0, 1_000_000, "its receive-interrupt delay after the first frame it covers (as `coalesce.rx_usecs`)"),
        Param::int("rx_frames", "", d("1"), 0, 1 << 20, "frames that interrupt at once (as `coalesce.rx_frames`)"),
        Param::flag("adaptive_rx", d("false"), "DIM tunes its coalescing (as `coalesce.adaptive_rx`; the NAPI path)"),
        Param::choice("dim_mode", &["eqe", "cqe"], d("\"eqe\""), "its DIM's profiles and timer (as `coalesce.dim_mode`)"),
        Param::int(
            "queues",
            "",
            d("1"),
            1,
            16,
            "its receive queues (its own RSS, as `rss.queues`): a Toeplitz hash of each frame's flow picks one; each queue has its ring, its own coalescing, a vector to thread (`irq_thread` + k) mod `cpu.threads`, and a NAPI instance",
        ),
        Param::int(
            "flows",
            "",
            absent("1024"),
            1,
            65_536,
            "flows in its frames' mix, drawn from its own seed (as `rss.flows`); with `queues` above 1 or RPS (`rss.rps_cpus`)",
        ),
        Param::float("flow_skew", "", absent("0.0"), false, 0.0, 10.0, "Zipf exponent of its flows' shares (as `rss.flow_skew`); with `queues` above 1 or RPS"),
        Param::choice(
            "irq_path",
            &["mt", "linux", "napi"],
            absent("`irq_path.kind`"),
            "its driver's receive path, as in a kernel with NAPI and older drivers side by side: its ISR drains it (`mt`), its top half raises its own NET_RX bottom half (`linux`, on a Linux or NAPI machine), or a NAPI instance per queue (`napi`, on a Linux or NAPI machine; on a Linux one `[napi]` is its)",
        ),
        Param::int("forward_to", "", absent("the local stack"), 0, 255, crate::device::nic::FORWARD_TO),
        Param::int(
            "tx_queue_packets",
            "packets",
            absent("64"),
            1,
            1_000_000,
            "its driver's transmit-pending queue (as `nic.tx_queue_packets`), when a NIC forwards to it: a frame finding it full is dropped; its transmit completions interrupt on its first queue's vector and its ISR, bottom half or that queue's NAPI poll cleans them",
        ),
    ];

    /// What it asks of the controllers.
    pub fn request(&self) -> crate::intc::Request {
        crate::intc::Request { intc: self.intc, cpu: self.irq_thread, line: self.line, vectors: self.queues, cpu_key: "irq_thread" }
    }

    /// Its coalescing, as the first NIC's `[coalesce]` would state it.
    pub fn coalesce(&self) -> CoalesceConfig {
        CoalesceConfig { rx_usecs: self.rx_usecs, rx_frames: self.rx_frames, adaptive_rx: self.adaptive_rx, dim_mode: self.dim_mode }
    }

    /// Its receive-side scaling, as the first NIC's `[rss]` would state it
    /// (RPS, `rss.rps_cpus`, is the host's and steers every NIC's frames).
    pub fn rss(&self, rps_cpus: u32) -> RssConfig {
        RssConfig { kind: RssKind::Toeplitz, queues: self.queues, flows: self.flows.unwrap_or(1024), flow_skew: self.flow_skew.unwrap_or(0.0), rps_cpus }
    }

    /// Its arrivals, as the first NIC's `arrivals` workload would state them.
    pub fn arrivals(&self) -> ArrivalsConfig {
        ArrivalsConfig { process: self.process, rate_pps: self.rate_pps, packet_bytes: self.packet_bytes, first_ns: self.first_ns }
    }
}
