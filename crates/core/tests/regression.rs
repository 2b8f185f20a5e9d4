//! One test per bug found, named after it.

use irqsim_core::{parse_override, run_str};

const RX_FLOOD: &str = "name = \"rx flood\"\n[cpu]\nclock_mhz = 200.0\n[run]\nduration_ms = 1.0\n[nic]\nlink_mbps = 100000.0\n[workload]\nkind = \"flood\"\ndirection = \"rx\"\npacket_bytes = 1500\n";
const TX_FLOOD: &str =
    "name = \"tx flood\"\n[cpu]\nclock_mhz = 200.0\n[run]\nduration_ms = 1.0\n[workload]\nkind = \"flood\"\ndirection = \"tx\"\npacket_bytes = 1500\n";

fn sets(items: &[&str]) -> Vec<irqsim_core::Override> {
    items.iter().map(|s| parse_override(s).unwrap()).collect()
}

/// A closed-loop receive flood whose frame was dropped (buffer full of DMAs)
/// used to stop for good: the loop's one outstanding frame was lost. The
/// sender now retries when DMA frees space, so frames keep flowing.
#[test]
fn closed_loop_flood_survives_a_dropped_frame() {
    // A zero-cost ISR outruns the DMA, so the buffer fills and a frame drops.
    let o = sets(&["cpu.irq_entry_cycles=0", "cpu.save_restore_cycles=0", "driver.isr_rx_done_cycles=0"]);
    let r = run_str(RX_FLOOD, "rx.toml", &o).unwrap();
    r.check_invariants().unwrap();
    assert!(r.metric("rx_dropped_nic").unwrap() > 0.0);
    // 1 ms at 375 DMA cycles per frame: about 533 frames, not the 10 before the first drop.
    assert!(r.metric("rx_delivered").unwrap() > 500.0, "{:?}", r.metric("rx_delivered"));
}

/// A loop of zero-cycle work (every cost of a send flood set to 0) used to
/// spin forever at cycle 0; it is now an error naming the instant.
#[test]
fn zero_cycle_loop_is_an_error_not_a_hang() {
    let o = sets(&["cpu.irq_entry_cycles=0", "cpu.swi_entry_cycles=0", "cpu.save_restore_cycles=0", "driver.send_cycles=0", "driver.isr_tx_done_cycles=0"]);
    let e = run_str(TX_FLOOD, "tx.toml", &o).err().expect("a zero-cycle loop must not run forever");
    assert!(e.to_string().starts_with("tx.toml: the simulation makes no progress at cycle 0"), "{e}");
}

/// Absurd rates and costs (a DMA of 1e-300 bytes per cycle, a save/restore
/// of 2^63 − 1 cycles) used to overflow cycle arithmetic: a panic in debug
/// builds, wrapped (wrong) times in release. Completion times now saturate
/// and simply fall past the end of the run; a cost beyond its table's
/// range is refused at load.
#[test]
fn absurd_costs_end_past_the_run_instead_of_overflowing() {
    let e = run_str(RX_FLOOD, "absurd.toml", &sets(&["cpu.save_restore_cycles=9223372036854775807"])).err().expect("out of range");
    assert!(e.to_string().starts_with("--set: `cpu.save_restore_cycles`: must be 0..=1_000_000_000"), "{e}");
    for set in ["nic.dma_bytes_per_cycle=1e-300", "nic.link_mbps=1e-300", "cpu.save_restore_cycles=1000000000"] {
        for text in [RX_FLOOD, TX_FLOOD] {
            let r = run_str(text, "absurd.toml", &sets(&[set])).unwrap();
            r.check_invariants().unwrap();
        }
    }
}

/// A run whose laws break is an error naming the file and the law, never a
/// report printed as if it were right (the CLI printed it and exited 0).
#[test]
fn a_broken_invariant_is_an_error_not_results() {
    let mut r = run_str(TX_FLOOD, "tx.toml", &[]).unwrap();
    r.laws.push(irqsim_core::report::Law { what: "tx offered = sent + dropped + in flight", lhs: 2, rhs: 1 });
    let e = irqsim_core::checked(r, "tx.toml").err().expect("a broken law must not pass");
    assert_eq!(
        e.to_string(),
        "tx.toml: the run broke an invariant, so its results are wrong (please report): tx offered = sent + dropped + in flight violated: 2 != 1"
    );
}
