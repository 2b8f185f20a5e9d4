//! The machine's side of the programmable NIC (`crate::device::firmware`).
//!
//! Before each event the loop runs the NIC's cores up to that event's
//! cycle, as it runs kernel code: the NIC and the host see one another in
//! time order. Frames arriving from the wire are not such events: the
//! arrivals queued next are given to the NIC ahead, [`WIRE_AHEAD`] cycles
//! of them at a time (their wire and counters handled as the loop would),
//! and its cores run on past them; the MAC's drops are counted once the
//! NIC has run past them. When the
//! NIC asks for an interrupt, sends a frame or writes its status block,
//! time moves to the end of that NIC cycle, where the host reads the
//! returned frames into its receive queue and the NIC's interrupt is
//! raised as any NIC's is. For
//! every frame the driver has taken, the host posts a fresh receive buffer
//! before the NIC runs on (and, with `fill_send_ring_bytes`, a frame to
//! send for each send descriptor given back). A measured window
//! (`window_frames`) ends the run when it ends.
//!
//! With kernel code as the host driver (`code.program`), the firmware's DMA
//! reads and writes the code's memory ([`Dma`]), and the driver speaks the
//! firmware's protocol through the NIC's host interface (`code/ports.rs`).
//! Code runs first, at most [`LOOKAHEAD`] NIC cycles past the NIC, then the
//! NIC runs to where the code is: a mailbox write reaches the NIC at its
//! very cycle (the NIC is run up to it first), and what the NIC does
//! reaches the code at most [`LOOKAHEAD`] NIC cycles late (never early).
//! Each frame the MAC accepts is the code's to deliver (in flight by its
//! tag, its number + 1; other NICs' frames are tagged from `PORT_TAGS`),
//! and what the socket delivers is checked: the next frame in order (with
//! RPS, the next of its flow), whole.

use super::{Event, Machine, SLICE};
use crate::code::Code;
use crate::code::ports::{InFlight, Outcome, PORT_TAGS, rx_cause};
use crate::config::Scenario;
use crate::device::firmware::{Frame, check_frame, copied};
use crate::engine::{Key, Time, key_time};
use crate::error::{Error, Result};
use crate::workload::Stimulus;
use irqsim_firmware::HostMemory;

/// NIC cycles kernel code runs ahead of the programmable NIC at most: how
/// late the NIC's writes and interrupts may reach the code.
const LOOKAHEAD: u64 = 32;

/// Host cycles of the wire's frames given to the NIC ahead at most. A
/// frame given ahead costs as much whether or not the NIC gets to it: past
/// the end of a measured window it is given and withdrawn for nothing (a
/// whole [`SLICE`] of them, 94,000 frames at 64 B, was 40% of the wire's
/// cost in the study's runs). The NIC stops at the next frame after the
/// last given, once per this many cycles.
const WIRE_AHEAD: Time = 1 << 12;

/// The code's memory as the firmware's DMA engines see it: a write
/// invalidates the lines the caches hold, as any DMA into the code's memory.
struct Dma<'a>(&'a mut Code);

impl HostMemory for Dma<'_> {
    fn read(&mut self, addr: u32) -> u32 {
        self.0.sys.mem.read_u32(addr)
    }

    fn write(&mut self, addr: u32, value: u32) {
        self.0.dma_write(addr, &value.to_be_bytes());
    }
}

impl Machine {
    /// Before the event or completion at `next`: the parts that run on
    /// their own (kernel code, the programmable NIC) run up to it; `true`
    /// if one of them scheduled something to handle first. Out of line:
    /// runs without them never call it.
    #[inline(never)]
    pub(super) fn step_devices(&mut self, next: Key) -> Result<bool> {
        if let (Some(_), Some(f)) = (&self.code, &self.net.firmware) {
            // Kernel code beside the programmable NIC: the code first, then the NIC to where it is.
            let bound = f.host_time(f.now()).saturating_add(f.host_cycles(LOOKAHEAD)).max(self.queue.now() + 1);
            let next = next.min(Key::from(bound) << 64);
            return Ok(self.run_code(next)? || self.run_firmware(next)?);
        }
        if self.code.is_some() && self.run_code(next)? {
            return Ok(true);
        }
        if self.net.firmware.is_some() {
            return self.run_firmware(Key::MAX);
        }
        Ok(false)
    }

