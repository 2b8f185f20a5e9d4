//! Receive-side scaling: a multi-queue NIC steers each frame to a receive
//! queue by a Toeplitz hash of its flow, through a 128-entry indirection
//! table; each queue has its own ring and its own MSI-X vector, routed to
//! its own CPU (Linux Documentation/networking/scaling.rst;
//! docs/models/napi-coalescing.md).
//!
//! 1. The workload's frames belong to `rss.flows` flows (IPv4 UDP 4-tuples
//!    drawn once from the run's seed), picked per frame uniformly or with a
//!    Zipf skew (`rss.flow_skew`).
//! 2. The NIC hashes the flow's source and destination addresses and ports
//!    with the Toeplitz function and the 40-byte default key, and looks the
//!    low 7 bits up in the indirection table, filled round robin over the
//!    queues (`ethtool -X equal`).
//! 3. The frame waits in that queue's ring; the queue's vector interrupts
//!    unless its NAPI instance has it masked (`kernel/napi/`).
//!
//! The flow is drawn through a guide table into the flows' cumulative
//! shares ([`Rss::steer`]); the queues' masks are a [`Queues`], a set of
//! bits, as are NAPI's scheduled instances, so that checking one against
//! the other costs a few words.

use crate::device::nic::{Accept, Nic};
use crate::engine::Time;
use crate::params::{Param, d};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

/// Entries of the indirection table (Linux's default RSS table size).
pub const TABLE: usize = 128;

/// The Toeplitz key many drivers default to (Microsoft's RSS verification key).
pub const KEY: [u8; 40] = [
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb,
    0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
];

/// `[rss]`; keys: [`RssConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RssConfig {
    pub kind: RssKind,
    pub queues: u32,
    pub flows: u32,
    pub flow_skew: f64,
    pub rps_cpus: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RssKind {
    None,
    Toeplitz,
}

const TOEPLITZ: &[&str] = &["toeplitz"];

impl RssConfig {
    pub const PARAMS: &'static [Param] = &[
        Param::choice("kind", &["none", "toeplitz"], d("\"none\""), "one receive queue, or RSS: a Toeplitz hash and a 128-entry indirection table over `queues` queues"),
        Param::int("queues", "", d("4"), 1, 16, "receive queues, each with its ring (`nic.rx_ring_frames`), MSI-X vector and NAPI instance; vector k goes to CPU (`nic.irq_thread` + k) mod `cpu.threads`")
            .when("rss.kind", TOEPLITZ),
        Param::int("flows", "", d("1024"), 1, 65_536, "flows in the workload's mix (IPv4 UDP 4-tuples drawn from `run.seed`)").when("rss.kind", TOEPLITZ),
        Param::float("flow_skew", "", d("0.0"), false, 0.0, 10.0, "Zipf exponent of the flows' shares: 0 uniform, 1 the classic Zipf").when("rss.kind", TOEPLITZ),
        Param::int(
            "rps_cpus",
            "",
            d("0"),
            0,
            64,
            "RPS: the polling CPU runs only the driver's part of a frame and hands it to CPU ⌊hash × rps_cpus / 2³²⌋'s backlog for the protocol; 0: off",
        )
        .when("rss.kind", TOEPLITZ),
    ];

    /// Whether RPS steers frames to other CPUs' backlogs.
    pub fn rps(&self) -> bool {
        self.active() && self.rps_cpus > 0
    }

    pub fn active(&self) -> bool {
        self.kind == RssKind::Toeplitz
    }

    /// Interrupt vectors the NIC needs.
    pub fn vectors(&self) -> u32 {
        if self.active() { self.queues } else { 1 }
    }
}

/// The Toeplitz hash of `input` under `key` (at least `input.len() + 4` bytes).
pub fn toeplitz(key: &[u8], input: &[u8]) -> u32 {
    let mut hash = 0u32;
    let mut window = u32::from_be_bytes([key[0], key[1], key[2], key[3]]);
    for (i, byte) in input.iter().enumerate() {
        let next = key[i + 4];
        for bit in 0..8 {
            if byte & (0x80 >> bit) != 0 {
                hash ^= window;
            }
            // Slide the key window one bit: shift in the next key bit.
            window = (window << 1) | u32::from((next >> (7 - bit)) & 1);
        }
    }
    hash
}

