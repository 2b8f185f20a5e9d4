//! Workloads: where packets and system calls come from.
//!
//! Every source keeps exactly one stimulus pending (arrivals are generated
//! lazily), and sources with several streams merge them in time order. A
//! closed-loop flood generates nothing on its own: it is driven by feedback
//! from the driver (`rx_serviced`) or by the sending application.

mod script;
mod synthetic;
mod trace;

use crate::config::{ArrivalsConfig, FloodConfig, Process, Scenario, ScriptConfig, TraceConfig, WorkloadConfig};
use crate::engine::Time;
use crate::error::Result;
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

impl Workload {
    pub fn new(s: &Scenario, base_dir: &std::path::Path) -> Result<Self> {
        let rng = Pcg64Mcg::seed_from_u64(s.run.seed);
        Ok(match &s.workload {
            WorkloadConfig::Flood(FloodConfig { direction, packet_bytes, gap_cycles }) => {
                Workload::Flood { receive: *direction == crate::config::Direction::Rx, bytes: *packet_bytes, gap: *gap_cycles, started: false }
            }
            WorkloadConfig::Arrivals(ArrivalsConfig { process, rate_pps, packet_bytes, first_ns }) => {
                let (mean_gap, next) = (s.cpu.clock_mhz * 1e6 / rate_pps, first_ns * s.cpu.clock_mhz / 1000.0);
                match process {
                    Process::Periodic => Workload::Periodic { gap: mean_gap, bytes: *packet_bytes, next },
                    Process::Poisson => Workload::Poisson { mean_gap, bytes: *packet_bytes, next, rng },
                }
            }
            WorkloadConfig::Script(ScriptConfig { events: Some(events), .. }) => Workload::Script(Box::new(Script::inline(events))),
            WorkloadConfig::Script(ScriptConfig { events_file: Some(file), .. }) => Workload::Script(Box::new(Script::file(&base_dir.join(file), s.nic.rx_buffer_bytes, !s.code.selected())?)),
            // `Scenario::check` requires one of the two.
            WorkloadConfig::Script(_) => Workload::Idle,
            WorkloadConfig::Trace(TraceConfig { pcap, strace, host }) => {
                Workload::Trace(Box::new(TraceSource::open(s, base_dir, pcap, strace.as_deref(), host)?))
            }
            WorkloadConfig::Synthetic(g) => Workload::Synthetic(Box::new(Synthetic::new(s, g, rng))),
            WorkloadConfig::NullRpc(_) | WorkloadConfig::Exerciser(_) => Workload::Idle,
        })
    }

    /// The application floods sends of this size, if that is the workload.
    pub fn send_flood(&self) -> Option<(u32, u64)> {
        match *self {
            Workload::Flood { receive: false, bytes, gap, .. } => Some((bytes, gap)),
            _ => None,
        }
    }

    /// Closed-loop receive: when the next frame follows one the driver took.
    pub fn rx_serviced(&self, now: Time) -> Option<(Time, Stimulus)> {
        match *self {
            Workload::Flood { receive: true, bytes, gap, .. } => Some((now + gap, Stimulus::Receive { bytes })),
            _ => None,
        }
    }

    /// The next stimulus of the open-loop sources, in time order. Inline for
    /// Poisson arrivals (once per frame on the bench), the rest out of line:
    /// with periodic arrivals inline too, LLVM tested for them first.
    #[inline(always)]
    pub fn next_stimulus(&mut self) -> Result<Option<(Time, Stimulus)>> {
        if let Workload::Poisson { mean_gap, bytes, next, rng } = self {
            let gap = *mean_gap * rng.sample::<f64, _>(rand_distr::Exp1);
            return Ok(Some(arrival(next, gap, *bytes)));
        }
        self.next_other()
    }

    fn next_other(&mut self) -> Result<Option<(Time, Stimulus)>> {
        Ok(match self {
            // Poisson arrivals are handled inline above.
            Workload::Idle | Workload::Poisson { .. } => None,
            Workload::Periodic { gap, bytes, next } => Some(arrival(next, *gap, *bytes)),
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

/// Uniformly random instants within `[start, start + span)`, sorted: the
/// arrivals of one generated interval.
fn scatter(rng: &mut impl Rng, n: u64, start: Time, span: u64) -> Vec<Time> {
    let mut v: Vec<Time> = (0..n).map(|_| start + rng.random_range(0..span.max(1))).collect();
    v.sort_unstable();
    v
}
