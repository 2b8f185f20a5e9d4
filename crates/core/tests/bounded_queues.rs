//! Memory stays bounded however long an overloaded run goes: replayed calls
//! that find `app.max_waiting_calls` waiting are dropped and counted (F5 in
//! docs/reliability.md: a synthetic run at 2 M system calls a second grew by
//! about 62 MB per simulated second).

use irqsim_core::run_str;

/// Four times more system calls than the CPU can do: the waiting ones never
/// pass the cap, the rest are dropped, and every call is accounted for.
#[test]
fn system_calls_beyond_the_cap_are_dropped_and_counted() {
    let text = "[run]\nduration_ms = 100.0\n[cpu]\nclock_mhz = 200.0\n[app]\nmax_waiting_calls = 100\n\
                [workload]\nkind = \"synthetic\"\nsyscalls_per_s = 2000000\n";
    let r = run_str(text, "s.toml", &[]).unwrap();
    r.check_invariants().unwrap();
    let (calls, dropped) = (r.metric("syscalls").unwrap(), r.metric("syscalls_dropped").unwrap());
    assert!(calls > 150_000.0, "{calls}");
    // 400 cycles each at 200 MHz: at most 50,000 done in 100 ms, 100 waiting.
    assert!(dropped >= calls - 50_000.0 - 100.0, "{dropped} of {calls} dropped");
}

/// Interrupts arriving twenty times faster than their handlers run: at most
/// `MAX_WAITING` wait at once, the rest merge (as a latched line would), and
/// every one is accounted for.
#[test]
fn interrupts_beyond_the_cap_merge() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/optimistic-spl/luna88k-idealized.toml");
    let o: Vec<_> = ["workload.interrupt_rate_per_s=1000000", "run.duration_ms=50"].iter().map(|s| irqsim_core::parse_override(s).unwrap()).collect();
    let s = irqsim_core::Scenario::from_file(&path, &o).unwrap();
    let r = irqsim_core::simulate(&s, path.parent().unwrap(), irqsim_core::Record::default()).unwrap();
    assert!(r.metric("interrupts_merged").unwrap() > 10_000.0);
    assert!(r.metric("interrupts_in_flight").unwrap() <= irqsim_core::masking::jobs::MAX_WAITING as f64);
}

/// The exerciser at 10^9 interrupts a second, each behind 16 MiB of DMA:
/// message writes piled up behind the data without bound (3 GB at 50 ms, an
/// abort at 1 s in `VecDeque::grow`). At most 4,096 are now in transit per
/// device; the rest are lost and counted, and every one is accounted for.
#[test]
fn exerciser_messages_beyond_the_cap_are_lost_and_counted() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/msi-latency/soc-idle.toml");
    let sets = ["workload.rate_per_s=1e9", "workload.dma_bytes=16777216", "run.duration_ms=2"];
    let o: Vec<_> = sets.iter().map(|s| irqsim_core::parse_override(s).unwrap()).collect();
    let s = irqsim_core::Scenario::from_file(&path, &o).unwrap();
    let r = irqsim_core::simulate(&s, path.parent().unwrap(), irqsim_core::Record::default()).unwrap();
    let (raised, lost, in_flight) = (r.metric("interrupts_raised").unwrap(), r.metric("interrupts_lost").unwrap(), r.metric("interrupts_in_flight").unwrap());
    assert!(raised > 1_000_000.0 && in_flight <= 4096.0, "{raised} raised, {in_flight} in flight");
    assert_eq!(raised, lost + in_flight + r.metric("interrupts_serviced").unwrap());
}
