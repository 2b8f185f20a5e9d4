//! Real-world inputs: packets from pcap files and system calls from strace logs.
//!
//! The mt-interrupts study (shared/seeds/mt-interrupts-communication-processor.txt, §5.1)
//! drove its simulator with a tcpdump trace (packet arrival and departure times) and an
//! strace trace (system-call times) of a streaming client. This module reads both kinds of
//! file so that irqsim can be driven the same way:
//!
//! - [`PcapReader`] streams a classic libpcap file (µs or ns timestamps, either byte
//!   order; Ethernet, raw IP, Linux cooked v1/v2, BSD loopback link layers) into [`PacketRecord`]s:
//!   time, wire size, IPv4 size, UDP/TCP payload size and [`Direction`] relative to a
//!   configured host address.
//! - [`StraceReader`] streams an `strace -f -tt|-ttt -T [-yy]` log into
//!   [`SyscallRecord`]s: time, duration, pid, name, [`SyscallKind`] (send, receive,
//!   other) and bytes moved.
//!
//! Both readers are iterators over `Result<_, TraceError>` that read one record at a time
//! and never load the whole file. Bad input yields a [`TraceError`] whose message names
//! the file and the place in it (record number and byte offset for pcap, line number for
//! strace); after an error the iterator is finished. No input makes either reader panic.

pub mod pcap;
pub mod strace;

pub use pcap::{Direction, PacketRecord, PcapReader, TimeResolution};
pub use strace::{StraceClock, StraceReader, SyscallKind, SyscallRecord};

