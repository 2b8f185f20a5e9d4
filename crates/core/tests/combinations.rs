//! Every pair of the NIC path's mechanisms, tried as a user would: each
//! mechanism is a few keys set on one receive scenario (or, for kernel code,
//! its own scenario); a pair sets both. A pair runs (conserving frames,
//! giving the same numbers twice, and showing each mechanism at work in the
//! report: its own metric moves), is refused with one line naming a key, or
//! is not expressible because both set one key to two values (one
//! controller kind, one receive path, one scheme per machine).
//!
//! A property test does the same for random machines of up to five
//! mechanisms.
//!
//! The table in docs/models/composition.md ("What combines") is this test's
//! output; `IRQSIM_UPDATE_DOCS=1 cargo test -p irqsim-core --test
//! combinations` rewrites it.

use irqsim_core::{Record, Scenario, parse_override, simulate};
use std::path::Path;

/// A mechanism: its name, the scenario it needs (`None`: the common one),
/// the keys that turn it on, those that only the common scenario's
/// abstract kernel needs (left out on kernel code's scenario), those that
/// only kernel code's scenario needs, and what in the report shows it at
/// work, in words and as a test of the report.
struct Mechanism {
    name: &'static str,
    base: Option<&'static str>,
    sets: &'static [&'static str],
    abstract_sets: &'static [&'static str],
    code_sets: &'static [&'static str],
    shows: Shows,
}

/// What shows a mechanism at work: in words, and as a test of the report.
type Shows = (&'static str, fn(&Look) -> bool);

const fn m(name: &'static str, sets: &'static [&'static str], shows: Shows) -> Mechanism {
    Mechanism { name, base: None, sets, abstract_sets: &[], code_sets: &[], shows }
}

/// A finished run as the mechanisms' tests read it.
struct Look<'a>(&'a irqsim_core::Report);

impl Look<'_> {
    /// Metric `name` (0 when the run does not report it).
    fn get(&self, name: &str) -> f64 {
        self.0.metric(name).unwrap_or(0.0)
    }
}

/// The NIC's interrupts went through a controller (the direct wire's mt path has none).
const THROUGH_A_CONTROLLER: Shows = ("interrupts_serviced > 0", |l| l.get("interrupts_serviced") > 0.0);
/// A device beside the NIC raised interrupts (sources 1.. are the others).
const ANOTHER_DEVICE: Shows = ("source{N}_raised > 0 for a source N >= 1", |l| {
    l.0.metrics.iter().any(|(k, v)| k.starts_with("source") && !k.starts_with("source0_") && k.ends_with("_raised") && *v > 0.0)
});
const MASKED: Shows = ("masking_cycles > 0", |l| l.get("masking_cycles") > 0.0);

/// The common scenario: the livelock receiver (AE32000, the mt-interrupts
/// driver and stack costs) under Poisson arrivals below its knee.
const BASE: &str = "livelock/receiver";
const BASE_SETS: &[&str] = &["run.duration_ms=5", "workload.process=\"poisson\"", "workload.rate_per_s=8000"];

const NAPI: &str = "irq_path.kind=\"napi\"";

