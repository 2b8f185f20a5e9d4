//! Trace-driven workload: received and sent frames from a pcap capture, other
//! system calls from an strace log, merged in time order and converted from
//! wall-clock nanoseconds to cycles at the configured clock (as the paper
//! converted its microsecond traces to 200 MHz cycles).
//!
//! Both files are read through once at open, before the run. That pass
//! reports a malformed record anywhere, not only if the run happens to reach
//! it, and it finds the earliest replayed record of either file: that record
//! is time zero. Records are replayed in file order, so one that comes after
//! a later-stamped record is reordered: the run counts it
//! (`reordered_stimuli`) and applies it at once. A capture reorders records
//! by a few µs (frames stamped on different CPUs); one stamped more than
//! [`MAX_REORDER_NS`] before an earlier record is refused, naming it, since
//! in file order every record between would wait behind the later one (a
//! capture that jumps ahead by hours would replay nothing). None is ever
//! before time zero, so none is clamped uncounted. The pass also checks the frames
//! against the NIC: when every received frame is larger than
//! `nic.rx_buffer_bytes` the run would only drop frames, and that is an
//! error; otherwise oversize frames are counted ([`TraceSource::oversize_frames`]).
//!
//! An `strace -tt` log carries only the time of day; it is placed on the day
//! that puts its first call nearest the first packet, taking the capture's
//! clock as UTC (strace prints local time: capture with TZ=UTC), and moves
//! to the next day when its clock jumps back by more than half a day
//! (midnight). System calls that move packets (send, recv, ...) are not
//! replayed: the pcap already drives the packet work, and replaying both
//! would count it twice.

use super::Stimulus;
use crate::engine::Time;
use crate::error::{Error, Result};
use crate::trace::{Direction, PacketRecord, PcapReader, StraceClock, StraceReader, SyscallKind, TraceError};
use std::fs::File;
use std::io::BufReader;
use std::net::Ipv4Addr;
use std::path::Path;

const NS_PER_DAY: u64 = 86_400 * 1_000_000_000;

/// How far a replayed frame may be stamped before an earlier one: 1 ms.
pub const MAX_REORDER_NS: u64 = 1_000_000;

pub struct TraceSource {
    pcap: PcapReader<BufReader<File>>,
    strace: Option<StraceReader<BufReader<File>>>,
    days: StraceDays,
    clock_mhz: f64,
    /// Wall-clock origin, ns since the epoch: the earliest replayed record.
    origin_ns: u64,
    rx_buffer_bytes: u64,
    end: Time,
    /// Received frames before the run's end larger than the NIC buffer.
    oversize: u64,
    next_pkt: Option<(u64, Stimulus)>,
    next_sys: Option<u64>,
}

impl TraceSource {
    pub fn open(h: &super::Host, base: &Path, pcap: &str, strace: Option<&str>, host: &str) -> Result<Self> {
        let (pcap_path, strace_path) = (base.join(pcap), strace.map(|p| base.join(p)));
        let host: Ipv4Addr = host.parse().map_err(|_| Error::Config {
            file: h.file.to_string(),
            key: "workload.host".into(),
            line: None,
            msg: format!("`{host}` is not an IPv4 address"),
        })?;
        let scan = Scan::run(&pcap_path, strace_path.as_deref(), host, h.rx_buffer_bytes)?;
        let mut src = Self {
            pcap: PcapReader::open(&pcap_path, host)?,
            strace: strace_path.map(|p| StraceReader::open(&p)).transpose()?,
            days: StraceDays::new(scan.first_pkt_ns),
            clock_mhz: h.clock_mhz,
            origin_ns: scan.earliest_ns,
            rx_buffer_bytes: h.rx_buffer_bytes,
            end: h.end,
            oversize: 0,
            next_pkt: None,
            next_sys: None,
        };
        src.next_pkt = src.read_packet()?;
        src.next_sys = src.read_syscall()?;
        Ok(src)
    }

    /// Received frames fed to the NIC before the run's end that are larger than its
    /// whole receive buffer (`nic.rx_buffer_bytes`): the NIC drops each of them.
    pub fn oversize_frames(&self) -> u64 {
        self.oversize
    }

    fn read_packet(&mut self) -> Result<Option<(u64, Stimulus)>> {
        for rec in self.pcap.by_ref() {
            if let Some(s) = stimulus(&rec?) {
                return Ok(Some(s));
            }
        }
        Ok(None)
    }

    fn read_syscall(&mut self) -> Result<Option<u64>> {
        let Some(reader) = self.strace.as_mut() else {
            return Ok(None);
        };
        next_syscall(reader, &mut self.days)
    }

    fn cycles(&self, ns: u64) -> Time {
        // Never below the origin: it is the earliest record.
        (ns.saturating_sub(self.origin_ns) as f64 * self.clock_mhz / 1e3).round() as Time
    }

    pub fn next_stimulus(&mut self) -> Result<Option<(Time, Stimulus)>> {
        let take_pkt = match (self.next_pkt, self.next_sys) {
            (None, None) => return Ok(None),
            (Some((p, _)), Some(q)) => p <= q,
            (Some(_), None) => true,
            (None, Some(_)) => false,
        };
        if take_pkt {
            let (ns, s) = self.next_pkt.take().expect("checked above");
            self.next_pkt = self.read_packet()?;
            let at = self.cycles(ns);
            if let Stimulus::Receive { bytes } = s
                && u64::from(bytes) > self.rx_buffer_bytes
                && at < self.end
            {
                self.oversize += 1;
            }
            Ok(Some((at, s)))
        } else {
            let ns = self.next_sys.take().expect("checked above");
            self.next_sys = self.read_syscall()?;
            Ok(Some((self.cycles(ns), Stimulus::Syscall)))
        }
    }
}