/// Why a trace file could not be read. Every message starts with the file's name and,
/// where it applies, the place in the file.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The operating system failed to open or read the file.
    #[error("{path}: {source}")]
    Io {
        /// File name as given to the reader.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// The pcap file has no bytes at all.
    #[error("{path}: empty file (expected a pcap global header)")]
    EmptyPcap {
        /// File name as given to the reader.
        path: String,
    },

    /// The first four bytes are not a classic pcap magic number.
    #[error("{path}: not a classic pcap file: magic bytes {found}{hint}", found = hex4(found), hint = magic_hint(found))]
    BadMagic {
        /// File name as given to the reader.
        path: String,
        /// The four bytes found at the start of the file.
        found: [u8; 4],
    },

    /// The file ends inside the 24-byte global header.
    #[error("{path}: truncated pcap global header (got {got} of 24 bytes)")]
    TruncatedGlobalHeader {
        /// File name as given to the reader.
        path: String,
        /// Bytes present.
        got: usize,
    },

    /// The link-layer header type is not one the reader decodes.
    #[error(
        "{path}: link type {link_type}{name} is not an Ethernet or IP capture (read: 0 BSD \
         loopback, 1 Ethernet, 12, 14 or 101 raw IP, 108 OpenBSD loopback, 113 Linux \
         cooked, 228 raw IPv4, 276 Linux cooked v2)",
        name = link_type_name(*link_type)
    )]
    UnsupportedLinkType {
        /// File name as given to the reader.
        path: String,
        /// The link type (lower 16 bits of the header field).
        link_type: u32,
    },

    /// A record stamped well before an earlier one: replayed in file order, it and
    /// every record between would wait behind the later one.
    #[error(
        "{path}: record {record}: its timestamp is {back_us} µs before record {latest}'s; \
         the capture is not in time order (sort it with `reordercap IN OUT`)"
    )]
    BackInTime {
        /// File name as given to the reader.
        path: String,
        /// Record number, counting from 1.
        record: u64,
        /// The record with the latest timestamp before it.
        latest: u64,
        /// How far back, in µs.
        back_us: u64,
    },

    /// The file ends inside a 16-byte record header.
    #[error("{path}: record {record} at byte {offset}: truncated record header (got {got} of 16 bytes)")]
    TruncatedRecordHeader {
        /// File name as given to the reader.
        path: String,
        /// Record number, counting from 1 (as Wireshark numbers frames).
        record: u64,
        /// Byte offset of the record header in the file.
        offset: u64,
        /// Bytes present.
        got: usize,
    },

    /// The file ends inside a record's captured bytes.
    #[error("{path}: record {record} at byte {offset}: truncated record body (got {got} of {expected} bytes)")]
    TruncatedRecordBody {
        /// File name as given to the reader.
        path: String,
        /// Record number, counting from 1.
        record: u64,
        /// Byte offset of the record header in the file.
        offset: u64,
        /// Bytes present.
        got: usize,
        /// Bytes the record header announced (`incl_len`).
        expected: u32,
    },

    /// A record header holds values no valid capture can have.
    #[error("{path}: record {record} at byte {offset}: corrupt record: {detail}")]
    CorruptRecord {
        /// File name as given to the reader.
        path: String,
        /// Record number, counting from 1.
        record: u64,
        /// Byte offset of the record header in the file.
        offset: u64,
        /// What is wrong.
        detail: String,
    },

    /// An strace line that cannot be parsed.
    #[error("{path}:{line}: {what} `{text}`")]
    StraceSyntax {
        /// File name as given to the reader.
        path: String,
        /// Line number, counting from 1.
        line: u64,
        /// What could not be parsed.
        what: &'static str,
        /// The offending text, shortened to about 60 characters.
        text: String,
    },

    /// An strace log that mixes `-tt` and `-ttt` timestamps.
    #[error("{path}:{line}: timestamp `{text}` is {found} but earlier lines are {first}; a log must use one clock")]
    StraceMixedClock {
        /// File name as given to the reader.
        path: String,
        /// Line number, counting from 1.
        line: u64,
        /// The clock of the first timestamp in the file.
        first: StraceClock,
        /// The clock of this line's timestamp.
        found: StraceClock,
        /// The timestamp text.
        text: String,
    },

    /// `<... name resumed>` or `<unfinished ...>` that does not pair up.
    #[error("{path}:{line}: pid {pid}: {detail}")]
    StraceUnpaired {
        /// File name as given to the reader.
        path: String,
        /// Line number, counting from 1.
        line: u64,
        /// The process id of the line.
        pid: u32,
        /// What does not pair up.
        detail: String,
    },

    /// A line longer than [`strace::MAX_LINE_BYTES`]: not an strace log (or a device
    /// such as `/dev/zero` that never ends a line).
    #[error(
        "{path}:{line}: line is longer than {max} bytes; no strace line is this long (is this an strace log?)",
        max = strace::MAX_LINE_BYTES
    )]
    StraceLineTooLong {
        /// File name as given to the reader.
        path: String,
        /// Line number, counting from 1.
        line: u64,
    },

    /// More calls `<unfinished ...>` at once than [`strace::MAX_UNFINISHED`].
    #[error(
        "{path}:{line}: more than {max} calls are unfinished at once (one per thread; is this an strace log?)",
        max = strace::MAX_UNFINISHED
    )]
    StraceTooManyUnfinished {
        /// File name as given to the reader.
        path: String,
        /// Line number, counting from 1.
        line: u64,
    },

    /// A capture none of whose frames is to or from the host, so nothing would be
    /// replayed.
    #[error("{path}: none of its {frames} frames is an IPv4 packet to or from workload.host = {host}")]
    NoHostFrames {
        /// File name of the pcap.
        path: String,
        /// Frames in the file.
        frames: u64,
        /// The host address.
        host: std::net::Ipv4Addr,
    },

    /// Every frame the host receives in a capture is larger than the simulated NIC's
    /// receive buffer, so the NIC would drop them all.
    #[error(
        "{path}: all {frames} received frames are larger than nic.rx_buffer_bytes = {buffer} \
         (largest {largest} bytes), so the NIC would drop every one; raise nic.rx_buffer_bytes \
         (captures on loopback or with GRO/TSO hold frames up to 64 KiB)"
    )]
    FramesExceedBuffer {
        /// File name of the pcap.
        path: String,
        /// Received frames in the file.
        frames: u64,
        /// Size of the largest received frame (`orig_len`).
        largest: u32,
        /// The NIC receive buffer in bytes.
        buffer: u64,
    },
}

