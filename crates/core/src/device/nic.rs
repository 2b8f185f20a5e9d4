//! The network interface: an on-card receive buffer filled from the wire and
//! emptied by DMA, and a transmitter fed by DMA from memory.
//!
//! DMA runs in parallel with the CPU (cycle stealing), so it costs the CPU
//! nothing; it only decides when buffer space comes free and when a frame can
//! go on the wire. Space is released lazily: a transfer's end time is kept,
//! and space is reclaimed when an arriving frame would not fit without it,
//! so DMA needs no events of its own.
//!
//! The buffer is one queue in arrival order: the frames at its front are being
//! copied out by DMA (their transfers end in that order), the rest wait for
//! the driver. Taking a frame only stamps its DMA end and moves the boundary,
//! so a frame is queued once on its way through the card.

use super::ring::Ring;
use crate::cpu::MAX_THREAD;
use crate::engine::Time;
use crate::params::{Param, d};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// A received frame waiting in the NIC buffer.
#[derive(Debug, Clone, Copy, Default)]
pub struct RxFrame {
    pub arrival: Time,
    pub bytes: u32,
}

/// A frame for the transmitter: a local send's, or a received frame the
/// kernel forwards (its arrival kept for its latency when it leaves).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxFrame {
    pub bytes: u32,
    pub forwarded: Option<Time>,
}

impl TxFrame {
    /// A frame the application sent.
    pub fn local(bytes: u32) -> Self {
        Self { bytes, forwarded: None }
    }
}

/// A frame in the receive buffer; `dma_end` is set once the driver took it.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    frame: RxFrame,
    dma_end: Time,
    /// Bytes stored in the buffer up to this frame, this one included
    /// ([`Nic::rx_stored`] after it came).
    through: u64,
}

pub struct Nic {
    rx_capacity: u64,
    /// Receive descriptors: frames that may wait for the driver.
    pub rx_ring: u64,
    rx_used: u64,
    /// Bytes ever stored in the buffer: a reclaim finds the space it frees
    /// from the last ended frame's `through`, without adding up each frame.
    rx_stored: u64,
    /// The buffer's frames in arrival order: the first `in_dma` are being
    /// copied out (DMA end times ascending), the rest wait for the driver.
    rx: Ring<Slot>,
    in_dma: usize,
    /// When the last DMA out of the buffer ends.
    dma_free: Time,
    dma_bytes_per_cycle: f64,
    /// The bus link paces DMA ([`Nic::pace`]).
    paced: bool,
    /// `(bytes, DMA cycles)` of the last transfer: sizes mostly repeat, and
    /// this saves a division per frame. `(0, 0)` is right for any rate.
    dma_last: (u32, u64),
    wire_cycles_per_byte: f64,
    /// `(bytes, wire cycles)` of the last received frame, for the same reason.
    wire_last: (u32, u64),
    /// Frames the driver queued while the transmitter was busy (kernel memory).
    tx_pending: VecDeque<TxFrame>,
    tx_capacity: usize,
    tx_busy: bool,
    /// A transmit completed and the driver has not acknowledged it yet.
    pub tx_done_pending: bool,
    /// The frame on the wire.
    tx_current: TxFrame,
}

/// No frame has this size (`MAX_PACKET_BYTES` is far below): an empty cache.
const UNCACHED: u32 = u32::MAX;

/// What happened to a frame offered to the NIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accept {
    Stored,
    Dropped,
}

impl Nic {
    pub fn new(rx_capacity: u64, tx_capacity: usize, dma_bytes_per_cycle: f64, cycles_per_us: f64, link_mbps: f64) -> Self {
        Self {
            rx_capacity,
            rx_ring: u64::MAX,
            rx_used: 0,
            rx_stored: 0,
            rx: Ring::new(),
            in_dma: 0,
            dma_free: 0,
            dma_bytes_per_cycle,
            paced: false,
            dma_last: (0, 0),
            // link_mbps bits per µs → 8 / link_mbps µs per byte.
            wire_cycles_per_byte: 8.0 / link_mbps * cycles_per_us,
            wire_last: (0, 0),
            tx_pending: VecDeque::new(),
            tx_capacity,
            tx_busy: false,
            tx_done_pending: false,
            tx_current: TxFrame::default(),
        }
    }