    /// Runs the NIC up to the next event (no later than `bound`), at most
    /// [`SLICE`] cycles at a time; `true` if the loop must look again: the
    /// NIC did something the host must see first, or it stopped before the
    /// event (the slice or the bound). The wire's frames are given ahead
    /// [`WIRE_AHEAD`] cycles at a time, the NIC running to the end of each
    /// stretch before the next is given, so it sees them all before it
    /// runs past them; the MAC's drops are counted once, at the end.
    fn run_firmware(&mut self, bound: Key) -> Result<bool> {
        let before = self.queue.now();
        let slice = before.saturating_add(SLICE);
        let mut given = before;
        let (event, horizon) = loop {
            given = given.saturating_add(WIRE_AHEAD).min(slice);
            // The wire's frames come out of the queue: the next event is the next other one (or a thread's timer).
            let (wire, more) = self.wire_ahead(given)?;
            let next = self.timers.first().1.min(wire);
            let event = if next == Key::MAX { self.end } else { key_time(next).min(self.end) };
            let horizon = event.min(slice).min(key_time(bound));
            let last = !more || horizon <= given;
            self.firmware_run(if last { horizon } else { given })?;
            if last || self.net.firmware.as_ref().expect("firmware part selected").due {
                break (event, horizon);
            }
        };
        self.count_drops(before);
        let f = self.net.firmware.as_mut().expect("firmware part selected");
        if f.due {
            // The end of the NIC cycle it stopped in, no later than the event.
            let at = f.host_time(f.now()).clamp(before, horizon);
            self.queue.advance_to(at);
            self.firmware_effects(at)?;
            return Ok(true);
        }
        if horizon < event {
            self.queue.advance_to(horizon);
            self.sliced |= horizon == slice;
            return Ok(true);
        }
        Ok(false)
    }

    /// The host posts what it has to post, then the NIC runs to `to` (or
    /// to its first effect the host must see), its DMA into the code's
    /// memory when the driver is code; the frames the MAC dropped are
    /// counted (no earlier than `before`), and those it accepted become
    /// the code's.
    fn firmware_advance(&mut self, before: Time, to: Time) -> Result<()> {
        self.firmware_run(to)?;
        self.count_drops(before);
        Ok(())
    }

    /// [`Machine::firmware_advance`] but for the MAC's drops, which wait in
    /// the NIC's `drops`.
    fn firmware_run(&mut self, to: Time) -> Result<()> {
        let waiting = self.net.rss.as_ref().map_or(self.net.nic.rx_waiting() as u64, |r| r.waiting());
        // The abstract host's mask (its ISR posted or its NAPI poll scheduled;
        // per ring with RSS), which only firmware that moderates reads.
        let f = self.net.firmware.as_ref().expect("firmware part selected");
        if self.code.is_none() && f.coalesce.is_some() {
            let mask = (0..f.rings()).filter(|&q| self.queue_irq_off(q)).fold(0, |m, q| m | 1 << q);
            let now = self.queue.now();
            self.net.firmware.as_mut().expect("firmware part selected").host_masks(now, mask);
        }
        let f = self.net.firmware.as_mut().expect("firmware part selected");
        self.net.counters.tx_offered += f.post(f.returned() - waiting);
        let mut dma = self.code.as_deref_mut().map(Dma);
        if let Err(msg) = f.advance(to, dma.as_mut().map(|d| d as &mut dyn HostMemory)) {
            return Err(Error::Code { file: self.name().to_string(), msg: format!("nic_firmware: {msg}") });
        }
        if let Some(code) = self.code.as_deref_mut() {
            // Each frame is in flight on the ring its flow steers to (with several).
            let steered = self.net.rss.as_ref().filter(|_| f.rings() > 1);
            let (first, accepted) = f.accepted();
            for (k, Frame { arrival, bytes, flow }) in (first..).zip(accepted) {
                let queue = steered.map_or(0, |r| r.flow_queue[flow as usize]);
                code.sys.devices.frames.insert(tag(k), InFlight { arrival, bytes, queue, flow });
            }
        }
        Ok(())
    }

    /// The frames the MAC dropped as the NIC ran, each counted at its
    /// arrival (no earlier than `before`, when a closed-loop sender tries
    /// again; an open-loop one does not, so they are only counted).
    fn count_drops(&mut self, before: Time) {
        let f = self.net.firmware.as_mut().expect("firmware part selected");
        if !self.net.workload.closed_loop_rx() {
            self.net.counters.rx_dropped_nic += f.drops.len() as u64;
            f.drops.clear();
            return;
        }
        let drops = std::mem::take(&mut f.drops);
        for &at in &drops {
            self.nic_dropped(at.max(before));
        }
        let f = self.net.firmware.as_mut().expect("firmware part selected");
        f.drops = drops;
        f.drops.clear();
    }

