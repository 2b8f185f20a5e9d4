//! The parts a scenario is built from, which of them a scenario selects, and
//! the check of a whole scenario table against their parameter tables.
//!
//! A part is one section of the file (`[nic]`, `[intc]`, ...). The workload
//! selects the parts its model uses ([`selected_parts`]); a key of a part it
//! does not use is refused, naming the part, so no setting is ever silently
//! ignored. Within a part, a key that only one variant uses ([`When`](params::When)) is
//! refused when that variant is not chosen.

use super::rules::{check_cancelled, check_when};
use super::workload::{KINDS, VARIANTS, variant};
use super::{AppConfig, CpuConfig, DriverConfig, NicConfig, RunConfig, StackConfig, StatsConfig};
use crate::device::sources::SourcesConfig;
use crate::intc::{BusConfig, IntcConfig};
use crate::kernel::IrqPathConfig;
use crate::masking::MaskingConfig;
use crate::params::{self, Param, Problem, join, plain};
use toml::{Table, Value};

/// One part of the simulated system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Run,
    Cpu,
    Nic,
    Driver,
    Stack,
    App,
    Stats,
    Workload,
    Masking,
    Intc,
    Bus,
    IrqPath,
    Sources,
    Nics,
    Code,
    Napi,
    Coalesce,
    Rss,
    NicFirmware,
}

/// What [`Part`] says about itself: its section, name, keys and rules.
pub struct Info {
    pub part: Part,
    /// Its section in the scenario file.
    pub section: &'static str,
    /// What it is, as errors name it ("the interrupt controller").
    pub title: &'static str,
    pub help: &'static str,
    /// Its keys; the workload's are per kind ([`VARIANTS`]) beside `kind`.
    pub params: &'static [Param],
    /// Rules between keys that the table cannot state.
    pub notes: &'static str,
}

