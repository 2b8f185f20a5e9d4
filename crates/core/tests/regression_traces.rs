//! One test per fault found in the trace readers and the trace workload (issue 12,
//! "Hostile input and long runs"), named after it.

use std::io::Cursor;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use irqsim_core::trace::{StraceReader, TraceError};
use irqsim_core::workload::{Stimulus, TraceSource};
use irqsim_core::{Record, Scenario, parse_override, simulate};

const HOST: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const PEER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

/// One captured frame: time in µs since the epoch, source, destination, length on the wire.
type Frame = (u64, Ipv4Addr, Ipv4Addr, u32);

/// A classic µs pcap (Ethernet, snap length 64) whose records keep the first 64 bytes of
/// an Ethernet + IPv4 + UDP frame and the frame's full length in `orig_len`.
fn pcap_bytes(frames: &[Frame]) -> Vec<u8> {
    let mut b = Vec::new();
    for v in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 64, 1] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for &(us, src, dst, wire) in frames {
        let mut frame = vec![0u8; 12];
        frame.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0]);
        let ip_len = u16::try_from(wire.saturating_sub(14)).unwrap_or(u16::MAX);
        frame[16..18].copy_from_slice(&ip_len.to_be_bytes());
        frame.extend_from_slice(&src.octets());
        frame.extend_from_slice(&dst.octets());
        frame.resize(64.min(wire as usize), 0);
        let (sec, usec) = ((us / 1_000_000) as u32, (us % 1_000_000) as u32);
        for v in [sec, usec, frame.len() as u32, wire] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&frame);
    }
    b
}

/// A fresh directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("regression_traces").join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A 200 MHz trace scenario replaying `pcap` (and `strace`) for host 10.0.0.1.
fn scenario(pcap: &str, strace: Option<&str>, sets: &[&str]) -> Scenario {
    let strace = strace.map(|s| format!("strace = {s:?}\n")).unwrap_or_default();
    let text = format!(
        "name = \"trace\"\n[run]\nduration_ms = 10.0\n[cpu]\nclock_mhz = 200.0\n\
         [workload]\nkind = \"trace\"\npcap = {pcap:?}\n{strace}host = \"10.0.0.1\"\n"
    );
    let overrides: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    Scenario::from_toml(&text, "trace.toml", &overrides).unwrap()
}

fn open(dir: &Path, s: &Scenario) -> irqsim_core::Result<TraceSource> {
    let irqsim_core::config::WorkloadConfig::Trace(t) = &s.workload else { unreachable!() };
    TraceSource::open(&s.workload_host(), dir, &t.pcap, t.strace.as_deref(), &t.host)
}

fn stimuli(src: &mut TraceSource) -> Vec<(u64, Stimulus)> {
    std::iter::from_fn(|| src.next_stimulus().unwrap()).collect()
}

fn write_pcap(dir: &Path, name: &str, frames: &[Frame]) {
    std::fs::write(dir.join(name), pcap_bytes(frames)).unwrap();
}

