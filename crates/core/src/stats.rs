//! Counters and latency records of a run, and the invariants they obey.

use crate::engine::Time;
use hdrhistogram::Histogram;

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
    pub rx_delivered_bytes: u64,
    /// Received frames between the driver and the application.
    pub rx_in_stack: u64,
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

/// A distribution of cycle counts: an HDR histogram (three significant
/// digits) for its quantiles, and the exact extremes, which the histogram's
/// bucket rounding would blur.
pub struct Distribution {
    hist: Histogram<u64>,
    min: u64,
    max: u64,
}

impl Default for Distribution {
    fn default() -> Self {
        // 2^48 cycles is over 10 minutes at 400 MHz; longer values saturate.
        Self { hist: Histogram::new_with_bounds(1, 1 << 48, 3).expect("valid histogram bounds"), min: u64::MAX, max: 0 }
    }
}

impl Distribution {
    /// A distribution that will never be recorded into (a part the scenario
    /// does not select): no buckets allocated.
    pub fn unused() -> Self {
        Self { hist: Histogram::new(1).expect("valid histogram precision"), min: u64::MAX, max: 0 }
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        self.hist.saturating_record(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// Smallest and largest value recorded, exactly (`None` when empty).
    pub fn extremes(&self) -> Option<(u64, u64)> {
        (!self.is_empty()).then_some((self.min, self.max))
    }

    /// The value at quantile `q` (within the histogram's precision).
    pub fn quantile(&self, q: f64) -> u64 {
        self.hist.value_at_quantile(q)
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

    #[inline]
    pub fn record(&mut self, arrival: Time, latency: u64) {
        self.dist.record(latency);
        if self.records.len() < self.max_records {
            self.records.push((arrival, latency));
        }
    }

    pub fn distribution(&self) -> &Distribution {
        &self.dist
    }

    /// `(arrival cycle, latency cycles)` of the first `max_records` packets.
    pub fn take_records(&mut self) -> Vec<(Time, u64)> {
        std::mem::take(&mut self.records)
    }
}