/// Every part, in the order of the docs.
pub const PARTS: &[Info] = &[
    Info { part: Part::Run, section: "run", title: "the run", help: "length, seed and guard of one run", params: RunConfig::PARAMS, notes: "" },
    Info {
        part: Part::Cpu,
        section: "cpu",
        title: "the CPU",
        help: "hardware threads and their interrupt-entry and context costs",
        params: CpuConfig::PARAMS,
        notes: "The masking model (`null_rpc`) runs one thread: `threads` above 1 is refused there.",
    },
    Info {
        part: Part::Nic,
        section: "nic",
        title: "the NIC",
        help: "receive buffer, transmit queue, wire and DMA",
        params: NicConfig::PARAMS,
        notes: "A frame size larger than `rx_buffer_bytes` is refused.",
    },
    Info {
        part: Part::Driver,
        section: "driver",
        title: "the NIC driver",
        help: "driver routine costs (the paper's Figure 6)",
        params: DriverConfig::PARAMS,
        notes: "",
    },
    Info {
        part: Part::Stack,
        section: "stack",
        title: "the protocol stack",
        help: "socket, UDP and IP above the driver (derived from the paper's Figure 7 shares, docs/models/mt-interrupts.md)",
        params: StackConfig::PARAMS,
        notes: "",
    },
    Info {
        part: Part::App,
        section: "app",
        title: "the application",
        help: "the user-level program and its system calls",
        params: AppConfig::PARAMS,
        notes: "`background = true` is refused beside a send flood (`workload.direction = \"tx\"`), which is the application. With kernel code the application is the program's; with `code.cpus`, `background = true` (default there: false) runs the abstract kernel's CPU-bound application on `thread`, a CPU `code.cpus` leaves it, and `thread` alone is refused.",
    },
    Info { part: Part::Stats, section: "stats", title: "the statistics", help: "how much detail a run keeps", params: StatsConfig::PARAMS, notes: "" },
    Info {
        part: Part::Workload,
        section: "workload",
        title: "the workload",
        help: "what drives the run; `kind` selects the model and its keys",
        params: WORKLOAD,
        notes: "",
    },
    Info {
        part: Part::Masking,
        section: "masking",
        title: "the interrupt masking",
        help: "machine profile and protection scheme (docs/models/masking.md)",
        params: MaskingConfig::PARAMS,
        notes: "Refused: `scheme = \"optimistic\"` on a machine without a Table 2 figure and no `optimistic_pair_*`; \
                `cpu.clock_mhz` other than the machine's clock (Luna88k 25, Flamingo 150, 5000/120 20, 5000/200 25, 386 PC 25, Gateway 66V 66); \
                behind a controller (`intc.kind` not `direct`, the Linux or NAPI path, or `[sources]`), a `section_level` below `nic_priority` (there a section masks every interrupt on its CPU).",
    },
    Info {
        part: Part::Intc,
        section: "intc",
        title: "the interrupt controller",
        help: "XT-PIC, IO-APIC, MSI or MSI-X and its programming (docs/models/interrupt-delivery.md)",
        params: IntcConfig::PARAMS,
        notes: "Refused: `kind = \"xtpic\"` with `cpu.threads` above 1 (the error names `cpu.threads`); MSI `vectors` not a power of two up to 32.",
    },
    Info {
        part: Part::Bus,
        section: "bus",
        title: "the I/O fabric",
        help: "latencies between CPU, chipset and device (PCIe, FSB, DMI)",
        params: BusConfig::PARAMS,
        notes: "Refused: `link_mbps` with RSS (the queues' DMA would share the one link, which is not modelled).",
    },
    Info {
        part: Part::IrqPath,
        section: "irq_path",
        title: "the interrupt path",
        help: "CPU cycles of Linux 2.6's interrupt path around the device's handlers; the hardware part of taking an interrupt is `cpu.irq_entry_cycles`",
        params: IrqPathConfig::PARAMS,
        notes: "",
    },
    Info {
        part: Part::Sources,
        section: "sources",
        title: "the other interrupt sources",
        help: "interrupt sources beside the NIC: a timer, a disk (docs/models/composition.md); the exerciser's are `[[workload.others]]`",
        params: SourcesConfig::PARAMS,
        notes: "",
    },
    Info {
        part: Part::Nics,
        section: "nics",
        title: "the other NICs",
        help: "NICs beside the first, each with its own arrivals, buffer, wire and interrupt, drained by its own ISR, bottom half or NAPI instance (docs/models/composition.md, \"Several NICs\")",
        params: crate::device::nics::NicsConfig::PARAMS,
        notes: "Each NIC's interrupt goes through the controllers (on the mt path too). Refused: with kernel code (`code.program`) or the programmable NIC (`nic_firmware.program`); a NIC's `irq_thread` past `cpu.threads`, its frame larger than its buffer, its rate above one frame per cycle.",
    },
    Info {
        part: Part::Code,
        section: "code",
        title: "the kernel's code",
        help: "the NIC's handlers, bottom half, receive call and application as MIPS code on execution-driven cores (docs/models/cores.md)",
        params: crate::code::CodeConfig::PARAMS,
        notes: "With `program` set, `[driver]`, `[stack]`, `[app]`, `napi.complete_cycles`, `napi.rotting`, `napi.late_ack`, `napi.poll_within_budget`, the e1000-like NIC's buffer, DMA and transmit queue (`nic.rx_buffer_bytes`, `dma_bytes_per_cycle`, `tx_queue_packets`, `bus.link_mbps`: code's NIC puts each frame in its ring's buffer as it comes off the wire, and its transmit ring is the program's) and the masking part's section keys are refused (code is the driver, stack and application, and its critical sections are its own `local_irq_save`s: `masking.code_sections` gives them the masking part's scheme and costs; but with `cpus` naming some CPUs and a `[[nics.others]]` NIC interrupting another, `[driver]`, `[stack]` and `napi.complete_cycles` set the abstract kernel's costs there, and with `cpus`, `app.background = true` runs the abstract kernel's CPU-bound application on `app.thread`, one of its CPUs), as are the workloads without a NIC (`exerciser`, `null_rpc`); the workload's sends (a send flood, `send` events, frames a trace's host sent, `tx_share`) run the program's `send` entry at software-interrupt level on `app_thread` (a send flood is then the application: the program's `app` does not run), and its other system calls cost `app.syscall_cycles` beside the program; without `program` every other `code` key is refused.",
    },
    Info {
        part: Part::Napi,
        section: "napi",
        title: "the NAPI path",
        help: "the NIC's poll with a weight, the NET_RX softirq's budget, the interrupt off while polling (docs/models/napi-coalescing.md)",
        params: crate::kernel::napi::NapiConfig::PARAMS,
        notes: "Its keys are used only with `irq_path.kind = \"napi\"`, or on the Linux path with another NIC's own `irq_path = \"napi\"` (busy polling refused there: the first NIC's frames carry no NAPI instance). Refused as no-ops (naming both keys): `gro_flush_timeout_ns` without `defer_hard_irqs` and the reverse, `busy_poll_budget` without `busy_poll_usecs`.",
    },
    Info {
        part: Part::Coalesce,
        section: "coalesce",
        title: "the NIC's interrupt coalescing",
        help: "receive-interrupt moderation with ethtool's rx-usecs and rx-frames (docs/models/napi-coalescing.md)",
        params: crate::device::coalesce::CoalesceConfig::PARAMS,
        notes: "Refused: `rx_usecs` and `rx_frames` both 0 (the error names `coalesce.rx_frames`); `rx_usecs` above 0 with `rx_frames = 1`, whose first frame interrupts at once (the error names both).",
    },
    Info {
        part: Part::Rss,
        section: "rss",
        title: "receive-side scaling",
        help: "a multi-queue NIC: Toeplitz hash over a flow mix, 128-entry indirection table, one MSI-X vector and NAPI instance per queue (docs/models/napi-coalescing.md)",
        params: crate::device::rss::RssConfig::PARAMS,
        notes: "Refused (naming `rss.kind`): without `irq_path.kind = \"napi\"`, on a legacy controller (`xtpic`, `ioapic`); MSI `queues` not a power of two. `[coalesce]` applies to each queue, and DIM (`coalesce.adaptive_rx`) runs per queue on the queue's own counters.",
    },
    Info {
        part: Part::NicFirmware,
        section: "nic_firmware",
        title: "the programmable NIC",
        help: "firmware in C on 1-8 MIPS cores with their own clock, SRAM, DMA engines and MAC, in place of the e1000-like NIC (docs/models/nic-firmware.md)",
        params: crate::device::firmware::FirmwareConfig::PARAMS,
        notes: "With `program` set, the e1000-like NIC's buffer, DMA and ring keys (`nic.rx_buffer_bytes`, `dma_bytes_per_cycle`, `rx_ring_frames`, `tx_queue_packets`) and `bus.link_mbps` are refused (the firmware's SRAM slots and DMA engines take their place); `[coalesce]`, DIM's included (`dim_mode = \"eqe\"` only), needs firmware that moderates its interrupts (nic_coal.elf, with `rss.queues` > 1 nic_rss_coal.elf), `rss.queues` > 1 firmware that steers (nic_rss.elf, nic_rss_coal.elf), and `rss.queues = 1` needs `rss.rps_cpus`; with kernel code (`code.program`) as its host driver, RPS and `[[nics.others]]` need programs/system/fw_rx_nics.elf; `organisation = \"task\"` needs `owners`; without `program` every other key is refused.",
    },
];

