//! Every metric a run can report, declared once: its name, unit, meaning and
//! the parts that emit it, as the parameter tables declare every key.
//! docs/metrics.md is generated from [`METRICS`] (`markdown`), a test checks
//! that every metric a bundled scenario emits is declared here, and the
//! Python side labels plots and `metrics.json` units from the same table.
//!
//! A name may hold one `{placeholder}`: the metric is then a family, one
//! per value in `values` (or per thread or profile number when `values` is
//! empty). [`cpu_load`] computes the CPU-load family from the cycle bins.

use crate::cpu::{Bin, Bins};
use serde::Serialize;

/// One metric (or family of metrics).
#[derive(Debug, Serialize)]
pub struct Metric {
    pub name: &'static str,
    /// What `{placeholder}` stands for; empty: any number.
    pub values: &'static [&'static str],
    pub unit: &'static str,
    pub meaning: &'static str,
    /// The parts (scenario sections) whose presence makes a run report it.
    pub emitted_by: &'static str,
}

const STATS: &[&str] = &["min", "p50", "p99", "p999", "max"];
const CODE_BINS: &[&str] = &["user", "kernel", "interrupt", "bottom_half"];
const BINS: &[&str] = &["user", "kernel", "interrupt", "bottom_half", "overhead", "idle"];

const fn m(name: &'static str, unit: &'static str, meaning: &'static str, emitted_by: &'static str) -> Metric {
    Metric { name, values: &[], unit, meaning, emitted_by }
}