/// The stimulus a packet makes, with its time; `None` for packets neither to nor
/// from the host.
fn stimulus(rec: &PacketRecord) -> Option<(u64, Stimulus)> {
    let s = match rec.direction {
        Direction::Rx => Stimulus::Receive { bytes: rec.wire_bytes },
        Direction::Tx => Stimulus::Send { bytes: rec.wire_bytes },
        Direction::Other => return None,
    };
    Some((rec.time_ns, s))
}

/// The next replayed system call's time in ns on the pcap's clock.
fn next_syscall(reader: &mut StraceReader<BufReader<File>>, days: &mut StraceDays) -> Result<Option<u64>> {
    while let Some(rec) = reader.next() {
        let rec = rec?;
        if rec.kind == SyscallKind::Other {
            return Ok(Some(days.place(reader.clock(), rec.time_ns)));
        }
    }
    Ok(None)
}

/// Puts `strace -tt` times of day on the pcap's calendar (see the module notes). It
/// decides from the calls alone, so the pass before the run and the run agree.
#[derive(Debug, Clone, Copy)]
struct StraceDays {
    /// The first packet's time, which the first call is placed near.
    anchor_ns: u64,
    /// ns added to a time of day; fixed by the first call.
    day_ns: Option<u64>,
    last_ns: u64,
}

impl StraceDays {
    fn new(first_pkt_ns: Option<u64>) -> Self {
        Self { anchor_ns: first_pkt_ns.unwrap_or(0), day_ns: None, last_ns: 0 }
    }

    /// The midnight (ns since the epoch) that puts time of day `t` nearest the anchor.
    fn nearest_day(&self, t: u64) -> u64 {
        let base = self.anchor_ns - self.anchor_ns % NS_PER_DAY;
        [base.saturating_sub(NS_PER_DAY), base, base.saturating_add(NS_PER_DAY)]
            .into_iter()
            .min_by_key(|d| d.saturating_add(t).abs_diff(self.anchor_ns))
            .unwrap_or(base)
    }

    fn place(&mut self, clock: Option<StraceClock>, t: u64) -> u64 {
        if clock != Some(StraceClock::TimeOfDay) {
            return t;
        }
        let day = match self.day_ns {
            Some(d) => d,
            None => self.nearest_day(t),
        };
        let mut at = day.saturating_add(t);
        let day = if at.saturating_add(NS_PER_DAY / 2) < self.last_ns {
            at = at.saturating_add(NS_PER_DAY);
            day.saturating_add(NS_PER_DAY)
        } else {
            day
        };
        (self.day_ns, self.last_ns) = (Some(day), at);
        at
    }
}

/// What the pass before the run learns from the two files.
struct Scan {
    first_pkt_ns: Option<u64>,
    earliest_ns: u64,
}

impl Scan {
    fn run(pcap: &Path, strace: Option<&Path>, host: Ipv4Addr, rx_buffer_bytes: u64) -> Result<Self> {
        let (mut records, mut rx, mut oversize, mut largest) = (0u64, 0u64, 0u64, 0u32);
        let (mut first_pkt_ns, mut earliest): (Option<u64>, Option<u64>) = (None, None);
        let path = || crate::trace::escape(&pcap.display().to_string());
        // The latest replayed timestamp so far, and its record.
        let mut latest = (0u64, 0u64);
        for rec in PcapReader::open(pcap, host)? {
            let rec = rec?;
            records += 1;
            let Some((t, s)) = stimulus(&rec) else {
                continue;
            };
            if t.saturating_add(MAX_REORDER_NS) < latest.0 {
                return Err(TraceError::BackInTime { path: path(), record: records, latest: latest.1, back_us: (latest.0 - t) / 1_000 }.into());
            }
            if t >= latest.0 {
                latest = (t, records);
            }
            first_pkt_ns.get_or_insert(t);
            earliest = Some(earliest.map_or(t, |e| e.min(t)));
            if let Stimulus::Receive { bytes } = s {
                rx += 1;
                largest = largest.max(bytes);
                oversize += u64::from(u64::from(bytes) > rx_buffer_bytes);
            }
        }
        if records > 0 && first_pkt_ns.is_none() {
            return Err(TraceError::NoHostFrames { path: path(), frames: records, host }.into());
        }
        if rx > 0 && oversize == rx {
            return Err(TraceError::FramesExceedBuffer { path: path(), frames: rx, largest, buffer: rx_buffer_bytes }.into());
        }
        if let Some(p) = strace {
            let (mut reader, mut days) = (StraceReader::open(p)?, StraceDays::new(first_pkt_ns));
            while let Some(t) = next_syscall(&mut reader, &mut days)? {
                earliest = Some(earliest.map_or(t, |e| e.min(t)));
            }
        }
        Ok(Self { first_pkt_ns, earliest_ns: earliest.unwrap_or(0) })
    }
}
