//! A generated stand-in for the paper's busiest second of RealPlayer traffic:
//! a received bit rate carried by a fixed number of packet interrupts per
//! second (a share of them transmit completions of small sent packets), and a
//! number of system calls per second, all at uniformly random instants.

use super::config::SyntheticConfig;
use super::{Scattered, Stimulus};
use crate::engine::Time;
use rand_pcg::Pcg64Mcg;

pub struct Synthetic {
    rng: Pcg64Mcg,
    second: u64,
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
        let mut g = Self {
            rng,
            second: 0,
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
        let start = self.second * self.cycles_per_s;
        self.streams = [self.n_rx, self.n_tx, self.n_sys].map(|n| Scattered::draw(&mut self.rng, n, start, self.cycles_per_s, self.end));
        self.second += 1;
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