const MECHANISMS: &[Mechanism] = &[
    m("msi", &["intc.kind=\"msi\""], THROUGH_A_CONTROLLER),
    m("msix", &["intc.kind=\"msix\""], THROUGH_A_CONTROLLER),
    m("ioapic", &["intc.kind=\"ioapic\""], THROUGH_A_CONTROLLER),
    m("xtpic", &["intc.kind=\"xtpic\""], THROUGH_A_CONTROLLER),
    m("linux", &["irq_path.kind=\"linux\""], ("bottom_half_share > 0", |l| l.get("bottom_half_share") > 0.0)),
    m("napi", &[NAPI], ("napi_polls + napi_busy_poll_frames > 0", |l| l.get("napi_polls") + l.get("napi_busy_poll_frames") > 0.0)),
    // The instances' threads poll, never the softirq (a busy poller may take every frame).
    m(
        "threaded",
        &[NAPI, "napi.threaded=true"],
        ("napi_softirq_runs = 0 and napi_thread_runs + napi_busy_poll_frames > 0", |l| {
            l.get("napi_softirq_runs") == 0.0 && l.get("napi_thread_runs") + l.get("napi_busy_poll_frames") > 0.0
        }),
    ),
    // The livelock receiver's CPU-bound application stops to busy-poll;
    // code's application is the program's.
    Mechanism {
        name: "busy-poll",
        base: None,
        sets: &[NAPI, "napi.busy_poll_usecs=50"],
        abstract_sets: &["app.background=false"],
        code_sets: &[],
        shows: ("napi_busy_poll_frames > 0", |l| l.get("napi_busy_poll_frames") > 0.0),
    },
    m("defer-irqs", &[NAPI, "napi.defer_hard_irqs=2", "napi.gro_flush_timeout_ns=20000"], ("napi_deferred > 0", |l| l.get("napi_deferred") > 0.0)),
    m(
        "coalesce",
        &["coalesce.rx_usecs=20", "coalesce.rx_frames=8"],
        ("coalesce_timer_interrupts + coalesce_frame_interrupts > 0", |l| l.get("coalesce_timer_interrupts") + l.get("coalesce_frame_interrupts") > 0.0),
    ),
    // DIM samples at napi_complete_done: it is the NAPI driver's.
    // DIM decides every 64 interrupts (per queue): a run long enough for one.
    m("dim", &[NAPI, "coalesce.adaptive_rx=true", "run.duration_ms=100"], ("dim_decisions > 0", |l| l.get("dim_decisions") > 0.0)),
    m("rss", &[NAPI, "rss.kind=\"toeplitz\"", "rss.queues=2", "cpu.threads=2"], ("rss_queue1_frames > 0", |l| l.get("rss_queue1_frames") > 0.0)),
    m(
        "rps",
        &[NAPI, "rss.kind=\"toeplitz\"", "rss.queues=2", "cpu.threads=2", "rss.rps_cpus=2"],
        ("rps_remote_frames > 0", |l| l.get("rps_remote_frames") > 0.0),
    ),
    m("mt-contexts", &["cpu.context_policy=\"multithreaded\""], ("more than one hardware context", |l| l.0.contexts.len() > 1)),
    m("smp", &["cpu.threads=2", "nic.irq_thread=1"], ("thread1_busy_share > 0", |l| l.get("thread1_busy_share") > 0.0)),
    m("sections", &["masking.driver_section_cycles=300", "masking.protocol_section_cycles=500"], MASKED),
    m("optimistic", &["masking.driver_section_cycles=300", "masking.protocol_section_cycles=500", "masking.scheme=\"optimistic\""], MASKED),
    m("timer", &["sources.others=[{process = \"periodic\", rate_per_s = 2000.0, isr_cycles = 3000}]"], ANOTHER_DEVICE),
    m(
        "exerciser",
        &["sources.others=[{kind = \"exerciser\", rate_per_s = 5000.0, dma_bytes = 4096}]"],
        ("exerciser_raised > 0", |l| l.get("exerciser_raised") > 0.0),
    ),
    // A second controller: a disk on the IO-APIC whatever the NIC's is.
    m("ioapic-disk", &["sources.others=[{rate_per_s = 2000.0, isr_cycles = 3000, intc = \"ioapic\"}]"], ANOTHER_DEVICE),
    // A second NIC beside the first, with its own arrivals and NAPI
    // instance; beside kernel code, rx_min's driver for every NIC, run
    // 2 ms (its first frame lands before the driver has given it a ring).
    Mechanism {
        name: "nics",
        base: None,
        sets: &["nics.others=[{rate_per_s = 1000.0, packet_bytes = 500, link_mbps = 100.0}]"],
        abstract_sets: &[],
        code_sets: &["code.program=\"../../programs/system/rx_nics.elf\"", "run.duration_ms=2"],
        shows: ("nic1_rx_taken > 0", |l| l.get("nic1_rx_taken") > 0.0),
    },
    // The NIC's frames forwarded out of itself (a one-armed router).
    m("forward", &["nic.forward_to=0"], ("rx_forwarded > 0", |l| l.get("rx_forwarded") > 0.0)),
    // The programmable NIC in place of the e1000-like one, below what its host takes.
    Mechanism {
        name: "firmware",
        base: Some("compose/rx-firmware"),
        sets: &["run.duration_ms=1", "workload.rate_per_s=20000", "stack.enabled=true"],
        abstract_sets: &[],
        code_sets: &[],
        shows: ("nic_firmware_instructions > 0", |l| l.get("nic_firmware_instructions") > 0.0),
    },
    Mechanism {
        name: "code",
        base: Some("code/rx-min"),
        sets: &["run.duration_ms=2"],
        abstract_sets: &[],
        code_sets: &[],
        shows: ("code_interrupt_instructions > 0", |l| l.get("code_interrupt_instructions") > 0.0),
    },
    // The programmable NIC with kernel code as its host driver (programs/system/fw_rx.c).
    Mechanism {
        name: "firmware-code",
        base: Some("code/rx-firmware"),
        sets: &["run.duration_ms=1", "workload.rate_per_s=50000", "nic_firmware.cores=2"],
        abstract_sets: &[],
        code_sets: &[],
        shows: ("nic_firmware_instructions > 0 and code_interrupt_instructions > 0", |l| {
            l.get("nic_firmware_instructions") > 0.0 && l.get("code_interrupt_instructions") > 0.0
        }),
    },
    // Code's own sections (spin_lock_irqsave) under optimistic protection.
    Mechanism {
        name: "code-optimistic",
        base: Some("code/rx-min"),
        sets: &["run.duration_ms=2", "masking.code_sections=true", "masking.scheme=\"optimistic\""],
        abstract_sets: &[],
        code_sets: &[],
        shows: MASKED,
    },
];

