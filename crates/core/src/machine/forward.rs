//! Forwarding: a NIC whose `forward_to` names another (or itself) hands
//! each frame its driver takes to the kernel's IP forwarding instead of the
//! local stack, and the frame leaves by that NIC's transmitter, as a router
//! forwards between its ports (NAPI_HOWTO's e1000 test; Mogul and
//! Ramakrishnan's router, where the output's transmit completions compete
//! with the input's receive interrupts).
//!
//! On the mt and Linux paths the forwarding is a job at the
//! software-interrupt level after the driver's step (`Job::Forward`: IP and
//! Driver Send), behind the protocol's backlog as a received frame is; on
//! NAPI it runs in the poll with the driver's step (or, with RPS, on the
//! backlog's CPU), as `netif_receive_skb` runs `ip_forward` to
//! `dev_queue_xmit` there. The frame then waits in the output NIC's
//! transmit queue (dropped when it is full) and is delivered when it has
//! left the wire; its transmit completion interrupts the output NIC, whose
//! driver cleans it (`IsrTx`, `PollTx`, or its queue 0's poll).
//!
//! Onto the programmable NIC (`[nic_firmware]` as NIC 0, with the abstract
//! host driver), Driver Send posts the frame to the firmware's send ring
//! (a descriptor, its header and the send mailbox, as the driver sends its
//! own) or drops it when the ring's 256 descriptors are all outstanding;
//! the firmware fetches it by DMA and puts it on the wire, and the frame
//! is delivered when the host sees it sent (the frames on the wire are
//! checked in the order posted, so the ring's numbers say which).

use super::{Event, Machine};
use crate::cpu::SOFT;
use crate::device::nic::{Send, TxFrame};
use crate::engine::Time;
use crate::kernel::{Job, PortStep};
use std::collections::VecDeque;

/// The forwarding counts, with where the first NIC's frames go.
#[derive(Debug, Default)]
pub(crate) struct Forwarding {
    /// The first NIC's `forward_to`.
    pub first: Option<u8>,
    /// Frames that left by their output NIC's wire (also delivered).
    pub forwarded: u64,
    /// Frames their output NIC's full transmit queue dropped.
    pub dropped: u64,
    /// Frames in an output NIC's transmit queue or on its wire.
    pub queued: u64,
    /// Forwarded frames in the programmable NIC's send ring: the ring's
    /// number for each (its place among all frames posted to send), its
    /// arrival and bytes, in order.
    pub(super) onto_firmware: VecDeque<(u64, Time, u32)>,
}

impl Machine {
    /// Where the frames of receive queue `q` (a ring, not an RPS backlog)
    /// leave by, if they are forwarded.
    #[inline]
    pub(crate) fn forward_of(&self, q: usize) -> Option<u8> {
        if self.net.ports.holds(q) {
            return self.net.ports.forward_of(q);
        }
        self.net.forwarding.first
    }

    /// The driver took a frame to forward out of NIC `to` (mt and Linux
    /// paths): IP forwarding runs at the software-interrupt level, unless
    /// the protocol's backlog is full.
    pub(crate) fn forward_takes(&mut self, thread: usize, arrival: Time, bytes: u32, to: u8) {
        if self.net.counters.rx_in_stack >= self.net.backlog_limit {
            self.net.counters.rx_dropped_backlog += 1;
            return;
        }
        self.net.counters.rx_in_stack += 1;
        self.post(thread, SOFT, Job::Forward { arrival, bytes, to });
    }

    /// `Job::Forward` ended: the frame goes to its output NIC.
    pub(crate) fn forwarded_job(&mut self, now: Time, arrival: Time, bytes: u32, to: u8) {
        self.net.counters.rx_in_stack -= 1;
        self.forward_out(now, arrival, bytes, to);
    }

