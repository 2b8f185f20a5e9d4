//! Dynamic interrupt moderation (DIM, Linux lib/dim/net_dim.c and dim.c,
//! Documentation/networking/net_dim.rst): `ethtool -C adaptive-rx on`.
//!
//! 1. At each `napi_complete_done` the driver hands DIM a sample: the time,
//!    and its counters of interrupts, frames and bytes.
//! 2. Every 64 interrupts (`DIM_NEVENTS`) DIM computes, per millisecond,
//!    bytes, frames and interrupts since the last decision (rounded up).
//! 3. It compares them with the previous window's: bytes first, then frames,
//!    then interrupts (fewer is better); a difference of more than 10% decides.
//! 4. Walking right (more moderation) or left, it steps one profile while the
//!    result is better, turns when it is not, parks "on top" after a step
//!    each way (or at an edge) until the traffic changes, and parks "tired"
//!    after 10 steps for as many windows.
//! 5. The chosen profile's (usec, frames) become the NIC's `rx_usecs` and
//!    `rx_frames` at once.

use crate::engine::Time;

/// `(usec, frames)` of the five RX profiles, per period mode (net_dim.c):
/// the timer restarts at each event (EQE) or at each frame (CQE).
pub const EQE: [(u32, u32); 5] = [(1, 256), (8, 256), (64, 256), (128, 256), (256, 256)];
pub const CQE: [(u32, u32); 5] = [(2, 256), (8, 128), (16, 64), (32, 64), (64, 64)];
/// The profile DIM starts from (`NET_DIM_DEF_PROFILE_*`).
pub const START: usize = 1;
const NEVENTS: u64 = 64;
const PROFILES: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tune {
    ParkingOnTop,
    ParkingTired,
    Right,
    Left,
}

#[derive(Debug, Clone, Copy, Default)]
struct Stats {
    ppms: u64,
    bpms: u64,
    epms: u64,
}

#[derive(Debug, Clone, Copy)]
struct Sample {
    at: Time,
    events: u64,
    frames: u64,
    bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compare {
    Better,
    Same,
    Worse,
}

/// One receive queue's DIM state.
#[derive(Debug)]
pub struct Dim {
    pub profiles: &'static [(u32, u32); 5],
    pub ix: usize,
    tune: Tune,
    steps_right: u32,
    steps_left: u32,
    tired: u32,
    prev: Stats,
    start: Option<Sample>,
    cycles_per_us: f64,
    pub decisions: u64,
    pub changes: u64,
    /// Cycles spent at each profile, up to the last change.
    pub time_at: [u64; PROFILES],
    since: Time,
}

/// More than 10% apart (dim.h's IS_SIGNIFICANT_DIFF; a zero reference never is).
fn significant(val: u64, reference: u64) -> bool {
    reference != 0 && 100 * val.abs_diff(reference) / reference > 10
}

impl Dim {
    pub fn new(cqe: bool, cycles_per_us: f64) -> Self {
        Self {
            profiles: if cqe { &CQE } else { &EQE },
            ix: START,
            tune: Tune::Right,
            steps_right: 0,
            steps_left: 0,
            tired: 0,
            prev: Stats::default(),
            start: None,
            cycles_per_us,
            decisions: 0,
            changes: 0,
            time_at: [0; PROFILES],
            since: 0,
        }
    }

    /// A sample at `now`; returns the new profile's index when it changes.
    pub fn sample(&mut self, now: Time, events: u64, frames: u64, bytes: u64) -> Option<usize> {
        let end = Sample { at: now, events, frames, bytes };
        let Some(start) = self.start else {
            self.start = Some(end);
            return None;
        };
        if events - start.events < NEVENTS {
            return None;
        }
        self.start = Some(end);
        let us = ((now - start.at) as f64 / self.cycles_per_us) as u64;
        if us == 0 {
            return None;
        }
        let per_ms = |n: u64| (n * 1000).div_ceil(us);
        let stats = Stats { ppms: per_ms(frames - start.frames), bpms: per_ms(bytes - start.bytes), epms: per_ms(NEVENTS) };
        self.decisions += 1;
        let before = self.ix;
        self.decide(stats);
        if self.ix == before {
            return None;
        }
        self.time_at[before] += now - self.since;
        self.since = now;
        self.changes += 1;
        Some(self.ix)
    }

    /// The share of the run up to `end` spent at each profile.
    pub fn shares(&self, end: Time) -> [f64; PROFILES] {
        let mut t = self.time_at;
        t[self.ix] += end.saturating_sub(self.since);
        t.map(|c| c as f64 / end.max(1) as f64)
    }

