//! Forwarding (`nic.forward_to`, `nics.others[i].forward_to`): each frame a
//! NIC's driver takes leaves by another NIC's transmitter, once, on every
//! receive path; the output's ring limits it and its completions cost its
//! CPU (or, on the programmable NIC, its firmware sends it); what cannot
//! forward is refused naming the key.

mod common;

use common::{load, m, run};
use irqsim_core::Report;
use irqsim_core::cpu::Bin;

const TWO: &str = "compose/two-nics";
const ROUTER: &str = "compose/router";

/// Two NICs forwarding to each other (a two-port router), on the mt, Linux
/// and NAPI paths, with and without the stack: every frame delivered is a
/// forwarded one, sent once; none reaches a socket.
#[test]
fn each_path_forwards_every_frame_once_out_of_the_other_nic() {
    for path in ["mt", "linux", "napi"] {
        for stack in ["false", "true"] {
            let kind = format!("irq_path.kind=\"{path}\"");
            let stack = format!("stack.enabled={stack}");
            let sets =
                [kind.as_str(), &stack, "nic.forward_to=1", "nics.others[0].forward_to=0", "workload.rate_per_s=10000.0", "nics.others[0].rate_per_s=10000.0"];
            let r = run(TWO, &sets);
            let forwarded = m(&r, "rx_forwarded");
            assert!(forwarded > 900.0, "{sets:?}: {forwarded}");
            assert_eq!(m(&r, "rx_delivered"), forwarded, "{sets:?}: only forwarded frames are delivered");
            assert_eq!(m(&r, "tx_sent"), forwarded, "{sets:?}: each forwarded frame sent once");
            assert!(m(&r, "nic1_tx_sent") > 400.0 && m(&r, "nic1_tx_sent") < forwarded, "{sets:?}: the first NIC's frames leave by the second");
            assert_eq!(m(&r, "rx_dropped_forward"), 0.0, "{sets:?}");
            // Each frame's latency includes its output wire: 1,500 bytes at 1 Gb/s, 12 µs.
            assert!(m(&r, "latency_min_us") >= 8.0, "{sets:?}: {}", m(&r, "latency_min_us"));
        }
    }
}

/// The router: 250,000 frames/s of 60 bytes in, a 100 Mb/s uplink out
/// (one frame per 4.8 µs): the uplink sends at its line rate and its full
/// ring drops the rest; a gigabit uplink keeps up.
#[test]
fn a_slow_uplink_sends_at_its_line_rate_and_drops_at_its_ring() {
    let r = run(ROUTER, &[]);
    let rate = m(&r, "nic1_tx_sent") / m(&r, "sim_seconds");
    assert!((rate - 1e6 / 4.8).abs() < 0.01 * rate, "{rate}");
    assert!(m(&r, "rx_dropped_forward") > 500.0, "{}", m(&r, "rx_dropped_forward"));
    assert_eq!(m(&r, "rx_dropped_forward"), m(&r, "tx_dropped"));
    // The ring of 256 stays full: each frame waits about 256 × 4.8 µs.
    assert!((m(&r, "latency_p50_us") - 256.0 * 4.8).abs() < 20.0, "{}", m(&r, "latency_p50_us"));
    let fast = run(ROUTER, &["nics.others[0].link_mbps=1000.0"]);
    assert_eq!(m(&fast, "rx_dropped_forward"), 0.0);
    assert_eq!(m(&fast, "rx_forwarded") + m(&fast, "rx_in_flight"), m(&fast, "rx_offered"));
}