const WORKLOAD: &[Param] = &[Param::choice("kind", KINDS, params::REQ, "which workload drives the run, and so which model runs it")];

/// Top-level keys that belong to no part.
pub const TOP: &[Param] = &[
    Param::text("name", params::d("\"\""), "short name shown in reports"),
    Param::text("description", params::d("\"\""), "free text: what the scenario is and where its numbers come from"),
];

/// A set of parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartSet(u32);

impl PartSet {
    pub fn of(parts: &[Part]) -> Self {
        Self(parts.iter().fold(0, |bits, &p| bits | 1 << p as u32))
    }
    pub fn contains(self, p: Part) -> bool {
        self.0 & (1 << p as u32) != 0
    }
    pub fn remove(&mut self, p: Part) {
        self.0 &= !(1 << p as u32);
    }
}

/// The parts a scenario with workload kind `kind` uses, and why (for errors).
/// This is the one place that decides; a new model or part extends it.
pub fn selected_parts(kind: &str) -> (PartSet, &'static str) {
    use Part::*;
    match kind {
        "null_rpc" => (PartSet::of(&[Run, Cpu, Masking, Stats, Workload]), "it runs the masking model: one CPU thread and its interrupt masks"),
        "exerciser" => {
            (PartSet::of(&[Run, Cpu, Intc, Bus, IrqPath, Stats, Workload]), "it runs the interrupt-delivery model: controller, fabric and Linux interrupt path")
        }
        _ => (
            PartSet::of(&[
                Run,
                Cpu,
                Nic,
                Driver,
                Stack,
                App,
                Intc,
                Bus,
                IrqPath,
                Masking,
                Sources,
                Nics,
                Code,
                Napi,
                Coalesce,
                Rss,
                NicFirmware,
                Stats,
                Workload,
            ]),
            "it drives the NIC through its controller, driver, stack and application",
        ),
    }
}