/// An strace "log" with no newline (`/dev/zero`) grew the line buffer without bound
/// (6.4 GB before it was killed). A line is now at most `MAX_LINE_BYTES`, and a longer
/// one is one error naming the file and the line.
#[test]
fn strace_line_length_is_bounded() {
    let zero = std::io::BufReader::new(std::fs::File::open("/dev/zero").unwrap());
    let mut reader = StraceReader::new(zero, "/dev/zero");
    let e = reader.next().unwrap().unwrap_err();
    assert!(matches!(e, TraceError::StraceLineTooLong { line: 1, .. }), "{e:?}");
    assert_eq!(e.to_string(), "/dev/zero:1: line is longer than 1048576 bytes; no strace line is this long (is this an strace log?)");
    assert!(reader.next().is_none());

    // Through a whole scenario, as the issue found it: a device is no log at all
    // (since issue 22 a trace must be a regular file), refused before any read.
    let dir = scratch("dev_zero");
    write_pcap(&dir, "ok.pcap", &[(1_000_000, PEER, HOST, 100)]);
    let s = scenario("ok.pcap", Some("/dev/zero"), &[]);
    let e = simulate(&s, &dir, Record::default()).err().expect("an error, not a hang");
    assert_eq!(e.to_string(), "/dev/zero: not a regular file (a character device); give a file");
    // A FIFO is refused the same way, before its open would block for a writer.
    let fifo = dir.join("trace.pcap");
    let _ = std::fs::remove_file(&fifo);
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let s = scenario("trace.pcap", None, &[]);
    let e = simulate(&s, &dir, Record::default()).err().expect("an error, not a hang");
    assert_eq!(e.to_string(), format!("{}: not a regular file (a FIFO); give a file", fifo.display()));

    // The limit is on the line, not the file: a longest-allowed line, then a longer one.
    let max = irqsim_core::trace::strace::MAX_LINE_BYTES;
    let head = "1.5 read(3, \"\", 1) = 0 <0.1>";
    let mut text = format!("{head}{}\n", " ".repeat(max - head.len() - 1));
    assert_eq!(text.len(), max);
    text.push_str(&"x".repeat(max + 1));
    let results: Vec<_> = StraceReader::new(Cursor::new(text), "long.strace").collect();
    assert!(results[0].is_ok(), "{:?}", results[0]);
    assert_eq!(results[1].as_ref().unwrap_err().to_string().split(": ").next(), Some("long.strace:2"));
}

/// Control characters and escape sequences in a trace line were echoed raw into error
/// messages (and so to the terminal). Quoted input is now escaped.
#[test]
fn control_characters_in_trace_errors_are_escaped() {
    let err = |text: &str, name: &str| -> String {
        let e = StraceReader::new(Cursor::new(text), name).find_map(Result::err);
        e.expect("an error").to_string()
    };
    let cases = [
        ("1.5 \x1b[2J\x1b[31mred(3) = 0\n", "x.strace", "`1.5 \\x1b[2J\\x1b[31mred(3) = 0`"),
        ("1.5\x07 read(3) = 0\n", "x.strace", "timestamp `1.5\\x07`"),
        ("9 1.5 <... \x1b]0;owned\x07 resumed>) = 0\n", "x.strace", "`<... \\x1b]0;owned\\x07 resumed>`"),
        ("1.5 \u{202e}evil(3) = 0\r\n", "x.strace", "\\u{202e}evil(3) = 0`"),
        ("garbage\n", "dir\x1b[31m/x.strace", "dir\\x1b[31m/x.strace:1:"),
    ];
    for (text, name, expected) in cases {
        let msg = err(text, name);
        assert!(msg.contains(expected), "{msg:?} lacks {expected:?}");
        assert!(!msg.chars().any(|c| c.is_control() || c == '\u{202e}'), "{msg:?}");
    }
    // A pcap's name is escaped the same way.
    let e = irqsim_core::trace::PcapReader::new(Cursor::new(b"x"), "\x1b[1mcap", HOST).err().unwrap();
    assert!(e.to_string().starts_with("\\x1b[1mcap: "), "{e}");
}

