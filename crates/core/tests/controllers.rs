//! Several interrupt controllers on one machine, as on a PC: the NIC on
//! MSI-X (or the bare wire) beside legacy devices on the IO-APIC or the
//! 8259s, each source naming its own (`sources.others[i].intc`). Each test
//! asserts the mechanism's effect, not only that it runs.

mod common;

use common::{load, m, run};
use irqsim_core::Report;

const BASE: &str = "compose/rx-msix-legacy";

/// The bundled machine: every device's interrupts are serviced, counted per
/// device, and the per-device counts add up to the totals.
#[test]
fn the_nic_on_msix_and_two_devices_on_the_ioapic_all_get_serviced() {
    let r = run(BASE, &[]);
    assert_eq!(m(&r, "source0_serviced"), m(&r, "interrupts"), "source 0 is the NIC");
    assert!((99.0..=100.0).contains(&m(&r, "source1_serviced")), "the 1 kHz tick over 100 ms: {}", m(&r, "source1_serviced"));
    assert!(m(&r, "source2_serviced") > 150.0, "the disk at 2,000/s");
    for what in ["raised", "serviced", "lost"] {
        let sum: f64 = (0..3).map(|i| m(&r, &format!("source{i}_{what}"))).sum();
        assert_eq!(sum, m(&r, &format!("interrupts_{what}")), "{what}");
    }
    assert_eq!(m(&r, "rx_delivered") + m(&r, "rx_in_flight"), m(&r, "rx_offered"));
}

/// A device on the IO-APIC pays what a legacy line costs (its handler's
/// status read and clear, the level pin's EOI broadcast), a device on the
/// MSI-X does not: beside the bare wire's NIC, the same timer costs the
/// CPU more on the IO-APIC, by at least the status read's round trip per
/// interrupt.
#[test]
fn a_device_pays_its_own_controllers_costs() {
    let timer = |intc: &str| format!("sources.others=[{{process = \"periodic\", rate_per_s = 2000.0, isr_cycles = 2000, intc = \"{intc}\"}}]");
    let at = |intc: &str| run("livelock/receiver", &["run.duration_ms=20", "workload.rate_per_s=5000", &timer(intc)]);
    let (msix, ioapic) = (at("msix"), at("ioapic"));
    let busy = |r: &Report| r.bins.iter().map(|b| b.get(irqsim_core::cpu::Bin::Interrupt)).sum::<u64>() as f64;
    let ticks = m(&msix, "source1_serviced");
    assert_eq!(ticks, m(&ioapic, "source1_serviced"));
    // 900 ns of status read at 200 MHz, per tick.
    let read = 180.0;
    assert!(busy(&ioapic) - busy(&msix) >= read * ticks, "IO-APIC {} vs MSI-X {} over {ticks} ticks", busy(&ioapic), busy(&msix));
}

/// The bare wire's NIC (the mt-interrupts study's ideal, no bus) beside a
/// disk on the IO-APIC: the disk's bus costs apply to the disk alone, and
/// the NIC's frames cost what they cost without it, less the CPU the disk takes.
#[test]
fn the_bare_wire_beside_a_controller() {
    let base = ["run.duration_ms=20", "workload.rate_per_s=5000"];
    let alone = run("livelock/receiver", &base);
    let disk = "sources.others=[{process = \"poisson\", rate_per_s = 2000.0, isr_cycles = 3000, intc = \"ioapic\"}]";
    let both = run("livelock/receiver", &[base[0], base[1], disk]);
    assert_eq!(m(&both, "source0_serviced"), m(&alone, "interrupts"), "the NIC's interrupts are unchanged at this load");
    assert!(m(&both, "source1_serviced") > 20.0);
}

/// The CPU takes the most urgent request across its controllers: a disk on
/// the IO-APIC whose vector class is above the NIC's is served first, and
/// one below it waits behind the NIC's bursts, so under load its requests
/// merge (lost as events) more often.
#[test]
fn priority_classes_compare_across_controllers() {
    let disk = |p: u8| format!("sources.others=[{{process = \"poisson\", rate_per_s = 20000.0, isr_cycles = 500, intc = \"ioapic\", priority = {p}}}]");
    let sets = |p: u8| vec![disk(p), "workload.rate_per_s=60000".into(), "irq_path.kind=\"linux\"".into(), "run.duration_ms=50".into()];
    let (hi, lo) = (sets(9), sets(1));
    let hi = run(BASE, &hi.iter().map(String::as_str).collect::<Vec<_>>());
    let lo = run(BASE, &lo.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(m(&lo, "source1_lost") > m(&hi, "source1_lost"), "low {} vs high {}", m(&lo, "source1_lost"), m(&hi, "source1_lost"));
}

/// The exerciser workload (the MSI study's device) on MSI with a disk on
/// the IO-APIC and a timer on the 8259s: three controllers at once.
#[test]
fn the_exerciser_beside_two_legacy_controllers() {
    let others = "workload.others=[{rate_per_s = 1000.0, intc = \"ioapic\"}, {process = \"periodic\", rate_per_s = 500.0, intc = \"xtpic\"}]";
    let r = run("msi-latency/workstation-idle", &["intc.kind=\"msi\"", others, "run.duration_ms=200"]);
    assert!(m(&r, "exerciser_serviced") > 0.0);
    assert!(m(&r, "source1_serviced") > 100.0);
    assert!((99.0..=100.0).contains(&m(&r, "source2_serviced")), "the 8259's 500/s over 200 ms");
}

/// What cannot be: each refused with one line naming the key and why.
#[test]
fn refusals_name_the_key() {
    let cases: &[(&[&str], &str, &str)] = &[
        (&["cpu.threads=2", "sources.others=[{rate_per_s = 100.0, intc = \"xtpic\", cpu = 1}]"], "sources.others[0].cpu", "CPU 0 only"),
        (&["sources.others=[{rate_per_s = 100.0, intc = \"xtpic\", priority = 5}]"], "sources.others[0].priority", "xtpic"),
        (&["sources.others=[{rate_per_s = 100.0, intc = \"ioapic\", line = 24}]"], "sources.others[0].line", "pin 24"),
        (&["sources.others=[{rate_per_s = 100.0, intc = \"msi\", line = 0}]"], "sources.others[0].line", "never shared"),
    ];
    for (sets, key, why) in cases {
        let sets: Vec<&str> = ["intc.kind=\"msix\""].iter().chain(sets.iter()).copied().collect();
        let e = load("compose/rx-msi-single", &sets).expect_err(&format!("{sets:?} must be refused"));
        assert!(e.contains(key) && e.contains(why) && !e.contains('\n'), "{sets:?}: {e}");
    }
    // A key of a controller no device uses.
    let e = load("compose/rx-msi-single", &["intc.trigger=\"edge\""]).unwrap_err();
    assert!(e.contains("intc.trigger") && e.contains("ioapic"), "{e}");
    // ... accepted once a device uses one.
    load("compose/rx-msi-single", &["intc.trigger=\"edge\"", "sources.others=[{rate_per_s = 100.0, intc = \"ioapic\"}]"]).unwrap();
}
