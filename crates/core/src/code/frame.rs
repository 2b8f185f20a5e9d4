//! The bytes of a received frame, as the NIC's DMA writes them into a
//! receive buffer: Ethernet II, IPv4 with a valid header checksum, UDP, and
//! a payload to the frame's size. Flow `f` is 10.0.(f>>8).(f&255):(1024+f)
//! to 10.1.0.1:5001, so code that hashes or rewrites addresses sees as many
//! connections as the scenario's `code.flows`.

/// Ethernet, IPv4 and UDP header bytes.
pub const HEADERS: usize = 14 + 20 + 8;

/// The smallest frame that holds the headers.
pub const MIN_BYTES: u32 = HEADERS as u32;

/// Writes frame `tag` of flow `flow`, `bytes` long, into `out`.
pub fn build(out: &mut Vec<u8>, bytes: u32, flow: u32, tag: u32) {
    let len = (bytes as usize).max(HEADERS);
    out.clear();
    out.resize(len, 0);
    // Ethernet: destination, source (locally administered), type IPv4.
    out[0..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x01]);
    out[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x02]);
    out[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = &mut out[14..34];
    let total = (len - 14) as u16;
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip[4..6].copy_from_slice(&(tag as u16).to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[10, 0, (flow >> 8) as u8, flow as u8]);
    ip[16..20].copy_from_slice(&[10, 1, 0, 1]);
    let sum = checksum(ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    let udp = &mut out[34..42];
    udp[0..2].copy_from_slice(&(1024 + flow as u16).to_be_bytes());
    udp[2..4].copy_from_slice(&5001u16.to_be_bytes());
    udp[4..6].copy_from_slice(&(total - 20).to_be_bytes());
    // Payload byte i is (31 i + tag) mod 256: the pattern's bytes (period
    // 256) plus the tag's low byte, added a chunk at a time (vectorised).
    for chunk in out[HEADERS..].chunks_mut(PATTERN.len()) {
        for (b, p) in chunk.iter_mut().zip(&PATTERN) {
            *b = p.wrapping_add(tag as u8);
        }
    }
}

/// Byte i of the payload with tag 0: 31 i mod 256 (31 is odd: period 256).
const PATTERN: [u8; 256] = {
    let mut p = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        p[i] = (i as u32).wrapping_mul(31) as u8;
        i += 1;
    }
    p
};

/// The Internet checksum (RFC 1071) of `b`.
pub fn checksum(b: &[u8]) -> u16 {
    let mut s: u32 = b.chunks(2).map(|c| u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0))).sum();
    while s >> 16 != 0 {
        s = (s & 0xFFFF) + (s >> 16);
    }
    !(s as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ip_header_checks_out_and_names_the_flow() {
        let mut f = Vec::new();
        build(&mut f, 64, 258, 7);
        assert_eq!(f.len(), 64);
        assert_eq!(checksum(&f[14..34]), 0, "a valid header sums to 0xFFFF");
        assert_eq!(&f[26..30], &[10, 0, 1, 2]);
        assert_eq!(u16::from_be_bytes([f[34], f[35]]), 1024 + 258);
        assert_eq!(u16::from_be_bytes([f[16], f[17]]), 50, "IP total length");
        assert_eq!(u16::from_be_bytes([f[38], f[39]]), 30, "UDP length");
    }

    #[test]
    fn payload_byte_i_is_31_i_plus_the_tag() {
        let mut f = Vec::new();
        build(&mut f, 1514, 3, 0x1_2345);
        for (i, &b) in f[HEADERS..].iter().enumerate() {
            assert_eq!(b, (i as u32).wrapping_mul(31).wrapping_add(0x1_2345) as u8, "byte {i}");
        }
    }

    #[test]
    fn a_frame_is_never_shorter_than_its_headers() {
        let mut f = Vec::new();
        build(&mut f, 10, 0, 1);
        assert_eq!(f.len(), HEADERS);
    }
}
