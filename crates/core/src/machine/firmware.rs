//! The machine's side of the programmable NIC (`crate::device::firmware`).
//!
//! Before each event the loop runs the NIC's cores up to that event's
//! cycle, as it runs kernel code: the NIC and the host see one another in
//! time order. When the NIC asks for an interrupt, sends a frame or writes
//! its status block, time moves to the end of that NIC cycle, where the
//! host reads the returned frames into its receive queue and the NIC's
//! interrupt is raised as any NIC's is. For
//! every frame the driver has taken, the host posts a fresh receive buffer
//! before the NIC runs on (and, with `fill_send_ring_bytes`, a frame to
//! send for each send descriptor given back). A measured window
//! (`window_frames`) ends the run when it ends.

use super::{Machine, SLICE};
use crate::engine::{Key, Time, key_time};
use crate::error::{Error, Result};

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
            return self.run_firmware(next);
        }
        Ok(false)
    }

    /// Runs the NIC up to `next`, at most [`SLICE`] cycles at a time;
    /// `true` if the loop must look again: the NIC did something the host
    /// must see first, or the slice ended before the event.
    fn run_firmware(&mut self, next: Key) -> Result<bool> {
        let before = self.queue.now();
        let event = if next == Key::MAX { self.end } else { key_time(next).min(self.end) };
        let horizon = event.min(before.saturating_add(SLICE));
        let waiting = self.net.nic.rx_waiting() as u64;
        let f = self.net.firmware.as_mut().expect("firmware part selected");
        self.net.counters.tx_offered += f.post(f.returned() - waiting);
        if let Err(msg) = f.advance(horizon) {
            return Err(Error::Code { file: self.name().to_string(), msg: format!("nic_firmware: {msg}") });
        }
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
            // `nic_firmware.window_frames`: the run ends with its window.
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

    /// A frame off the wire lands in the NIC's MAC (the NIC is at `now`).
    pub(crate) fn firmware_land(&mut self, now: Time, bytes: u32) {
        let f = self.net.firmware.as_mut().expect("firmware part selected");
        if !f.lands(now, bytes) {
            self.nic_dropped(now);
        }
    }
}