const fn family(name: &'static str, values: &'static [&'static str], unit: &'static str, meaning: &'static str, emitted_by: &'static str) -> Metric {
    Metric { name, values, unit, meaning, emitted_by }
}

const NET: &str = "nic, driver, stack, app (every NIC workload)";
const DELIVERY: &str = "intc, bus, irq_path, sources (interrupt delivery)";
const SOURCES: &str = "sources (more than one interrupt source)";
const EXERCISER: &str = "sources (the `exerciser` workload, or `sources.others` of kind `exerciser`)";

/// Every metric, in the order a report lists them.
pub const METRICS: &[Metric] = &[
    m("sim_seconds", "s", "simulated time the run covered", "every run but `null_rpc`"),
    m("sim_cycles", "cycles", "simulated time the run covered, in CPU cycles", "every run but the exerciser's"),
    m("events", "events", "discrete events the engine processed", "every run"),
    // The CPU's load, from the cycle bins (`cpu_load`).
    m("busy_share", "share", "mean over hardware threads of the share of cycles not idle (the CPU load)", "cpu (every run)"),
    family("thread{}_busy_share", &[], "share", "share of hardware thread N's cycles not idle", "cpu (every run)"),
    family(
        "{}_share",
        BINS,
        "share",
        "share of all threads' cycles in the bin (user, kernel, interrupt, bottom_half, overhead, idle); they sum to 1",
        "cpu (every run)",
    ),
    // The NIC path.
    m("rx_offered", "frames", "frames offered to the NIC for receiving", NET),
    m("rx_delivered", "frames", "frames delivered to the application", NET),
    m("rx_dropped_nic", "frames", "frames dropped because the NIC's receive buffer or ring was full", NET),
    m("rx_dropped_backlog", "frames", "frames dropped because the protocol backlog was full", NET),
    m("rx_dropped_wire", "frames", "frames dropped on the link before the NIC (its queue full)", NET),
    m("nic_firmware_instructions", "instructions", "instructions the programmable NIC's cores completed, all cores", "nic_firmware"),
    m(
        "nic_firmware_interrupts",
        "interrupts",
        "host interrupts the NIC's firmware asked for (the host's `interrupts` counts those that were not already pending)",
        "nic_firmware",
    ),
    m(
        "nic_firmware_cycles",
        "cycles",
        "cycles of the NIC's own clock the run lasted (`nic_firmware.clock_mhz`); IPC is instructions / (cores x cycles)",
        "nic_firmware",
    ),
    m("nic_firmware_window_cycles", "cycles", "NIC cycles of the measured window (`nic_firmware.window_frames`; 0 if it did not end)", "nic_firmware"),
    m("nic_firmware_window_frames", "frames", "frames done in the window: put on the wire plus returned to the host", "nic_firmware"),
    m("nic_firmware_window_instructions", "instructions", "instructions the NIC's cores completed in the window, all cores", "nic_firmware"),
    m("rx_dropped_software", "frames", "frames the kernel's code dropped (socket or ring full, no route cache entry)", "code"),
    m("rx_dropped_route", "frames", "of `rx_dropped_software`: frames the route cache had no entry for (every entry held by a frame)", "code"),
    m("rx_oversize_frames", "frames", "captured frames larger than the NIC's buffer (GRO/TSO), dropped", "workload kind `trace`"),
    m("rx_in_flight", "frames", "frames received but not yet delivered nor dropped when the run ended", NET),
    m(
        "rx_forwarded",
        "frames",
        "received frames forwarded and sent out of a NIC (also counted delivered, with their latency to the end of their output wire): by the kernel's code, or by the abstract kernel (`forward_to`)",
        "code, or a NIC's `forward_to`",
    ),
    m(
        "rx_dropped_forward",
        "frames",
        "received frames to forward that their output NIC's full transmit queue dropped (also counted in `tx_dropped`)",
        "a NIC's `forward_to`",
    ),
    m("rx_throughput_mbps", "Mbit/s", "bits of delivered frames per simulated second (drops never count)", NET),
    m("tx_offered", "frames", "frames the application offered for sending", NET),
    m("tx_sent", "frames", "frames the NIC sent on the link", NET),
    m("tx_dropped", "frames", "frames dropped because the transmit queue was full", NET),
    m("tx_in_flight", "frames", "frames offered but not yet sent nor dropped when the run ended", NET),
    m("tx_throughput_mbps", "Mbit/s", "bits of sent frames per simulated second", NET),
    m("interrupts", "interrupts", "interrupts the CPU took (NIC path) or raised (null RPC)", "nic or masking"),
    m("syscalls", "system calls", "system calls the workload made", NET),
    m("syscalls_dropped", "system calls", "system calls refused because too many were waiting", NET),
    m("reordered_stimuli", "stimuli", "workload stimuli that came earlier than the current time and were taken late (should stay 0)", NET),
    family("latency_{}_us", STATS, "µs", "receive latency, arrival at the NIC to delivery to the application: min, median, 99th, 99.9th percentile, max", NET),
    // Interrupt delivery (intc, bus, sources).
    m("interrupts_raised", "interrupts", "interrupts the devices raised", DELIVERY),
    m("interrupts_serviced", "interrupts", "interrupts a handler serviced", DELIVERY),
    m("interrupts_lost", "interrupts", "interrupts lost (raised again while still pending on an edge line)", DELIVERY),
    m("interrupts_in_flight", "interrupts", "interrupts raised but not yet serviced when the run ended", "intc or masking"),
    // Per device, with more than one: 0 is the NIC or the exerciser, then each of `others` in order.
    family("source{}_raised", &[], "interrupts", "interrupts device N raised (0: the NIC or the exerciser, then each of `others`)", SOURCES),
    family("source{}_serviced", &[], "interrupts", "interrupts of device N a handler serviced", SOURCES),
    family("source{}_lost", &[], "interrupts", "interrupts of device N lost", SOURCES),
    m("spurious_interrupts", "interrupts", "interrupts taken in which no handler found its device's bit", DELIVERY),
    m("cpu_cycles_per_interrupt", "cycles", "CPU cycles of interrupt, bottom-half and overhead work per serviced interrupt", DELIVERY),
    m("cpu_us_per_interrupt", "µs", "`cpu_cycles_per_interrupt` in microseconds", EXERCISER),
    m("max_interrupts_per_s", "interrupts/s", "interrupts per second one CPU could service at `cpu_cycles_per_interrupt`", EXERCISER),
    m("exerciser_raised", "interrupts", "interrupts the PCIe exercisers raised", EXERCISER),
    m("exerciser_serviced", "interrupts", "exerciser interrupts a handler serviced", EXERCISER),
    m("exerciser_lost", "interrupts", "exerciser interrupts lost", EXERCISER),
    m("tasklet_runs", "runs", "runs of the exercisers' tasklets", EXERCISER),
    m("tasklet_merged", "schedules", "tasklet schedules merged into one already pending", EXERCISER),
    m("interrupt_overtook_data", "interrupts", "legacy interrupts that reached the CPU before their DMA data was in memory", EXERCISER),
    m("stale_data_reads", "reads", "handlers that read DMA data before it was in memory (must stay 0)", EXERCISER),
    family(
        "isr_latency_{}_us",
        STATS,
        "µs",
        "exerciser interrupt raised to its handler's first instruction: min, median, 99th, 99.9th percentile, max",
        EXERCISER,
    ),
    family("tasklet_latency_{}_us", STATS, "µs", "exerciser interrupt raised to its tasklet's start: min, median, 99th, 99.9th percentile, max", EXERCISER),
    // Critical sections.
    m("rpcs", "RPCs", "null RPCs the base program completed", "masking (workload kind `null_rpc`)"),
    m("cycles_per_rpc", "cycles", "CPU cycles per completed null RPC", "masking (workload kind `null_rpc`)"),
    m("us_per_rpc", "µs", "`cycles_per_rpc` in microseconds", "masking (workload kind `null_rpc`)"),
    m("mask_cycles_per_rpc", "cycles", "the base program's own mask manipulation per RPC", "masking (workload kind `null_rpc`)"),
    m("masking_cycles_per_rpc", "cycles", "all mask manipulation (enter, exit, prologue, continuation, restore) per RPC", "masking (workload kind `null_rpc`)"),
    m("conventional_pair_cycles", "cycles", "cost of one conventional raise/lower pair on the machine profile", "masking (workload kind `null_rpc`)"),
    m("optimistic_pair_cycles", "cycles", "cost of one optimistic raise/lower pair (NaN where the profile has none)", "masking (workload kind `null_rpc`)"),
    m("continuation_cycles", "cycles", "cost of the optimistic scheme's continuation", "masking (workload kind `null_rpc`)"),
    m("interrupts_handled", "interrupts", "interrupts handled", "masking (workload kind `null_rpc`)"),
    m(
        "interrupts_held",
        "interrupts",
        "interrupts that arrived while the hardware mask held them (behind a controller: taken at a section's exit)",
        "masking (workload kind `null_rpc`, NIC sections behind a controller), code",
    ),
    m(
        "interrupts_deferred",
        "interrupts",
        "interrupts the optimistic prologue deferred",
        "masking (workload kind `null_rpc`, NIC sections behind a controller), code",
    ),
    m("interrupts_merged", "interrupts", "interrupts merged into one already waiting", "masking (workload kind `null_rpc`)"),
    m(
        "masking_cycles",
        "cycles",
        "cycles of mask manipulation in the NIC path's critical sections (kernel code's: the raise and lower stalls of `masking.code_sections`)",
        "masking (NIC sections), code",
    ),
    m("masking_cycles_per_frame", "cycles", "`masking_cycles` per delivered frame", "masking (NIC sections), code"),
    m("nic_interrupts_held", "interrupts", "NIC interrupts that arrived while the mask held them", "masking (NIC sections)"),
    m("nic_interrupts_deferred", "interrupts", "NIC interrupts the optimistic prologue deferred", "masking (NIC sections)"),
    m("nic_interrupts_in_flight", "interrupts", "masked NIC interrupts not yet handled when the run ended", "masking (NIC sections)"),
    // NAPI, coalescing, RSS.
    m("napi_schedules", "schedules", "NAPI instances scheduled (napi_schedule)", "napi"),
    m("napi_softirq_runs", "runs", "NET_RX softirq runs (0 with `napi.threaded`: the instances' threads poll)", "napi"),
    m("napi_thread_runs", "runs", "NAPI kernel-thread runs (`napi.threaded`): a woken thread polling its instance", "napi"),
    m("napi_polls", "polls", "poll calls", "napi"),
    m("napi_completes", "polls", "polls that emptied the ring (napi_complete)", "napi"),
    m(
        "napi_not_done",
        "polls",
        "polls that did not complete: they took their whole weight, or with `napi.poll_within_budget` stopped at what was left of the budget with frames waiting (`napi_polls - napi_completes`)",
        "napi",
    ),
    m("napi_time_squeezes", "runs", "softirq runs that ended with budget or time spent (time_squeeze)", "napi"),
    m("napi_max_poll_frames", "frames", "most frames one poll took", "napi"),
    m("napi_max_run_frames", "frames", "most frames one softirq run took", "napi"),
    m("napi_rotted", "frames", "frames left waiting when the interrupt was enabled again (a rotting NIC)", "napi"),
    m(
        "napi_late_acks",
        "interrupts",
        "interrupts raised on enable by a receive cause set after the poll acknowledged it, with no frame waiting (`napi.late_ack`)",
        "napi",
    ),
    m("napi_deferred", "completions", "completions that left the interrupt masked and armed the timer", "napi"),
    m("napi_busy_poll_frames", "frames", "frames taken by busy polling", "napi"),
    m("napi_busy_poll_sleeps", "sleeps", "times a busy-polling reader slept", "napi"),
    m("napi_busy_poll_queues", "queues", "RSS queues busy polling took frames from (it follows the socket's last queue)", "napi with rss"),
    m("rps_remote_frames", "frames", "frames RPS steered to another CPU", "napi"),
    m("coalesce_timer_interrupts", "interrupts", "NIC interrupts raised by the coalescing timer (rx-usecs)", "coalesce"),
    m("coalesce_frame_interrupts", "interrupts", "NIC interrupts raised by the frame count (rx-frames)", "coalesce"),
    m("dim_decisions", "decisions", "DIM's decisions (with RSS, summed over the queues)", "coalesce (`adaptive_rx`)"),
    m("dim_profile_changes", "changes", "DIM's decisions that changed the profile (with RSS, summed over the queues)", "coalesce (`adaptive_rx`)"),
    m("dim_final_profile", "profile", "DIM's profile index when the run ended", "coalesce (`adaptive_rx`) without rss"),
    m("dim_final_profile_min", "profile", "the lowest profile index an RSS queue's DIM ended at", "coalesce (`adaptive_rx`) with rss"),
    m("dim_final_profile_max", "profile", "the highest profile index an RSS queue's DIM ended at", "coalesce (`adaptive_rx`) with rss"),
    family("dim_time_share_profile_{}", &[], "share", "share of the run DIM spent in profile N (with RSS, of the queues' time)", "coalesce (`adaptive_rx`)"),
    m("nics", "NICs", "NICs on the machine, the first included", "nics"),
    family("nic{}_rx_offered", &[], "frames", "frames offered to NIC N (0: the first, `[nic]`; 1..: `[[nics.others]]` in order)", "nics"),
    family("nic{}_interrupts", &[], "interrupts", "interrupts NIC N raised", "nics"),
    family("nic{}_rx_dropped", &[], "frames", "frames NIC N >= 1 dropped at its wire or buffer", "nics"),
    family("nic{}_tx_sent", &[], "frames", "frames NIC N >= 1 sent (those forwarded to it)", "nics (a NIC's `forward_to` naming it)"),
    family(
        "nic{}_rx_taken",
        &[],
        "frames",
        "frames the driver took off NIC N >= 1's rings (with kernel code: that the program finished with, delivered or dropped)",
        "nics",
    ),
    family(
        "nic{}_coalesce_interrupts",
        &[],
        "interrupts",
        "NIC N >= 1's interrupts its coalescing fired (by its timer or its frame count; summed over its queues)",
        "nics (its `rx_usecs`, `rx_frames` or `adaptive_rx`)",
    ),
    family("nic{}_dim_decisions", &[], "decisions", "decisions NIC N >= 1's DIM took (summed over its queues)", "nics (its `adaptive_rx`)"),
    family("nic{}_rss_queues", &[], "queues", "NIC N >= 1's receive queues (its own RSS)", "nics (its `queues` above 1)"),
    family("nic{}_rss_busiest_queue_share", &[], "share", "share of NIC N >= 1's received frames its busiest queue took", "nics (its `queues` above 1)"),
    m("rss_queues", "queues", "receive queues", "rss"),
    m("rss_busiest_queue_share", "share", "share of received frames that went to the busiest queue", "rss"),
    family("rss_queue{}_frames", &[], "frames", "received frames the NIC steered to queue N (dropped there or not)", "rss"),
    family("rss_queue{}_interrupts", &[], "interrupts", "interrupts queue N's vector raised", "rss"),
    // Code on the MIPS core.
    family("code_{}_instructions", CODE_BINS, "instructions", "instructions the kernel's code executed in the bin, all threads", "code"),
    family("code_{}_l1i_misses", CODE_BINS, "misses", "L1 instruction-cache misses in the bin, all threads", "code with caches"),
    family("code_{}_l1d_misses", CODE_BINS, "misses", "L1 data-cache misses in the bin, all threads", "code with caches"),
    family("code_{}_l2_misses", CODE_BINS, "misses", "L2 misses in the bin, all threads", "code with caches"),
    family("cpu{}_runs_code", &[], "flag", "1 if hardware thread N's kernel is the program, 0 if the abstract costs (a kernel per core)", "code (`cpus`)"),
];

impl Metric {
    /// Whether `name` is this metric or a member of its family.
    pub fn matches(&self, name: &str) -> bool {
        let Some((pre, post)) = self.name.split_once("{}") else {
            return self.name == name;
        };
        let Some(mid) = name.strip_prefix(pre).and_then(|r| r.strip_suffix(post)) else {
            return false;
        };
        if self.values.is_empty() { !mid.is_empty() && mid.bytes().all(|b| b.is_ascii_digit()) } else { self.values.contains(&mid) }
    }

    /// The name as docs show it: `latency_{min|p50|...}_us`, `thread{N}_busy_share`.
    pub fn pattern(&self) -> String {
        let fill = if self.values.is_empty() { "{N}".to_string() } else { format!("{{{}}}", self.values.join("|")) };
        self.name.replace("{}", &fill)
    }
}

/// The declaration of metric `name`, if it has one.
pub fn find(name: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.matches(name))
}