/// The NIC path uses the masking part only with critical sections in it: a
/// masking key without them would change nothing.
fn masking_needs_sections(explicit: &[String], kind: &str) -> Result<(), Problem> {
    if matches!(kind, "null_rpc" | "exerciser") {
        return Ok(());
    }
    let masking = || explicit.iter().filter(|k| k.starts_with("masking."));
    if masking().any(|k| k.ends_with("_section_cycles") || k == "masking.code_sections") {
        return Ok(());
    }
    match masking().next() {
        Some(k) => Err((
            k.clone(),
            format!(
                "the NIC path has no critical section to mask (workload kind `{kind}`); set masking.driver_section_cycles, protocol_section_cycles or syscall_section_cycles (or, with kernel code, code_sections), or remove the key"
            ),
        )),
        None => Ok(()),
    }
}

/// A `[masking]` key of the abstract kernel's sections and priority levels,
/// which kernel code (with sections of its own) does not take.
pub(super) fn abstract_section_key(key: &str) -> bool {
    key.ends_with("_section_cycles") || key == "nic_priority" || key == "section_level"
}

/// A key of the abstract receive path that kernel code replaces: the
/// driver, stack and application (their ring is code's too) and the NAPI
/// part's completion cost (the NAPI part decides when code polls; the poll
/// and the completion are code's instructions). The workload's other
/// system calls (trace, script, synthetic) stay costs: `app.syscall_cycles`.
pub(super) fn code_replaces(key: &str) -> bool {
    const ABSTRACT: &[&str] = &["driver.", "stack.", "app.", "napi.complete_cycles", "nic.rx_ring_frames"];
    key != "app.syscall_cycles" && (ABSTRACT.iter().any(|p| key.starts_with(p)) || CODE_NIC.iter().any(|(k, _)| *k == key))
}

/// Keys of the e1000-like first NIC that kernel code's NIC does not take,
/// and why: its frames go from the wire straight into the buffer of the
/// ring's next descriptor (the program's memory; no FIFO, the DMA not
/// timed), and its transmit ring is the program's.
const CODE_NIC: &[(&str, &str)] = &[
    (
        "nic.rx_buffer_bytes",
        "kernel code's NIC puts each frame in the buffer of its ring's next descriptor as the frame comes off the wire: it has no on-chip buffer",
    ),
    (
        "nic.dma_bytes_per_cycle",
        "kernel code's NIC puts each frame in the buffer of its ring's next descriptor as the frame comes off the wire: its DMA is not timed",
    ),
    (
        "bus.link_mbps",
        "it paces the NIC's DMA, and kernel code's NIC puts each frame in its ring's buffer as the frame comes off the wire (its DMA is not timed)",
    ),
    ("nic.tx_queue_packets", "kernel code's transmit ring is the program's (its send entry fills the descriptors)"),
];

/// Of the keys code replaces, those the abstract kernel beside it uses on
/// the CPUs `code.cpus` leaves it: its driver's and its stack's costs (the
/// frames of the NICs it drives go up its own IP, UDP and socket layers
/// there) and NAPI's completion; the application is code's.
pub(super) fn beside_code(key: &str) -> bool {
    key.starts_with("driver.") || key.starts_with("stack.") || key == "napi.complete_cycles"
}

/// Of the keys code replaces, the abstract kernel's application on a CPU
/// `code.cpus` leaves it: a CPU-bound program there (`app.background`) on
/// `app.thread`; the socket's reader and the sends stay code's.
pub(super) fn app_beside_code(key: &str) -> bool {
    key == "app.background" || key == "app.thread"
}