enum Outcome {
    Runs,
    Refused(String),
    /// Both mechanisms set one key, to different values.
    Clash,
}

/// A mechanism's keys where the programmable NIC's scenarios need others:
/// RPS spreads its firmware's one return ring over CPUs, RSS needs the
/// firmware that steers over several (nic_rss.elf, and beside kernel code
/// fw_rx_rss.elf), coalescing and DIM the firmware that moderates its
/// interrupts (nic_coal.elf, with RSS nic_rss_coal.elf; DIM runs 10 ms
/// there), and beside it kernel code's driver for other NICs and for RPS
/// is fw_rx_nics.elf (fw_rx.c's).
fn on_firmware(m: &Mechanism, base: &str, set: &str) -> String {
    match (m.name, base) {
        ("rps", "compose/rx-firmware" | "code/rx-firmware") => set.replace("rss.queues=2", "rss.queues=1"),
        // Its scenarios' loads give DIM 64 interrupts in a few ms; its cores are slow to simulate.
        ("dim", "compose/rx-firmware" | "code/rx-firmware") => set.replace("run.duration_ms=100", "run.duration_ms=10"),
        ("nics", "code/rx-firmware") => set.replace("/rx_nics.elf", "/fw_rx_nics.elf"),
        _ => set.to_string(),
    }
}

fn key(set: &str) -> &str {
    set.split('=').next().unwrap_or(set)
}

