//! Streaming reader for classic libpcap files (what `tcpdump -w` writes).
//!
//! [`PcapReader`] reads the 24-byte global header, then one record at a time into a reused
//! buffer, and turns each frame into a [`PacketRecord`]: timestamp in ns since the Unix
//! epoch, frame length on the wire, IPv4 total length, UDP/TCP payload length and the
//! [`Direction`] relative to a host address given by the caller.
//!
//! Supported: magic `a1b2c3d4` (µs timestamps) and `a1b23c4d` (ns timestamps) in either
//! byte order; link types 1 (Ethernet, with up to two 802.1Q/802.1ad tags), 101 (raw IP),
//! 113 (Linux cooked v1), 228 (raw IPv4) and 276 (Linux cooked v2). pcapng is not read
//! (the error says how to convert it).
//!
//! A frame captured too short for the headers it claims (a small snap length) is not an
//! error: the fields that can be computed are filled and the rest are 0. A file whose
//! structure is broken (truncated, impossible lengths) is an error naming the record and
//! its byte offset. Every read of frame bytes is bounds-checked, so no input panics.

use std::fs::File;
use std::io::{BufReader, ErrorKind, Read};
use std::net::Ipv4Addr;
use std::path::Path;

use super::{TraceError, escape};

/// Largest captured length accepted for one record (libpcap's own limit for most link
/// types); a larger `incl_len` means the file is corrupt.
pub const MAX_RECORD_BYTES: u32 = 256 * 1024;

const GLOBAL_HEADER_BYTES: usize = 24;
const RECORD_HEADER_BYTES: usize = 16;

const LINKTYPE_ETHERNET: u32 = 1;
const LINKTYPE_RAW: u32 = 101;
const LINKTYPE_LINUX_SLL: u32 = 113;
const LINKTYPE_IPV4: u32 = 228;
const LINKTYPE_LINUX_SLL2: u32 = 276;

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_VLAN: u16 = 0x8100;
const ETHERTYPE_QINQ: u16 = 0x88a8;

const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;

/// Which way a packet went relative to the host address given to the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The destination is the host (checked first, so a packet from the host to itself
    /// counts as received).
    Rx,
    /// The source is the host.
    Tx,
    /// Neither address is the host, or the packet is not IPv4, or its addresses were not
    /// captured.
    Other,
}

/// Resolution of the timestamps stored in the file (from its magic number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeResolution {
    /// Microseconds (magic `a1b2c3d4`, tcpdump's default).
    Micro,
    /// Nanoseconds (magic `a1b23c4d`, `tcpdump --time-stamp-precision=nano`).
    Nano,
}

/// One captured packet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PacketRecord {
    /// Capture time in ns since the Unix epoch.
    pub time_ns: u64,
    /// Frame length on the wire (`orig_len`), not the captured length.
    pub wire_bytes: u32,
    /// IPv4 total length from the IP header; 0 if the packet is not IPv4 or the field
    /// was not captured.
    pub ip_bytes: u32,
    /// UDP or TCP payload length computed from the IPv4 and UDP/TCP headers; 0 if the
    /// packet is neither, is a non-first fragment, or the headers were not captured.
    pub payload_bytes: u32,
    /// Direction relative to the host address.
    pub direction: Direction,
}

/// Streaming reader of a classic pcap file; an iterator of [`PacketRecord`]s.
///
/// Reads one record at a time into a buffer it reuses; after the first error it yields
/// `None`.
pub struct PcapReader<R: Read> {
    reader: R,
    source: String,
    host: Ipv4Addr,
    big_endian: bool,
    resolution: TimeResolution,
    link_type: u32,
    snaplen: u32,
    buf: Vec<u8>,
    /// Number of the next record, counting from 1.
    next_record: u64,
    /// Byte offset of the next record header.
    offset: u64,
    done: bool,
}