/// The uplink's transmit completions interrupt its own CPU, whose driver
/// cleans them: that CPU works though it receives nothing, at least the
/// cleaning cost per sent frame, while the receiving CPU's work is the same.
#[test]
fn transmit_completions_cost_the_output_nics_cpu() {
    let base = ["cpu.threads=2", "nics.others[0].irq_thread=1", "nics.others[0].link_mbps=1000.0", "run.duration_ms=5"];
    let busy = |r: &Report, t: usize| r.bins[t].get(Bin::Interrupt) + r.bins[t].get(Bin::BottomHalf) + r.bins[t].get(Bin::Overhead);
    let cheap = run(ROUTER, &base);
    let dear = run(ROUTER, &[&base[..], &["driver.isr_tx_done_cycles=2000"]].concat());
    assert!(m(&cheap, "nic1_interrupts") > 100.0 && busy(&cheap, 1) > 0);
    assert_eq!(m(&cheap, "rx_forwarded"), m(&dear, "rx_forwarded"));
    let per_frame = busy(&dear, 1) as f64 / m(&dear, "nic1_tx_sent");
    assert!(per_frame >= 2000.0, "CPU 1 cleans each sent frame: {per_frame} cycles a frame");
    // Cleaning longer, its polls find more to clean at once: fewer interrupts.
    assert!(m(&dear, "nic1_interrupts") < m(&cheap, "nic1_interrupts"));
    assert_eq!(busy(&dear, 0), busy(&cheap, 0), "the receiving CPU does the same work");
}

/// A one-armed router forwards out of the NIC it received on; the same
/// scenario and seed give the same numbers.
#[test]
fn a_nic_forwards_out_of_itself_and_runs_are_deterministic() {
    let sets = ["nic.forward_to=0", "nics.others=[]", "nic.link_mbps=1000.0", "workload.rate_per_s=50000.0", "run.duration_ms=5"];
    let (a, b) = (run(ROUTER, &sets), run(ROUTER, &sets));
    assert!(m(&a, "rx_forwarded") > 200.0);
    assert_eq!(m(&a, "tx_sent"), m(&a, "rx_forwarded"));
    assert_eq!(a.metrics, b.metrics);
}

/// The programmable NIC's frames, returned to its abstract host driver,
/// are forwarded out of another NIC as any NIC's are.
#[test]
fn the_programmable_nics_frames_leave_by_another_nic() {
    let uplink = "nics.others=[{rate_per_s = 0.0, packet_bytes = 64, link_mbps = 1000.0, tx_queue_packets = 512}]";
    let r = run("compose/rx-firmware", &["nic.forward_to=1", uplink, "workload.rate_per_s=50000"]);
    assert!(m(&r, "rx_forwarded") > 100.0, "{}", m(&r, "rx_forwarded"));
    assert_eq!(m(&r, "nic1_tx_sent"), m(&r, "rx_forwarded"));
    assert_eq!(m(&r, "rx_delivered"), m(&r, "rx_forwarded"));
}

const FIRMWARE: &str = "compose/rx-firmware";
/// A second NIC whose 1,000-byte frames are forwarded out of the
/// programmable NIC (NIC 0), which receives its own at 50,000 a second.
const INTO_FIRMWARE: [&str; 2] =
    ["nics.others=[{rate_per_s = 100000.0, packet_bytes = 1000, link_mbps = 10000.0, forward_to = 0}]", "workload.rate_per_s=50000"];

/// Another NIC's frames leave by the programmable NIC: the host driver
/// posts each to the firmware's send ring, the firmware's MAC sends it
/// (the host checks each frame on the wire against the one posted next),
/// and it is delivered then, once. The firmware's cores do the send path's
/// work; the same scenario and seed give the same numbers.
#[test]
fn another_nics_frames_leave_by_the_programmable_nic() {
    let r = run(FIRMWARE, &INTO_FIRMWARE);
    let forwarded = m(&r, "rx_forwarded");
    assert!(forwarded > 450.0, "{forwarded}");
    assert_eq!(m(&r, "tx_sent"), forwarded, "the programmable NIC sent each forwarded frame once");
    assert_eq!(m(&r, "tx_throughput_mbps"), forwarded * 8000.0 / m(&r, "sim_seconds") / 1e6);
    assert_eq!(m(&r, "rx_dropped_forward"), 0.0);
    // Taken by the second NIC's driver: sent, or still in the send ring (at most its 256 descriptors).
    assert!(m(&r, "nic1_rx_taken") - forwarded < 256.0 && m(&r, "nic1_rx_taken") >= forwarded);
    assert_eq!(m(&r, "rx_delivered"), forwarded + m(&r, "nic0_rx_offered") - m(&r, "rx_in_flight") + (m(&r, "nic1_rx_offered") - forwarded));
    let alone = run(FIRMWARE, &[INTO_FIRMWARE[0].replace(", forward_to = 0", "").as_str(), INTO_FIRMWARE[1]]);
    assert_eq!(m(&alone, "tx_sent"), 0.0, "delivered locally, none leave");
    assert!(m(&r, "nic_firmware_instructions") > m(&alone, "nic_firmware_instructions") + 100.0 * forwarded, "the firmware fetches and sends each frame");
    assert_eq!(r.metrics, run(FIRMWARE, &INTO_FIRMWARE).metrics);
}

