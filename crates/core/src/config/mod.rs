//! Scenarios: typed, validated parameters loaded from TOML.
//!
//! Every cost, size and rate is a field with its unit in its name, a default
//! (where a neutral one exists) and a doc comment; docs/config.md lists them
//! all, and a test keeps the two in step. Loading goes TOML text → table →
//! `--set` overrides → typed structs (unknown keys refused) → range checks,
//! and every failure names the file, the key and, where it can, the line.

mod load;
mod workload;

pub use load::{Override, parse_override};
pub use workload::{Action, ArrivalsConfig, Direction, FloodConfig, Process, ScriptConfig, ScriptEvent, SyntheticConfig, TraceConfig, WorkloadConfig};

use crate::cpu::ContextPolicy;
use serde::{Deserialize, Serialize};

/// A whole scenario file.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name shown in reports.
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub run: RunConfig,
    pub cpu: CpuConfig,
    #[serde(default)]
    pub nic: NicConfig,
    #[serde(default)]
    pub driver: DriverConfig,
    #[serde(default)]
    pub stack: StackConfig,
    #[serde(default)]
    pub app: AppConfig,
    pub workload: WorkloadConfig,
    #[serde(default)]
    pub stats: StatsConfig,
    /// Interrupt masking (the `null_rpc` workload): machine profile and scheme.
    #[serde(default)]
    pub masking: crate::masking::MaskingConfig,
    /// Interrupt controller (the `exerciser` workload): XT-PIC, IO-APIC, MSI.
    #[serde(default)]
    pub intc: crate::delivery::IntcConfig,
    /// Fabric latencies between CPU, chipset and device (`exerciser`).
    #[serde(default)]
    pub bus: crate::delivery::BusConfig,
    /// Cycle costs of the Linux interrupt path (`exerciser`).
    #[serde(default)]
    pub irq_path: crate::delivery::IrqPathConfig,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Seed of every random stream in the run.
    pub seed: u64,
    /// Simulated time to run, in milliseconds.
    pub duration_ms: f64,
}

