//! A generated stand-in for the paper's busiest second of RealPlayer traffic:
//! a received bit rate carried by a fixed number of packet interrupts per
//! second (a share of them transmit completions of small sent packets), and a
//! number of system calls per second, all at uniformly random instants.

use super::config::SyntheticConfig;
use super::{Scattered, Stimulus};
use crate::engine::Time;
use rand_pcg::Pcg64Mcg;

/// Arrivals a stream draws at once at most: a second's, 8 bytes each at up to
/// one a cycle, held 640 MB for a 0.05 ms run at 80,000,000 system calls a
/// second. A faster second is drawn in as many equal parts as this needs, each
/// with its share of the arrivals; slower ones are drawn whole as before.
const MAX_DRAWN: u64 = 1 << 20;

pub struct Synthetic {
    rng: Pcg64Mcg,
    /// Parts a second is drawn in, and the parts drawn so far.
    parts: u64,
    part: u64,
    cycles_per_s: u64,
    n_rx: u64,
    n_tx: u64,
    n_sys: u64,
    rx_bytes: u32,
    tx_bytes: u32,
    /// The run's end: arrivals after it are not sorted.
    end: Time,
    /// This second's receive, send and system call arrivals.
    streams: [Scattered; 3],
}

impl Synthetic {
    /// At `clock_mhz`, for a run of `end` cycles.
    pub fn new(clock_mhz: f64, end: Time, g: &SyntheticConfig, rng: Pcg64Mcg) -> Self {
        let SyntheticConfig { rx_mbps, packet_interrupts_per_s, syscalls_per_s, tx_share, tx_packet_bytes } = *g;
        let n_tx = (packet_interrupts_per_s as f64 * tx_share).round() as u64;
        let n_rx = packet_interrupts_per_s - n_tx;
        let rx_bytes = (rx_mbps * 1e6 / 8.0 / n_rx as f64).round() as u32;
        let parts = [n_rx, n_tx, syscalls_per_s].into_iter().map(|n| n.div_ceil(MAX_DRAWN)).max().unwrap_or(1).max(1);
        let mut g = Self {
            rng,
            parts,
            part: 0,
            cycles_per_s: (clock_mhz * 1e6).round() as u64,
            n_rx,
            n_tx,
            n_sys: syscalls_per_s,
            rx_bytes,
            tx_bytes: tx_packet_bytes,
            end,
            streams: Default::default(),
        };
        g.refill();
        g
    }

    fn refill(&mut self) {
        let (k, second, p) = (self.parts, self.part / self.parts, self.part % self.parts);
        let at = |p: u64| second * self.cycles_per_s + p * self.cycles_per_s / k;
        let (start, span) = (at(p), at(p + 1) - at(p));
        let share = |n: u64| n * (p + 1) / k - n * p / k;
        self.streams = [self.n_rx, self.n_tx, self.n_sys].map(|n| Scattered::draw(&mut self.rng, share(n), start, span, self.end));
        self.part += 1;
    }

    pub fn next_stimulus(&mut self) -> Option<(Time, Stimulus)> {
        loop {
            let heads = self.streams.each_mut().map(Scattered::peek);
            // Earliest head; ties go to the lower stream index.
            let pick = (0..3).filter(|&i| heads[i].is_some()).min_by_key(|&i| (heads[i], i));
            let Some(i) = pick else {
                self.refill();
                continue;
            };
            let t = heads[i]?;
            self.streams[i].take();
            let s = match i {
                0 => Stimulus::Receive { bytes: self.rx_bytes },
                1 => Stimulus::Send { bytes: self.tx_bytes },
                _ => Stimulus::Syscall,
            };
            return Some((t, s));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;
    use rand::SeedableRng;

    fn generator(syscalls_per_s: u64) -> Synthetic {
        let text =
            format!("name = \"s\"\n[run]\nduration_ms = 0.05\n[cpu]\nclock_mhz = 200.0\n[workload]\nkind = \"synthetic\"\nsyscalls_per_s = {syscalls_per_s}\n");
        let s = Scenario::from_toml(&text, "s.toml", &[]).unwrap();
        let crate::config::WorkloadConfig::Synthetic(g) = &s.workload else { panic!("not synthetic") };
        Synthetic::new(s.cpu.clock_mhz, s.duration_cycles(), g, Pcg64Mcg::seed_from_u64(1))
    }

    /// 80,000,000 system calls a second held a whole second's instants (640 MB) for a
    /// 0.05 ms run; a fast second is now drawn a part at a time, each part its share.
    #[test]
    fn a_fast_second_is_drawn_in_parts() {
        assert_eq!(generator(80_000_000).parts, 77);
        let mut g = generator(2_500_000);
        assert_eq!(g.parts, 3);
        let mut drawn = 0;
        for p in 0..4u64 {
            let sys = &g.streams[2].times;
            let (lo, hi) = (p * 200_000_000 / 3, (p + 1) * 200_000_000 / 3);
            assert!(sys.len() as u64 <= MAX_DRAWN && sys.iter().all(|t| (lo..hi).contains(t)), "part {p}");
            drawn += sys.len();
            if p == 2 {
                assert_eq!(drawn, 2_500_000);
            }
            g.refill();
        }
        // A slow second is drawn whole, as before.
        assert_eq!(generator(1652).parts, 1);
    }
}
