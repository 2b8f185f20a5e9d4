//! The committed real trace pair (`traces/loopback-stream.{pcap,strace}`, captured by
//! `scripts/capture_trace.sh`, described in `traces/README.md`) parses and makes sense:
//! a UDP stream from 127.0.0.2 to the host 127.0.0.1 at about 8.6 Mb/s, acknowledged by
//! the host, with the host's system calls matching the packets one for one.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::path::PathBuf;

use irqsim_core::trace::{Direction, PacketRecord, PcapReader, StraceClock, StraceReader, SyscallKind, SyscallRecord, TimeResolution};

const HOST: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 1);
/// Ethernet (14) + IPv4 (20) + UDP (8) header bytes.
const UDP_OVERHEAD_BYTES: u32 = 42;

fn trace_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../traces").join(name)
}

fn packets() -> Vec<PacketRecord> {
    let reader = PcapReader::open(&trace_path("loopback-stream.pcap"), HOST).expect("open pcap");
    assert_eq!(reader.resolution(), TimeResolution::Micro, "tcpdump's default resolution");
    assert_eq!(reader.link_type(), 1, "tcpdump -i lo writes Ethernet (EN10MB)");
    reader.collect::<Result<_, _>>().expect("parse pcap")
}

fn syscalls() -> Vec<SyscallRecord> {
    let mut reader = StraceReader::open(&trace_path("loopback-stream.strace")).expect("open strace");
    let records: Vec<_> = reader.by_ref().collect::<Result<_, _>>().expect("parse strace");
    assert_eq!(reader.clock(), Some(StraceClock::Epoch), "captured with strace -ttt");
    records
}

/// The two files together stay small enough to keep in the repository.
#[test]
fn trace_files_are_small() {
    let total: u64 =
        ["loopback-stream.pcap", "loopback-stream.strace"].iter().map(|n| std::fs::metadata(trace_path(n)).expect("trace file present").len()).sum();
    assert!(total < 2 * 1024 * 1024, "{total} bytes");
}

/// Packets: both directions, time never goes backwards, sizes consistent with UDP over
/// Ethernet, stream payloads in the generator's 500..=1400 range, rate near 8.6 Mb/s.
#[test]
fn pcap_trace_is_a_udp_stream_to_the_host() {
    let packets = packets();
    assert!(packets.len() > 1000, "{} packets", packets.len());
    assert!(packets.windows(2).all(|w| w[0].time_ns <= w[1].time_ns), "timestamps decrease");

    let rx: Vec<_> = packets.iter().filter(|p| p.direction == Direction::Rx).collect();
    let tx: Vec<_> = packets.iter().filter(|p| p.direction == Direction::Tx).collect();
    assert_eq!(rx.len() + tx.len(), packets.len(), "every packet is to or from the host");
    assert!(!tx.is_empty() && rx.len() > tx.len());

    for p in &packets {
        assert_eq!(p.wire_bytes, p.ip_bytes + 14, "{p:?}");
        assert_eq!(p.payload_bytes + UDP_OVERHEAD_BYTES, p.wire_bytes, "{p:?}");
    }
    // The stream, apart from the three 3-byte END markers.
    let stream: Vec<_> = rx.iter().filter(|p| p.payload_bytes > 3).collect();
    assert_eq!(rx.len() - stream.len(), 3);
    assert!(stream.iter().all(|p| (500..=1400).contains(&p.payload_bytes)));
    // Host → server: PLAY (4 bytes) then 16-byte ACKs.
    assert_eq!(tx[0].payload_bytes, 4);
    assert!(tx[1..].iter().all(|p| p.payload_bytes == 16));

    let span_ns = stream.last().unwrap().time_ns - stream[0].time_ns;
    let bits: u64 = stream.iter().map(|p| u64::from(p.wire_bytes) * 8).sum();
    let mbps = bits as f64 / (span_ns as f64 / 1e9) / 1e6;
    assert!((7.5..=9.5).contains(&mbps), "stream rate {mbps:.2} Mb/s");
}

