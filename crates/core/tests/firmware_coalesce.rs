//! Interrupt coalescing in the programmable NIC's firmware (nic_coal.elf,
//! fw.c with `-DFW_COAL`): the firmware counts the frames it returns and
//! arms the NIC's timer at the first, and interrupts the host when the
//! count reaches `coalesce.rx_frames` or the timer expires after
//! `coalesce.rx_usecs`, with the abstract host driver and with kernel code.

mod common;

use common::{load, m, run};
use irqsim_core::{Record, simulate};

/// A scenario that loads but cannot be built: its one line.
fn failure(name: &str, sets: &[&str]) -> String {
    let (s, path) = load(name, sets).unwrap();
    simulate(&s, path.parent().unwrap(), Record::default()).err().expect("refused").to_string()
}

const ABSTRACT: &str = "compose/rx-firmware";
const CODE: &str = "code/rx-firmware";
const NIC_COAL: &str = "nic_firmware.program=\"../../programs/firmware/nic_coal.elf\"";
/// compose/rx-firmware with a host that keeps up.
const HOST: [&str; 2] = ["run.duration_ms=2", "driver.isr_rx_done_cycles=1000"];

fn with(rate: &str, more: &[&str]) -> Vec<String> {
    HOST.iter().map(|s| s.to_string()).chain([format!("workload.rate_per_s={rate}")]).chain(more.iter().map(|s| s.to_string())).collect()
}

fn sets(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// A frame every 10 us and a 20 us timer: the timer fires, covering two
/// or three frames each, so the host takes about a third of the
/// interrupts; at line rate (a frame every 1.23 us) eight frames come
/// before the timer, so the frame count fires, but only on frames returned
/// while the host's interrupt is enabled: the host's NAPI poll, masked,
/// takes most frames, up to 7 counted and the NIC's own in flight at the
/// end (the firmware once counted those too and raised about one per
/// eight frames, 196 of 1626; now 29). Every frame is delivered either
/// way; without `[coalesce]` nic_coal.elf
/// interrupts after each batch, as nic.elf does.
#[test]
fn the_firmware_coalesces_by_timer_and_by_count() {
    let plain = run(ABSTRACT, &sets(&with("100000", &[])));
    let same = run(ABSTRACT, &sets(&with("100000", &[NIC_COAL])));
    assert_eq!(m(&plain, "nic_firmware_interrupts"), m(&same, "nic_firmware_interrupts"));
    let slow = run(ABSTRACT, &sets(&with("100000", &[NIC_COAL, "coalesce.rx_usecs=20", "coalesce.rx_frames=8"])));
    let (before, after) = (m(&plain, "interrupts"), m(&slow, "interrupts"));
    assert!(after < 0.45 * before, "{after} against {before}");
    assert!(m(&slow, "coalesce_timer_interrupts") > 0.25 * m(&slow, "rx_offered") && m(&slow, "coalesce_frame_interrupts") == 0.0);
    assert!(m(&slow, "latency_p50_us") > m(&plain, "latency_p50_us") + 5.0, "frames wait for the timer");
    let fast = run(ABSTRACT, &sets(&with("812743.8", &[NIC_COAL, "coalesce.rx_usecs=20", "coalesce.rx_frames=8"])));
    let (frames, offered) = (m(&fast, "coalesce_frame_interrupts"), m(&fast, "rx_offered"));
    assert!(frames > 0.0 && frames < offered / 20.0 && m(&fast, "coalesce_timer_interrupts") == 0.0, "{frames} of {offered}");
    for r in [&slow, &fast] {
        assert!(
            m(r, "rx_delivered") + m(r, "rx_in_flight") == m(r, "rx_offered") && m(r, "rx_in_flight") < 16.0,
            "{} + {} of {}",
            m(r, "rx_delivered"),
            m(r, "rx_in_flight"),
            m(r, "rx_offered")
        );
    }
    // The timer alone (rx_frames = 0): one interrupt per 20 us at most.
    let timer = run(ABSTRACT, &sets(&with("812743.8", &[NIC_COAL, "coalesce.rx_usecs=20", "coalesce.rx_frames=0"])));
    assert!(m(&timer, "coalesce_timer_interrupts") <= 2000.0 / 20.0 && m(&timer, "coalesce_frame_interrupts") == 0.0);
    assert_eq!(
        format!("{:?}", slow.metrics),
        format!("{:?}", run(ABSTRACT, &sets(&with("100000", &[NIC_COAL, "coalesce.rx_usecs=20", "coalesce.rx_frames=8"]))).metrics)
    );
}

/// With kernel code as the host driver (fw_rx.elf) the firmware's
/// moderated interrupts are the code's: fewer top halves, every frame
/// delivered and checked, on the Linux and NAPI paths.
#[test]
fn the_firmware_coalesces_for_kernel_code() {
    let plain = run(CODE, &[]);
    for path in ["linux", "napi"] {
        let path = format!("irq_path.kind=\"{path}\"");
        let r = run(CODE, &[NIC_COAL, "coalesce.rx_usecs=20", "coalesce.rx_frames=8", &path]);
        assert!(m(&r, "interrupts") < 0.3 * m(&plain, "interrupts"), "{path}: {} against {}", m(&r, "interrupts"), m(&plain, "interrupts"));
        assert!(m(&r, "code_interrupt_instructions") < 0.3 * m(&plain, "code_interrupt_instructions"), "{path}");
        assert!(m(&r, "rx_delivered") > m(&r, "rx_offered") - 10.0, "{path}: {} of {}", m(&r, "rx_delivered"), m(&r, "rx_offered"));
    }
}

/// Firmware without moderation (nic.elf) is refused with `[coalesce]`,
/// naming the program (DIM's refusals: firmware_dim.rs).
#[test]
fn coalescing_needs_firmware_that_moderates() {
    let e = failure(ABSTRACT, &["coalesce.rx_usecs=20", "coalesce.rx_frames=8"]);
    assert!(e.contains("`nic_firmware.program`") && e.contains("nic_coal.elf") && !e.contains('\n'), "{e}");
}