/// The CPU's load from each hardware thread's cycle bins: `busy_share`,
/// `thread{N}_busy_share` and the share of every bin.
pub fn cpu_load(bins: &[Bins], elapsed: u64) -> Vec<(crate::report::Name, f64)> {
    let cycles = (elapsed * bins.len() as u64).max(1) as f64;
    let busy = |b: &Bins| (b.total() - b.get(Bin::Idle)) as f64;
    let mut out = vec![("busy_share".into(), bins.iter().map(busy).sum::<f64>() / cycles)];
    out.extend(bins.iter().enumerate().map(|(i, b)| (format!("thread{i}_busy_share").into(), busy(b) / elapsed.max(1) as f64)));
    out.extend(Bin::ALL.iter().zip(BIN_SHARES).map(|(&bin, name)| (name.into(), bins.iter().map(|b| b.get(bin)).sum::<u64>() as f64 / cycles)));
    out
}

/// `{bin}_share` for each of [`Bin::ALL`], written out: formatted, they were
/// a tenth of a tiny run's report.
const BIN_SHARES: [&str; 6] = ["user_share", "kernel_share", "interrupt_share", "bottom_half_share", "overhead_share", "idle_share"];

/// docs/metrics.md.
pub fn markdown() -> String {
    let mut s = String::from(
        "# Metrics reference\n\n\
         <!-- Generated from the metric table in crates/core/src/metrics.rs: do not edit. Regenerate with\n\
         `cargo run -p irqsim-core --example gen-metrics > docs/metrics.md`;\n\
         a test fails when this file differs from what the code generates. -->\n\n\
         Every metric a run reports (`irqsim run`, `metrics.json`, a sweep's columns), with its\n\
         unit and the parts of a scenario that make a run report it. A name with `{a|b}` stands\n\
         for one metric per value, `{N}` for one per hardware thread or profile number. Counts\n\
         are integers; a quantity with no samples (a latency with no packet) is NaN (`null` in JSON).\n\
         `metrics.json` carries each metric's unit under `units`.\n\n\
         | metric | unit | meaning | emitted by |\n|---|---|---|---|\n",
    );
    for m in METRICS {
        s += &format!("| `{}` | {} | {} | {} |\n", m.pattern().replace('|', "\\|"), m.unit, m.meaning, m.emitted_by);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_match_their_members_only() {
        assert_eq!(find("latency_p99_us").map(|m| m.name), Some("latency_{}_us"));
        assert_eq!(find("isr_latency_p99_us").map(|m| m.name), Some("isr_latency_{}_us"));
        assert_eq!(find("thread12_busy_share").map(|m| m.name), Some("thread{}_busy_share"));
        assert_eq!(find("bottom_half_share").map(|m| m.name), Some("{}_share"));
        assert!(find("latency_p98_us").is_none() && find("threadx_busy_share").is_none() && find("nonsense").is_none());
    }

    #[test]
    fn cpu_load_shares_sum_to_one() {
        let mut a = Bins::default();
        a.add(Bin::User, 30);
        a.add(Bin::Idle, 70);
        let mut b = Bins::default();
        b.add(Bin::Interrupt, 100);
        let load: std::collections::HashMap<_, _> = cpu_load(&[a, b], 100).into_iter().collect();
        assert_eq!((load["busy_share"], load["thread0_busy_share"], load["thread1_busy_share"]), (0.65, 0.3, 1.0));
        let bins: f64 = BINS.iter().map(|b| load[format!("{b}_share").as_str()]).sum();
        assert!(Bin::ALL.iter().zip(BIN_SHARES).all(|(b, name)| name == format!("{}_share", b.name())));
        assert_eq!((load["user_share"], load["idle_share"], bins), (0.15, 0.35, 1.0));
    }
}
