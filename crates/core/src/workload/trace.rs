//! Trace-driven workload: received and sent frames from a pcap capture, other
//! system calls from an strace log, merged in time order and converted from
//! wall-clock nanoseconds to cycles at the configured clock (as the paper
//! converted its microsecond traces to 200 MHz cycles).
//!
//! Time zero is the earliest record of either file. An `strace -tt` log
//! carries only the time of day; it is placed on the pcap's day, taking the
//! capture's clock as UTC (strace prints local time: capture with TZ=UTC).
//! System calls that move packets (send, recv, ...) are not replayed: the
//! pcap already drives the packet work, and replaying both would count it
//! twice.
//!
//! Both files are read through once at open, so a malformed record anywhere
//! is reported before the run, not only if the run happens to reach it.

use super::Stimulus;
use crate::config::Scenario;
use crate::engine::Time;
use crate::error::{Error, Result};
use crate::trace::{Direction, PcapReader, StraceClock, StraceReader, SyscallKind};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

const NS_PER_DAY: u64 = 86_400 * 1_000_000_000;

pub struct TraceSource {
    pcap: PcapReader<BufReader<File>>,
    strace: Option<StraceReader<BufReader<File>>>,
    clock_mhz: f64,
    /// Wall-clock origin, ns since the epoch.
    origin_ns: u64,
    /// Added to strace time-of-day stamps to put them on the pcap's day.
    strace_day_ns: u64,
    next_pkt: Option<(u64, Stimulus)>,
    next_sys: Option<u64>,
}

impl TraceSource {
    pub fn open(s: &Scenario, base: &Path, pcap: &str, strace: Option<&str>, host: &str) -> Result<Self> {
        let (pcap_path, strace_path) = (base.join(pcap), strace.map(|p| base.join(p)));
        let host: std::net::Ipv4Addr = host.parse().map_err(|_| Error::Config { file: "scenario".into(), key: "workload.host".into(), line: None, msg: format!("`{host}` is not an IPv4 address") })?;
        for rec in PcapReader::open(&pcap_path, host)? {
            rec?;
        }
        if let Some(p) = &strace_path {
            for rec in StraceReader::open(p)? {
                rec?;
            }
        }
        let mut src = Self {
            pcap: PcapReader::open(&pcap_path, host)?,
            strace: strace_path.map(|p| StraceReader::open(&p)).transpose()?,
            clock_mhz: s.cpu.clock_mhz,
            origin_ns: 0,
            strace_day_ns: 0,
            next_pkt: None,
            next_sys: None,
        };
        src.next_pkt = src.read_packet()?;
        if let Some((t, _)) = src.next_pkt {
            src.strace_day_ns = t - t % NS_PER_DAY;
        }
        src.next_sys = src.read_syscall()?;
        src.origin_ns = match (src.next_pkt, src.next_sys) {
            (Some((a, _)), Some(b)) => a.min(b),
            (Some((a, _)), None) => a,
            (None, Some(b)) => b,
            (None, None) => 0,
        };
        Ok(src)
    }

    fn read_packet(&mut self) -> Result<Option<(u64, Stimulus)>> {
        for rec in self.pcap.by_ref() {
            let rec = rec?;
            let s = match rec.direction {
                Direction::Rx => Stimulus::Receive { bytes: rec.wire_bytes },
                Direction::Tx => Stimulus::Send { bytes: rec.wire_bytes },
                Direction::Other => continue,
            };
            return Ok(Some((rec.time_ns, s)));
        }
        Ok(None)
    }

    fn read_syscall(&mut self) -> Result<Option<u64>> {
        let Some(reader) = self.strace.as_mut() else { return Ok(None) };
        while let Some(rec) = reader.next() {
            let rec = rec?;
            if rec.kind != SyscallKind::Other {
                continue;
            }
            let day = if reader.clock() == Some(StraceClock::TimeOfDay) { self.strace_day_ns } else { 0 };
            return Ok(Some(rec.time_ns + day));
        }
        Ok(None)
    }

    fn cycles(&self, ns: u64) -> Time {
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
            Ok(Some((self.cycles(ns), s)))
        } else {
            let ns = self.next_sys.take().expect("checked above");
            self.next_sys = self.read_syscall()?;
            Ok(Some((self.cycles(ns), Stimulus::Syscall)))
        }
    }
}
