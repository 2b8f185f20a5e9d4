//! Counters and latency records of a run, and the invariants they obey.

use crate::engine::Time;

/// Packet counters. Conservation: for each direction,
/// `offered = delivered + dropped + in flight`.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    pub rx_offered: u64,
    pub rx_dropped_nic: u64,
    pub rx_dropped_backlog: u64,
    /// Frames the sender's port dropped: more than `nic.wire_queue_packets`
    /// were waiting for the wire.
    pub rx_dropped_wire: u64,
    pub rx_delivered: u64,
    /// Received frames between the driver and the application.
    pub rx_in_stack: u64,
    /// Received frames whose DMA to memory ends after the run (in flight).
    pub rx_in_dma: u64,
    /// Not beside `rx_delivered`: side by side LLVM adds the two as one
    /// vector, more instructions than two additions.
    pub rx_delivered_bytes: u64,
    pub tx_offered: u64,
    pub tx_dropped: u64,
    pub tx_sent: u64,
    pub tx_sent_bytes: u64,
    /// Frames inside the send path (protocol layers, Driver Send).
    pub tx_in_stack: u64,
    pub interrupts: u64,
    pub syscalls: u64,
    /// System calls dropped because `app.max_waiting_calls` were waiting.
    pub syscalls_dropped: u64,
    /// System calls posted and not yet done, and done.
    pub syscalls_waiting: u64,
    pub syscalls_done: u64,
    pub events: u64,
}

/// A distribution of cycle counts: HDR-histogram buckets (three significant
/// digits) for its quantiles, and the exact extremes, which the buckets'
/// rounding would blur.
///
/// Recording is on the hot path (once per delivered frame), so it only
/// counts into buckets laid out exactly as `hdrhistogram`'s for these bounds
/// (1 to 2^48, three digits: 2,048 sub-buckets, unit 1): one bucket index,
/// one addition. Quantiles are that crate's answers exactly (tested against it),
/// clamped to the exact extremes.
pub struct Distribution {
    counts: Vec<u64>,
    total: u64,
    min: u64,
    max: u64,
}

/// `hdrhistogram`'s layout for bounds 1..=2^48 with three significant
/// digits: 2^11 sub-buckets, of which each bucket after the first uses the
/// upper half; 39 buckets (40 half-buckets of 1,024 counts).
const SUB_BUCKET_BITS: u32 = 11;
const HALF: usize = 1 << (SUB_BUCKET_BITS - 1);
const HIGHEST: u64 = 1 << 48;
const BUCKETS: usize = 40 * HALF;

/// The bucket of `v`, as `hdrhistogram` computes it.
#[inline(always)]
fn bucket_of(v: u64) -> usize {
    // The bucket is where the highest set bit lies past the sub-buckets'
    // (`ilog2` is one instruction); its upper half starts at
    // `(bucket + 1) * HALF`, less the first bucket's unused lower half.
    let bucket = (v | ((1 << SUB_BUCKET_BITS) - 1)).ilog2() - (SUB_BUCKET_BITS - 1);
    ((bucket as usize) << (SUB_BUCKET_BITS - 1)) + (v >> bucket) as usize
}

/// The lowest value of bucket `i` (the inverse of [`bucket_of`]).
fn value_of(i: usize) -> u64 {
    let bucket = (i >> (SUB_BUCKET_BITS - 1)).saturating_sub(1);
    let sub = if i < HALF { i } else { (i & (HALF - 1)) + HALF };
    (sub as u64) << bucket
}

impl Default for Distribution {
    /// Empty, with no buckets yet: they (320 KiB) are allocated at the first
    /// value, so a run that records none, a tiny one or one whose part is not
    /// selected, never zeroes them (a third of a tiny run's instructions).
    fn default() -> Self {
        Self { counts: Vec::new(), total: 0, min: u64::MAX, max: 0 }
    }
}

impl Distribution {
    /// A distribution that will never be recorded into (a part the scenario
    /// does not select): the same as [`Distribution::default`], which
    /// allocates nothing until a value comes.
    pub fn unused() -> Self {
        Self::default()
    }