impl PcapReader<BufReader<File>> {
    /// Opens `path` and reads its global header. `host` decides [`Direction`].
    pub fn open(path: &Path, host: Ipv4Addr) -> Result<Self, TraceError> {
        let name = escape(&path.display().to_string());
        let file = File::open(path).map_err(|source| TraceError::Io {
            path: name.clone(),
            source,
        })?;
        Self::new(BufReader::new(file), &name, host)
    }
}

impl<R: Read> PcapReader<R> {
    /// Reads the global header from `reader`. `source` names the input in errors; `host`
    /// decides [`Direction`].
    pub fn new(mut reader: R, source: &str, host: Ipv4Addr) -> Result<Self, TraceError> {
        let path = escape(source);
        let mut header = [0u8; GLOBAL_HEADER_BYTES];
        let got = read_full(&mut reader, &mut header).map_err(|source| TraceError::Io {
            path: path.clone(),
            source,
        })?;
        if got == 0 {
            return Err(TraceError::EmptyPcap { path });
        }
        if got < 4 {
            return Err(TraceError::TruncatedGlobalHeader { path, got });
        }
        let magic = [header[0], header[1], header[2], header[3]];
        let (big_endian, resolution) = match u32::from_le_bytes(magic) {
            0xa1b2_c3d4 => (false, TimeResolution::Micro),
            0xd4c3_b2a1 => (true, TimeResolution::Micro),
            0xa1b2_3c4d => (false, TimeResolution::Nano),
            0x4d3c_b2a1 => (true, TimeResolution::Nano),
            _ => return Err(TraceError::BadMagic { path, found: magic }),
        };
        if got < GLOBAL_HEADER_BYTES {
            return Err(TraceError::TruncatedGlobalHeader { path, got });
        }
        let word = |at: usize| u32_at(&header, at, big_endian).unwrap_or(0);
        let snaplen = word(16);
        // The upper 16 bits carry FCS information, not the link type.
        let link_type = word(20) & 0xffff;
        if !matches!(
            link_type,
            LINKTYPE_ETHERNET
                | LINKTYPE_RAW
                | LINKTYPE_LINUX_SLL
                | LINKTYPE_IPV4
                | LINKTYPE_LINUX_SLL2
        ) {
            return Err(TraceError::UnsupportedLinkType { path, link_type });
        }
        Ok(PcapReader {
            reader,
            source: path,
            host,
            big_endian,
            resolution,
            link_type,
            snaplen,
            buf: Vec::new(),
            next_record: 1,
            offset: GLOBAL_HEADER_BYTES as u64,
            done: false,
        })
    }

    /// Timestamp resolution declared by the file's magic number.
    pub fn resolution(&self) -> TimeResolution {
        self.resolution
    }

    /// Link-layer header type of the file (e.g. 1 for Ethernet).
    pub fn link_type(&self) -> u32 {
        self.link_type
    }

    fn corrupt(&self, detail: String) -> TraceError {
        TraceError::CorruptRecord {
            path: self.source.clone(),
            record: self.next_record,
            offset: self.offset,
            detail,
        }
    }