    /// DMA crosses a bus link slower than the engine (`bus.link_mbps`):
    /// transfers share its bandwidth, one after another at its rate, so it
    /// bounds the NIC's throughput to memory, not only each frame's delay.
    pub fn pace(&mut self, link_bytes_per_cycle: f64) {
        self.dma_bytes_per_cycle = link_bytes_per_cycle;
        self.paced = true;
    }

    /// Makes room for a frame of `bytes` that does not fit as the buffer
    /// stands or finds the ring full: whether it fits now. Out of line: it
    /// runs only then.
    #[inline(never)]
    fn make_room(&mut self, now: Time, bytes: u32) -> bool {
        // Reclaiming frees bytes and slots, not descriptors: with none left
        // the frame is dropped without it (a NIC in overload drops most
        // frames that way).
        if self.rx_waiting() as u64 >= self.rx_ring {
            return false;
        }
        self.reclaim(now);
        if !self.fits(bytes) {
            return false;
        }
        if self.rx.is_full() {
            self.rx.grow();
        }
        true
    }

    /// Frees the space of the frames whose DMA has ended.
    #[inline(always)]
    fn reclaim(&mut self, now: Time) {
        // The ended transfers are a prefix of the first `in_dma` frames (DMA
        // end times ascend): found by bisection, then dropped at once.
        let done = self.ended(now);
        if let Some(last) = done.checked_sub(1).and_then(|i| self.rx.get(i)) {
            self.rx_used = self.rx_stored - last.through;
        }
        self.rx.discard_front(done);
        self.in_dma -= done;
    }

    /// How many of the frames in DMA have ended by `now`: usually all (the
    /// driver took them well before the buffer filled), so the last is
    /// looked at first.
    #[inline(always)]
    fn ended(&self, now: Time) -> usize {
        match self.in_dma.checked_sub(1).and_then(|i| self.rx.get(i)) {
            Some(last) if last.dma_end <= now => self.in_dma,
            _ => self.rx.partition_point(self.in_dma, |s| s.dma_end <= now),
        }
    }

    /// A frame of `bytes` fits in the buffer and the ring as they stand.
    #[inline(always)]
    fn fits(&self, bytes: u32) -> bool {
        self.rx_used + u64::from(bytes) <= self.rx_capacity && (self.rx_waiting() as u64) < self.rx_ring
    }

    /// A frame arrives from the wire. Space of finished DMAs is reclaimed
    /// lazily, only when the frame would not fit without it or the ring
    /// would grow: the decision is the same as after reclaiming first (it
    /// only frees space), and most frames skip it.
    #[inline(always)]
    pub fn receive(&mut self, now: Time, bytes: u32) -> Accept {
        self.receive_from(now, now, bytes)
    }

    /// A frame that arrived at `arrival` enters the buffer at `now` (a
    /// device in front of this queue held it meanwhile).
    #[inline(always)]
    pub fn receive_from(&mut self, arrival: Time, now: Time, bytes: u32) -> Accept {
        if (!self.fits(bytes) || self.rx.is_full()) && !self.make_room(now, bytes) {
            return Accept::Dropped;
        }
        self.rx_used += u64::from(bytes);
        self.rx_stored += u64::from(bytes);
        self.rx.push_back(Slot { frame: RxFrame { arrival, bytes }, dma_end: 0, through: self.rx_stored });
        Accept::Stored
    }

