//! Workloads: where packets and system calls come from.
//!
//! Every source keeps exactly one stimulus pending (arrivals are generated
//! lazily), and sources with several streams merge them in time order. A
//! closed-loop flood generates nothing on its own: it is driven by feedback
//! from the driver (`rx_serviced`) or by the sending application.

pub mod config;
mod script;
mod synthetic;
mod trace;

use crate::engine::Time;
use crate::error::Result;
use config::{ArrivalsConfig, Direction, FloodConfig, Process, ScriptConfig, SyntheticConfig, TraceConfig};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

pub use script::{Script, check_event};
pub use synthetic::Synthetic;
pub use trace::TraceSource;

/// Something the outside world does to the simulated host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stimulus {
    /// A frame reaches the NIC from the wire.
    Receive { bytes: u32 },
    /// The application calls send.
    Send { bytes: u32 },
    /// The application makes some other system call.
    Syscall,
}

pub enum Workload {
    /// Nothing reaches the NIC: the workload drives another device.
    Idle,
    /// Closed loop; `send` floods are driven by the application instead.
    Flood {
        receive: bool,
        bytes: u32,
        gap: u64,
        started: bool,
    },
    /// Poisson arrivals: exponential gaps of mean `mean_gap` cycles. A
    /// variant of its own (not a flag of one for both processes): one test
    /// per frame picks it.
    Poisson {
        mean_gap: f64,
        bytes: u32,
        next: f64,
        rng: Pcg64Mcg,
    },
    /// Arrivals `gap` cycles apart.
    Periodic {
        gap: f64,
        bytes: u32,
        next: f64,
    },
    Script(Box<Script>),
    Trace(Box<TraceSource>),
    Synthetic(Box<Synthetic>),
}

/// What a workload needs to know of the machine it drives.
pub struct Host<'a> {
    /// The scenario's file, for errors.
    pub file: &'a str,
    pub clock_mhz: f64,
    /// `run.seed`: arrivals and generated loads draw from it.
    pub seed: u64,
    /// The run's length in cycles.
    pub end: Time,
    pub rx_buffer_bytes: u64,
}

impl Workload {
    pub fn flood(&FloodConfig { direction, packet_bytes, gap_cycles }: &FloodConfig) -> Self {
        Workload::Flood { receive: direction == Direction::Rx, bytes: packet_bytes, gap: gap_cycles, started: false }
    }

    pub fn arrivals(&ArrivalsConfig { process, rate_pps, packet_bytes, first_ns }: &ArrivalsConfig, host: &Host) -> Self {
        let (mean_gap, next) = (host.clock_mhz * 1e6 / rate_pps, first_ns * host.clock_mhz / 1000.0);
        match process {
            Process::Periodic => Workload::Periodic { gap: mean_gap, bytes: packet_bytes, next },
            Process::Poisson => Workload::Poisson { mean_gap, bytes: packet_bytes, next, rng: Pcg64Mcg::seed_from_u64(host.seed) },
        }
    }

    /// Relative paths resolve from `base_dir`.
    pub fn script(c: &ScriptConfig, base_dir: &std::path::Path, host: &Host) -> Result<Self> {
        Ok(match c {
            ScriptConfig { events: Some(events), .. } => Workload::Script(Box::new(Script::inline(events))),
            ScriptConfig { events_file: Some(file), .. } => Workload::Script(Box::new(Script::file(&base_dir.join(file), host.rx_buffer_bytes)?)),
            // The scenario's check requires one of the two.
            ScriptConfig { .. } => Workload::Idle,
        })
    }

    /// Relative paths resolve from `base_dir`.
    pub fn trace(TraceConfig { pcap, strace, host: ip }: &TraceConfig, base_dir: &std::path::Path, host: &Host) -> Result<Self> {
        Ok(Workload::Trace(Box::new(TraceSource::open(host, base_dir, pcap, strace.as_deref(), ip)?)))
    }

    pub fn synthetic(c: &SyntheticConfig, host: &Host) -> Self {
        Workload::Synthetic(Box::new(Synthetic::new(host.clock_mhz, host.end, c, Pcg64Mcg::seed_from_u64(host.seed))))
    }

    /// The application floods sends of this size, if that is the workload.
    pub fn send_flood(&self) -> Option<(u32, u64)> {
        match *self {
            Workload::Flood { receive: false, bytes, gap, .. } => Some((bytes, gap)),
            _ => None,
        }
    }

    /// Whether the next received frame follows one the driver took (a
    /// closed-loop flood) rather than its own clock.
    pub fn closed_loop_rx(&self) -> bool {
        matches!(self, Workload::Flood { receive: true, .. })
    }

