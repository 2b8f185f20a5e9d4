//! Laws of the delivery path that once failed on ordinary runs.

use irqsim_core::run_str;

/// An MSI handler and its tasklet read the DMA data of the interrupt they
/// serve, which the MSI write followed; a later interrupt's DMA, still on
/// its way, is no stale read (it was counted as one: 10 in 469 interrupts).
#[test]
fn msi_handlers_never_read_stale_dma_data() {
    let text = "[run]\nduration_ms = 50.0\n[cpu]\nclock_mhz = 2400.0\n[intc]\nkind = \"msi\"\n\
                [workload]\nkind = \"exerciser\"\nprocess = \"poisson\"\nrate_per_s = 10000.0\ndma_bytes = 64\n";
    for seed in 1..=5 {
        let r = run_str(&format!("{text}[stats]\nmax_packet_records = 10\n"), "s.toml", &[irqsim_core::parse_override(&format!("run.seed={seed}")).unwrap()])
            .unwrap();
        assert!(r.metric("interrupts_serviced").unwrap() > 300.0);
        assert_eq!(r.metric("stale_data_reads"), Some(0.0), "seed {seed}");
        r.check_invariants().unwrap();
    }
}

/// The reported minimum and maximum latency are exact, not histogram buckets.
#[test]
fn latency_extremes_are_exact() {
    let text = "[run]\nduration_ms = 20.0\n[cpu]\nclock_mhz = 2400.0\n[intc]\nkind = \"ioapic\"\n\
                [workload]\nkind = \"exerciser\"\nprocess = \"poisson\"\nrate_per_s = 20000.0\n";
    let r = run_str(text, "s.toml", &[]).unwrap();
    let lat: Vec<f64> = r.records.iter().map(|&(_, l)| l as f64 / r.clock_mhz).collect();
    let (min, max) = lat.iter().fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    assert_eq!(r.metric("isr_latency_min_us"), Some(min));
    assert_eq!(r.metric("isr_latency_max_us"), Some(max));
}
