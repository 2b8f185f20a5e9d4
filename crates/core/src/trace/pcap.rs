//! Streaming reader for classic libpcap files (what `tcpdump -w` writes).
//!
//! [`PcapReader`] reads the 24-byte global header, then one record at a time into a reused
//! buffer, and turns each frame into a [`PacketRecord`]: timestamp in ns since the Unix
//! epoch, frame length on the wire, IPv4 total length, UDP/TCP payload length and the
//! [`Direction`] relative to a host address given by the caller.
//!
//! Supported: magic `a1b2c3d4` (µs timestamps) and `a1b23c4d` (ns timestamps) in either
//! byte order; link types 0 (BSD loopback, family in either byte order), 1 (Ethernet,
//! with up to two 802.1Q/802.1ad tags), 101 (raw IP; also 12 and 14, the BSDs' DLT_RAW,
//! as libpcap reads them), 108 (OpenBSD loopback), 113
//! (Linux cooked v1), 228 (raw IPv4) and 276 (Linux cooked v2); any other is refused by
//! name. pcapng is not read (the error says how to convert it).
//!
//! What libpcap reads is read: a record may capture up to 262,144 bytes whatever the
//! header's snap length (libpcap only warns of a wrong one), a frame length below the
//! captured length (some writers leave out the FCS) is taken as the captured length, and a
//! timestamp fraction of a second or more is added as it stands (libpcap passes it on). A
//! frame captured too short for the headers it claims (a small snap length) is not an
//! error: the fields that can be computed are filled and the rest are 0. A file whose
//! structure is broken (truncated, impossible lengths, an empty frame) is an error naming
//! the record and its byte offset. Every read of frame bytes is bounds-checked, so no input panics.

use std::fs::File;
use std::io::{BufReader, ErrorKind, Read};
use std::net::Ipv4Addr;
use std::path::Path;

use super::{TraceError, escape};

/// Largest captured length accepted for one record (libpcap's `MAXIMUM_SNAPLEN`, its
/// limit for every link type read here); a larger `incl_len` means the file is corrupt.
pub const MAX_RECORD_BYTES: u32 = 256 * 1024;

const GLOBAL_HEADER_BYTES: usize = 24;
const RECORD_HEADER_BYTES: usize = 16;

const LINKTYPE_NULL: u32 = 0;
const LINKTYPE_ETHERNET: u32 = 1;
const LINKTYPE_RAW: u32 = 101;
/// DLT_RAW's value on most BSDs and Linux, and on OpenBSD, found in older files.
const LINKTYPE_RAW_BSD: u32 = 12;
const LINKTYPE_RAW_OPENBSD: u32 = 14;
const LINKTYPE_LOOP: u32 = 108;
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
        let file = crate::input::open_regular(path).map_err(|source| TraceError::Io { path: name.clone(), source })?;
        Self::new(BufReader::new(file), &name, host)
    }
}

impl<R: Read> PcapReader<R> {
    /// Reads the global header from `reader`. `source` names the input in errors; `host`
    /// decides [`Direction`].
    pub fn new(mut reader: R, source: &str, host: Ipv4Addr) -> Result<Self, TraceError> {
        let path = escape(source);
        let mut header = [0u8; GLOBAL_HEADER_BYTES];
        let got = read_full(&mut reader, &mut header).map_err(|source| TraceError::Io { path: path.clone(), source })?;
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
            LINKTYPE_NULL
                | LINKTYPE_ETHERNET
                | LINKTYPE_RAW
                | LINKTYPE_RAW_BSD
                | LINKTYPE_RAW_OPENBSD
                | LINKTYPE_LOOP
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
        TraceError::CorruptRecord { path: self.source.clone(), record: self.next_record, offset: self.offset, detail }
    }

