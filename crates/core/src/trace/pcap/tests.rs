//! Unit tests of the pcap reader: a file builder, decoding, errors, and a seeded
//! random-input sweep.

use super::*;
use std::io::Cursor;

const HOST: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 1);
const PEER: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

/// Builds an IPv4 + UDP packet with `payload` payload bytes (all present).
fn ipv4_udp(src: Ipv4Addr, dst: Ipv4Addr, payload: u16) -> Vec<u8> {
    let total = 20 + 8 + payload;
    let mut p = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, IPPROTO_UDP, 0, 0];
    p[2..4].copy_from_slice(&total.to_be_bytes());
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    p.extend_from_slice(&[0x13, 0x88, 0x13, 0x89]);
    p.extend_from_slice(&(8 + payload).to_be_bytes());
    p.extend_from_slice(&[0, 0]);
    p.resize(usize::from(total), 0xab);
    p
}

/// Builds an IPv4 + TCP packet with a 32-byte TCP header and `payload` payload bytes.
fn ipv4_tcp(src: Ipv4Addr, dst: Ipv4Addr, payload: u16) -> Vec<u8> {
    let total = 20 + 32 + payload;
    let mut p = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, IPPROTO_TCP, 0, 0];
    p[2..4].copy_from_slice(&total.to_be_bytes());
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    let mut tcp = [0u8; 32];
    tcp[12] = 8 << 4;
    p.extend_from_slice(&tcp);
    p.resize(usize::from(total), 0xcd);
    p
}

fn ethernet(ip: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    f.extend_from_slice(ip);
    f
}

/// A pcap file builder for tests.
pub(crate) struct PcapWriter {
    pub bytes: Vec<u8>,
    big_endian: bool,
    snaplen: u32,
}

impl PcapWriter {
    pub(crate) fn new(big_endian: bool, nano: bool, snaplen: u32, link_type: u32) -> Self {
        let mut w = PcapWriter { bytes: Vec::new(), big_endian, snaplen };
        w.u32(if nano { 0xa1b2_3c4d } else { 0xa1b2_c3d4 });
        w.u16(2);
        w.u16(4);
        w.u32(0);
        w.u32(0);
        w.u32(snaplen);
        w.u32(link_type);
        w
    }
    fn u32(&mut self, v: u32) {
        let b = if self.big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
        self.bytes.extend_from_slice(&b);
    }
    fn u16(&mut self, v: u16) {
        let b = if self.big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
        self.bytes.extend_from_slice(&b);
    }
    /// Appends a record, cutting the frame to the snap length like tcpdump does.
    pub(crate) fn record(&mut self, sec: u32, frac: u32, frame: &[u8]) -> &mut Self {
        let caplen = frame.len().min(self.snaplen as usize);
        self.u32(sec);
        self.u32(frac);
        self.u32(caplen as u32);
        self.u32(frame.len() as u32);
        self.bytes.extend_from_slice(&frame[..caplen]);
        self
    }
}

/// A small valid Ethernet file with one received UDP packet, one sent UDP packet and
/// one unrelated packet.
pub(crate) fn sample_file() -> Vec<u8> {
    let mut w = PcapWriter::new(false, false, 128, LINKTYPE_ETHERNET);
    w.record(1_700_000_000, 1, &ethernet(&ipv4_udp(PEER, HOST, 1000)));
    w.record(1_700_000_000, 500_000, &ethernet(&ipv4_udp(HOST, PEER, 16)));
    w.record(1_700_000_001, 0, &ethernet(&ipv4_tcp(PEER, PEER, 10)));
    w.bytes
}

fn read_all(bytes: &[u8]) -> Result<Vec<PacketRecord>, TraceError> {
    PcapReader::new(Cursor::new(bytes), "t.pcap", HOST)?.collect()
}

fn err_text(bytes: &[u8]) -> String {
    match read_all(bytes) {
        Ok(v) => panic!("expected an error, got {} records", v.len()),
        Err(e) => e.to_string(),
    }
}