/// Whether another NIC's interrupts go to a CPU `code.cpus` leaves to
/// the abstract kernel, whose driver then takes the keys [`beside_code`]
/// names (an item's `irq_thread` absent is 0).
fn abstract_nic(root: &Table) -> bool {
    let Some(cpus) = root.get("code").and_then(|c| c.get("cpus")).and_then(Value::as_array) else { return false };
    let named = |t: i64| cpus.iter().any(|c| c.as_integer() == Some(t));
    let others = root.get("nics").and_then(|n| n.get("others")).and_then(Value::as_array);
    others.is_some_and(|o| o.iter().any(|n| !named(n.get("irq_thread").and_then(Value::as_integer).unwrap_or(0))))
}

/// Code replaces the abstract driver, stack and application; the NIC's
/// workloads feed it (`CodeConfig::check` refuses those that would make its
/// application send). Without a program, no other `code` key means anything.
fn code_excludes(root: &Table, explicit: &[String], kind: &str) -> Result<(), Problem> {
    let code = |k: &&String| k.starts_with("code.");
    if !explicit.iter().any(|k| k == "code.program") {
        return match explicit.iter().find(code) {
            Some(k) => Err((k.clone(), "only used when `code.program` is set; set it or remove the key".into())),
            None => Ok(()),
        };
    }
    let beside = abstract_nic(root);
    let cpus = root.get("code").and_then(|c| c.get("cpus")).is_some();
    if let Some(k) = explicit.iter().find(|k| code_replaces(k) && !(beside && beside_code(k)) && !(cpus && app_beside_code(k))) {
        if let Some((_, why)) = CODE_NIC.iter().find(|(n, _)| n == k) {
            return Err((k.clone(), format!("{why}; remove the key")));
        }
        let msg = if app_beside_code(k) {
            "the kernel's software is code (`code.program`) on every CPU, and its application is the program's: this key is the abstract kernel's application, on a CPU `code.cpus` leaves it; name the program's CPUs in `code.cpus`, or remove the key"
        } else if beside_code(k) {
            "the kernel's software is code (`code.program`) on every CPU a NIC interrupts: this part is used only by the abstract kernel `code.cpus` leaves on other CPUs; remove the key, or send a `[[nics.others]]` NIC's `irq_thread` there"
        } else {
            "the kernel's software is code (`code.program`): this part is not used; remove the key"
        };
        return Err((k.clone(), msg.into()));
    }
    if let Some(k) = explicit.iter().find(|k| k.strip_prefix("masking.").is_some_and(abstract_section_key)) {
        let msg = "the kernel's software is code (`code.program`): its critical sections are its own `local_irq_save`s, each masking every interrupt of its CPU (`masking.code_sections` gives them this part's scheme and costs); remove the key";
        return Err((k.clone(), msg.into()));
    }
    if matches!(kind, "exerciser" | "null_rpc") {
        return Err(("workload.kind".into(), format!("`{kind}` with code (`code.program`): this workload drives no NIC, and code is the NIC's software")));
    }
    Ok(())
}

/// Keys of another NIC that kernel code's NICs do not take, as `CODE_NIC`'s
/// for the first: the frames of a NIC whose interrupts go to a code CPU go
/// from its wire into the buffer of its ring's next descriptor.
pub(super) const CODE_PORT: &[&str] = &["rx_buffer_bytes", "dma_bytes_per_cycle"];

/// Whether another NIC (its table) is driven by kernel code: its
/// interrupts go to a CPU `code.cpus` names (absent: every CPU).
fn code_drives(cpus: Option<&[Value]>, nic: &Table) -> bool {
    let at = nic.get("irq_thread").and_then(Value::as_integer).unwrap_or(0);
    cpus.is_none_or(|c| c.iter().any(|c| c.as_integer() == Some(at)))
}

