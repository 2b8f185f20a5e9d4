//! Bad delivery configurations are refused with an error naming the key.

use irqsim_core::{Scenario, parse_override};

const BASE: &str = "[cpu]\nclock_mhz = 2400.0\n\n[intc]\nkind = \"msi\"\n\n[workload]\nkind = \"exerciser\"\nrate_per_s = 1000.0\n";

fn err(sets: &[&str]) -> String {
    let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    match Scenario::from_toml(BASE, "s.toml", &o) {
        Ok(_) => panic!("{sets:?} was accepted"),
        Err(e) => e.to_string(),
    }
}

fn ok(sets: &[&str]) {
    let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    if let Err(e) = Scenario::from_toml(BASE, "s.toml", &o) {
        panic!("{sets:?} refused: {e}");
    }
}

#[test]
fn smp_with_xtpic_is_refused() {
    let e = err(&["intc.kind=xtpic", "cpu.threads=2"]);
    assert!(e.contains("`cpu.threads`") && e.contains("uniprocessor"), "{e}");
    ok(&["intc.kind=ioapic", "cpu.threads=2"]);
}

#[test]
fn msi_vector_limits() {
    let e = err(&["intc.vectors=64"]);
    assert!(e.contains("`intc.vectors`") && e.contains("32"), "{e}");
    let e = err(&["intc.vectors=3"]);
    assert!(e.contains("`intc.vectors`") && e.contains("1, 2, 4, 8, 16 or 32"), "{e}");
    ok(&["intc.vectors=32"]);
    ok(&["intc.kind=msix", "intc.vectors=2048"]);
    let e = err(&["intc.kind=msix", "intc.vectors=2049"]);
    assert!(e.contains("`intc.vectors`") && e.contains("2048"), "{e}");
    let e = err(&["intc.kind=ioapic", "intc.vectors=2"]);
    assert!(e.contains("`intc.vectors`"), "{e}");
}

#[test]
fn ioapic_pin_over_23_is_refused() {
    let e = err(&["intc.kind=ioapic", "workload.line=24"]);
    assert!(e.contains("`workload.line`") && e.contains("0..=23"), "{e}");
    ok(&["intc.kind=ioapic", "workload.line=23"]);
}

#[test]
fn xtpic_lines() {
    let e = err(&["intc.kind=xtpic", "workload.line=2"]);
    assert!(e.contains("`workload.line`") && e.contains("cascade"), "{e}");
    let e = err(&["intc.kind=xtpic", "workload.line=16"]);
    assert!(e.contains("`workload.line`"), "{e}");
    // Fourteen other devices fit beside the exerciser; a fifteenth does not.
    let others = |n: usize| format!("workload.others=[{}]", vec!["{rate_per_s = 10.0}"; n].join(", "));
    ok(&["intc.kind=xtpic", &others(14)]);
    let e = err(&["intc.kind=xtpic", &others(15)]);
    assert!(e.contains("`workload.others[14].line`") && e.contains("share"), "{e}");
    // Sharing a line is how more devices fit.
    ok(&["intc.kind=xtpic", "workload.line=11", &format!("workload.others=[{}]", vec!["{rate_per_s = 10.0, line = 11}"; 20].join(", "))]);
}

#[test]
fn msi_is_never_shared() {
    let e = err(&["workload.line=5", "workload.others=[{rate_per_s = 10.0, line = 5}]"]);
    assert!(e.contains("`workload.others[0].line`") && e.contains("never shared"), "{e}");
}

#[test]
fn bad_numbers_name_their_key() {
    for (set, key) in [
        ("workload.rate_per_s=0", "`workload.rate_per_s`"),
        ("bus.mmio_read_ns=-1", "`bus.mmio_read_ns`"),
        ("bus.port_io_ns=nan", "`bus.port_io_ns`"),
        ("workload.cpu=1", "`workload.cpu`"),
        ("workload.priority=14", "`workload.priority`"),
        ("irq_path.entry_cycles=-5", "`irq_path.entry_cycles`"),
        ("intc.kind=8259", "`intc.kind`"),
        ("intc.trigger=both", "`intc.trigger`"),
        ("workload.others=[{rate_per_s = 1.0, cpu = 3}]", "`workload.others[0].cpu`"),
        ("workload.rate_perr_s=5", "`workload.rate_perr_s`"),
        ("bus.posted_write_ns=1e30", "`bus.posted_write_ns`"),
        ("irq_path.tasklet_cycles=18446744073709551615", "`irq_path.tasklet_cycles`"),
    ] {
        let e = err(&[set]);
        assert!(e.contains(key), "{set}: {e}");
    }
}
