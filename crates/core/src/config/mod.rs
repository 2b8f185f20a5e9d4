//! Scenarios: typed, validated parameters loaded from TOML.
//!
//! Every part declares its keys once, in a table beside its struct (name,
//! type, unit, default, range, help: [`crate::params`]); the tables drive the
//! checks and generate docs/config.md ([`markdown`]), and a test keeps the
//! file equal to what they generate. Loading goes TOML text → table →
//! `--set` overrides → the parts' tables (unknown, unselected, mistyped and
//! out-of-range keys refused, defaults filled in) → typed structs → checks
//! between keys; every failure names the file, the key and, where it can,
//! the line.

mod checks;
mod docs;
mod inputs;
mod load;
mod parts;
mod patch;
mod rules;
pub(crate) mod sections;
mod workload;

pub use crate::cpu::CpuConfig;
pub use crate::device::nic::NicConfig;
pub use crate::kernel::{AppConfig, DriverConfig, StackConfig};
pub use crate::workload::config::{
    Action, ArrivalsConfig, Direction, FloodConfig, MAX_PACKET_BYTES, Process, ScriptConfig, ScriptEvent, SyntheticConfig, TraceConfig,
};
pub use checks::nic_wiring;
pub use docs::{markdown, parts_json};
pub use inputs::{INPUT_KEYS, Input};
pub use load::{Override, parse_override, parse_override_as};
pub use parts::{PARTS, Part, PartSet, selected_parts};
pub use sections::{MAX_DURATION_MS, RunConfig, StatsConfig};
pub use workload::{KINDS, VARIANTS, Variant, WorkloadConfig};

use serde::{Deserialize, Serialize};

/// A whole scenario file. Every section is present, filled with defaults
/// (the parts the workload does not use too); [`Scenario::parts`] says
/// which ones the run uses.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name shown in reports.
    pub name: String,
    pub description: String,
    /// Where the scenario came from (its path, or the name given to TOML
    /// text): what errors found while running it name.
    #[serde(skip)]
    pub file: String,
    pub run: RunConfig,
    pub cpu: CpuConfig,
    pub nic: NicConfig,
    pub driver: DriverConfig,
    pub stack: StackConfig,
    pub app: AppConfig,
    pub workload: WorkloadConfig,
    pub stats: StatsConfig,
    /// Interrupt masking (the `null_rpc` workload): machine profile and scheme.
    pub masking: crate::masking::MaskingConfig,
    /// Interrupt controller (the `exerciser` workload): XT-PIC, IO-APIC, MSI.
    pub intc: crate::intc::IntcConfig,
    /// Fabric latencies between CPU, chipset and device (`exerciser`).
    pub bus: crate::intc::BusConfig,
    /// Cycle costs of the Linux interrupt path (`exerciser`).
    pub irq_path: crate::kernel::IrqPathConfig,
    /// Interrupt sources beside the NIC.
    pub sources: crate::device::sources::SourcesConfig,
    /// NICs beside the first.
    pub nics: crate::device::nics::NicsConfig,
    /// The kernel's network software as code on execution-driven cores.
    pub code: crate::code::CodeConfig,
    /// The NAPI path (`irq_path.kind = "napi"`, or another NIC's own).
    pub napi: crate::kernel::napi::NapiConfig,
    /// The NIC's receive-interrupt coalescing.
    pub coalesce: crate::device::coalesce::CoalesceConfig,
    /// Receive-side scaling.
    pub rss: crate::device::rss::RssConfig,
    /// The programmable NIC in place of the e1000-like one.
    pub nic_firmware: crate::device::firmware::FirmwareConfig,
}