/// Another NIC driven by kernel code refuses [`CODE_PORT`]'s keys.
fn code_ports(root: &Table, explicit: &[String]) -> Result<(), Problem> {
    if !explicit.iter().any(|k| k == "code.program") {
        return Ok(());
    }
    let cpus = root.get("code").and_then(|c| c.get("cpus")).and_then(Value::as_array).map(Vec::as_slice);
    let others = root.get("nics").and_then(|n| n.get("others")).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for (i, nic) in others.iter().enumerate().filter_map(|(i, n)| Some((i, n.as_table()?))) {
        if let Some(k) = CODE_PORT.iter().find(|k| nic.contains_key(**k)).filter(|_| code_drives(cpus, nic)) {
            let msg = "its driver is kernel code (its interrupts go to a CPU that runs the program): each frame goes from its wire into the buffer of its ring's next descriptor, with no on-chip buffer and its DMA not timed; remove the key";
            return Err((format!("nics.others[{i}].{k}"), msg.into()));
        }
    }
    Ok(())
}

/// The abstract application: a send flood is the application (it sends
/// again as each send returns), so no CPU-bound one runs beside it. Beside
/// code (`code.cpus`) the abstract kernel's application runs only when
/// asked (`app.background = true`; the program's is code's), on
/// `app.thread`, which means nothing without it.
fn application(root: &mut Table, explicit: &[String], kind: &str) -> Result<(), Problem> {
    let set = |k: &str| explicit.iter().any(|e| e == k);
    let send_flood = kind == "flood" && root.get("workload").and_then(|w| w.get("direction")).and_then(Value::as_str) == Some("tx");
    let background = root.get("app").and_then(|a| a.get("background")).and_then(Value::as_bool);
    if send_flood && background == Some(true) {
        return Err(("app.background".into(), "a send flood (`workload.direction = \"tx\"`) is the application: it sends again as each send returns, so no CPU-bound application runs beside it; remove the key".into()));
    }
    let beside = set("code.program") && root.get("code").and_then(|c| c.get("cpus")).is_some();
    if !beside {
        return Ok(());
    }
    if set("app.thread") && background != Some(true) {
        return Err(("app.thread".into(), "beside kernel code the abstract kernel's application runs only with `app.background = true` (code's application is the program's, on `code.app_thread`); set it or remove the key".into()));
    }
    if !set("app.background")
        && let Some(app) = root.entry("app").or_insert_with(|| Value::Table(Table::new())).as_table_mut()
    {
        app.insert("background".into(), Value::Boolean(false));
    }
    Ok(())
}

/// Code's cores follow `cpu.threads` unless `[code.core.core]` says how
/// they are made: one single-threaded core per hardware thread (an SMP).
fn code_cores_follow_threads(root: &mut Table, explicit: &[String]) {
    let topology = |k: &String| k == "code.core.core.cores" || k == "code.core.core.threads";
    let Some(threads) = lookup_int(root, "cpu.threads") else { return };
    if !explicit.iter().any(|k| k == "code.program") || explicit.iter().any(topology) || threads <= 1 {
        return;
    }
    let core = ["code", "core", "core"].iter().try_fold(&mut *root, |t, seg| t.entry(*seg).or_insert_with(|| Value::Table(Table::new())).as_table_mut());
    if let Some(core) = core {
        core.insert("cores".into(), Value::Integer(threads));
    }
}

/// An integer at a dotted path of a table not yet checked.
fn lookup_int(root: &Table, path: &str) -> Option<i64> {
    let (section, key) = path.split_once('.')?;
    root.get(section)?.get(key)?.as_integer()
}

/// Keys renamed when rates took one spelling (`_per_s`), with their new names.
const RENAMED: &[(&str, &str)] = &[
    ("workload.rate_pps", "workload.rate_per_s"),
    ("workload.rate_hz", "workload.rate_per_s"),
    ("workload.others.rate_hz", "workload.others.rate_per_s"),
    ("bus.link_mbytes_per_s", "bus.link_mbps"),
];