/// Sets every mechanism's keys at once and runs the machine they make;
/// with `shows`, each mechanism's own metric must show it at work.
fn try_all(ms: &[&Mechanism], shows: bool) -> Outcome {
    let what = ms.iter().map(|m| m.name).collect::<Vec<_>>().join(" + ");
    let bases: Vec<&str> = ms.iter().filter_map(|m| m.base).collect();
    let on_code = bases.iter().any(|b| b.starts_with("code/"));
    let base = bases.first().copied().unwrap_or(BASE);
    let rps_code = ms.iter().any(|m| m.name == "rps") && base == "code/rx-firmware";
    let rss_firmware = ms.iter().any(|m| m.name == "rss") && matches!(base, "compose/rx-firmware" | "code/rx-firmware");
    // Coalescing on the programmable NIC, fixed or DIM's, is its firmware's
    // (nic_coal.elf; with RSS nic_rss_coal.elf).
    let moderating = ms.iter().any(|m| matches!(m.name, "coalesce" | "dim")) && matches!(base, "compose/rx-firmware" | "code/rx-firmware");
    let steering = [
        format!("nic_firmware.program=\"../../programs/firmware/{}.elf\"", if moderating { "nic_rss_coal" } else { "nic_rss" }),
        "code.program=\"../../programs/system/fw_rx_rss.elf\"".to_string(),
    ];
    let steering = steering.into_iter().take(if rss_firmware { 1 + on_code as usize } else { 0 });
    let moderating = (moderating && !rss_firmware).then(|| "nic_firmware.program=\"../../programs/firmware/nic_coal.elf\"".to_string());
    let mut sets: Vec<String> = Vec::new();
    let all_sets = ms.iter().flat_map(|m| m.sets.iter().chain(if on_code { m.code_sets } else { m.abstract_sets }).map(move |s| on_firmware(m, base, s)));
    for s in all_sets.chain(rps_code.then(|| "code.program=\"../../programs/system/fw_rx_nics.elf\"".to_string())).chain(steering).chain(moderating) {
        let s = s.as_str();
        match sets.iter_mut().find(|x| key(x) == key(s)) {
            // The run is as long as the mechanism that needs the longest.
            Some(x) if key(s) == "run.duration_ms" => {
                let ms = |v: &str| v.split_once('=').and_then(|(_, n)| n.parse::<f64>().ok()).unwrap_or(0.0);
                if ms(s) > ms(x) {
                    *x = s.to_string();
                }
            }
            // Two lists of devices beside the NIC: both lists.
            Some(x) if key(s) == "sources.others" && x != s => {
                let items = |v: &str| v.split_once('[').and_then(|(_, r)| r.rsplit_once(']')).map(|(i, _)| i.to_string()).unwrap_or_default();
                *x = format!("sources.others=[{}, {}]", items(x), items(s));
            }
            Some(x) if x != s => return Outcome::Clash,
            Some(_) => {}
            None => sets.push(s.to_string()),
        }
    }
    if bases.windows(2).any(|w| w[0] != w[1]) {
        return Outcome::Clash;
    }
    let all: Vec<&str> =
        if base == BASE { BASE_SETS.iter().copied().chain(sets.iter().map(String::as_str)).collect() } else { sets.iter().map(String::as_str).collect() };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios").join(format!("{base}.toml"));
    let overrides: Vec<_> = all.iter().map(|s| parse_override(s).unwrap_or_else(|e| panic!("{s}: {e}"))).collect();
    let refused = |e: irqsim_core::Error| {
        let line = e.to_string();
        assert!(!line.contains('\n'), "{what}: a refusal is one line: {line}");
        // Without the file's path: the key and the reason.
        let why = line.rsplit_once(".toml").map_or(line.as_str(), |(_, r)| r.trim_start_matches(|c: char| c == ':' || c.is_ascii_digit()).trim());
        Outcome::Refused(why.trim_start_matches("--set: ").to_string())
    };
    let scenario = match Scenario::from_file(&path, &overrides) {
        Ok(s) => s,
        Err(e) => return refused(e),
    };
    let run = || simulate(&scenario, path.parent().unwrap(), Record::default());
    let (first, second) = match (run(), run()) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => return refused(e),
    };
    first.check_invariants().unwrap_or_else(|e| panic!("{what}: {e}"));
    // Bit for bit (a metric with no samples is NaN, which equals nothing).
    let bits = |r: &irqsim_core::Report| r.metrics.iter().map(|(k, v)| (k.clone(), v.to_bits())).collect::<Vec<_>>();
    assert_eq!(bits(&first), bits(&second), "{what}: not deterministic");
    assert_eq!(first.bins, second.bins, "{what}: not deterministic");
    if shows {
        for m in ms {
            let (evidence, holds) = m.shows;
            assert!(holds(&Look(&first)), "{what}: {} does not show in the report ({evidence})", m.name);
        }
    }
    Outcome::Runs
}