/// The sections of a [`Scenario`] its run uses, for [`Scenario::to_json`].
#[derive(Serialize)]
struct Selected<'s> {
    name: &'s str,
    description: &'s str,
    run: &'s RunConfig,
    cpu: &'s CpuConfig,
    #[serde(skip_serializing_if = "Option::is_none")]
    nic: Option<&'s NicConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    driver: Option<&'s DriverConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stack: Option<&'s StackConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    app: Option<&'s AppConfig>,
    workload: &'s WorkloadConfig,
    stats: &'s StatsConfig,
    #[serde(skip_serializing_if = "Option::is_none")]
    masking: Option<&'s crate::masking::MaskingConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    intc: Option<&'s crate::intc::IntcConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bus: Option<&'s crate::intc::BusConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    irq_path: Option<&'s crate::kernel::IrqPathConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sources: Option<&'s crate::device::sources::SourcesConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nics: Option<&'s crate::device::nics::NicsConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'s crate::code::CodeConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    napi: Option<&'s crate::kernel::napi::NapiConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    coalesce: Option<&'s crate::device::coalesce::CoalesceConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rss: Option<&'s crate::device::rss::RssConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nic_firmware: Option<&'s crate::device::firmware::FirmwareConfig>,
}

impl Scenario {
    /// Cycles in one microsecond.
    pub fn cycles_per_us(&self) -> f64 {
        self.cpu.clock_mhz
    }

    /// The bus link's rate in bytes per cycle when it is slower than the
    /// NIC's DMA engine (`bus.link_mbps`; Mb/s ÷ 8 is bytes per µs).
    pub fn nic_dma_link(&self) -> Option<f64> {
        let link = self.bus.link_mbps? / 8.0 / self.cycles_per_us();
        (link < self.nic.dma_bytes_per_cycle).then_some(link)
    }