    /// Closed-loop receive: when the next frame follows one the driver took.
    pub fn rx_serviced(&self, now: Time) -> Option<(Time, Stimulus)> {
        match *self {
            Workload::Flood { receive: true, bytes, gap, .. } => Some((now + gap, Stimulus::Receive { bytes })),
            _ => None,
        }
    }

    /// The next stimulus of the open-loop sources, in time order. Inline for
    /// arrivals (once per frame: the bench's Poisson ones, the livelock
    /// study's periodic ones), the rest out of line.
    #[inline(always)]
    pub fn next_stimulus(&mut self) -> Result<Option<(Time, Stimulus)>> {
        if let Workload::Poisson { mean_gap, bytes, next, rng } = self {
            let gap = *mean_gap * rng.sample::<f64, _>(rand_distr::Exp1);
            return Ok(Some(arrival(next, gap, *bytes)));
        } else if let Workload::Periodic { gap, bytes, next } = self {
            return Ok(Some(arrival(next, *gap, *bytes)));
        }
        self.next_other()
    }

    fn next_other(&mut self) -> Result<Option<(Time, Stimulus)>> {
        Ok(match self {
            // Arrivals are handled inline above.
            Workload::Idle | Workload::Poisson { .. } | Workload::Periodic { .. } => None,
            Workload::Flood { receive, bytes, started, .. } => {
                // Only the first frame of a receive flood comes from here.
                let first = *receive && !*started;
                *started = true;
                first.then_some((0, Stimulus::Receive { bytes: *bytes }))
            }
            Workload::Script(s) => s.next_stimulus()?,
            Workload::Trace(t) => t.next_stimulus()?,
            Workload::Synthetic(g) => g.next_stimulus(),
        })
    }
}

/// The arrival due at `next` (rounded to a cycle); the one after comes
/// `gap` cycles later.
#[inline(always)]
fn arrival(next: &mut f64, gap: f64, bytes: u32) -> (Time, Stimulus) {
    let at = *next;
    *next += gap;
    // Through `i64`: fewer instructions than `as u64`'s saturation; the two
    // differ only past 2^63 cycles, where both are past any run's end.
    ((at + 0.5) as i64 as Time, Stimulus::Receive { bytes })
}

/// Uniformly random instants within `[start, start + span)`, handed out in
/// time order. Only those before `end` (the run's) are sorted when drawn; the
/// rest a few at a time as the run reaches them: a 0.05 ms run sorted a whole
/// second of arrivals (over a quarter of a short run's time). The instants
/// and their order are the same either way.
#[derive(Default)]
pub(crate) struct Scattered {
    times: Vec<Time>,
    sorted: usize,
    next: usize,
}

impl Scattered {
    pub(crate) fn draw(rng: &mut impl Rng, n: u64, start: Time, span: u64, end: Time) -> Self {
        let mut times: Vec<Time> = (0..n).map(|_| start + rng.random_range(0..span.max(1))).collect();
        let mut sorted = times.len();
        if start.saturating_add(span) > end {
            sorted = 0;
            for i in 0..times.len() {
                if times[i] < end {
                    times.swap(i, sorted);
                    sorted += 1;
                }
            }
        }
        times[..sorted].sort_unstable();
        Self { times, sorted, next: 0 }
    }

    /// The earliest instant not yet taken.
    pub(crate) fn peek(&mut self) -> Option<Time> {
        if self.next == self.sorted && self.sorted < self.times.len() {
            // Past the run's end (the machine looks one arrival ahead): the earliest few of
            // the rest, as many again as are sorted, are picked out and sorted.
            let rest = &mut self.times[self.sorted..];
            let k = rest.len().min(self.sorted.max(64));
            if k < rest.len() {
                rest.select_nth_unstable(k - 1);
            }
            rest[..k].sort_unstable();
            self.sorted += k;
        }
        self.times.get(self.next).copied()
    }

    pub(crate) fn take(&mut self) {
        self.next += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sorting only the arrivals before the run's end hands out the same instants in the
    /// same order as sorting them all, past the end too.
    #[test]
    fn arrivals_come_in_time_order_wherever_the_run_ends() {
        let all = |end| {
            let mut s = Scattered::draw(&mut Pcg64Mcg::seed_from_u64(7), 10_000, 1_000, 1_000_000, end);
            std::iter::from_fn(|| s.peek().inspect(|_| s.take())).collect::<Vec<_>>()
        };
        let sorted = all(u64::MAX);
        assert!(sorted.is_sorted() && sorted.len() == 10_000);
        for end in [0, 1_000, 1_050, 500_000, 1_001_000] {
            assert_eq!(all(end), sorted, "end {end}");
        }
    }
}