/// Frames larger than the NIC's receive buffer (loopback or GRO captures hold 64 KB
/// frames) were dropped silently. Now a capture whose every received frame is too large
/// is an error, and otherwise the source counts them.
#[test]
fn oversize_frames_are_reported() {
    let dir = scratch("oversize");
    let big = 65_226; // a 64 KiB GRO frame on loopback
    write_pcap(&dir, "gro.pcap", &[(1_000_000, PEER, HOST, big), (1_000_100, PEER, HOST, big), (1_000_200, HOST, PEER, 100)]);
    let s = scenario("gro.pcap", None, &[]);
    let e = simulate(&s, &dir, Record::default()).err().expect("every frame would be dropped");
    assert_eq!(
        e.to_string(),
        format!(
            "{}: all 2 received frames are larger than nic.rx_buffer_bytes = 16384 (largest 65226 bytes), \
             so the NIC would drop every one; raise nic.rx_buffer_bytes (captures on loopback or with \
             GRO/TSO hold frames up to 64 KiB)",
            dir.join("gro.pcap").display()
        )
    );
    // A big enough buffer takes them.
    let s = scenario("gro.pcap", None, &["nic.rx_buffer_bytes=131072"]);
    let r = simulate(&s, &dir, Record::default()).unwrap();
    assert_eq!((r.metric("rx_offered"), r.metric("rx_dropped_nic")), (Some(2.0), Some(0.0)));

    // Some oversize: the run goes on and the source counts them (within the run only).
    // One frame a µs (200 cycles), every other one oversize.
    let frames: Vec<Frame> = (0..7).map(|i| (1_000_000 + i, PEER, HOST, if i % 2 == 0 { big } else { 1500 })).collect();
    write_pcap(&dir, "mixed.pcap", &frames);
    let s = scenario("mixed.pcap", None, &["run.duration_ms=0.0045"]); // 900 cycles: frames 0..=4
    let mut src = open(&dir, &s).unwrap();
    assert_eq!(stimuli(&mut src).len(), 7);
    assert_eq!(src.oversize_frames(), 3, "frames 0, 2 and 4; not 6, at 1200 cycles");
    // A link fast enough to carry a 64 KB frame in under the 1 µs between frames.
    let r = simulate(&scenario("mixed.pcap", None, &["nic.link_mbps=1000000"]), &dir, Record::default()).unwrap();
    assert_eq!((r.metric("rx_offered"), r.metric("rx_dropped_nic")), (Some(7.0), Some(4.0)));
}

/// A capture none of whose frames is to or from the host replayed nothing, silently.
#[test]
fn capture_without_the_host_is_an_error() {
    let dir = scratch("no_host");
    let other = Ipv4Addr::new(192, 168, 1, 9);
    write_pcap(&dir, "other.pcap", &[(1_000_000, PEER, other, 100), (1_000_010, other, PEER, 100)]);
    let e = simulate(&scenario("other.pcap", None, &[]), &dir, Record::default()).err().unwrap();
    let path = dir.join("other.pcap");
    assert_eq!(e.to_string(), format!("{}: none of its 2 frames is an IPv4 packet to or from workload.host = 10.0.0.1", path.display()));
    // A capture with no frames at all is not this error: there is nothing to misdirect.
    write_pcap(&dir, "empty.pcap", &[]);
    assert!(simulate(&scenario("empty.pcap", None, &[]), &dir, Record::default()).is_ok());
}

/// Time zero was the first record, not the earliest (as documented); records before it
/// were clamped to cycle 0 and not counted as reordered. Time zero is now the earliest
/// replayed record of either file, and a record out of order is counted.
#[test]
fn time_zero_is_the_earliest_record_and_reordering_is_counted() {
    let dir = scratch("time_zero");
    // Second record 10 µs before the first; an strace call 20 µs before both.
    write_pcap(&dir, "late.pcap", &[(1_000_010, PEER, HOST, 100), (1_000_000, PEER, HOST, 100), (1_000_050, HOST, PEER, 100)]);
    std::fs::write(dir.join("early.strace"), "0.999990 getpid() = 7\n1.000030 getpid() = 7\n").unwrap();
    let s = scenario("late.pcap", Some("early.strace"), &[]);
    let times: Vec<u64> = stimuli(&mut open(&dir, &s).unwrap()).iter().map(|&(t, _)| t).collect();
    // 200 cycles a µs from 0.999990 s: syscall at 0; packets at 4000, 2000; syscall 8000; send 12000.
    assert_eq!(times, vec![0, 4000, 2000, 8000, 12_000]);
    let r = simulate(&s, &dir, Record::default()).unwrap();
    assert_eq!(r.metric("reordered_stimuli"), Some(1.0));

    // Without the strace the earliest packet is time zero.
    let s = scenario("late.pcap", None, &[]);
    let times: Vec<u64> = stimuli(&mut open(&dir, &s).unwrap()).iter().map(|&(t, _)| t).collect();
    assert_eq!(times, vec![2000, 0, 10_000]);
    let r = simulate(&s, &dir, Record::default()).unwrap();
    assert_eq!(r.metric("reordered_stimuli"), Some(1.0));
}

