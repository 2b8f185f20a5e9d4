//! `[code]`: the kernel's network software as MIPS code instead of costs.
//! The program names the entry points the machine calls; `[code.core]` holds
//! the execution-driven core's settings as sub-tables (`[code.core.l1d]`),
//! declared once by irqsim-mips (`config::MACHINE_SECTIONS`), so `irqsim exec --set
//! l1d.size_bytes=...` and a scenario's `[code.core.l1d] size_bytes = ...`
//! are one key. The older list form, `core = ["l1d.size_bytes=8192", ...]`,
//! still loads: the checks read it as that table.

use crate::params::{Param, Type, absent, d};
use serde::{Deserialize, Serialize};

/// `[code]`; keys: [`CodeConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CodeConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    pub init: String,
    pub isr: String,
    pub other_isr: String,
    pub napi_isr: String,
    pub napi_poll: String,
    pub bottom_half: String,
    pub syscall: String,
    pub send: String,
    pub app: String,
    pub app_thread: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_irq_thread: Option<usize>,
    pub flows: u32,
    pub mmio_read_cycles: u32,
    pub ticks_per_s: f64,
    pub watchdog_thresh_ms: f64,
    pub core: toml::Table,
    pub poke: Vec<String>,
    pub dma: String,
}

impl CodeConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::text(
            "program",
            absent("the kernel's software is abstract costs (`[driver]`, `[stack]`, `[app]`)"),
            "static MIPS32 ELF holding the kernel and the application (a path relative to the scenario, or a bundled program's name); its entry points below run as the kernel's activities",
        ),
        Param::text(
            "init",
            d("\"kernel_init\""),
            "entry run once at cycle 0 on thread 0 (software-interrupt level) before anything else: sets up rings and tables",
        ),
        Param::text("isr", d("\"nic_isr\""), "entry `isr(irq)` run at interrupt level for NIC `irq`'s interrupt on `nic.irq_thread`"),
        Param::text(
            "other_isr",
            d("\"nic_other_isr\""),
            "entry `other_isr(nic)` run at interrupt level for the interrupt of NIC `nic` >= 1 of `[[nics.others]]` (off the NAPI path, where `napi_isr` serves every NIC's queue); a program without it drives NIC 0 only and is refused beside other NICs",
        ),
        Param::text(
            "napi_isr",
            d("\"nic_napi_isr\""),
            "on the NAPI path: entry `napi_isr(irq)` run at interrupt level for NIC 0's interrupt instead of `isr`, the top half: it masks its receive cause and asks for a poll (kernel service NAPI_SCHEDULE)",
        )
        .when("irq_path.kind", &["napi"]),
        Param::text(
            "napi_poll",
            d("\"nic_napi_poll\""),
            "on the NAPI path: entry `napi_poll(queue, budget)` the NAPI part calls to poll (from NET_RX, the NAPI thread or a busy-polling recv); returns the frames it took, at most `budget`, and below it calls napi_complete_done (kernel service NAPI_COMPLETE) and enables its interrupt only if the answer is 1",
        )
        .when("irq_path.kind", &["napi"]),
        Param::text("bottom_half", d("\"net_rx_action\""), "entry run at software-interrupt level when code raises NET_RX, on the thread that raised it"),
        Param::text(
            "syscall",
            d("\"sys_recv\""),
            "entry `syscall(a0, a1, a2)` run in the kernel when the application executes `syscall` 4003 (read); -11 (EAGAIN) blocks it until a WAKE",
        ),
        Param::text(
            "send",
            d("\"sys_send\""),
            "entry `send(bytes)` run at software-interrupt level on `app_thread` for each send the workload makes (a send flood's, a script's `send` event, a frame a trace's host sent, a synthetic load's `tx_share`): it puts a frame of `bytes` bytes on NIC 0's transmit ring and returns `bytes`, or a negative errno when it drops the send; looked up at the first send",
        ),
        Param::text("app", d("\"app_main\""), "entry of the application, started after `init` returns; empty: no application (a forwarding box)"),
        Param::of(
            "cpus",
            Type::IntList,
            "",
            absent("every hardware thread runs the program"),
            crate::params::Range::Int(0, crate::cpu::MAX_THREAD),
            "the hardware threads (CPUs) whose kernel is the program; the others run the abstract-cost kernel (`[driver]` costs on the path `irq_path.kind` selects), a kernel per core: a NIC whose interrupts go to a code CPU (`nic.irq_thread`, each `[[nics.others]]` `irq_thread`) is driven by the program there, one whose interrupts go to the other CPUs by the costs; the application, the tick and NIC 0 are code's, so `app_thread`, `tx_irq_thread`, NIC 0's interrupt CPUs and `rss.rps_cpus` must be among them, as must both threads of an SMT core or neither",
        ),
        Param::int("app_thread", "", d("0"), 0, crate::cpu::MAX_THREAD, "hardware thread of the application (below `cpu.threads`)"),
        Param::int(
            "tx_irq_thread",
            "",
            absent("`nic.irq_thread`"),
            0,
            crate::cpu::MAX_THREAD,
            "hardware thread that takes NIC 1's interrupts (the forwarding side, always on the direct wire)",
        ),
        Param::int("flows", "", d("1"), 1, 65536, "UDP flows the received frames cycle through (source address and port)"),
        Param::choice(
            "dma",
            &["invalidate", "update"],
            d("\"invalidate\""),
            "what the NIC's DMA writes do to cached copies: `invalidate` every level (coherent DMA by snooping), or `update` the lines the L2 holds in place (locks kept) and invalidate the L1s, as Intel's Data Direct I/O writes into the last-level cache",
        ),
        Param::cycles("mmio_read_cycles", d("0"), "cycles a device-register read stalls the thread (an uncached bus read)"),
        Param::float(
            "ticks_per_s",
            "/s",
            d("0.0"),
            false,
            0.0,
            1e6,
            "the timer tick: this many times a second every hardware thread t runs `isr(2 + t)` at interrupt level (Linux's per-CPU local timer interrupt), so the program's isr must take those numbers (programs/kernel's does, programs/system's rx_min does not: a run with it ends naming the tick); 0: no tick",
        ),
        Param::float(
            "watchdog_thresh_ms",
            "ms",
            d("1.0"),
            false,
            0.0,
            3_600_000.0,
            "the lockup watchdog (Linux's watchdog_thresh, kernel/watchdog.c, scaled to simulated runs): an interrupt handler that runs this long without returning is a hard lockup, a software-interrupt-level activity (bottom half, poll, system call, init) that runs twice it a soft lockup; either ends the run with one line naming the activity, the function and the PC where it is; 0: no watchdog",
        ),
        Param::sections(
            "core",
            irqsim_mips::config::MACHINE_SECTIONS,
            "settings of the execution-driven cores, one sub-table per section below (`[code.core.l1d]`); `irqsim exec --set` takes the same keys as `section.key=value`, and so does the older list form `core = [\"l1d.size_bytes=8192\", ...]`; cores x threads must equal `cpu.threads` (without `[code.core.core]`, one single-threaded core per hardware thread)",
        ),
        Param::of(
            "poke",
            Type::StrList,
            "",
            d("[]"),
            crate::params::Range::None,
            "32-bit words written into the program's memory before `init` runs, `SYMBOL[+OFFSET]=VALUE` (e.g. `kconfig+24=64`): table sizes and settings without a rebuild",
        ),
    ];

    pub fn selected(&self) -> bool {
        self.program.is_some()
    }

    /// Whether hardware thread `t`'s kernel is the program.
    pub fn runs_on(&self, t: usize) -> bool {
        self.selected() && self.cpus.as_ref().is_none_or(|c| c.contains(&t))
    }

    /// Per hardware thread of `threads`, whether its kernel is the program
    /// (`cpus`; absent: every one).
    pub fn runs(&self, threads: usize) -> Vec<bool> {
        (0..threads).map(|t| self.runs_on(t)).collect()
    }
}