    /// When the oldest DMA out of the receive buffer that has not ended by
    /// `now` ends and frees space (asked after a drop; the ended ones may
    /// not have been reclaimed).
    pub fn next_release(&self, now: Time) -> Option<Time> {
        let i = self.ended(now);
        if i == self.in_dma { None } else { self.rx.get(i).map(|s| s.dma_end) }
    }

    pub fn rx_waiting(&self) -> usize {
        self.rx.len() - self.in_dma
    }

    /// Bytes of the oldest waiting frame (0: none).
    pub fn next_rx_bytes(&self) -> u32 {
        self.rx.get(self.in_dma).map_or(0, |s| s.frame.bytes)
    }

    /// The driver takes the oldest frame and starts its DMA to memory; returns
    /// the frame and the time the data is in memory.
    #[inline(always)]
    pub fn take_rx(&mut self, now: Time) -> Option<(RxFrame, Time)> {
        let bytes = self.rx.get(self.in_dma)?.frame.bytes;
        // DMAs run one after another: this one ends no sooner than the last
        // (over a pacing link, `dma_cycles` has moved that end on by its own
        // transfer: it starts no sooner than the last ended).
        let end = now.saturating_add(self.dma_cycles(bytes, true)).max(self.dma_free);
        self.dma_free = end;
        let slot = self.rx.get_mut(self.in_dma)?;
        slot.dma_end = end;
        self.in_dma += 1;
        Some((slot.frame, end))
    }

    /// Cycles a frame of `bytes` occupies the wire.
    #[inline]
    pub fn wire_cycles(&mut self, bytes: u32) -> u64 {
        if bytes != self.wire_last.0 {
            self.wire_last = (bytes, ceil(f64::from(bytes) * self.wire_cycles_per_byte));
        }
        self.wire_last.1
    }

    /// Cycles a transfer of `bytes` takes (`rx`: out of the receive buffer).
    /// Over a pacing link the size cache stays empty, so every transfer
    /// comes by the second branch: a receive transfer moves the last one's
    /// end on by its own time, so that it starts when that one ended.
    #[inline]
    fn dma_cycles(&mut self, bytes: u32, rx: bool) -> u64 {
        if bytes != self.dma_last.0 {
            let cycles = ceil(f64::from(bytes) / self.dma_bytes_per_cycle);
            self.dma_last = (if self.paced { UNCACHED } else { bytes }, cycles);
            if self.paced && rx {
                self.dma_free = self.dma_free.saturating_add(cycles);
            }
        }
        self.dma_last.1
    }

    /// Driver Send: start the transmitter if idle (returns when the frame has
    /// left the wire), else queue the frame in the transmit-pending queue.
    pub fn send(&mut self, now: Time, frame: TxFrame) -> Send {
        if !self.tx_busy && !self.tx_done_pending {
            return Send::Started(self.start_tx(now, frame));
        }
        if self.tx_pending.len() >= self.tx_capacity {
            return Send::Dropped;
        }
        self.tx_pending.push_back(frame);
        Send::Queued
    }

    fn start_tx(&mut self, now: Time, frame: TxFrame) -> Time {
        self.tx_busy = true;
        self.tx_current = frame;
        let bytes = frame.bytes;
        // Saturating: an absurdly slow DMA or link ends past the run, never wraps.
        now.saturating_add(self.dma_cycles(bytes, false)).saturating_add(ceil(f64::from(bytes) * self.wire_cycles_per_byte))
    }

    /// The frame on the wire is out; returns it.
    pub fn tx_finished(&mut self) -> TxFrame {
        self.tx_busy = false;
        self.tx_done_pending = true;
        self.tx_current
    }

    /// The ISR acknowledges a transmit completion and starts the next queued
    /// frame, if any; returns when that one will be out.
    pub fn ack_tx(&mut self, now: Time) -> Option<Time> {
        self.tx_done_pending = false;
        let frame = self.tx_pending.pop_front()?;
        Some(self.start_tx(now, frame))
    }