    /// Kernel code is the programmable NIC's host driver: the NIC takes
    /// its buffers, and the other NICs' frames are tagged apart from the
    /// firmware's (which are tagged by their number).
    pub(super) fn start_firmware_driver(&mut self) {
        if let (Some(code), Some(f)) = (&mut self.code, &mut self.net.firmware) {
            code.sys.devices.firmware = true;
            code.next_tag = PORT_TAGS;
            f.drive_by_code();
        }
    }

    /// RPS needs backlogs in the driver: one that serves more NAPI
    /// instances than the return ring says so (`nic_napi_instances`,
    /// fw_rx_nics.elf, checked against the need by the code part). Several
    /// return rings need a driver that walks them (`nic_return_rings`,
    /// fw_rx_rss.elf).
    pub(super) fn firmware_driver_fits(&self, s: &Scenario) -> Result<()> {
        let (Some(code), Some(f)) = (&self.code, &self.net.firmware) else { return Ok(()) };
        let given = s.code.program.as_deref().unwrap_or_default();
        let p = &code.sys.program;
        let walks = p.symbol("nic_return_rings").map_or(1, |a| code.sys.mem.read_u32(a) as usize);
        let refuse = |key: &str, msg: String| Err(Error::Config { file: s.file.clone(), key: key.into(), line: None, msg });
        if f.rings() > walks {
            let walks =
                if walks == 1 { "one return ring (no `nic_return_rings`)".to_string() } else { format!("{walks} return rings (its `nic_return_rings`)") };
            return refuse(
                "rss.queues",
                format!(
                    "{given} walks {walks}, but the firmware returns frames on {}: use a driver that walks them, as programs/system/fw_rx_rss.elf",
                    f.rings()
                ),
            );
        }
        if s.rss.rps() && p.symbol("nic_napi_instances").is_none() {
            return refuse(
                "rss.rps_cpus",
                format!("{given} serves the return ring only (no `nic_napi_instances`): RPS needs its backlogs, as in programs/system/fw_rx_nics.elf"),
            );
        }
        Ok(())
    }

    /// Kernel code wrote a mailbox at `now`: the NIC runs up to that cycle
    /// (the host sees what it did by then), then takes the new count.
    pub(super) fn firmware_mailbox(&mut self, now: Time, send: bool, value: u32) -> Result<()> {
        loop {
            self.firmware_advance(now, now)?;
            if !self.net.firmware.as_ref().expect("firmware part selected").due {
                break;
            }
            self.firmware_effects(now)?;
        }
        self.net.firmware.as_mut().expect("firmware part selected").mailbox(send, value);
        Ok(())
    }

    /// The socket hands the application the bytes at `addr` (service
    /// FRAME): they must be the frame the MAC accepted next of those not
    /// yet delivered or dropped, whole. It is then delivered.
    pub(super) fn firmware_frame(&mut self, now: Time, addr: u32) -> Result<()> {
        let code = self.code.as_deref_mut().expect("code part selected");
        let k = code.sys.mem.read_u32(addr);
        // With RPS or several return rings frames keep their order within
        // their flow (one CPU's backlog or one ring each), not across.
        let rings = self.net.firmware.as_ref().map_or(1, |f| f.rings());
        let by_flow = self.net.rss.as_ref().is_some_and(|r| r.keep_flows) || rings > 1;
        let flow = by_flow.then(|| code.sys.devices.frames.get(&tag(k.into())).map(|f| f.flow)).flatten();
        let ours = |(t, f): (&u32, &InFlight)| (*t < PORT_TAGS && flow.is_none_or(|x| f.flow == x)).then_some(*t);
        let next = code.sys.devices.frames.iter().filter_map(ours).min();
        let broken = match (code.sys.devices.frames.get(&tag(k.into())), next) {
            (None, _) => Err(format!("the socket delivered frame {k}, which is not in flight (delivered twice, or never received)")),
            (Some(_), Some(n)) if n != tag(k.into()) => Err(format!("the socket delivered frame {k} where frame {} was next (out of order)", n - 1)),
            (Some(f), _) => check_frame(k, f.bytes, &code.sys.mem.read_bytes(addr, copied(f.bytes))),
        };
        if let Err(msg) = broken {
            return Err(Error::Invariant { file: self.name().to_string(), msg: format!("nic_firmware: {msg}") });
        }
        let frame = code.sys.devices.frames.remove(&tag(k.into())).expect("in flight");
        code.sys.devices.outcomes.push(Outcome { frame, at: now, delivered: true });
        self.code_outcomes();
        Ok(())
    }