    fn compare(&self, cur: Stats) -> Compare {
        let p = self.prev;
        let by = |better: bool| if better { Compare::Better } else { Compare::Worse };
        if p.bpms == 0 {
            return if cur.bpms > 0 { Compare::Better } else { Compare::Same };
        }
        if significant(cur.bpms, p.bpms) {
            return by(cur.bpms > p.bpms);
        }
        if p.ppms == 0 {
            return if cur.ppms > 0 { Compare::Better } else { Compare::Same };
        }
        if significant(cur.ppms, p.ppms) {
            return by(cur.ppms > p.ppms);
        }
        if p.epms == 0 {
            return Compare::Same;
        }
        if significant(cur.epms, p.epms) {
            return by(cur.epms < p.epms);
        }
        Compare::Same
    }

    fn decide(&mut self, cur: Stats) {
        let was_parked = self.tune == Tune::ParkingOnTop;
        match self.tune {
            Tune::ParkingOnTop => {
                if self.compare(cur) != Compare::Same {
                    self.exit_parking();
                }
            }
            Tune::ParkingTired => {
                self.tired -= 1;
                if self.tired == 0 {
                    self.exit_parking();
                }
            }
            Tune::Right | Tune::Left => {
                if self.compare(cur) != Compare::Better {
                    self.turn();
                }
                if self.on_top() {
                    self.park(Tune::ParkingOnTop);
                } else {
                    match self.step() {
                        Step::OnEdge => self.park(Tune::ParkingOnTop),
                        Step::TooTired => self.park(Tune::ParkingTired),
                        Step::Stepped => {}
                    }
                }
            }
        }
        // Parked on top, the reference stays the traffic it parked on.
        if !(was_parked && self.tune == Tune::ParkingOnTop) {
            self.prev = cur;
        }
    }

    fn on_top(&self) -> bool {
        match self.tune {
            Tune::ParkingOnTop | Tune::ParkingTired => true,
            Tune::Right => self.steps_left > 1 && self.steps_right == 1,
            Tune::Left => self.steps_right > 1 && self.steps_left == 1,
        }
    }

    fn turn(&mut self) {
        match self.tune {
            Tune::Right => (self.tune, self.steps_left) = (Tune::Left, 0),
            Tune::Left => (self.tune, self.steps_right) = (Tune::Right, 0),
            _ => {}
        }
    }

    fn park(&mut self, how: Tune) {
        (self.steps_right, self.steps_left) = (0, 0);
        if how == Tune::ParkingOnTop {
            self.tired = 0;
        }
        self.tune = how;
    }

    fn exit_parking(&mut self) {
        self.tune = if self.ix > 0 { Tune::Left } else { Tune::Right };
        self.step();
    }

    fn step(&mut self) -> Step {
        if self.tired == 2 * PROFILES as u32 {
            return Step::TooTired;
        }
        match self.tune {
            Tune::Right if self.ix == PROFILES - 1 => return Step::OnEdge,
            Tune::Right => (self.ix, self.steps_right) = (self.ix + 1, self.steps_right + 1),
            Tune::Left if self.ix == 0 => return Step::OnEdge,
            Tune::Left => (self.ix, self.steps_left) = (self.ix - 1, self.steps_left + 1),
            _ => {}
        }
        self.tired += 1;
        Step::Stepped
    }
}

enum Step {
    Stepped,
    OnEdge,
    TooTired,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rising traffic walks right while each window is better; steady
    /// traffic turns it at each step until it tires and parks, and stays.
    #[test]
    fn walks_turns_and_parks() {
        let mut d = Dim::new(false, 1.0);
        let (mut t, mut events, mut frames) = (0, 0, 0);
        let mut window = |d: &mut Dim, rate: u64| {
            t += 1000; // 1 ms per window of 64 interrupts
            events += 64;
            frames += rate;
            d.sample(t, events, frames, frames * 100)
        };
        window(&mut d, 0);
        assert_eq!(window(&mut d, 1000), Some(2), "from nothing: better, one step right");
        assert_eq!(window(&mut d, 2000), Some(3), "better again");
        assert_eq!(window(&mut d, 2000), Some(2), "the same: turn and step left");
        let mut parked = 0;
        for _ in 0..20 {
            window(&mut d, 2000);
            parked += usize::from(d.tune == Tune::ParkingTired);
        }
        assert_eq!(parked, 10, "tired after 10 steps, parked for as many windows");
    }

    #[test]
    fn significance_is_more_than_ten_percent() {
        assert!(!significant(110, 100) && significant(111, 100) && !significant(5, 0));
    }
}