/// A µs little-endian Ethernet file decodes time, sizes and direction; snap length
/// does not shrink wire_bytes.
#[test]
fn decodes_ethernet_udp_and_tcp() {
    let bytes = sample_file();
    let reader = PcapReader::new(Cursor::new(&bytes), "t.pcap", HOST).unwrap();
    assert_eq!(reader.resolution(), TimeResolution::Micro);
    assert_eq!(reader.link_type(), 1);
    let recs: Vec<_> = reader.collect::<Result<_, _>>().unwrap();
    assert_eq!(recs.len(), 3);
    assert_eq!(
        recs[0],
        PacketRecord { time_ns: 1_700_000_000_000_001_000, wire_bytes: 14 + 1028, ip_bytes: 1028, payload_bytes: 1000, direction: Direction::Rx }
    );
    assert_eq!(recs[1].direction, Direction::Tx);
    assert_eq!(recs[1].payload_bytes, 16);
    assert_eq!(recs[1].time_ns, 1_700_000_000_500_000_000);
    assert_eq!(recs[2].direction, Direction::Other);
    assert_eq!(recs[2].payload_bytes, 10);
    assert_eq!(recs[2].ip_bytes, 62);
}

/// Big-endian files and ns resolution are read the same way.
#[test]
fn big_endian_nanosecond() {
    let mut w = PcapWriter::new(true, true, 65535, LINKTYPE_RAW);
    w.record(10, 999_999_999, &ipv4_udp(HOST, PEER, 500));
    let reader = PcapReader::new(Cursor::new(&w.bytes), "t.pcap", HOST).unwrap();
    assert_eq!(reader.resolution(), TimeResolution::Nano);
    assert_eq!(reader.link_type(), 101);
    let recs: Vec<_> = reader.collect::<Result<_, _>>().unwrap();
    assert_eq!(recs[0].time_ns, 10_999_999_999);
    assert_eq!((recs[0].ip_bytes, recs[0].payload_bytes), (528, 500));
    assert_eq!(recs[0].direction, Direction::Tx);
}

/// Linux cooked v1 and v2 headers and VLAN-tagged Ethernet reach the IPv4 header.
#[test]
fn cooked_and_vlan_link_layers() {
    let ip = ipv4_udp(PEER, HOST, 700);
    let mut sll = vec![0u8; 14];
    sll.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    sll.extend_from_slice(&ip);
    let mut sll2 = ETHERTYPE_IPV4.to_be_bytes().to_vec();
    sll2.resize(20, 0);
    sll2.extend_from_slice(&ip);
    let mut vlan = vec![0u8; 12];
    vlan.extend_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
    vlan.extend_from_slice(&[0, 5]);
    vlan.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    vlan.extend_from_slice(&ip);
    for (link, frame) in [(LINKTYPE_LINUX_SLL, sll), (LINKTYPE_LINUX_SLL2, sll2), (LINKTYPE_ETHERNET, vlan)] {
        let mut w = PcapWriter::new(false, false, 262_144, link);
        w.record(1, 2, &frame);
        let recs = read_all(&w.bytes).unwrap();
        assert_eq!(recs[0].payload_bytes, 700, "link type {link}");
        assert_eq!(recs[0].direction, Direction::Rx, "link type {link}");
    }
}

/// Frames shorter than their headers fill what they can; non-IPv4 is Other.
#[test]
fn short_and_foreign_frames_are_not_errors() {
    let full = ethernet(&ipv4_udp(PEER, HOST, 1200));
    let mut arp = vec![0u8; 12];
    arp.extend_from_slice(&[0x08, 0x06]);
    arp.resize(42, 0);
    let mut records = Vec::new();
    // Snap lengths cutting inside the IP header, after it, inside Ethernet; then ARP.
    for (snaplen, frame) in [(18, &full), (34, &full), (10, &full), (128, &arp)] {
        let mut w = PcapWriter::new(false, false, snaplen, LINKTYPE_ETHERNET);
        w.record(1, 0, frame);
        records.push(read_all(&w.bytes).unwrap()[0]);
    }
    let fields = |r: &PacketRecord| (r.wire_bytes, r.ip_bytes, r.payload_bytes, r.direction);
    assert_eq!(fields(&records[0]), (1242, 1228, 0, Direction::Other));
    assert_eq!(fields(&records[1]), (1242, 1228, 1200, Direction::Rx));
    assert_eq!(fields(&records[2]), (1242, 0, 0, Direction::Other));
    assert_eq!(fields(&records[3]), (42, 0, 0, Direction::Other));
}