    /// The frames arriving next, up to `limit`: while the queue's next
    /// event is a frame from the wire (a received stimulus, or a frame that
    /// waited for the wire), it is handled as the loop would at its time,
    /// and so given to the NIC ahead; then time goes back to where the NIC
    /// and the host are. Returns the next event's key, and whether it is a
    /// frame from the wire (past `limit`). The workload's next
    /// frame is handled at once, without the queue, when the queue would
    /// give it next (before every queued event: a tie goes to the one
    /// queued first).
    fn wire_ahead(&mut self, limit: Time) -> Result<(Key, bool)> {
        let now = self.queue.now();
        let wire = |e: Option<&Event>| matches!(e, Some(Event::Stimulus(Stimulus::Receive { .. }) | Event::Landed { .. }));
        let mut key = self.queue.peek_key();
        while key_time(key) <= limit && wire(self.queue.peek()) {
            match self.queue.pop() {
                Some((at, Event::Stimulus(s))) => {
                    self.apply(at, s);
                    // The workload's next frames at once while each is what the queue would give next.
                    while let Some((t, s)) = self.next_stimulus()? {
                        if !matches!(s, Stimulus::Receive { .. }) || t > limit || t >= key_time(self.queue.peek_key()) {
                            self.queue.schedule(t, Event::Stimulus(s));
                            break;
                        }
                        self.queue.advance_to(t);
                        self.apply(t, s);
                    }
                }
                Some((at, Event::Landed { bytes })) => {
                    self.net.wire_waiting -= 1;
                    self.land(at, bytes);
                }
                _ => unreachable!("peeked a frame from the wire"),
            }
            key = self.queue.peek_key();
        }
        let more = wire(self.queue.peek());
        self.queue.rewind(now);
        Ok((key, more))
    }

    /// The host sees what the NIC did: returned frames join its receive
    /// queue, frames on the wire count as sent, and an interrupt the
    /// firmware asked for is the NIC's.
    fn firmware_effects(&mut self, now: Time) -> Result<()> {
        let f = self.net.firmware.as_mut().expect("firmware part selected");
        f.due = false;
        let seen = match f.effects(now, &mut self.net.nic, self.net.rss.as_mut()) {
            Ok(seen) => seen,
            Err(msg) => return Err(Error::Invariant { file: self.name().to_string(), msg: format!("nic_firmware: {msg}") }),
        };
        if seen.sent > 0 {
            self.net.counters.tx_sent += seen.sent;
            self.net.counters.tx_sent_bytes += seen.sent_bytes;
            self.timeline.mark(now, "frame sent");
            self.forwarded_left_firmware(now);
        }
        let rings = self.net.firmware.as_ref().expect("firmware part selected").rings();
        let vectors = (0..rings).filter(|&q| seen.vectors & 1 << q != 0);
        if seen.vectors != 0 && self.code.is_some() {
            // Kernel code's driver: each ring's receive cause in NIC 0's registers, its interrupt as any code NIC queue's.
            for q in vectors {
                self.code.as_mut().expect("code part selected").sys.devices.nics[0].icr |= rx_cause(q);
                self.code_rx_interrupt(now, q);
            }
        } else if seen.vectors != 0 && self.net.rss.is_some() {
            // Return ring q is RSS queue q: its vector, unless its NAPI instance has it masked.
            for q in vectors {
                if self.net.rss.as_ref().is_some_and(|r| r.rings[q].rx_waiting() > 0) {
                    self.rss_raise(q);
                }
            }
        } else if seen.vectors != 0 && self.net.nic.rx_waiting() > 0 {
            // An interrupt for frames an earlier one already took finds nothing: not taken.
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
    /// With `[rss]` the frame's flow is drawn from the flow mix here, as
    /// for the e1000-like NIC, and the MAC stamps it with the flow's
    /// Toeplitz hash (firmware that steers reads it; with one return ring
    /// RPS reads it on the host).
    pub(crate) fn firmware_land(&mut self, now: Time, bytes: u32) {
        let (flow, hash) = self.net.rss.as_mut().map_or((0, 0), |r| {
            let flow = r.steer().1;
            (flow, r.flow_hash[flow as usize])
        });
        let f = self.net.firmware.as_mut().expect("firmware part selected");
        if !f.arrives(Frame { arrival: now, bytes, flow }, hash) {
            self.nic_dropped(now);
        }
    }
}

/// The tag by which kernel code names the `k`-th frame the MAC accepted
/// (`k + 1`: tag 0 is a frame of the code's own, as on its other NICs).
fn tag(k: u64) -> u32 {
    (k as u32).wrapping_add(1)
}