impl Default for RunConfig {
    fn default() -> Self {
        Self { seed: 1, duration_ms: 1000.0 }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CpuConfig {
    /// Core clock; simulated time is counted in cycles of this clock.
    pub clock_mhz: f64,
    /// Hardware threads (cores without SMT).
    #[serde(default = "one")]
    pub threads: usize,
    /// `single` (registers saved and restored on preemption) or
    /// `multithreaded` (a register context per priority class).
    #[serde(default = "single")]
    pub context_policy: ContextPolicy,
    /// Interrupt-entry pipeline sequence (nullify, push SR and PC, acknowledge,
    /// vector, load): 6 cycles on the AE32000.
    #[serde(default = "six")]
    pub irq_entry_cycles: u64,
    /// Entry of a software interrupt (system call, queued SWI).
    #[serde(default = "six")]
    pub swi_entry_cycles: u64,
    /// Saving and restoring a register context on preemption (single context).
    #[serde(default = "save_restore")]
    pub save_restore_cycles: u64,
    /// Moving execution to another hardware context (multithreaded).
    #[serde(default)]
    pub context_switch_cycles: u64,
}

fn one() -> usize {
    1
}
fn six() -> u64 {
    6
}
fn save_restore() -> u64 {
    186
}
fn single() -> ContextPolicy {
    ContextPolicy::Single
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct NicConfig {
    /// On-NIC receive buffer; a frame that does not fit is dropped.
    pub rx_buffer_bytes: u64,
    /// The driver's transmit-pending queue in kernel memory, in packets.
    pub tx_queue_packets: usize,
    /// Line rate; a frame occupies the wire for `wire_bytes * 8 / link_mbps` µs.
    pub link_mbps: f64,
    /// DMA transfer rate between NIC buffer and memory (runs in parallel with
    /// the CPU, stealing bus cycles; not charged to the CPU).
    pub dma_bytes_per_cycle: f64,
    /// Hardware thread that takes the NIC's interrupt (and its bottom half).
    pub irq_thread: usize,
}

impl Default for NicConfig {
    fn default() -> Self {
        Self { rx_buffer_bytes: 16 * 1024, tx_queue_packets: 64, link_mbps: 10.0, dma_bytes_per_cycle: 4.0, irq_thread: 0 }
    }
}

/// Device-driver routine costs (the paper's Figure 6, 500-byte packets, the
/// same for 50–1,500 bytes because DMA copies the data).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DriverConfig {
    /// Driver Send: check the NIC, set up the DMA to the NIC (or queue), start transmit.
    pub send_cycles: u64,
    /// Driver ISR, transmit-done part (also starts the next queued packet).
    pub isr_tx_done_cycles: u64,
    /// Driver ISR, receive part, per packet removed from the NIC buffer.
    pub isr_rx_done_cycles: u64,
}

impl Default for DriverConfig {
    fn default() -> Self {
        Self { send_cycles: 2756, isr_tx_done_cycles: 536, isr_rx_done_cycles: 2228 }
    }
}

/// Protocol layers above the driver (socket, UDP, IP). Defaults are derived
/// in docs/models/mt-interrupts.md from the paper's Figure 7 percentages.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct StackConfig {
    /// Run the protocol layers (full stack); when false, a received packet is
    /// delivered when the driver has moved it to memory (driver layer only).
    pub enabled: bool,
    /// Socket layer, per packet, each direction.
    pub socket_cycles: u64,
    /// UDP, per packet, each direction (header work, no copy).
    pub udp_cycles: u64,
    /// IP, per packet, each direction.
    pub ip_cycles: u64,
    /// Copy between user and socket buffers (by IP on send, UDP on receive).
    pub copy_cycles_per_byte: f64,
    /// Receive only: demultiplexing and waking the reading process.
    pub recv_wakeup_cycles: u64,
    /// Packets that may wait for protocol processing; more are dropped
    /// (Linux's netdev_max_backlog default).
    pub backlog_packets: usize,
}

impl Default for StackConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            socket_cycles: 3090,
            udp_cycles: 3090,
            ip_cycles: 3090,
            copy_cycles_per_byte: 1.0,
            recv_wakeup_cycles: 5139,
            backlog_packets: 1000,
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct AppConfig {
    /// A CPU-bound application runs at user level whenever nothing else does
    /// (so interrupts and system calls preempt it, as in the paper's Figure 4).
    pub background: bool,
    /// Kernel work of a system call that moves no packet (trace-driven runs).
    pub syscall_cycles: u64,
    /// Hardware thread the application runs on.
    pub thread: usize,
}

impl Default for AppConfig {
    fn default() -> Self {
        Self { background: true, syscall_cycles: 400, thread: 0 }
    }
}


#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct StatsConfig {
    /// Per-packet latencies kept for the Python API (the histogram sees all).
    pub max_packet_records: usize,
    /// Spans and marks kept by `irqsim timeline`.
    pub timeline_max_items: usize,
}

impl Default for StatsConfig {
    fn default() -> Self {
        Self { max_packet_records: 1_000_000, timeline_max_items: 200_000 }
    }
}

/// Largest frame a scenario may name (jumbo frames included).
pub const MAX_PACKET_BYTES: u32 = 9216;

impl Scenario {
    /// Cycles in one microsecond.
    pub fn cycles_per_us(&self) -> f64 {
        self.cpu.clock_mhz
    }

    /// Simulated cycles the run lasts.
    pub fn duration_cycles(&self) -> u64 {
        (self.run.duration_ms * 1e3 * self.cpu.clock_mhz).round() as u64
    }