    /// What the workload part needs to know of the machine it drives.
    pub fn workload_host(&self) -> crate::workload::Host<'_> {
        crate::workload::Host {
            file: &self.file,
            clock_mhz: self.cpu.clock_mhz,
            seed: self.run.seed,
            end: self.duration_cycles(),
            rx_buffer_bytes: self.nic.rx_buffer_bytes,
        }
    }

    /// Simulated cycles the run lasts.
    pub fn duration_cycles(&self) -> u64 {
        (self.run.duration_ms * 1e3 * self.cpu.clock_mhz).round() as u64
    }

    /// Whether the NIC's interrupt goes through a controller (`Delivery`):
    /// any but the bare wire, the Linux or NAPI path, or other interrupt
    /// sources beside it.
    pub fn nic_wired(&self) -> bool {
        let linux = self.irq_path.kind.is_some_and(|k| k != crate::kernel::IrqPathKind::Mt);
        self.intc.kind.kind().bus || linux || !self.sources.others.is_empty() || !self.nics.others.is_empty()
    }

    /// Whether another NIC's driver is the program: its interrupts go to
    /// CPUs that run it (checked at load to be all or none of its CPUs).
    pub(crate) fn port_on_code(&self, n: &crate::device::nics::NicPortConfig) -> bool {
        self.code.runs_on(n.irq_thread % self.cpu.threads)
    }

    /// Whether the NAPI part runs: on the NAPI path, or on the Linux path
    /// for another NIC whose own path is NAPI (as a 2.6 kernel's NAPI
    /// drivers served NICs beside older ones).
    pub fn napi_used(&self) -> bool {
        use crate::kernel::IrqPathKind::{Linux, Napi};
        match self.irq_path.kind {
            Some(Napi) => true,
            Some(Linux) => self.nics.others.iter().any(|n| n.irq_path == Some(crate::device::nics::DriverPath::Napi)),
            _ => false,
        }
    }

    /// The parts this scenario's run uses: its workload's, less those its
    /// choices leave idle (the bus of the direct wire, the interrupt path's
    /// costs on the mt path, masking without critical sections in the NIC path).
    pub fn parts(&self) -> PartSet {
        let mut parts = selected_parts(self.workload.kind()).0;
        if parts.contains(Part::Nic) {
            // Only the direct wire, for the NIC and every source beside it.
            let wire = !self.intc.kind.kind().bus
                && self.sources.others.iter().all(|o| o.intc.is_none_or(|k| !k.kind().bus))
                && self.nics.others.iter().all(|o| o.intc.is_none_or(|k| !k.kind().bus));
            let linux = self.irq_path.kind.is_some_and(|k| k != crate::kernel::IrqPathKind::Mt);
            let napi = self.napi_used();
            let sections = self.masking.nic_sections() || self.masking.code_sections;
            let others = self.sources.others.is_empty();
            for (part, idle) in [
                (Part::Bus, wire),
                (Part::IrqPath, wire && !linux && others),
                (Part::Masking, !sections),
                (Part::Sources, others),
                (Part::Nics, self.nics.others.is_empty()),
                (Part::Napi, !napi),
                (Part::Coalesce, !self.coalesce.active()),
                (Part::Rss, !self.rss.active()),
            ] {
                if idle {
                    parts.remove(part);
                }
            }
            // Code replaces the abstract driver, stack and application; the
            // driver's and stack's costs stay for a NIC on a CPU `code.cpus`
            // leaves to them, and the application's keys that code takes
            // (`app.syscall_cycles`, the abstract one beside it) are sorted
            // by `rules::drop_unused`.
            let code = self.code.selected();
            let beside = self.nics.others.iter().any(|n| !self.port_on_code(n));
            for (part, idle) in
                [(Part::Code, !code), (Part::Driver, code && !beside), (Part::Stack, code && !beside), (Part::NicFirmware, !self.nic_firmware.selected())]
            {
                if idle {
                    parts.remove(part);
                }
            }
        }
        parts
    }

    /// The scenario as JSON text, keys in file order, with only the
    /// sections its run uses.
    pub fn to_json(&self) -> String {
        let used = self.parts();
        let pick = |part: Part| used.contains(part);
        let selected = Selected {
            name: &self.name,
            description: &self.description,
            run: &self.run,
            cpu: &self.cpu,
            nic: pick(Part::Nic).then_some(&self.nic),
            driver: pick(Part::Driver).then_some(&self.driver),
            stack: pick(Part::Stack).then_some(&self.stack),
            app: pick(Part::App).then_some(&self.app),
            workload: &self.workload,
            stats: &self.stats,
            masking: pick(Part::Masking).then_some(&self.masking),
            intc: pick(Part::Intc).then_some(&self.intc),
            bus: pick(Part::Bus).then_some(&self.bus),
            irq_path: pick(Part::IrqPath).then_some(&self.irq_path),
            sources: pick(Part::Sources).then_some(&self.sources),
            nics: pick(Part::Nics).then_some(&self.nics),
            code: pick(Part::Code).then_some(&self.code),
            napi: pick(Part::Napi).then_some(&self.napi),
            coalesce: pick(Part::Coalesce).then_some(&self.coalesce),
            rss: pick(Part::Rss).then_some(&self.rss),
            nic_firmware: pick(Part::NicFirmware).then_some(&self.nic_firmware),
        };
        let mut doc = serde_json::to_value(&selected).expect("a scenario is plain data");
        rules::drop_unused(&mut doc, self.workload.kind());
        if self.nic_firmware.selected() {
            crate::device::firmware::drop_replaced(&mut doc, self.code.selected());
        }
        doc.to_string()
    }

    /// Stimuli per second the workload offers by its rates (0 for closed
    /// loops and replays): a lower bound on its events.
    fn stimuli_per_s(&self) -> f64 {
        let first = match &self.workload {
            WorkloadConfig::Arrivals(a) => a.rate_pps,
            WorkloadConfig::Synthetic(g) => (g.packet_interrupts_per_s + g.syscalls_per_s) as f64,
            WorkloadConfig::NullRpc(w) => w.interrupt_rate_per_s,
            WorkloadConfig::Exerciser(w) => w.rate_hz + w.others.iter().map(|o| o.rate_hz).sum::<f64>(),
            WorkloadConfig::Flood(_) | WorkloadConfig::Trace(_) | WorkloadConfig::Script(_) => 0.0,
        };
        first + self.nics.others.iter().map(|n| n.rate_pps).sum::<f64>()
    }

    /// Checks between keys that the parameter tables cannot state: `(key, message)`.
    pub fn check(&self) -> Result<(), (String, String)> {
        let err = |k: &str, m: String| Err((k.to_string(), m));
        let threads = self.cpu.threads;
        for (k, t) in [("nic.irq_thread", self.nic.irq_thread), ("app.thread", self.app.thread)] {
            if t >= threads {
                return err(k, format!("thread {t} does not exist (cpu.threads = {threads})"));
            }
        }
        let per_cycle = |k: &str, rate: f64| {
            if rate > self.cpu.clock_mhz * 1e6 {
                err(k, format!("{rate} per second is more than one per cycle of the {} MHz clock", self.cpu.clock_mhz))
            } else {
                Ok(())
            }
        };
        let size = |k: &str, b: u32| {
            if u64::from(b) > self.nic.rx_buffer_bytes {
                err(k, format!("{b}-byte packets never fit the {}-byte nic.rx_buffer_bytes", self.nic.rx_buffer_bytes))
            } else {
                Ok(())
            }
        };
        let spread = &self.driver.isr_rx_spread;
        if !spread.is_empty() && spread.iter().sum::<f64>() == 0.0 {
            return err("driver.isr_rx_spread", "all 0: the spread is scaled to a mean of 1, so give at least one positive multiple (or [] for none)".into());
        }
        let offered = self.stimuli_per_s() * self.run.duration_ms / 1e3;
        if offered > self.run.max_events as f64 {
            return err(
                "run.duration_ms",
                format!(
                    "the workload offers about {offered:.3e} stimuli in {} ms, each at least one event: more than run.max_events = {}; shorten the run or raise run.max_events",
                    self.run.duration_ms, self.run.max_events
                ),
            );
        }
        match &self.workload {
            WorkloadConfig::Flood(FloodConfig { packet_bytes, .. }) => size("workload.packet_bytes", *packet_bytes)?,
            WorkloadConfig::Arrivals(ArrivalsConfig { rate_pps, packet_bytes, .. }) => {
                size("workload.packet_bytes", *packet_bytes)?;
                per_cycle("workload.rate_per_s", *rate_pps)?;
            }
            WorkloadConfig::Trace(TraceConfig { host, .. }) => {
                if host.parse::<std::net::Ipv4Addr>().is_err() {
                    return err("workload.host", format!("`{host}` is not an IPv4 address"));
                }
            }
            WorkloadConfig::Script(ScriptConfig { events, events_file }) => match (events, events_file) {
                (Some(_), Some(_)) => return err("workload.events_file", "give the events inline (`events`) or in a file (`events_file`), not both".into()),
                (None, None) => return err("workload.events", "required: the events inline, or `events_file` naming a file of them".into()),
                (Some(events), None) => {
                    let mut last = 0;
                    for (i, e) in events.iter().enumerate() {
                        crate::workload::check_event(e, last, self.nic.rx_buffer_bytes).map_err(|(key, msg)| (format!("workload.events[{i}].{key}"), msg))?;
                        last = e.at_cycle;
                    }
                }
                (None, Some(_)) => {}
            },
            WorkloadConfig::Synthetic(SyntheticConfig { rx_mbps, packet_interrupts_per_s, syscalls_per_s, tx_share, tx_packet_bytes }) => {
                size("workload.tx_packet_bytes", *tx_packet_bytes)?;
                per_cycle("workload.packet_interrupts_per_s", *packet_interrupts_per_s as f64)?;
                per_cycle("workload.syscalls_per_s", *syscalls_per_s as f64)?;
                let rx = (*packet_interrupts_per_s as f64 * (1.0 - tx_share)).round();
                let bytes = rx_mbps * 1e6 / 8.0 / rx.max(1.0);
                // Frames are whole bytes: fewer than one per frame would be empty frames.
                if rx < 1.0 || !(1.0..=MAX_PACKET_BYTES as f64).contains(&bytes.round()) {
                    return err(
                        "workload.rx_mbps",
                        format!("{rx_mbps} Mb/s over {rx} received packets/s needs {bytes:.2}-byte packets (1..={MAX_PACKET_BYTES})"),
                    );
                }
            }
            WorkloadConfig::NullRpc(w) => return checks::null_rpc(self, w),
            WorkloadConfig::Exerciser(_) => return checks::exerciser(self),
        }
        checks::nic(self)
    }
}