/// The table of every pair, and the refusals with their reasons.
fn table() -> String {
    let n = MECHANISMS.len();
    let mut grid = vec![vec![' '; n]; n];
    let (mut runs, mut refused, mut clash) = (0, Vec::new(), 0);
    for i in 0..n {
        for j in i..n {
            let (a, b) = (&MECHANISMS[i], &MECHANISMS[j]);
            let mark = match try_all(&[a, b], true) {
                Outcome::Runs => {
                    runs += 1;
                    'y'
                }
                Outcome::Refused(why) => {
                    refused.push(format!("- {} + {}: {why}", a.name, b.name));
                    'n'
                }
                Outcome::Clash => {
                    clash += 1;
                    '-'
                }
            };
            (grid[i][j], grid[j][i]) = (mark, mark);
        }
    }
    let pairs = n * (n + 1) / 2;
    let mut out =
        format!("{pairs} pairs of {n} mechanisms (each with itself included): {runs} run, {} are refused, {clash} set one key twice.\n\n", refused.len());
    out += &format!("| | {} |\n|---|{}\n", MECHANISMS.iter().map(|m| m.name).collect::<Vec<_>>().join(" | "), "---|".repeat(n));
    for (i, row) in grid.iter().enumerate() {
        let cells: Vec<&str> = row
            .iter()
            .map(|c| match c {
                'y' => "✓",
                'n' => "✗",
                _ => "·",
            })
            .collect();
        out += &format!("| {} | {} |\n", MECHANISMS[i].name, cells.join(" | "));
    }
    out += "\nRefused:\n\n";
    out += &refused.join("\n");
    out += "\n";
    out
}

const BEGIN: &str = "<!-- combinations: begin -->\n";
const END: &str = "<!-- combinations: end -->";

/// Every pair runs, is refused in one line, or clashes; the doc's table is
/// what this test finds.
#[test]
fn every_pair_of_mechanisms() {
    let got = table();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/models/composition.md");
    let doc = std::fs::read_to_string(path).expect("docs/models/composition.md");
    let (head, rest) = doc.split_once(BEGIN).expect("the doc has the combinations block");
    let (old, tail) = rest.split_once(END).expect("the block ends");
    if std::env::var_os("IRQSIM_UPDATE_DOCS").is_some() {
        std::fs::write(path, format!("{head}{BEGIN}{got}{END}{tail}")).expect("write the doc");
        return;
    }
    assert_eq!(old, got, "docs/models/composition.md is stale: IRQSIM_UPDATE_DOCS=1 cargo test -p irqsim-core --test combinations");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

    /// Random machines of up to five mechanisms: each runs (conserving
    /// frames, bins summing to the elapsed cycles, the same numbers twice),
    /// or is refused in one line, or sets one key twice. Each mechanism's
    /// own metric is checked on the pairs only: among several, one may
    /// leave another nothing to do (a busy poller that takes every frame
    /// leaves no poll to complete, so nothing to defer or for DIM to sample).
    #[test]
    fn random_machines_run_or_are_refused(picks in proptest::collection::btree_set(0..MECHANISMS.len(), 2..=5)) {
        let ms: Vec<&Mechanism> = picks.iter().map(|&i| &MECHANISMS[i]).collect();
        try_all(&ms, false);
    }
}
