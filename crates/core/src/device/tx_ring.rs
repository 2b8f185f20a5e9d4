//! A transmit descriptor ring, as on the e1000 and every NIC since: the
//! driver posts frames to the ring, the NIC sends them back to back on its
//! own, and each sent frame's descriptor stays used until the driver cleans
//! it (e1000_clean_tx_irq), so a driver that does not get to clean (under
//! a receive storm) fills the ring and further frames are dropped. The
//! first NIC's transmitter is the mt-interrupts study's instead, where the
//! driver starts each frame (`nic.rs`).

use super::nic::{Send, TxFrame, ceil};
use crate::engine::Time;
use std::collections::VecDeque;

pub struct TxRing {
    /// Frames posted and not yet on the wire.
    waiting: VecDeque<TxFrame>,
    /// The frame on the wire, if any.
    on_wire: Option<TxFrame>,
    /// Sent frames whose descriptors the driver has not cleaned.
    pub done: u64,
    descriptors: u64,
    wire_cycles_per_byte: f64,
}

impl TxRing {
    pub fn new(descriptors: u64, cycles_per_us: f64, link_mbps: f64) -> Self {
        Self { waiting: VecDeque::new(), on_wire: None, done: 0, descriptors, wire_cycles_per_byte: 8.0 / link_mbps * cycles_per_us }
    }

    /// The driver posts a frame: it starts at once on an idle wire, waits
    /// for the wire, or is dropped when every descriptor is in use.
    pub fn send(&mut self, now: Time, frame: TxFrame) -> Send {
        if self.in_flight() + self.done >= self.descriptors {
            return Send::Dropped;
        }
        if self.on_wire.is_some() {
            self.waiting.push_back(frame);
            return Send::Queued;
        }
        Send::Started(self.start(now, frame))
    }

    fn start(&mut self, now: Time, frame: TxFrame) -> Time {
        self.on_wire = Some(frame);
        now.saturating_add(ceil(f64::from(frame.bytes) * self.wire_cycles_per_byte))
    }

    /// The frame on the wire is out: its descriptor waits for cleaning, and
    /// the next frame, if any, starts (returned: when it will be out).
    pub fn finished(&mut self, now: Time) -> (TxFrame, Option<Time>) {
        let frame = self.on_wire.take().expect("a transmit completion has a frame on the wire");
        self.done += 1;
        let next = self.waiting.pop_front().map(|f| self.start(now, f));
        (frame, next)
    }

    /// The driver cleaned one sent frame's descriptor.
    pub fn clean(&mut self) {
        self.done -= 1;
    }

    /// Frames posted and not yet sent (for conservation checks).
    pub fn in_flight(&self) -> u64 {
        self.waiting.len() as u64 + u64::from(self.on_wire.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_go_back_to_back_and_descriptors_wait_for_the_driver() {
        // 100 Mb/s at 1,000 cycles per µs: 80 cycles a byte, 4,800 for 60 bytes.
        let mut ring = TxRing::new(2, 1000.0, 100.0);
        assert_eq!(ring.send(0, TxFrame::local(60)), Send::Started(4_800));
        assert_eq!(ring.send(10, TxFrame::local(60)), Send::Queued);
        assert_eq!(ring.send(20, TxFrame::local(60)), Send::Dropped, "two descriptors in use");
        assert_eq!(ring.finished(4_800), (TxFrame::local(60), Some(9_600)), "the next goes without the driver");
        assert_eq!(ring.send(4_900, TxFrame::local(60)), Send::Dropped, "the sent frame's descriptor is not clean");
        ring.clean();
        assert_eq!(ring.send(4_900, TxFrame::local(60)), Send::Queued);
        assert_eq!((ring.in_flight(), ring.done), (2, 0));
    }
}
