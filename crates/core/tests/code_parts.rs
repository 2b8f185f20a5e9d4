//! Parts beside kernel code (`[code]`): the receiving NIC's interrupt
//! coalescing, several CPUs, other devices on their own controllers. Each
//! test asserts the mechanism's effect on the code's run.

use irqsim_core::cpu::Bin;
use irqsim_core::{Record, Report, Scenario, parse_override, simulate};
use std::path::Path;

fn run(sets: &[&str]) -> Report {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios");
    let mut all = vec!["run.duration_ms=20"];
    all.extend_from_slice(sets);
    let o: Vec<_> = all.iter().map(|s| parse_override(s).unwrap()).collect();
    let s = Scenario::from_file(&dir.join("code/rx-min.toml"), &o).unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    let r = simulate(&s, &dir.join("code"), Record::default()).unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r.check_invariants().unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r
}

fn m(r: &Report, key: &str) -> f64 {
    r.metric(key).unwrap_or_else(|| panic!("no metric {key}"))
}

/// rx-frames: one interrupt per 8 frames (the rest wait for the count);
/// rx-usecs alone: every interrupt is the timer's, and the first frame of
/// each batch waits the whole 100 µs.
#[test]
fn the_nic_of_kernel_code_coalesces() {
    let plain = run(&[]);
    let frames = run(&["coalesce.rx_frames=8", "coalesce.rx_usecs=1000"]);
    let timer = run(&["coalesce.rx_frames=0", "coalesce.rx_usecs=100"]);
    assert!(m(&plain, "interrupts") > 0.9 * m(&plain, "rx_offered"), "one interrupt per frame without coalescing");
    assert!(m(&frames, "coalesce_frame_interrupts") >= m(&frames, "rx_offered") / 8.0 - 2.0);
    assert!(m(&frames, "interrupts") <= m(&frames, "rx_offered") / 8.0 + 2.0, "{}", m(&frames, "interrupts"));
    assert_eq!(m(&timer, "interrupts"), m(&timer, "coalesce_timer_interrupts"));
    assert!(m(&timer, "latency_max_us") >= 100.0 && m(&plain, "latency_max_us") < 100.0);
    assert!(m(&timer, "interrupts") < m(&timer, "rx_offered") / 1.5);
    // Fewer interrupts, fewer interrupt-level instructions.
    assert!(m(&frames, "code_interrupt_instructions") < m(&plain, "code_interrupt_instructions") / 2.0);
}

/// Two CPUs: code's cores follow `cpu.threads` (one single-threaded core
/// each) when `[code.core.core]` does not say otherwise; the NIC's handler
/// runs on thread 1, the application on thread 0.
#[test]
fn kernel_code_on_two_cpus() {
    let r = run(&["cpu.threads=2", "nic.irq_thread=1"]);
    assert!(r.bins[1].get(Bin::Interrupt) > 0 && r.bins[0].get(Bin::Interrupt) == 0);
    assert!(r.bins[0].get(Bin::User) > 0);
    assert!(m(&r, "rx_delivered") > 0.9 * m(&r, "rx_offered"));
}

/// The code's NIC on MSI-X, a disk on the IO-APIC: both serviced, the
/// disk's handler an abstract one beside the code's.
#[test]
fn kernel_code_beside_a_device_on_another_controller() {
    let r = run(&["intc.kind=\"msix\"", "sources.others=[{rate_per_s = 2000.0, isr_cycles = 3000, intc = \"ioapic\"}]"]);
    assert_eq!(m(&r, "source0_serviced"), m(&r, "interrupts"));
    assert!(m(&r, "source1_serviced") > 20.0);
}

/// DIM with kernel code: it samples where code's driver enables its
/// receive cause again (rx_min's net_rx_action, its napi_complete_done),
/// and moves the coalescing profile as the load asks.
#[test]
fn dim_moves_the_code_nics_profile() {
    let r = run(&["coalesce.adaptive_rx=true", "run.duration_ms=50"]);
    assert!(m(&r, "dim_decisions") > 0.0 && m(&r, "dim_profile_changes") > 0.0);
    assert!(m(&r, "interrupts") < 0.6 * m(&r, "rx_offered"), "DIM's profiles coalesce: {}", m(&r, "interrupts"));
}

/// Code's own critical sections (rx_min's spin_lock_irqsave around its
/// buffer pool and socket queue, four per frame): with the masking part
/// (`masking.code_sections`), the Luna88k's costs (Table 1: a 96-cycle
/// pair) under conventional protection, less under optimistic; an
/// interrupt inside a section is held (conventional) or deferred
/// (optimistic), and every frame still arrives.
#[test]
fn kernel_code_sections_under_either_scheme() {
    let load = "workload.rate_per_s=60000";
    let conv = run(&[load, "masking.code_sections=true"]);
    let opt = run(&[load, "masking.code_sections=true", "masking.scheme=\"optimistic\""]);
    let per = |r: &Report| m(r, "masking_cycles_per_frame");
    assert!(per(&conv) >= 4.0 * 96.0, "four sections a frame at 96 cycles a pair: {}", per(&conv));
    assert!(per(&opt) < per(&conv) / 1.5, "optimistic {} vs conventional {}", per(&opt), per(&conv));
    assert!(m(&conv, "interrupts_held") > 0.0 && m(&conv, "interrupts_deferred") == 0.0);
    assert!(m(&opt, "interrupts_deferred") > 0.0 && m(&opt, "interrupts_held") == 0.0);
    for r in [&conv, &opt] {
        assert_eq!(m(r, "rx_delivered") + m(r, "rx_dropped_nic") + m(r, "rx_dropped_software") + m(r, "rx_in_flight"), m(r, "rx_offered"));
    }
}

/// Without the masking part the sections still mask (at the cost of their
/// own instructions): on the bare wire the NIC's interrupt waits for the
/// section's end.
#[test]
fn kernel_code_sections_mask_on_the_bare_wire() {
    let r = run(&["workload.rate_per_s=60000"]);
    assert!(m(&r, "interrupts_held") > 0.0);
    assert_eq!(m(&r, "masking_cycles"), 0.0);
}