/// Checks a whole scenario table against the parts' tables and fills in
/// every default (unused parts too, so the typed structs are complete).
/// Returns the parts the scenario selects.
pub fn check_table(root: &mut Table) -> Result<PartSet, Problem> {
    let explicit = leaves(root, "");
    for key in &explicit {
        let bare = strip_indices(key);
        if let Some((_, new)) = RENAMED.iter().find(|(old, _)| *old == bare) {
            return Err((key.clone(), format!("was renamed `{new}`")));
        }
    }
    let kind = match root.get("workload").map(|w| w.get("kind").ok_or(w)) {
        Some(Err(w)) if !w.is_table() => return Err(("workload".into(), format!("must be a table (`[workload]`), got {}", w.type_str()))),
        None | Some(Err(_)) => return Err(("workload.kind".into(), "required key missing".into())),
        Some(Ok(v)) => {
            params::check_section(&mut Table::from_iter([("kind".to_string(), v.clone())]), "workload", WORKLOAD)?;
            plain(v)
        }
    };
    let (selected, why) = selected_parts(&kind);
    masking_needs_sections(&explicit, &kind)?;
    for (key, value) in root.iter() {
        if params::find(TOP, key).is_some() {
            continue;
        }
        let Some(info) = PARTS.iter().find(|i| i.section == key) else {
            let known: Vec<&str> = TOP.iter().map(|p| p.key).chain(PARTS.iter().map(|i| i.section)).collect();
            return Err((key.clone(), format!("unknown section `{key}`, expected one of {}", params::quoted(&known))));
        };
        if !value.is_table() {
            return Err((key.clone(), format!("must be a table (`[{key}]`), got {}", value.type_str())));
        }
        if !selected.contains(info.part) {
            let first = value.as_table().and_then(|t| t.keys().next()).map_or(key.clone(), |k| join(key, k));
            return Err((first, format!("{} part is not used by workload kind `{kind}` ({why}); remove the key", info.title)));
        }
    }
    // After the part check: a key of an unselected part is named as such.
    code_excludes(root, &explicit, &kind)?;
    code_ports(root, &explicit)?;
    crate::device::firmware::excludes(&explicit)?;
    code_cores_follow_threads(root, &explicit);
    application(root, &explicit, &kind)?;
    if kind != "exerciser" && explicit.iter().any(|k| k == "intc.vectors") {
        return Err((
            "intc.vectors".into(),
            format!("the exerciser's vectors; the NIC (workload kind `{kind}`) takes one vector per RSS queue (`rss.queues`); remove the key"),
        ));
    }
    let mut top = Table::new();
    for p in TOP {
        if let Some(v) = root.remove(p.key) {
            top.insert(p.key.into(), v);
        }
    }
    params::check_section(&mut top, "", TOP)?;
    root.extend(top);
    for info in PARTS.iter().filter(|i| i.part != Part::Workload) {
        let t = root.entry(info.section).or_insert_with(|| Value::Table(Table::new()));
        let t = t.as_table_mut().expect("checked above");
        params::check_section(t, info.section, info.params)?;
        check_items(t, info.section, info.params)?;
    }
    let v = variant(&kind).expect("kind checked");
    let w = root["workload"].as_table_mut().expect("checked above");
    w.remove("kind");
    if let Err((key, msg)) = params::check_section(w, "workload", v.params) {
        let msg = if msg.starts_with("unknown field") { other_kind(&key, &kind).unwrap_or(msg) } else { msg };
        return Err((key, msg));
    }
    check_items(w, "workload", v.params)?;
    w.insert("kind".into(), Value::String(kind.clone()));
    // Keys that others depend on first: a wrong one is the error to name.
    let deciding = |k: &String| PARTS.iter().flat_map(|i| i.params).any(|p| p.when.is_some_and(|w| w.key == k.as_str()));
    let (first, rest): (Vec<&String>, Vec<&String>) = explicit.iter().partition(|k| deciding(k));
    for key in first.into_iter().chain(rest) {
        check_when(root, key, &kind)?;
    }
    check_cancelled(root, &explicit)?;
    Ok(selected)
}

/// The declaration of `section.leaf`, a key of one value (no array of
/// tables, no table of sections) of a part, or of workload kind `kind`.
pub(super) fn plain_param(section: &str, leaf: &str, kind: &str) -> Option<&'static Param> {
    let params = match section {
        "workload" => variant(kind)?.params,
        _ => PARTS.iter().find(|i| i.section == section)?.params,
    };
    params::find(params, leaf).filter(|p| !matches!(p.ty, params::Type::Items(_) | params::Type::Sections(_)))
}

/// Each table of an array-of-tables key, checked against its own keys.
fn check_items(t: &mut Table, path: &str, params: &[Param]) -> Result<(), Problem> {
    for p in params {
        let params::Type::Items(item) = p.ty else { continue };
        let Some(Value::Array(items)) = t.get_mut(p.key) else { continue };
        for (i, x) in items.iter_mut().enumerate() {
            let at = format!("{path}.{}[{i}]", p.key);
            params::check_section(x.as_table_mut().expect("checked as a table"), &at, item)?;
        }
    }
    Ok(())
}