    /// Driver Send of a forwarded frame on NIC `to` (0: the first NIC, k:
    /// the `k`-th other): its transmitter starts it, queues it, or drops it.
    pub(crate) fn forward_out(&mut self, now: Time, arrival: Time, bytes: u32, to: u8) {
        self.net.counters.tx_offered += 1;
        let frame = TxFrame { bytes, forwarded: Some(arrival) };
        let sent = match to {
            0 if self.net.firmware.is_some() => self.firmware_forward(arrival, bytes),
            0 => self.net.nic.send(now, frame),
            k => self.net.ports.list[usize::from(k) - 1].tx.send(now, frame),
        };
        match sent {
            Send::Started(out) => {
                let event = if to == 0 { Event::TxOut } else { Event::PortTxOut { port: to - 1 } };
                self.queue.schedule(out, event);
            }
            Send::Queued => {}
            Send::Dropped => {
                self.net.counters.tx_dropped += 1;
                self.net.forwarding.dropped += 1;
                return;
            }
        }
        self.net.forwarding.queued += 1;
    }

    /// Driver Send of a forwarded frame onto the programmable NIC: posted
    /// to its firmware's send ring, or dropped when the ring is full.
    fn firmware_forward(&mut self, arrival: Time, bytes: u32) -> Send {
        let f = self.net.firmware.as_mut().expect("firmware part selected");
        let number = f.send_posted();
        if !f.send(bytes) {
            return Send::Dropped;
        }
        self.net.forwarding.onto_firmware.push_back((number, arrival, bytes));
        Send::Queued
    }

    /// The host saw the programmable NIC's MAC put frames on the wire
    /// (counted as sent by the caller): the forwarded ones among them are
    /// delivered.
    pub(crate) fn forwarded_left_firmware(&mut self, now: Time) {
        let f = self.net.firmware.as_ref().expect("firmware part selected");
        let sent = f.send_posted() - f.sending();
        while let Some(&(number, arrival, bytes)) = self.net.forwarding.onto_firmware.front()
            && number < sent
        {
            self.net.forwarding.onto_firmware.pop_front();
            let f = &mut self.net.forwarding;
            (f.queued, f.forwarded) = (f.queued - 1, f.forwarded + 1);
            self.deliver(arrival, now, bytes);
        }
    }

    /// A frame has left a transmitter's wire: a forwarded one is delivered.
    pub(crate) fn sent(&mut self, now: Time, frame: TxFrame) {
        self.net.counters.tx_sent += 1;
        self.net.counters.tx_sent_bytes += u64::from(frame.bytes);
        self.timeline.mark(now, "frame sent");
        if let Some(arrival) = frame.forwarded {
            let f = &mut self.net.forwarding;
            (f.queued, f.forwarded) = (f.queued - 1, f.forwarded + 1);
            self.deliver(arrival, now, frame.bytes);
        }
    }

    /// Port `k`'s transmit ring has put a frame on the wire: the next goes
    /// on, and the completion interrupts on the port's first queue.
    #[inline(never)]
    pub(super) fn port_tx_out(&mut self, now: Time, k: usize) {
        let p = &mut self.net.ports.list[k];
        let (frame, next) = p.tx.finished(now);
        p.sent += 1;
        if let Some(out) = next {
            self.queue.schedule(out, Event::PortTxOut { port: k as u8 });
        }
        self.sent(now, frame);
        self.port_raise(self.net.ports.first[k]);
    }

    /// The driver of port queue `q` cleaned a sent frame's descriptor (in
    /// its ISR, bottom half or poll).
    pub(crate) fn port_tx_clean(&mut self, q: usize) {
        let (k, _) = self.net.ports.at(q);
        self.net.ports.list[k].tx.clean();
    }

    /// Whether port queue `q` is its port's first, with sent frames to clean.
    fn port_tx_done(&self, q: usize) -> bool {
        let (k, i) = self.net.ports.at(q);
        i == 0 && self.net.ports.list[k].tx.done > 0
    }

    /// Whether receive queue `q`'s NIC has a transmit completion to clean
    /// there (the first NIC's and each port's on their first queue).
    #[inline]
    pub(crate) fn tx_done_pending(&mut self, q: usize) -> bool {
        match self.net.ports.holds(q) {
            true => self.port_tx_done(q),
            false => q == 0 && self.net.nic.tx_done_pending,
        }
    }

    /// The transmit-clean step of port queue `q` in its ISR or (`bottom`)
    /// its bottom half, if it has one.
    pub(crate) fn port_tx_step(&mut self, q: usize, bottom: bool) -> Option<Job> {
        let step = if bottom { PortStep::PollTx } else { PortStep::IsrTx };
        self.port_tx_done(q).then_some(Job::Port { step, q: q as u8 })
    }
}