/// Fragments: the first carries L4 payload by its IP length, the rest report 0.
#[test]
fn fragments() {
    let mut first = ipv4_udp(PEER, HOST, 3000);
    first.truncate(20 + 1480);
    first[2..4].copy_from_slice(&1500u16.to_be_bytes());
    first[6] = 0x20; // MF
    let mut later = first.clone();
    later[6..8].copy_from_slice(&(1480u16 / 8).to_be_bytes());
    let mut w = PcapWriter::new(false, false, 262_144, LINKTYPE_RAW);
    w.record(1, 0, &first);
    w.record(1, 1, &later);
    let recs = read_all(&w.bytes).unwrap();
    assert_eq!(recs[0].payload_bytes, 1472);
    assert_eq!(recs[1].payload_bytes, 0);
    assert_eq!(recs[1].ip_bytes, 1500);
}

/// Each structural fault is an error naming the file and the place.
#[test]
fn structural_errors() {
    assert_eq!(err_text(&[]), "t.pcap: empty file (expected a pcap global header)");
    assert_eq!(err_text(&[0xd4, 0xc3]), "t.pcap: truncated pcap global header (got 2 of 24 bytes)");
    let valid = sample_file();
    assert_eq!(err_text(&valid[..20]), "t.pcap: truncated pcap global header (got 20 of 24 bytes)");
    let text = err_text(b"\x0a\x0d\x0d\x0aabcdefghijklmnopqrstuvwxyz");
    assert!(text.starts_with("t.pcap: not a classic pcap file: magic bytes 0a 0d 0d 0a"), "{text}");
    let text = err_text(b"GIF89a..................");
    assert!(text.contains("magic bytes 47 49 46 38"), "{text}");

    assert_eq!(err_text(&valid[..24 + 7]), "t.pcap: record 1 at byte 24: truncated record header (got 7 of 16 bytes)");
    let first_len = 16 + 128;
    assert_eq!(err_text(&valid[..24 + first_len + 16 + 5]), format!("t.pcap: record 2 at byte {}: truncated record body (got 5 of 58 bytes)", 24 + first_len));

    let mut w = PcapWriter::new(false, false, 128, 127);
    w.record(1, 0, &[0; 10]);
    assert!(err_text(&w.bytes).starts_with("t.pcap: link type 127 (802.11 radiotap) is not an Ethernet or IP capture"));
}

/// Impossible record headers are reported as corrupt.
#[test]
fn corrupt_records() {
    let mut w = PcapWriter::new(false, false, 0, LINKTYPE_RAW);
    w.record(1, 0, &[0x45]);
    let mut bytes = w.bytes.clone();
    bytes[24 + 8..24 + 12].copy_from_slice(&(MAX_RECORD_BYTES + 1).to_le_bytes());
    bytes[24 + 12..24 + 16].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(err_text(&bytes).contains("exceeds libpcap's limit 262144"));

    let mut w = PcapWriter::new(false, false, 64, LINKTYPE_RAW);
    w.record(1, 0, &[]);
    assert_eq!(err_text(&w.bytes), "t.pcap: record 1 at byte 24: corrupt record: frame length 0");
}

/// What libpcap reads is read: a record longer than the header's snap length (up to
/// 262,144 bytes), and a frame length below the captured length (taken as the latter).
#[test]
fn libpcap_leniencies() {
    let mut w = PcapWriter::new(false, false, 262_144, LINKTYPE_RAW);
    w.record(1, 0, &ipv4_udp(PEER, HOST, 60_000));
    w.record(1, 1, &vec![0x45; 262_144]);
    let mut bytes = w.bytes.clone();
    bytes[16..20].copy_from_slice(&68u32.to_le_bytes()); // snaplen 68 in the header
    let recs = read_all(&bytes).unwrap();
    assert_eq!((recs[0].payload_bytes, recs[1].wire_bytes), (60_000, 262_144));

    let mut bytes = sample_file();
    bytes[24 + 12..24 + 16].copy_from_slice(&100u32.to_le_bytes()); // orig_len < incl_len
    assert_eq!(read_all(&bytes).unwrap()[0].wire_bytes, 128);
}