    /// Range checks that types alone cannot express: `(key, message)`.
    pub fn check(&self) -> Result<(), (String, String)> {
        let err = |k: &str, m: String| Err((k.to_string(), m));
        let positive = |k: &str, v: f64| if v.is_finite() && v > 0.0 { Ok(()) } else { err(k, format!("must be a positive number, got {v}")) };
        positive("cpu.clock_mhz", self.cpu.clock_mhz)?;
        if self.cpu.clock_mhz > 1e5 {
            return err("cpu.clock_mhz", format!("{} MHz is beyond any real clock (max 100000)", self.cpu.clock_mhz));
        }
        positive("run.duration_ms", self.run.duration_ms)?;
        if self.duration_cycles() > u64::MAX / 4 {
            return err("run.duration_ms", "run too long for 64-bit cycle time".into());
        }
        if self.cpu.threads == 0 || self.cpu.threads > 64 {
            return err("cpu.threads", format!("must be 1..=64, got {}", self.cpu.threads));
        }
        if self.nic.irq_thread >= self.cpu.threads {
            return err("nic.irq_thread", format!("thread {} does not exist (cpu.threads = {})", self.nic.irq_thread, self.cpu.threads));
        }
        if self.app.thread >= self.cpu.threads {
            return err("app.thread", format!("thread {} does not exist (cpu.threads = {})", self.app.thread, self.cpu.threads));
        }
        positive("nic.link_mbps", self.nic.link_mbps)?;
        positive("nic.dma_bytes_per_cycle", self.nic.dma_bytes_per_cycle)?;
        if self.nic.tx_queue_packets == 0 {
            return err("nic.tx_queue_packets", "must be at least 1".into());
        }
        if self.stack.backlog_packets == 0 {
            return err("stack.backlog_packets", "must be at least 1".into());
        }
        let c = self.stack.copy_cycles_per_byte;
        if !(c.is_finite() && c >= 0.0) {
            return err("stack.copy_cycles_per_byte", format!("must be a non-negative number, got {c}"));
        }
        let size = |k: &str, b: u32| {
            if b == 0 || b > MAX_PACKET_BYTES {
                err(k, format!("must be 1..={MAX_PACKET_BYTES} bytes, got {b}"))
            } else if u64::from(b) > self.nic.rx_buffer_bytes {
                err(k, format!("{b}-byte packets never fit the {}-byte nic.rx_buffer_bytes", self.nic.rx_buffer_bytes))
            } else {
                Ok(())
            }
        };
        match &self.workload {
            WorkloadConfig::Flood(FloodConfig { packet_bytes, .. }) => size("workload.packet_bytes", *packet_bytes)?,
            WorkloadConfig::Arrivals(ArrivalsConfig { rate_pps, packet_bytes, .. }) => {
                size("workload.packet_bytes", *packet_bytes)?;
                positive("workload.rate_pps", *rate_pps)?;
            }
            WorkloadConfig::Trace(TraceConfig { host, .. }) => {
                if host.parse::<std::net::Ipv4Addr>().is_err() {
                    return err("workload.host", format!("`{host}` is not an IPv4 address"));
                }
            }
            WorkloadConfig::Script(ScriptConfig { events }) => {
                let mut last = 0;
                for (i, e) in events.iter().enumerate() {
                    if e.at_cycle < last {
                        return err(&format!("workload.events[{i}].at_cycle"), format!("{} comes before the previous event's {last}", e.at_cycle));
                    }
                    last = e.at_cycle;
                    if e.action != Action::Syscall {
                        size(&format!("workload.events[{i}].bytes"), e.bytes)?;
                    }
                }
            }
            WorkloadConfig::Synthetic(SyntheticConfig { rx_mbps, packet_interrupts_per_s, tx_share, tx_packet_bytes, .. }) => {
                positive("workload.rx_mbps", *rx_mbps)?;
                size("workload.tx_packet_bytes", *tx_packet_bytes)?;
                if !(0.0..1.0).contains(tx_share) {
                    return err("workload.tx_share", format!("must be in [0, 1), got {tx_share}"));
                }
                if *packet_interrupts_per_s == 0 {
                    return err("workload.packet_interrupts_per_s", "must be at least 1".into());
                }
                let rx = (*packet_interrupts_per_s as f64 * (1.0 - tx_share)).round();
                let bytes = rx_mbps * 1e6 / 8.0 / rx.max(1.0);
                if rx < 1.0 || bytes > MAX_PACKET_BYTES as f64 {
                    return err("workload.rx_mbps", format!("{rx_mbps} Mb/s over {rx} received packets/s needs {bytes:.0}-byte packets (max {MAX_PACKET_BYTES})"));
                }
            }
            WorkloadConfig::NullRpc(w) => crate::masking::check(self, w)?,
            WorkloadConfig::Exerciser(_) => crate::delivery::check(self)?,
        }
        Ok(())
    }
}