/// A capture whose timestamps jumped back hid the earlier records: in file order they
/// waited behind the later one, past the run's end, and `rx_offered` was 0. A record
/// stamped more than 1 ms before an earlier one is now refused, naming both; a smaller
/// step is replayed at once and counted, as above.
#[test]
fn a_capture_going_back_in_time_is_refused() {
    let dir = scratch("back_in_time");
    let hour = 3_600_000_000;
    write_pcap(&dir, "back.pcap", &[(1_000_000 + hour, PEER, HOST, 100), (1_000_000, PEER, HOST, 100), (1_000_010, PEER, HOST, 100)]);
    let e = simulate(&scenario("back.pcap", None, &[]), &dir, Record::default()).err().unwrap();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: record 2: its timestamp is 3600000000 µs before record 1's; the capture is not \
             in time order (sort it with `reordercap IN OUT`)",
            dir.join("back.pcap").display()
        )
    );
    // 1 ms back is within a capture's reordering; 1.001 ms is not.
    write_pcap(&dir, "ms.pcap", &[(1_001_000, PEER, HOST, 100), (1_000_000, PEER, HOST, 100)]);
    let r = simulate(&scenario("ms.pcap", None, &[]), &dir, Record::default()).unwrap();
    assert_eq!((r.metric("rx_offered"), r.metric("reordered_stimuli")), (Some(2.0), Some(1.0)));
    write_pcap(&dir, "over.pcap", &[(1_001_001, PEER, HOST, 100), (1_000_000, PEER, HOST, 100)]);
    let e = simulate(&scenario("over.pcap", None, &[]), &dir, Record::default()).err().unwrap();
    assert!(e.to_string().contains("record 2: its timestamp is 1001 µs before record 1's"), "{e}");
}

/// An `strace -tt` log that runs past midnight jumped a day back at 00:00 (its calls
/// landed a day before the capture). Its calls now stay in order across midnight, and
/// one that starts just before the capture's midnight lands on the capture's previous day.
#[test]
fn time_of_day_strace_crosses_midnight() {
    let dir = scratch("midnight");
    let midnight_us = 1_700_006_400 * 1_000_000; // 2023-11-15 00:00:00 UTC
    write_pcap(&dir, "m.pcap", &[(midnight_us + 1000, PEER, HOST, 100)]);
    std::fs::write(dir.join("m.strace"), "23:59:59.999000 getpid() = 7\n00:00:00.002000 getpid() = 7\n").unwrap();
    let s = scenario("m.pcap", Some("m.strace"), &[]);
    let got = stimuli(&mut open(&dir, &s).unwrap());
    // Origin 23:59:59.999 the day before: call at 0, packet at 2 ms, call at 3 ms.
    assert_eq!(got, vec![(0, Stimulus::Syscall), (400_000, Stimulus::Receive { bytes: 100 }), (600_000, Stimulus::Syscall)]);
}

/// A capture of empty frames (`orig_len` 0) replayed frames of 0 bytes, which the NIC
/// stores without limit: a long capture of them grew the NIC's queue with the file. No
/// frame of the supported link types is empty, so such a record is now corrupt.
#[test]
fn empty_frames_are_corrupt_records() {
    let dir = scratch("empty_frames");
    write_pcap(&dir, "empty.pcap", &[(1_000_000, PEER, HOST, 100), (1_000_001, PEER, HOST, 0)]);
    let e = simulate(&scenario("empty.pcap", None, &[]), &dir, Record::default()).err().unwrap();
    let path = dir.join("empty.pcap");
    assert_eq!(e.to_string(), format!("{}: record 2 at byte 104: corrupt record: frame length 0", path.display()));
}
