//! The delivery model's behaviour: ordering of top and bottom halves, shared
//! lines, MSI without status reads, DMA ordering, SMP, conservation and
//! determinism, on the shipped msi-latency scenarios.

use irqsim_core::{Record, Report, Scenario, parse_override, simulate};
use std::path::{Path, PathBuf};

fn scenario_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/msi-latency").join(name)
}

fn run(name: &str, sets: &[&str], timeline: bool) -> Report {
    let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    let s = Scenario::from_file(&scenario_path(name), &o).unwrap();
    simulate(&s, Path::new("."), Record { timeline }).unwrap()
}

fn m(r: &Report, k: &str) -> f64 {
    r.metric(k).unwrap_or_else(|| panic!("no metric {k}"))
}

const KINDS: [&str; 3] = ["intc.kind=xtpic", "intc.kind=ioapic", "intc.kind=msi"];
const SHORT: &str = "run.duration_ms=20";

#[test]
fn tasklet_never_runs_inside_an_interrupt() {
    for kind in KINDS {
        let r = run("workstation-loaded.toml", &[kind, SHORT], true);
        let mut in_irq = false;
        let mut tasklets = 0;
        for s in r.timeline.spans() {
            match s.label {
                "overhead" | "irq entry" | "ISR status read" | "ISR" => in_irq = true,
                "irq exit" => in_irq = false,
                "softirq entry" | "tasklet" | "user task" => {
                    assert!(!in_irq, "{kind}: `{}` at cycle {} runs inside an interrupt", s.label, s.start);
                    tasklets += u32::from(s.label == "softirq entry");
                }
                other => panic!("unexpected span {other}"),
            }
        }
        assert!(tasklets > 100, "{kind}: only {tasklets} tasklet starts");
        assert!(m(&r, "tasklet_latency_min_us") > m(&r, "isr_latency_min_us"), "{kind}");
    }
}

#[test]
fn every_handler_on_a_shared_line_is_polled_and_sharing_costs() {
    for kind in ["intc.kind=xtpic", "intc.kind=ioapic"] {
        let mut p50 = Vec::new();
        for sharers in 0..3 {
            let mut sets = vec![kind, SHORT];
            let extra: Vec<String> = (0..sharers).map(|i| format!("workload.others=[{}]", vec!["{rate_per_s = 10.0, line = 11}"; i + 1].join(", "))).collect();
            sets.push("workload.line=11");
            if let Some(e) = extra.last() {
                sets.push(e);
            }
            let r = run("workstation-idle.toml", &sets, true);
            let entries = r.timeline.spans().iter().filter(|s| s.label == "irq entry").count();
            let reads = r.timeline.transfers().iter().filter(|t| t.label == "status read").count();
            assert!(entries > 10);
            assert_eq!(reads, entries * (sharers + 1), "{kind}, {sharers} sharers: every handler reads its status");
            r.check_invariants().unwrap();
            p50.push(m(&r, "isr_latency_p50_us"));
        }
        // The exerciser's handler is last: each sharer's read comes first.
        assert!(p50[0] < p50[1] && p50[1] < p50[2], "{kind}: {p50:?}");
        assert!(p50[2] - p50[1] > 0.8, "{kind}: a sharer adds about one read round trip: {p50:?}");
    }
}

#[test]
fn msi_never_reads_status_and_is_never_spurious() {
    let r = run("workstation-loaded.toml", &["intc.kind=msi", SHORT], true);
    let t = r.timeline.transfers();
    assert!(t.iter().any(|t| t.label == "MSI write"));
    assert!(!t.iter().any(|t| matches!(t.label, "status read" | "status clear" | "Assert_INTx")));
    assert_eq!(m(&r, "spurious_interrupts"), 0.0);
}

#[test]
fn legacy_interrupt_overtakes_dma_data_and_the_status_read_flushes_it() {
    for kind in KINDS {
        let r = run("workstation-idle.toml", &[kind, SHORT, "workload.dma_bytes=4096"], false);
        r.check_invariants().unwrap();
        assert_eq!(m(&r, "stale_data_reads"), 0.0, "{kind}");
        let overtook = m(&r, "interrupt_overtook_data");
        if kind.ends_with("msi") {
            assert_eq!(overtook, 0.0, "an MSI travels behind its data");
        } else {
            assert_eq!(overtook, m(&r, "exerciser_serviced"), "{kind}: 16 µs of data, every interrupt arrives first");
            // The read completion waits for the data: ISR entry after it lands.
            assert!(m(&r, "isr_latency_min_us") > 4096.0 / 250.0, "{kind}");
        }
    }
}

#[test]
fn conservation_holds_and_merged_interrupts_are_reported_lost() {
    for name in ["workstation-loaded.toml", "soc-loaded.toml"] {
        for kind in KINDS {
            let r = run(name, &[kind, SHORT, "workload.rate_per_s=60000"], false);
            r.check_invariants().unwrap_or_else(|e| panic!("{name} {kind}: {e}"));
            let raised = m(&r, "interrupts_raised");
            let accounted = m(&r, "interrupts_serviced") + m(&r, "interrupts_lost") + m(&r, "interrupts_in_flight");
            assert_eq!(raised, accounted);
            if !kind.ends_with("msi") {
                // A request while the device's status bit is still set merges with it.
                assert!(m(&r, "exerciser_lost") > 0.0, "{name} {kind}: at 60k/s some requests merge");
            }
        }
    }
}

#[test]
fn smp_spreads_msi_vectors_over_cpus() {
    let r = run("workstation-loaded.toml", &["intc.kind=msix", "intc.vectors=4", "cpu.threads=2", SHORT], false);
    r.check_invariants().unwrap();
    for (cpu, b) in r.bins.iter().enumerate() {
        assert!(b.get(irqsim_core::cpu::Bin::Interrupt) > 0, "CPU {cpu} took no interrupt");
    }
    let r = run("workstation-loaded.toml", &["intc.kind=ioapic", "cpu.threads=2", "workload.cpu=1", SHORT], false);
    r.check_invariants().unwrap();
    assert!(r.bins[1].get(irqsim_core::cpu::Bin::BottomHalf) > 0, "the tasklet runs where its ISR ran");
}

#[test]
fn same_seed_same_result_other_seed_other_result() {
    let a = run("workstation-loaded.toml", &["intc.kind=ioapic", SHORT], false).to_json();
    let b = run("workstation-loaded.toml", &["intc.kind=ioapic", SHORT], false).to_json();
    assert_eq!(a, b);
    let c = run("workstation-loaded.toml", &["intc.kind=ioapic", SHORT, "run.seed=2"], false).to_json();
    assert_ne!(a, c);
}

#[test]
fn mechanisms_rank_as_the_paper_found() {
    for name in ["workstation-idle.toml", "soc-idle.toml"] {
        let p50: Vec<f64> = KINDS.iter().map(|k| m(&run(name, &[k, SHORT], false), "isr_latency_p50_us")).collect();
        assert!(p50[0] > p50[1] && p50[1] > p50[2], "{name}: XT-PIC > IO-APIC > MSI, got {p50:?}");
    }
}
