//! Critical sections wherever the kernel masks interrupts around a lock:
//! behind every controller, on the mt, Linux and NAPI paths (threaded,
//! busy-polled, with RSS, RPS and DIM), beside other devices, with a mask
//! per CPU. Each test asserts the mechanism's effect, not only that it runs.

use irqsim_core::{Record, Report, Scenario, parse_override, simulate};
use std::path::Path;

fn run(name: &str, sets: &[&str]) -> Report {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios").join(format!("{name}.toml"));
    let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    let s = Scenario::from_file(&path, &o).unwrap_or_else(|e| panic!("{name} {sets:?}: {e}"));
    let r = simulate(&s, path.parent().unwrap(), Record::default()).unwrap_or_else(|e| panic!("{name} {sets:?}: {e}"));
    r.check_invariants().unwrap_or_else(|e| panic!("{name} {sets:?}: {e}"));
    r
}

fn m(r: &Report, key: &str) -> f64 {
    r.metric(key).unwrap_or_else(|| panic!("no metric {key}"))
}

/// The Luna88k's conventional raise + lower pair (Table 1), in cycles.
const PAIR: f64 = 96.0;

/// `compose/rx-sections` (a 300-cycle section in the driver's receive work
/// and a 500-cycle one in the socket layer's, per frame) behind each
/// controller and on each path. Conventional protection pays a full pair per
/// section; optimistic pays less. On the mt and Linux paths the NIC's
/// interrupt meets open sections: the hardware mask holds it (conventional)
/// or the prologue defers it (optimistic). On the NAPI path the sections run
/// in the poll, while the NIC's interrupt is off: it never meets one.
#[test]
fn sections_behind_every_controller_on_every_path() {
    for intc in ["direct", "msi", "ioapic", "xtpic"] {
        for path in ["mt", "linux", "napi"] {
            let at = |scheme: &str| run("compose/rx-sections", &[&format!("intc.kind=\"{intc}\""), &format!("irq_path.kind=\"{path}\""), scheme]);
            let (conv, opt) = (at("masking.scheme=\"conventional\""), at("masking.scheme=\"optimistic\""));
            let what = format!("{intc}/{path}");
            assert_eq!(m(&conv, "masking_cycles_per_frame"), 2.0 * PAIR, "{what}");
            assert!(m(&opt, "masking_cycles_per_frame") < 2.0 * PAIR - 80.0, "{what}: {}", m(&opt, "masking_cycles_per_frame"));
            assert_eq!(m(&conv, "rx_delivered"), m(&opt, "rx_delivered"), "{what}");
            // The bare wire with the mt path keeps the study's NIC metrics.
            let (held, deferred) =
                if intc == "direct" && path == "mt" { ("nic_interrupts_held", "nic_interrupts_deferred") } else { ("interrupts_held", "interrupts_deferred") };
            assert_eq!(m(&conv, deferred), 0.0, "{what}");
            assert_eq!(m(&opt, held), 0.0, "{what}");
            if path == "napi" {
                assert_eq!(m(&conv, held), 0.0, "{what}");
                assert_eq!(m(&opt, deferred), 0.0, "{what}");
            } else {
                assert!(m(&conv, held) > 0.0, "{what}");
                assert!(m(&opt, deferred) > 0.0, "{what}");
            }
        }
    }
}

/// A mask is its CPU's: with the NIC's interrupt on thread 1, the system
/// calls' sections on thread 0 never hold it; on thread 0 they do. Through
/// a controller, they hold a timer wired to thread 0 instead.
#[test]
fn a_mask_is_its_cpus() {
    let base = ["masking.syscall_section_cycles=400", "cpu.threads=2"];
    let on = |sets: &[&str]| run("mt-interrupts/full-stack-single", &[&base[..], sets].concat());
    let same = on(&["nic.irq_thread=0"]);
    let apart = on(&["nic.irq_thread=1"]);
    assert!(m(&same, "nic_interrupts_held") > 0.0);
    assert_eq!(m(&apart, "nic_interrupts_held"), 0.0);
    // Every call's section cost a pair either way.
    assert_eq!(m(&same, "syscalls"), m(&apart, "syscalls"));
    let timer = "sources.others=[{process = \"periodic\", rate_per_s = 20000.0, isr_cycles = 500, cpu = 0}]";
    let wired = on(&["nic.irq_thread=1", "intc.kind=\"ioapic\"", timer]);
    assert!(m(&wired, "interrupts_held") > 0.0, "the timer on thread 0 meets thread 0's sections");
    let quiet = on(&["nic.irq_thread=1", "intc.kind=\"ioapic\"", &timer.replace("cpu = 0", "cpu = 1")]);
    assert_eq!(m(&quiet, "interrupts_held"), 0.0, "no section runs on thread 1");
}

/// The NAPI path's variants run the sections inside their polls: threaded
/// NAPI, DIM, RSS with a section per frame on each queue, RPS with the
/// socket layer's section on the backlog CPUs, and the busy-polling
/// receiver. Conventional protection pays one pair per section per frame.
#[test]
fn sections_in_every_napi_variant() {
    let napi = ["irq_path.kind=\"napi\"", "masking.driver_section_cycles=300", "run.duration_ms=50"];
    let per_frame = |r: &Report| m(r, "masking_cycles_per_frame");
    let threaded = run("livelock/receiver", &[&napi[..], &["napi.threaded=true"]].concat());
    assert_eq!(per_frame(&threaded), PAIR);
    let dim = run("livelock/receiver", &[&napi[..], &["coalesce.adaptive_rx=true"]].concat());
    assert_eq!(per_frame(&dim), PAIR);
    assert!(m(&dim, "dim_decisions") > 0.0);
    let rss = run("livelock/rss", &napi[1..]);
    assert_eq!(per_frame(&rss), PAIR);
    assert_eq!(m(&rss, "rss_queues"), 16.0);
    let rps = ["stack.enabled=true", "rss.rps_cpus=2", "masking.protocol_section_cycles=500", "workload.rate_per_s=20000"];
    let rps = run("livelock/rss", &[&napi[1..], &rps[..]].concat());
    assert_eq!(m(&rps, "rx_dropped_nic") + m(&rps, "rx_dropped_backlog"), 0.0);
    assert_eq!(per_frame(&rps), 2.0 * PAIR, "a driver section on the ring's CPU, a socket one on the backlog's");
    let busy =
        ["app.background=false", "workload.process=\"poisson\"", "workload.rate_per_s=50000", "napi.busy_poll_usecs=50", "cpu.threads=2", "app.thread=1"];
    let busy = run("livelock/e1000-forward", &[&napi[1..], &busy[..]].concat());
    assert!(m(&busy, "napi_busy_poll_frames") > 0.8 * m(&busy, "rx_delivered"));
    assert_eq!(per_frame(&busy), PAIR);
}

/// The same scenario with sections behind a controller gives the same
/// numbers twice.
#[test]
fn sections_behind_a_controller_are_deterministic() {
    let sets = ["intc.kind=\"msi\"", "irq_path.kind=\"linux\"", "masking.scheme=\"optimistic\"", "workload.rate_per_s=20000", "cpu.threads=2"];
    let (a, b) = (run("compose/rx-sections", &sets), run("compose/rx-sections", &sets));
    assert_eq!(a.metrics, b.metrics);
    assert_eq!(a.bins, b.bins);
}