    fn read_record(&mut self) -> Result<Option<PacketRecord>, TraceError> {
        let mut header = [0u8; RECORD_HEADER_BYTES];
        let got = read_full(&mut self.reader, &mut header).map_err(|source| TraceError::Io { path: self.source.clone(), source })?;
        if got == 0 {
            return Ok(None);
        }
        if got < RECORD_HEADER_BYTES {
            return Err(TraceError::TruncatedRecordHeader { path: self.source.clone(), record: self.next_record, offset: self.offset, got });
        }
        let word = |at: usize| u32_at(&header, at, self.big_endian).unwrap_or(0);
        let (ts_sec, ts_frac, incl_len, orig_len) = (word(0), word(4), word(8), word(12));

        // libpcap reads a record longer than the header's snap length (the header may be
        // wrong); only its own maximum bounds the record.
        if incl_len > MAX_RECORD_BYTES {
            return Err(self.corrupt(format!("captured length {incl_len} exceeds libpcap's limit {MAX_RECORD_BYTES} (snaplen {})", self.snaplen)));
        }
        // A frame length below the captured one (no FCS counted) is the captured length.
        let orig_len = orig_len.max(incl_len);
        if orig_len == 0 {
            // No frame of the supported link types is empty; replayed, empty frames would
            // fill the simulated NIC without limit.
            return Err(self.corrupt("frame length 0".into()));
        }

        // incl_len <= MAX_RECORD_BYTES, so this allocation is bounded.
        let body_len = incl_len as usize;
        self.buf.resize(body_len, 0);
        let got = read_full(&mut self.reader, &mut self.buf).map_err(|source| TraceError::Io { path: self.source.clone(), source })?;
        if got < body_len {
            return Err(TraceError::TruncatedRecordBody { path: self.source.clone(), record: self.next_record, offset: self.offset, got, expected: incl_len });
        }

        // A fraction of a second or more (a million µs, a billion ns) is taken as it
        // stands, as libpcap hands it on unchanged (sf-pcap.c, `pcap_next_packet`: it
        // only scales between µs and ns): the time is seconds + fraction.
        // u32 seconds * 1e9 + u32 fraction * 1e3 < 4.3e18 + 4.3e12 < u64::MAX: no overflow.
        let frac_ns = match self.resolution {
            TimeResolution::Micro => u64::from(ts_frac) * 1_000,
            TimeResolution::Nano => u64::from(ts_frac),
        };
        let time_ns = u64::from(ts_sec) * 1_000_000_000 + frac_ns;

        let ip = decode_frame(self.link_type, &self.buf, self.host);
        self.next_record = self.next_record.saturating_add(1);
        self.offset = self.offset.saturating_add(RECORD_HEADER_BYTES as u64).saturating_add(u64::from(incl_len));
        Ok(Some(PacketRecord { time_ns, wire_bytes: orig_len, ip_bytes: ip.ip_bytes, payload_bytes: ip.payload_bytes, direction: ip.direction }))
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
    Some(if big_endian { u32::from_be_bytes(bytes) } else { u32::from_le_bytes(bytes) })
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

const NOT_IPV4: IpInfo = IpInfo { ip_bytes: 0, payload_bytes: 0, direction: Direction::Other };

/// Finds the IPv4 header behind the link-layer header and decodes it.
fn decode_frame(link_type: u32, frame: &[u8], host: Ipv4Addr) -> IpInfo {
    let l3 = match link_type {
        LINKTYPE_ETHERNET => ethernet_ipv4_offset(frame),
        LINKTYPE_RAW | LINKTYPE_RAW_BSD | LINKTYPE_RAW_OPENBSD | LINKTYPE_IPV4 => Some(0),
        // The address family, in the capturing host's byte order (NULL) or network
        // order (LOOP); AF_INET is 2 on every system.
        LINKTYPE_NULL | LINKTYPE_LOOP => frame.get(..4).filter(|f| *f == [2, 0, 0, 0] || *f == [0, 0, 0, 2]).map(|_| 4),
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
    IpInfo { ip_bytes: u32::from(total_len), payload_bytes: l4_payload(ip, header_len, total_len).unwrap_or(0), direction }
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
pub(crate) mod tests;