/// For an unknown key of the workload: the kinds that do take it.
fn other_kind(key: &str, kind: &str) -> Option<String> {
    let leaf = key.strip_prefix("workload.")?;
    let owners: Vec<&str> = VARIANTS.iter().filter(|v| params::find(v.params, leaf).is_some()).map(|v| v.kind).collect();
    if owners.is_empty() {
        return None;
    }
    Some(format!("a key of workload kind {}, not of `{kind}`", params::quoted(&owners)))
}

/// Every leaf key written in `t`, dotted, with `[i]` for array items.
fn leaves(t: &Table, path: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in t {
        let at = join(path, k);
        match v {
            Value::Table(sub) => out.extend(leaves(sub, &at)),
            Value::Array(a) if a.iter().any(Value::is_table) => {
                for (i, x) in a.iter().enumerate() {
                    match x {
                        Value::Table(sub) => out.extend(leaves(sub, &format!("{at}[{i}]"))),
                        _ => out.push(format!("{at}[{i}]")),
                    }
                }
            }
            _ => out.push(at),
        }
    }
    out
}

/// `workload.others[2].line` → `workload.others.line`.
pub fn strip_indices(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut depth = 0;
    for c in key.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

impl Info {
    /// The workload kinds whose scenarios use this part.
    pub fn used_by(&self) -> Vec<&'static str> {
        KINDS.iter().copied().filter(|k| selected_parts(k).0.contains(self.part)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key of every part (array items included).
    fn all_params() -> Vec<&'static Param> {
        fn with_items(ps: &'static [Param]) -> Vec<&'static Param> {
            ps.iter().flat_map(|p| std::iter::once(p).chain(if let params::Type::Items(item) = p.ty { with_items(item) } else { vec![] })).collect()
        }
        let tables = TOP.iter().chain(PARTS.iter().flat_map(|i| i.params)).chain(VARIANTS.iter().flat_map(|v| v.params));
        tables.flat_map(|p| with_items(std::slice::from_ref(p))).collect()
    }

    /// One spelling per unit: a key's name ends with its unit, and rates are
    /// all `_per_s` (never `_hz` or `_pps`).
    #[test]
    fn units_have_one_spelling() {
        // Longest suffix first: `_mbytes_per_s` is a bandwidth, `_per_s` a rate.
        const SUFFIXES: &[(&str, &str)] = &[
            ("_cycles_per_instruction", "cycles/instruction"),
            ("_cycles_per_byte", "cycles/byte"),
            ("_bytes_per_cycle", "bytes/cycle"),
            ("_mbytes_per_s", "MB/s"),
            ("_per_s", "/s"),
            ("_cycles", "cycles"),
            ("_cycle", "cycles"),
            ("_ns", "ns"),
            ("_usecs", "µs"),
            ("_ms", "ms"),
            ("_mhz", "MHz"),
            ("_mbps", "Mb/s"),
            ("_gbps", "Gb/s"),
            ("_bytes", "bytes"),
            ("_packets", "packets"),
            ("_records", "records"),
            ("_items", "items"),
            ("_events", "events"),
            ("_instructions", "instructions"),
        ];
        for p in all_params().into_iter().filter(|p| !matches!(p.ty, params::Type::Items(_))) {
            assert!(!p.key.ends_with("_hz") && !p.key.ends_with("_pps"), "`{}`: rates end in _per_s", p.key);
            let name = format!("_{}", p.key);
            let want = SUFFIXES.iter().find(|(suffix, _)| name.ends_with(suffix)).map_or("", |(_, unit)| unit);
            assert_eq!(p.unit, want, "`{}`", p.key);
        }
    }

    /// Defaults are valid values of their own keys.
    #[test]
    fn defaults_pass_their_own_checks() {
        for p in all_params() {
            if let params::Def::Value(v) = p.default {
                let mut t = Table::from_iter([(p.key.to_string(), params::literal(v))]);
                params::check_section(&mut t, "", std::slice::from_ref(p)).unwrap_or_else(|e| panic!("{e:?}"));
            }
        }
    }
}
