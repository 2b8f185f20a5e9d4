//! The link rate holds on receive as on send: frames land no closer
//! together than the wire takes to carry each (`nic.link_mbps=0.001` used to
//! change nothing on receive).

use irqsim_core::{parse_override, run_str};

const ARRIVALS: &str = "[run]\nduration_ms = 1000.0\n[cpu]\nclock_mhz = 200.0\n[nic]\nlink_mbps = 1.0\nwire_queue_packets = 50\n\
                        [workload]\nkind = \"arrivals\"\nprocess = \"poisson\"\nrate_per_s = 1000.0\npacket_bytes = 1500\n";

/// 12 Mb/s offered on a 1 Mb/s link: at most 1 Mb/s is delivered, the
/// sending port's queue overflows, and every frame is accounted for.
#[test]
fn a_slow_link_limits_receive() {
    let r = run_str(ARRIVALS, "s.toml", &[]).unwrap();
    r.check_invariants().unwrap();
    let mbps = r.metric("rx_throughput_mbps").unwrap();
    // 84 frames of 12 ms each: the first lands at 0, the last at 996 ms.
    assert_eq!(r.metric("rx_delivered"), Some(84.0), "{mbps} Mb/s over a 1 Mb/s link");
    assert!(r.metric("rx_dropped_wire").unwrap() > 800.0);
    // On a fast link nothing waits: everything offered is delivered or in flight.
    let fast = run_str(ARRIVALS, "s.toml", &[parse_override("nic.link_mbps=10000").unwrap()]).unwrap();
    assert_eq!(fast.metric("rx_dropped_wire"), Some(0.0));
    assert!(fast.metric("rx_throughput_mbps").unwrap() > 11.0);
}

/// A closed-loop flood waits for the wire rather than dropping: one frame
/// per wire time.
#[test]
fn a_flood_is_paced_by_the_wire() {
    let text = "[run]\nduration_ms = 100.0\n[cpu]\nclock_mhz = 200.0\n[nic]\nlink_mbps = 10.0\n[workload]\nkind = \"flood\"\ndirection = \"rx\"\npacket_bytes = 1250\n";
    let r = run_str(text, "s.toml", &[]).unwrap();
    // 1,250 bytes at 10 Mb/s is 1 ms on the wire: 100 frames in 100 ms.
    let delivered = r.metric("rx_delivered").unwrap();
    assert!((99.0..=101.0).contains(&delivered), "{delivered} frames");
    assert_eq!(r.metric("rx_dropped_wire"), Some(0.0));
}

/// The NIC's DMA crosses the bus link (`bus.link_mbps`): a link slower than
/// the DMA engine paces it, so the card's buffer fills and frames drop
/// there; a faster one changes nothing, bit for bit (so does none given).
#[test]
fn a_slow_bus_link_paces_the_nics_dma() {
    let at = |sets: &[&str]| {
        let mut o = vec![parse_override("nic.link_mbps=100").unwrap()];
        o.extend(sets.iter().map(|s| parse_override(s).unwrap()));
        let r = run_str(ARRIVALS, "s.toml", &o).unwrap();
        r.check_invariants().unwrap();
        r
    };
    let free = at(&[]);
    // 4 bytes/cycle at 200 MHz is 6,400 Mb/s: a 10 Gb/s link does not limit it.
    assert_eq!(at(&["bus.link_mbps=10000"]).to_json(), free.to_json());
    assert_eq!(free.metric("rx_dropped_nic"), Some(0.0));
    assert!(free.metric("rx_throughput_mbps").unwrap() > 11.0);
    // 12 Mb/s offered over a 4 Mb/s link to memory, for one second. The
    // protocol takes a frame as its DMA starts, so at most one buffer's
    // worth (16,384 bytes) of queued transfers counts beyond the link's 4 Mb.
    let slow = at(&["bus.link_mbps=4"]);
    let mbps = slow.metric("rx_throughput_mbps").unwrap();
    assert!((3.9..=4.0 + 16_384.0 * 8.0 / 1e6).contains(&mbps), "{mbps} Mb/s through a 4 Mb/s link");
    assert!(slow.metric("rx_dropped_nic").unwrap() > 500.0);
}