    fn read_record(&mut self) -> Result<Option<PacketRecord>, TraceError> {
        let mut header = [0u8; RECORD_HEADER_BYTES];
        let got = read_full(&mut self.reader, &mut header).map_err(|source| TraceError::Io {
            path: self.source.clone(),
            source,
        })?;
        if got == 0 {
            return Ok(None);
        }
        if got < RECORD_HEADER_BYTES {
            return Err(TraceError::TruncatedRecordHeader {
                path: self.source.clone(),
                record: self.next_record,
                offset: self.offset,
                got,
            });
        }
        let word = |at: usize| u32_at(&header, at, self.big_endian).unwrap_or(0);
        let (ts_sec, ts_frac, incl_len, orig_len) = (word(0), word(4), word(8), word(12));

        let frac_limit = match self.resolution {
            TimeResolution::Micro => 1_000_000,
            TimeResolution::Nano => 1_000_000_000,
        };
        if ts_frac >= frac_limit {
            return Err(self.corrupt(format!(
                "timestamp fraction {ts_frac} is out of range for {} resolution",
                match self.resolution {
                    TimeResolution::Micro => "microsecond",
                    TimeResolution::Nano => "nanosecond",
                }
            )));
        }
        let limit = if self.snaplen == 0 {
            MAX_RECORD_BYTES
        } else {
            self.snaplen.min(MAX_RECORD_BYTES)
        };
        if incl_len > limit {
            return Err(self.corrupt(format!(
                "captured length {incl_len} exceeds the limit {limit} (snaplen {}, at most {MAX_RECORD_BYTES})",
                self.snaplen
            )));
        }
        if orig_len < incl_len {
            return Err(self.corrupt(format!(
                "captured length {incl_len} is larger than the frame length {orig_len}"
            )));
        }

        // incl_len <= MAX_RECORD_BYTES, so this allocation is bounded.
        let body_len = incl_len as usize;
        self.buf.resize(body_len, 0);
        let got = read_full(&mut self.reader, &mut self.buf).map_err(|source| TraceError::Io {
            path: self.source.clone(),
            source,
        })?;
        if got < body_len {
            return Err(TraceError::TruncatedRecordBody {
                path: self.source.clone(),
                record: self.next_record,
                offset: self.offset,
                got,
                expected: incl_len,
            });
        }

        // u32 seconds * 1e9 + fraction < 4.3e18 < u64::MAX: cannot overflow.
        let frac_ns = match self.resolution {
            TimeResolution::Micro => u64::from(ts_frac) * 1_000,
            TimeResolution::Nano => u64::from(ts_frac),
        };
        let time_ns = u64::from(ts_sec) * 1_000_000_000 + frac_ns;

        let ip = decode_frame(self.link_type, &self.buf, self.host);
        self.next_record = self.next_record.saturating_add(1);
        self.offset = self
            .offset
            .saturating_add(RECORD_HEADER_BYTES as u64)
            .saturating_add(u64::from(incl_len));
        Ok(Some(PacketRecord {
            time_ns,
            wire_bytes: orig_len,
            ip_bytes: ip.ip_bytes,
            payload_bytes: ip.payload_bytes,
            direction: ip.direction,
        }))
    }
}