    /// The rare case last, so that it is a tail call and the common one
    /// saves no registers.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.total += 1;
        // Tests, not `min`/`max`: the extremes rarely move, and a store
        // only when they do is fewer instructions per value.
        if v < self.min {
            self.min = v;
        }
        if v > self.max {
            self.max = v;
        }
        match self.counts.get_mut(bucket_of(v)) {
            Some(c) => *c += 1,
            None => self.record_outside(v),
        }
    }

    /// The first value (the buckets are allocated here, off the path of
    /// every later value), or one past the last bucket (it saturates at the
    /// highest trackable value; 2^48 cycles is over 10 minutes at 400 MHz).
    #[cold]
    fn record_outside(&mut self, v: u64) {
        if self.counts.is_empty() {
            self.counts = vec![0; BUCKETS];
        }
        self.counts[bucket_of(v).min(bucket_of(HIGHEST))] += 1;
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Smallest and largest value recorded, exactly (`None` when empty).
    pub fn extremes(&self) -> Option<(u64, u64)> {
        (!self.is_empty()).then_some((self.min, self.max))
    }

    /// The value at quantile `q` (within the histogram's precision):
    /// `hdrhistogram`'s `value_at_quantile`, the highest value equivalent to
    /// the bucket where the count reaches `⌈q·n⌉` (the lowest for `q = 0`),
    /// clamped to the exact `[min, max]`, which a bucket's upper end can
    /// pass; 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.is_empty() {
            return 0;
        }
        self.bucket_quantile(q).clamp(self.min, self.max)
    }

    /// `hdrhistogram`'s answer, unclamped.
    fn bucket_quantile(&self, q: f64) -> u64 {
        let q = q.min(1.0);
        let target = ((q * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= target {
                let width = 1u64 << (i >> (SUB_BUCKET_BITS - 1)).saturating_sub(1);
                return if q == 0.0 { value_of(i) } else { value_of(i) + (width - 1) };
            }
        }
        0
    }
}

/// Receive latency (frame on the NIC → data delivered) of every packet, in cycles.
pub struct Latencies {
    dist: Distribution,
    records: Vec<(Time, u64)>,
    max_records: usize,
}

impl Latencies {
    pub fn new(max_records: usize) -> Self {
        Self { dist: Distribution::default(), records: Vec::new(), max_records }
    }

    /// Latencies of a NIC the scenario does not have: nothing allocated.
    pub fn unused() -> Self {
        Self { dist: Distribution::unused(), records: Vec::new(), max_records: 0 }
    }

    /// Once per delivered frame. The distribution last, and growing the
    /// records out of line as a tail call: the common path calls nothing.
    #[inline]
    pub fn record(&mut self, arrival: Time, latency: u64) {
        let n = self.records.len();
        if n < self.max_records {
            if n == self.records.capacity() {
                return self.record_growing(arrival, latency);
            }
            self.records.push((arrival, latency));
        }
        self.dist.record(latency);
    }

    #[cold]
    #[inline(never)]
    fn record_growing(&mut self, arrival: Time, latency: u64) {
        self.records.push((arrival, latency));
        self.dist.record(latency);
    }

    pub fn distribution(&self) -> &Distribution {
        &self.dist
    }

    /// `(arrival cycle, latency cycles)` of the first `max_records` packets.
    pub fn take_records(&mut self) -> Vec<(Time, u64)> {
        std::mem::take(&mut self.records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::Histogram;
    use proptest::prelude::*;

    #[test]
    fn buckets_are_hdrhistograms() {
        let h = Histogram::<u64>::new_with_bounds(1, HIGHEST, 3).unwrap();
        assert_eq!(h.distinct_values(), BUCKETS);
        for i in 0..BUCKETS {
            assert_eq!(bucket_of(value_of(i)), i, "bucket {i}");
        }
        for v in [0, 1, 2047, 2048, 2049, 4095, 4096, 123_456_789, HIGHEST, 2 * HIGHEST - 1] {
            assert_eq!(h.lowest_equivalent(v), value_of(bucket_of(v)), "{v}");
        }
    }

    #[test]
    fn buckets_come_with_the_first_value() {
        let mut d = Distribution::default();
        assert_eq!(d.counts.capacity(), 0, "an empty distribution allocates nothing");
        assert_eq!((d.quantile(0.5), d.extremes()), (0, None));
        d.record(1234);
        assert_eq!(d.counts.len(), BUCKETS);
        assert_eq!((d.quantile(0.5), d.extremes()), (1234, Some((1234, 1234))));
    }

    proptest! {
        /// Quantiles and extremes are what `hdrhistogram` itself gives for the
        /// same values, saturated ones included, clamped to the extremes.
        #[test]
        fn quantiles_are_hdrhistograms(values in proptest::collection::vec(prop_oneof![0u64..5000, 0u64..1 << 40, any::<u64>()], 1..300)) {
            let (mut d, mut e) = (Distribution::unused(), Distribution::default());
            let mut h = Histogram::<u64>::new_with_bounds(1, HIGHEST, 3).unwrap();
            for &v in &values {
                d.record(v);
                e.record(v);
                h.saturating_record(v);
            }
            let (lo, hi) = (*values.iter().min().unwrap(), *values.iter().max().unwrap());
            for q in [0.0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0] {
                prop_assert_eq!(d.bucket_quantile(q), h.value_at_quantile(q), "q = {}", q);
                prop_assert_eq!(e.bucket_quantile(q), h.value_at_quantile(q), "q = {}", q);
                prop_assert_eq!(d.quantile(q), h.value_at_quantile(q).clamp(lo, hi), "q = {}", q);
            }
            prop_assert_eq!(d.extremes(), Some((*values.iter().min().unwrap(), *values.iter().max().unwrap())));
        }
    }
}