/// The multi-queue receive side of the NIC.
pub struct Rss {
    /// Each flow's queue, from its hash through the table, and its hash.
    pub(crate) flow_queue: Vec<u8>,
    pub(crate) flow_hash: Vec<u32>,
    /// The flow of each frame waiting in each ring, oldest first.
    pub(crate) waiting_flows: Vec<std::collections::VecDeque<u32>>,
    /// RPS reads the flows back ([`Rss::take_hash`]); without it none are kept.
    pub(crate) keep_flows: bool,
    /// Cumulative shares of the flows (the last is 1).
    pub(crate) cdf: Vec<f64>,
    /// A guide into `cdf` (Chen and Asau's guide table): entry `i` of its
    /// `2^k` is the first flow whose cumulative share reaches `i / 2^k`, so
    /// a draw `u` starts its search at entry `floor(u * 2^k)` and scans
    /// forward a flow or two, where a binary search took ten steps.
    pub(crate) guide: Vec<u32>,
    pub(crate) rng: Pcg64Mcg,
    pub rings: Vec<Nic>,
    /// Each queue's interrupt is masked (its NAPI instance owns it).
    pub irq_off: Queues,
    pub frames: Vec<u64>,
    /// Each queue's interrupts, and frames and bytes its polls took off its
    /// ring: the counters its DIM samples (a driver's per-channel event
    /// counter and per-ring statistics, lib/dim/net_dim.c's callers).
    pub interrupts: Vec<u64>,
    pub taken: Vec<(u64, u64)>,
    /// Each queue's interrupt coalescing (empty: none).
    pub coalesce: Vec<super::coalesce::Coalesce>,
}

impl Rss {
    pub fn new(c: &RssConfig, seed: u64, ring: impl Fn() -> Nic) -> Self {
        let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0x5253_5300);
        let table: Vec<u8> = (0..TABLE).map(|i| (i % c.queues as usize) as u8).collect();
        let flow_hash: Vec<u32> = (0..c.flows)
            .map(|_| {
                let (src, dst): ([u8; 4], [u8; 4]) = ([10, rng.random(), rng.random(), rng.random()], [192, 168, 1, 1]);
                let (sport, dport): (u16, u16) = (rng.random_range(1024..=65535), 9);
                let tuple: Vec<u8> = src.iter().chain(&dst).copied().chain(sport.to_be_bytes()).chain(dport.to_be_bytes()).collect();
                toeplitz(&KEY, &tuple)
            })
            .collect();
        let flow_queue = flow_hash.iter().map(|&h| table[h as usize % TABLE]).collect();
        let weights: Vec<f64> = (1..=c.flows).map(|k| f64::from(k).powf(-c.flow_skew)).collect();
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let mut cdf: Vec<f64> = weights.iter().map(|w| (acc += w / total, acc).1).collect();
        *cdf.last_mut().expect("at least one flow") = 1.0;
        let entries = cdf.len().next_power_of_two();
        let guide = (0..entries).map(|i| cdf.partition_point(|&c| c < i as f64 / entries as f64) as u32).collect();
        let queues = c.queues as usize;
        Self {
            flow_queue,
            flow_hash,
            waiting_flows: vec![std::collections::VecDeque::new(); queues],
            keep_flows: c.rps(),
            cdf,
            guide,
            rng,
            rings: (0..queues).map(|_| ring()).collect(),
            irq_off: Queues::new(queues),
            frames: vec![0; queues],
            interrupts: vec![0; queues],
            taken: vec![(0, 0); queues],
            coalesce: Vec::new(),
        }
    }

    /// The queue and flow of the next frame: its flow drawn from the mix, hashed.
    pub fn steer(&mut self) -> (usize, u32) {
        let u: f64 = self.rng.random();
        let flow = self.flow_of(u);
        let q = self.flow_queue[flow] as usize;
        self.frames[q] += 1;
        (q, flow as u32)
    }

    /// The first flow whose cumulative share reaches `u` in [0, 1) (the
    /// last flow's is 1). `u * 2^k` is exact, so the guide's flow is at or
    /// below it.
    #[inline]
    fn flow_of(&self, u: f64) -> usize {
        let mut flow = self.guide[(u * self.guide.len() as f64) as usize] as usize;
        while self.cdf[flow] < u {
            flow += 1;
        }
        flow
    }

    /// A frame of `bytes` of flow `flow` lands in queue `q`'s ring (its flow
    /// kept for RPS); `false` when the ring drops it.
    pub fn receive(&mut self, q: usize, flow: u32, now: Time, bytes: u32) -> bool {
        if self.rings[q].receive(now, bytes) == Accept::Dropped {
            return false;
        }
        if self.keep_flows {
            self.waiting_flows[q].push_back(flow);
        }
        true
    }

    /// Queue `q`'s interrupt fires unless its NAPI instance has it masked:
    /// masked now, counted, and its coalescing told; whether it fired.
    pub fn fire(&mut self, q: usize) -> bool {
        if self.irq_off.contains(q) {
            return false;
        }
        self.irq_off.insert(q);
        self.interrupts[q] += 1;
        if let Some(c) = self.coalesce.get_mut(q) {
            c.fired();
        }
        true
    }

    /// The hash of flow `flow`.
    pub fn flow_hash(&self, flow: u32) -> u32 {
        self.flow_hash[flow as usize]
    }

    /// The hash of the flow of the frame leaving ring `q` (its oldest).
    pub fn take_hash(&mut self, q: usize) -> u32 {
        let flow = self.waiting_flows[q].pop_front().expect("a frame leaving a ring has its flow");
        self.flow_hash[flow as usize]
    }

    /// Frames waiting in all rings.
    pub fn waiting(&self) -> u64 {
        self.rings.iter().map(|r| r.rx_waiting() as u64).sum()
    }
}