    /// Frames held by the NIC or its queue (for conservation checks).
    pub fn tx_in_flight(&self) -> usize {
        self.tx_pending.len() + usize::from(self.tx_busy)
    }
}

/// Ceiling of a non-negative number, without a libm call on the hot path.
/// Through `i64` when in its range (always, in practice): x86-64 converts
/// between `f64` and signed integers in one instruction each, unsigned ones
/// in about ten; the result is the same.
#[inline]
pub(super) fn ceil(x: f64) -> u64 {
    // 2^63: every f64 in [0, 2^63) truncates to an i64 exactly.
    if (0.0..9_223_372_036_854_775_808.0).contains(&x) {
        let t = x as i64;
        return (t + i64::from((t as f64) < x)) as u64;
    }
    let t = x as u64;
    if (t as f64) < x { t.saturating_add(1) } else { t }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Send {
    Started(Time),
    Queued,
    Dropped,
}

/// `forward_to`'s help, the first NIC's and each other's.
pub const FORWARD_TO: &str = "the NIC its received frames leave by (0: this `[nic]`, k: `nics.others[k-1]`): the kernel forwards each frame the driver takes (IP forwarding, `stack.ip_cycles` with the stack, and Driver Send, `driver.send_cycles`) onto that NIC's transmit queue, and the frame is delivered (`rx_forwarded`) when it has left that NIC's wire; a full transmit queue drops it (`rx_dropped_forward`)";

/// `[nic]`; keys: [`NicConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NicConfig {
    pub rx_buffer_bytes: u64,
    pub tx_queue_packets: usize,
    pub link_mbps: f64,
    pub wire_queue_packets: u64,
    pub dma_bytes_per_cycle: f64,
    pub irq_thread: usize,
    pub rx_ring_frames: Option<u64>,
    /// The NIC its received frames leave by (`forward_to`; absent: the
    /// local stack).
    pub forward_to: Option<u32>,
}