/// A timestamp fraction of a second or more, which libpcap hands on unchanged (tcpdump
/// prints such a stamp as invalid), is added as it stands: 1,500,000 µs is 1.5 s.
#[test]
fn out_of_range_fractions_are_taken_as_they_stand() {
    for (nano, frac, ns) in
        [(false, 1_500_000, 1_500_000_000), (false, u32::MAX, 4_294_967_295_000), (true, 1_000_000_000, 1_000_000_000), (true, u32::MAX, 4_294_967_295)]
    {
        for big in [false, true] {
            let mut w = PcapWriter::new(big, nano, 0, LINKTYPE_RAW);
            w.record(7, frac, &ipv4_udp(PEER, HOST, 10));
            assert_eq!(read_all(&w.bytes).unwrap()[0].time_ns, 7_000_000_000 + ns, "nano {nano}, big-endian {big}, fraction {frac}");
        }
    }
}

/// BSD loopback (family in either byte order) and OpenBSD loopback reach the IPv4
/// header; another family is not IPv4; the BSDs' raw IP numbers are raw IP.
#[test]
fn loopback_link_layers() {
    let ip = ipv4_udp(PEER, HOST, 300);
    for (link, family) in [(LINKTYPE_NULL, [2, 0, 0, 0]), (LINKTYPE_NULL, [0, 0, 0, 2]), (LINKTYPE_LOOP, [0, 0, 0, 2])] {
        let mut w = PcapWriter::new(false, false, 65_535, link);
        w.record(1, 0, &[&family[..], &ip].concat());
        w.record(1, 1, &[&[30, 0, 0, 0][..], &ip].concat()); // AF_INET6 on Linux
        let recs = read_all(&w.bytes).unwrap();
        assert_eq!((recs[0].payload_bytes, recs[0].direction), (300, Direction::Rx), "{link} {family:?}");
        assert_eq!(recs[1].direction, Direction::Other);
    }
    for link in [LINKTYPE_RAW_BSD, LINKTYPE_RAW_OPENBSD] {
        let mut w = PcapWriter::new(true, false, 65_535, link);
        w.record(1, 0, &ip);
        assert_eq!(read_all(&w.bytes).unwrap()[0].payload_bytes, 300);
    }
}

/// After an error the iterator ends.
#[test]
fn fused_after_error() {
    let valid = sample_file();
    let mut reader = PcapReader::new(Cursor::new(&valid[..valid.len() - 1]), "t.pcap", HOST).unwrap();
    assert!(reader.next().unwrap().is_ok());
    assert!(reader.next().unwrap().is_ok());
    assert!(reader.next().unwrap().is_err());
    assert!(reader.next().is_none());
}

/// Random bytes, random bytes behind a valid header, every truncation and random
/// corruption of a valid file: the reader never panics.
#[test]
fn fuzz_no_panic() {
    let mut rng = crate::trace::strace::tests::XorShift(0x9e37_79b9_7f4a_7c15);
    let valid = sample_file();
    let drain = |bytes: &[u8]| {
        if let Ok(reader) = PcapReader::new(Cursor::new(bytes), "f.pcap", HOST) {
            for item in reader.take(1000) {
                let _ = item;
            }
        }
    };
    for len in 0..=valid.len() {
        drain(&valid[..len]);
    }
    let headers: Vec<Vec<u8>> = [false, true]
        .iter()
        .flat_map(|&be| [LINKTYPE_ETHERNET, LINKTYPE_RAW, LINKTYPE_LINUX_SLL, LINKTYPE_LINUX_SLL2].map(|lt| PcapWriter::new(be, be, 200, lt).bytes))
        .collect();
    for round in 0..4000 {
        let len = (rng.next() % 400) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        match round % 3 {
            0 => {}
            1 => {
                let header = &headers[round % headers.len()];
                bytes.splice(0..0, header.iter().copied());
            }
            _ => {
                bytes = valid.clone();
                for _ in 0..1 + rng.next() % 8 {
                    let at = (rng.next() as usize) % bytes.len();
                    bytes[at] = rng.next() as u8;
                }
            }
        }
        drain(&bytes);
    }
}