/// Shortens `text` to at most `max` characters (on a character boundary) for quoting in an
/// error message, marking the cut with `...`, and [`escape`]s what is left.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => escape(text),
        Some((cut, _)) => format!("{}...", escape(&text[..cut])),
    }
}

/// Makes input text safe to print: control characters (`\t`, `\r`, `\n`, ESC as
/// `\x1b`, DEL, C1 controls) and the Unicode bidirectional and zero-width format
/// characters become visible escapes, so a hostile trace line cannot move the cursor,
/// recolour the terminal or reorder the text around it. Everything else, backslashes
/// included, is kept as is: strace's own escapes stay readable.
pub fn escape(text: &str) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            // `is_control` is Unicode's Cc category: all of it lies below U+0100.
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}' => {
                let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

fn hex4(b: &[u8; 4]) -> String {
    format!("{:02x} {:02x} {:02x} {:02x}", b[0], b[1], b[2], b[3])
}

fn magic_hint(b: &[u8; 4]) -> &'static str {
    match b {
        [0x0a, 0x0d, 0x0d, 0x0a] => " (this is pcapng; convert it with `editcap -F pcap IN OUT` or capture with `tcpdump -w`)",
        [0x1f, 0x8b, _, _] => " (this is gzip-compressed; decompress it first)",
        _ => " (expected a1 b2 c3 d4 or a1 b2 3c 4d in either byte order)",
    }
}

/// libpcap's description of the link types a capture is likely to carry.
fn link_type_name(link_type: u32) -> &'static str {
    match link_type {
        6 => " (Token Ring)",
        9 => " (PPP)",
        10 => " (FDDI)",
        104 => " (Cisco HDLC)",
        105 => " (802.11)",
        119 => " (802.11 Prism)",
        127 => " (802.11 radiotap)",
        143 => " (DOCSIS)",
        147..=162 => " (user-defined)",
        187 => " (Bluetooth HCI H4)",
        189 => " (USB Linux)",
        195 => " (802.15.4)",
        220 => " (USB Linux mmapped)",
        229 => " (raw IPv6)",
        249 => " (USBPcap)",
        253 => " (Linux netlink)",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Error messages name the file and place in the forms the docs promise.
    #[test]
    fn messages_name_file_and_place() {
        let e = TraceError::TruncatedRecordHeader { path: "traces/x.pcap".into(), record: 12, offset: 4096, got: 7 };
        assert_eq!(e.to_string(), "traces/x.pcap: record 12 at byte 4096: truncated record header (got 7 of 16 bytes)");
        let e = TraceError::StraceSyntax { path: "x.strace".into(), line: 17, what: "cannot parse timestamp", text: "12:3x:00.1".into() };
        assert_eq!(e.to_string(), "x.strace:17: cannot parse timestamp `12:3x:00.1`");
        let e = TraceError::BadMagic { path: "a.pcap".into(), found: [0x0a, 0x0d, 0x0d, 0x0a] };
        assert!(e.to_string().starts_with("a.pcap: not a classic pcap file: magic bytes 0a 0d 0d 0a"));
        assert!(e.to_string().contains("pcapng"));
    }

    /// Control, bidirectional and zero-width characters become visible escapes; the rest,
    /// backslashes included, is kept; escaping twice changes nothing.
    #[test]
    fn escape_makes_text_printable() {
        let raw = "a\tb\r\n\x1b[31m\x07\x7f\u{85}\u{202e}\u{200b}é\\x";
        let shown = escape(raw);
        assert_eq!(shown, "a\\tb\\r\\n\\x1b[31m\\x07\\x7f\\x85\\u{202e}\\u{200b}é\\x");
        assert_eq!(escape(&shown), shown);
        assert_eq!(excerpt("\x1b\x1b\x1b", 2), "\\x1b\\x1b...");
    }

    /// Excerpts cut on character boundaries and mark the cut.
    #[test]
    fn excerpt_cuts_on_char_boundary() {
        assert_eq!(excerpt("short", 60), "short");
        assert_eq!(excerpt("ééééé", 3), "ééé...");
    }
}