impl NicConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::int("rx_buffer_bytes", "bytes", d("16384"), 1, 1 << 30, "on-card receive buffer; a frame that does not fit is dropped (`rx_dropped_nic`)"),
        Param::int(
            "tx_queue_packets",
            "packets",
            d("64"),
            1,
            1_000_000,
            "the driver's transmit-pending queue in kernel memory; a send finding it full is dropped (`tx_dropped`)",
        ),
        Param::float(
            "link_mbps",
            "Mb/s",
            d("10.0"),
            true,
            0.0,
            1_000_000.0,
            "line rate, both ways: a frame occupies the wire for `bytes × 8 / link_mbps` µs, so received frames land at least that far apart",
        ),
        Param::int(
            "wire_queue_packets",
            "packets",
            d("1000"),
            1,
            1_000_000,
            "received frames that may wait for the wire (the sending switch port's queue); more are dropped (`rx_dropped_wire`)",
        ),
        Param::float(
            "dma_bytes_per_cycle",
            "bytes/cycle",
            d("4.0"),
            true,
            0.0,
            4096.0,
            "DMA rate between NIC buffer and memory; runs beside the CPU, never charged to it",
        ),
        Param::int("irq_thread", "", d("0"), 0, MAX_THREAD, "hardware thread taking the NIC interrupt and its protocol work (below `cpu.threads`)"),
        Param::int(
            "rx_ring_frames",
            "",
            crate::params::absent("no limit but `rx_buffer_bytes`"),
            1,
            1 << 20,
            "receive descriptors: frames waiting for the driver beyond this many are dropped (`rx_dropped_nic`), whatever their size",
        ),
        Param::int("forward_to", "", crate::params::absent("the local stack"), 0, 255, FORWARD_TO),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_buffer_drops_and_dma_frees_space() {
        let mut nic = Nic::new(3000, 4, 4.0, 200.0, 10.0);
        assert_eq!(nic.receive(0, 1500), Accept::Stored);
        assert_eq!(nic.receive(0, 1500), Accept::Stored);
        assert_eq!(nic.receive(0, 1), Accept::Dropped);
        let (_, end) = nic.take_rx(10).unwrap();
        assert_eq!(end, 10 + 375);
        assert_eq!(nic.receive(end - 1, 1500), Accept::Dropped, "space is free only when the DMA ends");
        assert_eq!(nic.receive(end, 1500), Accept::Stored);
    }

    #[test]
    fn without_descriptors_a_frame_drops_and_the_release_skips_ended_dmas() {
        let mut nic = Nic::new(4500, 4, 4.0, 200.0, 10.0);
        nic.rx_ring = 1;
        assert_eq!(nic.receive(0, 1500), Accept::Stored);
        assert_eq!(nic.take_rx(0).unwrap().1, 375);
        assert_eq!(nic.receive(0, 1500), Accept::Stored);
        assert_eq!(nic.take_rx(1).unwrap().1, 376);
        assert_eq!(nic.receive(2, 1500), Accept::Stored);
        // One frame waits for the driver: no descriptor is left.
        assert_eq!(nic.receive(375, 1500), Accept::Dropped);
        assert_eq!(nic.next_release(375), Some(376), "the DMA ended at 375 frees nothing more");
        assert_eq!(nic.next_release(376), None);
        // The buffer is full: the two ended DMAs' space is reclaimed, not the third's.
        assert_eq!(nic.take_rx(400).unwrap().1, 775);
        assert_eq!(nic.receive(400, 1500), Accept::Stored);
        assert_eq!((nic.rx_used, nic.in_dma, nic.rx.len()), (3000, 1, 2));
    }

    #[test]
    fn space_is_reclaimed_when_a_frame_would_not_fit() {
        let mut nic = Nic::new(3000, 4, 4.0, 200.0, 10.0);
        assert_eq!(nic.receive(0, 1500), Accept::Stored);
        assert_eq!(nic.receive(0, 1500), Accept::Stored);
        assert_eq!(nic.take_rx(0).unwrap().1, 375);
        assert_eq!(nic.take_rx(1).unwrap().1, 376);
        // The first DMA has ended, the second not: one frame's space is free.
        assert_eq!(nic.receive(375, 1), Accept::Stored);
        assert_eq!(nic.receive(375, 1500), Accept::Dropped);
        assert_eq!(nic.next_release(375), Some(376), "after a drop the ended DMAs are gone");
        assert_eq!(nic.receive(376, 1499), Accept::Stored);
        assert_eq!(nic.rx_waiting(), 2);
    }

    #[test]
    fn ceil_is_libm_ceil() {
        for x in [0.0, 0.25, 1.0, 374.5, 375.0, 1e15 + 0.5, 4_503_599_627_370_497.0, 9_223_372_036_854_774_784.0, 9.3e18, -0.5, -3.0, f64::NAN] {
            assert_eq!(ceil(x), x.ceil() as u64, "{x}");
        }
    }

    #[test]
    fn busy_transmitter_queues_then_drops() {
        let mut nic = Nic::new(3000, 1, 4.0, 200.0, 10.0);
        // 100 bytes: 25 DMA cycles + 100 * 8 / 10 µs * 200 = 16000 wire cycles.
        let forwarded = TxFrame { bytes: 100, forwarded: Some(7) };
        assert_eq!(nic.send(0, TxFrame::local(100)), Send::Started(16_025));
        assert_eq!(nic.send(1, forwarded), Send::Queued);
        assert_eq!(nic.send(2, TxFrame::local(100)), Send::Dropped);
        assert_eq!(nic.tx_finished(), TxFrame::local(100));
        assert_eq!(nic.ack_tx(20_000), Some(36_025));
        assert_eq!(nic.tx_in_flight(), 1);
        assert_eq!(nic.tx_finished(), forwarded, "a forwarded frame keeps its arrival");
    }
}