impl<R: Read> Iterator for PcapReader<R> {
    type Item = Result<PacketRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.read_record() {
            Ok(Some(record)) => Some(Ok(record)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Reads until `buf` is full or the input ends; returns the number of bytes read.
fn read_full<R: Read>(reader: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        let Some(rest) = buf.get_mut(filled..) else {
            break;
        };
        match reader.read(rest) {
            Ok(0) => break,
            Ok(n) => filled += n.min(rest.len()),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

fn u32_at(data: &[u8], at: usize, big_endian: bool) -> Option<u32> {
    let bytes: [u8; 4] = data.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(if big_endian {
        u32::from_be_bytes(bytes)
    } else {
        u32::from_le_bytes(bytes)
    })
}

fn be16(data: &[u8], at: usize) -> Option<u16> {
    let bytes: [u8; 2] = data.get(at..at.checked_add(2)?)?.try_into().ok()?;
    Some(u16::from_be_bytes(bytes))
}

/// What the IPv4 layer of a frame tells us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IpInfo {
    ip_bytes: u32,
    payload_bytes: u32,
    direction: Direction,
}

const NOT_IPV4: IpInfo = IpInfo {
    ip_bytes: 0,
    payload_bytes: 0,
    direction: Direction::Other,
};

/// Finds the IPv4 header behind the link-layer header and decodes it.
fn decode_frame(link_type: u32, frame: &[u8], host: Ipv4Addr) -> IpInfo {
    let l3 = match link_type {
        LINKTYPE_ETHERNET => ethernet_ipv4_offset(frame),
        LINKTYPE_RAW | LINKTYPE_IPV4 => Some(0),
        LINKTYPE_LINUX_SLL => (be16(frame, 14) == Some(ETHERTYPE_IPV4)).then_some(16),
        LINKTYPE_LINUX_SLL2 => (be16(frame, 0) == Some(ETHERTYPE_IPV4)).then_some(20),
        _ => None,
    };
    match l3.and_then(|at| frame.get(at..)) {
        Some(ip) => decode_ipv4(ip, host),
        None => NOT_IPV4,
    }
}

/// Offset of the IPv4 header in an Ethernet frame, skipping up to two VLAN tags.
fn ethernet_ipv4_offset(frame: &[u8]) -> Option<usize> {
    let mut type_at = 12;
    for _ in 0..3 {
        match be16(frame, type_at)? {
            ETHERTYPE_IPV4 => return Some(type_at + 2),
            ETHERTYPE_VLAN | ETHERTYPE_QINQ => type_at += 4,
            _ => return None,
        }
    }
    None
}

/// Decodes an IPv4 header (and the UDP/TCP header behind it) from however many bytes were
/// captured.
fn decode_ipv4(ip: &[u8], host: Ipv4Addr) -> IpInfo {
    let Some(&version_ihl) = ip.first() else {
        return NOT_IPV4;
    };
    if version_ihl >> 4 != 4 {
        return NOT_IPV4;
    }
    let header_len = usize::from(version_ihl & 0x0f) * 4;
    let total_len = be16(ip, 2).unwrap_or(0);
    let direction = match (ip.get(12..16), ip.get(16..20)) {
        (Some(src), Some(dst)) => {
            let addr = |b: &[u8]| b.try_into().map(|a: [u8; 4]| Ipv4Addr::from(a)).ok();
            if addr(dst) == Some(host) {
                Direction::Rx
            } else if addr(src) == Some(host) {
                Direction::Tx
            } else {
                Direction::Other
            }
        }
        _ => Direction::Other,
    };
    IpInfo {
        ip_bytes: u32::from(total_len),
        payload_bytes: l4_payload(ip, header_len, total_len).unwrap_or(0),
        direction,
    }
}

/// UDP/TCP payload length, or `None` when it cannot be computed from what was captured.
fn l4_payload(ip: &[u8], header_len: usize, total_len: u16) -> Option<u32> {
    if header_len < 20 {
        return None;
    }
    let protocol = *ip.get(9)?;
    let flags_fragment = be16(ip, 6)?;
    let more_fragments = flags_fragment & 0x2000 != 0;
    let fragment_offset = flags_fragment & 0x1fff;
    if fragment_offset != 0 {
        return None; // No L4 header in a non-first fragment.
    }
    let ip_payload = usize::from(total_len).checked_sub(header_len)?;
    let l4 = ip.get(header_len..).unwrap_or(&[]);
    let payload = match protocol {
        IPPROTO_UDP => {
            let from_ip = ip_payload.checked_sub(8)?;
            match be16(l4, 4) {
                // A first fragment's UDP length covers the whole datagram; this packet
                // carries only what the IP length says.
                Some(_) if more_fragments => from_ip,
                Some(udp_len) => {
                    let udp_len = usize::from(udp_len);
                    if (8..=ip_payload).contains(&udp_len) {
                        udp_len - 8
                    } else {
                        return None;
                    }
                }
                None => from_ip,
            }
        }
        IPPROTO_TCP => {
            let data_offset = usize::from(*l4.get(12)? >> 4) * 4;
            if data_offset < 20 {
                return None;
            }
            ip_payload.checked_sub(data_offset)?
        }
        _ => return None,
    };
    u32::try_from(payload).ok()
}

#[cfg(test)]
pub(crate) mod tests {
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
            let mut w = PcapWriter {
                bytes: Vec::new(),
                big_endian,
                snaplen,
            };
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
            let b = if self.big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            };
            self.bytes.extend_from_slice(&b);
        }
        fn u16(&mut self, v: u16) {
            let b = if self.big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            };
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
            PacketRecord {
                time_ns: 1_700_000_000_000_001_000,
                wire_bytes: 14 + 1028,
                ip_bytes: 1028,
                payload_bytes: 1000,
                direction: Direction::Rx,
            }
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
        for (link, frame) in [
            (LINKTYPE_LINUX_SLL, sll),
            (LINKTYPE_LINUX_SLL2, sll2),
            (LINKTYPE_ETHERNET, vlan),
        ] {
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
        assert_eq!(
            err_text(&[]),
            "t.pcap: empty file (expected a pcap global header)"
        );
        assert_eq!(
            err_text(&[0xd4, 0xc3]),
            "t.pcap: truncated pcap global header (got 2 of 24 bytes)"
        );
        let valid = sample_file();
        assert_eq!(
            err_text(&valid[..20]),
            "t.pcap: truncated pcap global header (got 20 of 24 bytes)"
        );
        let text = err_text(b"\x0a\x0d\x0d\x0aabcdefghijklmnopqrstuvwxyz");
        assert!(
            text.starts_with("t.pcap: not a classic pcap file: magic bytes 0a 0d 0d 0a"),
            "{text}"
        );
        let text = err_text(b"GIF89a..................");
        assert!(text.contains("magic bytes 47 49 46 38"), "{text}");

        assert_eq!(
            err_text(&valid[..24 + 7]),
            "t.pcap: record 1 at byte 24: truncated record header (got 7 of 16 bytes)"
        );
        let first_len = 16 + 128;
        assert_eq!(
            err_text(&valid[..24 + first_len + 16 + 5]),
            format!(
                "t.pcap: record 2 at byte {}: truncated record body (got 5 of 58 bytes)",
                24 + first_len
            )
        );

        let mut w = PcapWriter::new(false, false, 128, 105);
        w.record(1, 0, &[0; 10]);
        assert!(err_text(&w.bytes).starts_with("t.pcap: unsupported link type 105 (IEEE802_11)"));
    }

    /// Impossible record headers are reported as corrupt.
    #[test]
    fn corrupt_records() {
        let mut bytes = sample_file();
        bytes[24 + 8..24 + 12].copy_from_slice(&129u32.to_le_bytes()); // incl_len > snaplen
        assert!(err_text(&bytes).contains(
            "record 1 at byte 24: corrupt record: captured length 129 exceeds the limit 128"
        ));

        let mut w = PcapWriter::new(false, false, 0, LINKTYPE_RAW);
        w.record(1, 0, &[0x45]);
        let mut bytes = w.bytes.clone();
        bytes[24 + 8..24 + 12].copy_from_slice(&(MAX_RECORD_BYTES + 1).to_le_bytes());
        bytes[24 + 12..24 + 16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(err_text(&bytes).contains("exceeds the limit 262144"));

        let mut bytes = sample_file();
        bytes[24 + 4..24 + 8].copy_from_slice(&1_000_000u32.to_le_bytes());
        assert!(err_text(&bytes).contains("timestamp fraction 1000000 is out of range"));

        let mut bytes = sample_file();
        bytes[24 + 12..24 + 16].copy_from_slice(&100u32.to_le_bytes()); // orig_len < incl_len
        assert!(err_text(&bytes).contains("larger than the frame length 100"));
    }

    /// After an error the iterator ends.
    #[test]
    fn fused_after_error() {
        let valid = sample_file();
        let mut reader =
            PcapReader::new(Cursor::new(&valid[..valid.len() - 1]), "t.pcap", HOST).unwrap();
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
            .flat_map(|&be| {
                [
                    LINKTYPE_ETHERNET,
                    LINKTYPE_RAW,
                    LINKTYPE_LINUX_SLL,
                    LINKTYPE_LINUX_SLL2,
                ]
                .map(|lt| PcapWriter::new(be, be, 200, lt).bytes)
            })
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
}