/// A set of queues (or NAPI instances) as bits: a queue's flag is one bit,
/// and a count over two sets (the scheduled instances whose interrupt is on,
/// checked at every NAPI step) is a few words' `and` and `popcount`, not a
/// look at every queue.
#[derive(Debug, Clone)]
pub struct Queues {
    words: Vec<u64>,
    len: usize,
}

impl Queues {
    /// `len` queues, none in the set.
    pub fn new(len: usize) -> Self {
        Self { words: vec![0; len.div_ceil(64)], len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn contains(&self, q: usize) -> bool {
        self.words[q / 64] >> (q % 64) & 1 != 0
    }

    #[inline]
    pub fn insert(&mut self, q: usize) {
        self.words[q / 64] |= 1 << (q % 64);
    }

    #[inline]
    pub fn remove(&mut self, q: usize) {
        self.words[q / 64] &= !(1 << (q % 64));
    }

    pub fn set(&mut self, q: usize, on: bool) {
        if on { self.insert(q) } else { self.remove(q) }
    }

    /// Members of this set below `other.len()` that `other` lacks. (Bits
    /// cleared one at a time: the sets are sparse, and x86-64's baseline
    /// has no `popcnt`.)
    pub fn count_outside(&self, other: &Queues) -> usize {
        let mut n = 0;
        let mut i = 0;
        while i < other.words.len() && i < self.words.len() {
            let below = other.len - i * 64;
            let mask = if below >= 64 { u64::MAX } else { (1 << below) - 1 };
            let mut bits = self.words[i] & !other.words[i] & mask;
            while bits != 0 {
                bits &= bits - 1;
                n += 1;
            }
            i += 1;
        }
        n
    }

    /// Members from `from` on for which `f` holds.
    pub fn count_from(&self, from: usize, mut f: impl FnMut(usize) -> bool) -> usize {
        let mut n = 0;
        let mut i = from / 64;
        while i < self.words.len() {
            let mut bits = self.words[i];
            if i == from / 64 {
                bits &= u64::MAX << (from % 64);
            }
            while bits != 0 {
                let q = i * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                n += usize::from(f(q));
            }
            i += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Microsoft's RSS verification suite, IPv4 with ports:
    /// 66.9.149.187:2794 → 161.142.100.80:1766 hashes to 0x51ccc178, and
    /// without ports to 0x323e8fc2.
    #[test]
    fn toeplitz_matches_the_verification_suite() {
        let (src, dst) = ([66u8, 9, 149, 187], [161u8, 142, 100, 80]);
        let mut with_ports = src.iter().chain(&dst).copied().collect::<Vec<u8>>();
        assert_eq!(toeplitz(&KEY, &with_ports), 0x323e_8fc2);
        with_ports.extend(2794u16.to_be_bytes());
        with_ports.extend(1766u16.to_be_bytes());
        assert_eq!(toeplitz(&KEY, &with_ports), 0x51cc_c178);
    }

    #[test]
    fn uniform_flows_spread_and_skewed_ones_concentrate() {
        let ring = || Nic::new(1 << 20, 1, 1.0, 1.0, 1.0);
        let c = |skew| RssConfig { kind: RssKind::Toeplitz, queues: 8, flows: 1024, flow_skew: skew, rps_cpus: 0 };
        let mut uniform = Rss::new(&c(0.0), 1, ring);
        let mut skewed = Rss::new(&c(1.5), 1, ring);
        for _ in 0..80_000 {
            uniform.steer();
            skewed.steer();
        }
        let share = |r: &Rss| *r.frames.iter().max().unwrap() as f64 / 80_000.0;
        assert!(share(&uniform) < 0.16, "{:?}", uniform.frames);
        assert!(share(&skewed) > 0.4, "{:?}", skewed.frames);
    }

    proptest::proptest! {
        /// The set holds what a flag per queue holds; its count against
        /// another set and its members from a queue on are the flags'.
        #[test]
        fn queues_agree_with_flags(n in 1usize..=256, m in 1usize..=256, from in 0usize..300, ops in proptest::collection::vec((0usize..256, proptest::bool::ANY, proptest::bool::ANY), 0..300)) {
            let (mut a, mut b) = (Queues::new(n), Queues::new(m));
            let (mut fa, mut fb) = (vec![false; n], vec![false; m]);
            for (q, on, first) in ops {
                if first { a.set(q % n, on); fa[q % n] = on } else { b.set(q % m, on); fb[q % m] = on }
            }
            proptest::prop_assert!((0..n).all(|q| a.contains(q) == fa[q]));
            let outside = (0..n.min(m)).filter(|&q| fa[q] && !fb[q]).count();
            proptest::prop_assert_eq!(a.count_outside(&b), outside);
            let (mut seen, mut want) = (Vec::new(), Vec::new());
            a.count_from(from, |q| (seen.push(q), q % 3 == 0).1);
            want.extend((from.min(n)..n).filter(|&q| fa[q]));
            proptest::prop_assert_eq!(&seen, &want);
            proptest::prop_assert_eq!(a.count_from(from, |q| q % 3 == 0), want.iter().filter(|&&q| q % 3 == 0).count());
        }
    }

    /// The guide's search picks the flow a binary search of the shares
    /// picks, for every draw, at every skew and number of flows.
    #[test]
    fn the_guide_finds_the_flow_a_binary_search_finds() {
        let ring = || Nic::new(1 << 20, 1, 1.0, 1.0, 1.0);
        for (flows, skew) in [(1, 0.0), (3, 0.0), (1000, 0.0), (1024, 1.0), (7, 2.5), (65_536, 0.7)] {
            let c = RssConfig { kind: RssKind::Toeplitz, queues: 4, flows, flow_skew: skew, rps_cpus: 0 };
            let mut r = Rss::new(&c, 7, ring);
            let mut draws = r.rng.clone();
            for _ in 0..20_000 {
                let u: f64 = draws.random();
                let want = r.cdf.partition_point(|&c| c < u).min(r.cdf.len() - 1);
                assert_eq!(r.steer().1 as usize, want, "{flows} flows, skew {skew}, draw {u}");
            }
            // Draws on and beside every share's edge and every guide entry's.
            let entries = r.guide.len();
            let edges = r.cdf.iter().copied().chain((0..entries).map(|i| i as f64 / entries as f64));
            for u in edges.flat_map(|e| [e.next_down(), e, e.next_up()]).filter(|u| (0.0..1.0).contains(u)) {
                assert_eq!(r.flow_of(u), r.cdf.partition_point(|&c| c < u), "{flows} flows, skew {skew}, draw {u}");
            }
        }
    }
}