/// The frames go through the firmware's MAC: on a 100 Mb/s line it sends
/// them at the line's rate (1,020 bytes on the wire each, 81.6 µs), its
/// send ring fills (256 frames wait) and the frames finding it full are
/// dropped. The programmable NIC's own frames forward out of itself too.
#[test]
fn the_programmable_nic_sends_forwarded_frames_at_its_line_rate() {
    let r = run(FIRMWARE, &[&INTO_FIRMWARE[..], &["nic_firmware.line_gbps=0.1"]].concat());
    let line = m(&r, "sim_seconds") / 81.6e-6;
    assert!((m(&r, "rx_forwarded") - line).abs() <= 2.0, "{} sent, the line takes {line}", m(&r, "rx_forwarded"));
    assert_eq!(m(&r, "tx_sent"), m(&r, "rx_forwarded"));
    // Sent, dropped, or waiting in the full ring (256 descriptors, some sent and not yet given back).
    let waiting = m(&r, "nic1_rx_taken") - m(&r, "rx_forwarded") - m(&r, "rx_dropped_forward");
    assert!((250.0..=256.0).contains(&waiting), "{waiting}");
    assert_eq!(m(&r, "rx_dropped_forward"), m(&r, "tx_dropped"));
    let own = run(FIRMWARE, &["nic.forward_to=0", "workload.rate_per_s=50000"]);
    assert!(m(&own, "rx_forwarded") > 200.0);
    assert_eq!(m(&own, "tx_sent"), m(&own, "rx_forwarded"));
    assert_eq!(m(&own, "rx_delivered"), m(&own, "rx_forwarded"));
}

#[test]
fn what_cannot_forward_is_refused_naming_the_key() {
    let refused = |name: &str, sets: &[&str], key: &str| {
        let e = load(name, sets).map(|_| ()).expect_err("refused");
        assert!(e.contains(key), "{sets:?}: {e}");
    };
    refused(ROUTER, &["napi.busy_poll_usecs=50"], "`napi.busy_poll_usecs`: every NIC's frames are forwarded");
    refused(ROUTER, &["nic.forward_to=2"], "`nic.forward_to`: NIC 2 does not exist");
    refused(TWO, &["nics.others[0].tx_queue_packets=8"], "`nics.others[0].tx_queue_packets`: no NIC forwards to NIC 1");
    refused("code/two-nics", &["nic.forward_to=1"], "`nic.forward_to`: this NIC's driver is kernel code");
    let uplink = "nics.others=[{rate_per_s = 0.0, packet_bytes = 64, link_mbps = 1000.0, forward_to = 0}]";
    refused("code/rx-firmware", &[uplink], "`nics.others[0].forward_to`: this NIC's driver is kernel code");
    let jumbo = "nics.others=[{rate_per_s = 1000.0, packet_bytes = 9000, rx_buffer_bytes = 65536, link_mbps = 10000.0, forward_to = 0}]";
    refused(
        "compose/rx-firmware",
        &[jumbo],
        "`nics.others[0].packet_bytes`: 9000-byte frames forwarded onto NIC 0, the programmable one, whose MAC sends frames of at most 1518 bytes",
    );
}
