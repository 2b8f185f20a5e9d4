//! The machine's side of the programmable NIC (`crate::device::firmware`).
//!
//! Before each event the loop runs the NIC's cores up to that event's
//! cycle, as it runs kernel code: the NIC and the host see one another in
//! time order. Frames arriving from the wire are not such events: the
//! arrivals queued next are given to the NIC ahead (their wire and
//! counters handled as the loop would), and its cores run on past them;
//! the MAC's drops are counted once the NIC has run past them. When the
//! NIC asks for an interrupt, sends a frame or writes its status block,
//! time moves to the end of that NIC cycle, where the host reads the
//! returned frames into its receive queue and the NIC's interrupt is
//! raised as any NIC's is. For
//! every frame the driver has taken, the host posts a fresh receive buffer
//! before the NIC runs on (and, with `fill_send_ring_bytes`, a frame to
//! send for each send descriptor given back). A measured window
//! (`window_frames`) ends the run when it ends.

use super::{Event, Machine, SLICE};
use crate::engine::{Key, Time, key_time};
use crate::error::{Error, Result};
use crate::workload::Stimulus;

impl Machine {
    /// Before the event or completion at `next`: the parts that run on
    /// their own (kernel code, the programmable NIC) run up to it; `true`
    /// if one of them scheduled something to handle first. Out of line:
    /// runs without them never call it.
    #[inline(never)]
    pub(super) fn step_devices(&mut self, next: Key) -> Result<bool> {
        if self.code.is_some() && self.run_code(next)? {
            return Ok(true);
        }
        if self.net.firmware.is_some() {
            return self.run_firmware();
        }
        Ok(false)
    }

    /// Runs the NIC up to the next event, at most [`SLICE`] cycles at a time;
    /// `true` if the loop must look again: the NIC did something the host
    /// must see first, or the slice ended before the event.
    fn run_firmware(&mut self) -> Result<bool> {
        let before = self.queue.now();
        // The wire's frames come out of the queue: the next event is the next other one (or a thread's timer).
        let next = self.timers.first().1.min(self.wire_ahead(before.saturating_add(SLICE))?);
        let event = if next == Key::MAX { self.end } else { key_time(next).min(self.end) };
        let horizon = event.min(before.saturating_add(SLICE));
        let waiting = self.net.nic.rx_waiting() as u64;
        let f = self.net.firmware.as_mut().expect("firmware part selected");
        self.net.counters.tx_offered += f.post(f.returned() - waiting);
        if let Err(msg) = f.advance(horizon) {
            return Err(Error::Code { file: self.name().to_string(), msg: format!("nic_firmware: {msg}") });
        }
        // The frames the MAC dropped as the NIC ran, each counted at its arrival.
        let drops = std::mem::take(&mut f.drops);
        for &at in &drops {
            self.nic_dropped(at.max(before));
        }
        let f = self.net.firmware.as_mut().expect("firmware part selected");
        f.drops = drops;
        f.drops.clear();
        if f.due {
            // The end of the NIC cycle it stopped in, no later than the event.
            let at = f.host_time(f.now()).clamp(before, horizon);
            self.queue.advance_to(at);
            self.firmware_effects(at)?;
            return Ok(true);
        }
        if horizon < event {
            self.queue.advance_to(horizon);
            self.sliced = true;
            return Ok(true);
        }
        Ok(false)
    }

    /// The frames arriving next, up to `limit`: while the queue's next
    /// event is a frame from the wire (a received stimulus, or a frame that
    /// waited for the wire), it is handled as the loop would at its time,
    /// and so given to the NIC ahead; then time goes back to where the NIC
    /// and the host are. Returns the next event's key.
    fn wire_ahead(&mut self, limit: Time) -> Result<Key> {
        let now = self.queue.now();
        let mut key = self.queue.peek_key();
        while key_time(key) <= limit && matches!(self.queue.peek(), Some(Event::Stimulus(Stimulus::Receive { .. }) | Event::Landed { .. })) {
            match self.queue.pop() {
                Some((at, Event::Stimulus(s))) => {
                    self.apply(at, s);
                    self.schedule_next_stimulus()?;
                }
                Some((at, Event::Landed { bytes })) => {
                    self.net.wire_waiting -= 1;
                    self.land(at, bytes);
                }
                _ => unreachable!("peeked a frame from the wire"),
            }
            key = self.queue.peek_key();
        }
        self.queue.rewind(now);
        Ok(key)
    }

    /// The host sees what the NIC did: returned frames join its receive
    /// queue, frames on the wire count as sent, and an interrupt the
    /// firmware asked for is the NIC's.
    fn firmware_effects(&mut self, now: Time) -> Result<()> {
        let f = self.net.firmware.as_mut().expect("firmware part selected");
        f.due = false;
        let seen = match f.effects(now, &mut self.net.nic) {
            Ok(seen) => seen,
            Err(msg) => return Err(Error::Invariant { file: self.name().to_string(), msg: format!("nic_firmware: {msg}") }),
        };
        if seen.sent > 0 {
            self.net.counters.tx_sent += seen.sent;
            self.net.counters.tx_sent_bytes += seen.sent_bytes;
            self.timeline.mark(now, "frame sent");
        }
        // An interrupt for frames an earlier one already took finds nothing: not taken.
        if seen.interrupt && self.net.nic.rx_waiting() > 0 {
            self.raise_nic_irq();
        }
        if seen.window_ended {
            // `nic_firmware.window_frames`: the run ends with its window; frames given for later never came.
            let f = self.net.firmware.as_mut().expect("firmware part selected");
            self.net.counters.rx_offered -= f.withdraw_after(now);
            self.end = now;
            self.queue.schedule(now, super::Event::End);
        }
        Ok(())
    }

    /// Driver Send finished: the frame goes to the firmware's send ring,
    /// or is dropped when the ring is full.
    pub(crate) fn firmware_send(&mut self, bytes: u32) {
        let f = self.net.firmware.as_mut().expect("firmware part selected");
        if !f.send(bytes) {
            self.net.counters.tx_dropped += 1;
        }
    }

    /// A frame off the wire reaches the NIC's MAC at `now` (the NIC may be
    /// behind: it lands when the NIC runs to it).
    pub(crate) fn firmware_land(&mut self, now: Time, bytes: u32) {
        let f = self.net.firmware.as_mut().expect("firmware part selected");
        if !f.arrives(now, bytes) {
            self.nic_dropped(now);
        }
    }
}