/// System calls: send and receive kinds present, times never go backwards within a pid,
/// and they match the packets: one receive per stream datagram with the same sizes, one
/// send per packet the host sent, on the same clock.
#[test]
fn strace_trace_matches_the_packets() {
    let calls = syscalls();
    let packets = packets();
    assert!(!calls.is_empty());

    let mut last_by_pid: HashMap<u32, u64> = HashMap::new();
    for c in &calls {
        let last = last_by_pid.entry(c.pid).or_insert(0);
        assert!(c.time_ns >= *last, "time goes backwards for pid {}: {c:?}", c.pid);
        *last = c.time_ns;
    }

    let recvs: Vec<_> = calls.iter().filter(|c| c.kind == SyscallKind::Recv).collect();
    let sends: Vec<_> = calls.iter().filter(|c| c.kind == SyscallKind::Send).collect();
    assert!(recvs.iter().all(|c| c.name == "recvfrom" && c.duration_ns > 0));
    assert!(sends.iter().all(|c| c.name == "sendto"));
    // Reads of the interpreter's own files are not socket I/O.
    assert!(calls.iter().any(|c| c.name == "read" && c.kind == SyscallKind::Other));

    // The client stops at the first of the three END markers.
    let rx_sizes: Vec<u64> = packets.iter().filter(|p| p.direction == Direction::Rx).map(|p| u64::from(p.payload_bytes)).collect();
    let recv_sizes: Vec<u64> = recvs.iter().map(|c| c.bytes).collect();
    assert_same_sizes("received", &recv_sizes, &rx_sizes[..rx_sizes.len() - 2]);
    let tx_sizes: Vec<u64> = packets.iter().filter(|p| p.direction == Direction::Tx).map(|p| u64::from(p.payload_bytes)).collect();
    let send_sizes: Vec<u64> = sends.iter().map(|c| c.bytes).collect();
    assert_same_sizes("sent", &send_sizes, &tx_sizes);

    // Same clock: the PLAY request leaves within a few ms of its sendto starting.
    let play_call = sends[0].time_ns;
    let play_packet = packets.iter().find(|p| p.direction == Direction::Tx).unwrap().time_ns;
    assert!(play_packet.abs_diff(play_call) < 5_000_000, "{play_call} vs {play_packet}");
}

/// Asserts that the system calls moved the same sizes, in the same order, as the packets.
fn assert_same_sizes(what: &str, calls: &[u64], packets: &[u64]) {
    assert_eq!(calls.len(), packets.len(), "{what}: {} calls, {} packets", calls.len(), packets.len());
    if let Some(i) = calls.iter().zip(packets).position(|(c, p)| c != p) {
        panic!("{what}: call {i} moved {} bytes, packet {i} carried {}", calls[i], packets[i]);
    }
}

/// The pair through the trace workload: every packet to or from the host and every call
/// that moves no packet becomes one stimulus; time zero is the earliest of them; no frame
/// is larger than the default NIC buffer.
#[test]
fn trace_workload_replays_the_pair_from_its_earliest_record() {
    let text = "[cpu]\nclock_mhz = 200.0\n[workload]\nkind = \"trace\"\n\
                pcap = \"loopback-stream.pcap\"\nstrace = \"loopback-stream.strace\"\nhost = \"127.0.0.1\"\n";
    let s = irqsim_core::Scenario::from_toml(text, "pair.toml", &[]).unwrap();
    let base = trace_path("");
    let mut src =
        irqsim_core::workload::TraceSource::open(&s.workload_host(), &base, "loopback-stream.pcap", Some("loopback-stream.strace"), "127.0.0.1").unwrap();
    let stimuli: Vec<_> = std::iter::from_fn(|| src.next_stimulus().unwrap()).collect();
    let others = syscalls().iter().filter(|c| c.kind == SyscallKind::Other).count();
    assert_eq!(stimuli.len(), packets().len() + others);
    assert_eq!(stimuli.iter().map(|&(t, _)| t).min(), Some(0));
    assert_eq!(src.oversize_frames(), 0);
}
