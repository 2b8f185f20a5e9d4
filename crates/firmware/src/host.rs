//! The host side of the NIC, abstract: one implementation of the host a
//! [`crate::device::Nic`] is driven by (the study's, until the NIC is a
//! part of irqsim-core's machine). Host memory ([`Memory`], only the words
//! the DMA engines and the driver touch) is reached by the NIC through
//! [`HostMemory`]; a driver keeps the send and receive rings full, and the
//! receive end checks that every frame arrives exactly once and in order.
//! The driver wakes `host_ns` after a NIC interrupt, reads the status
//! block the firmware wrote by DMA, checks the returned receive
//! descriptors, and posts new send frames and receive buffers (writing the
//! mailboxes the firmware polls).
//!
//! The NIC's interrupt is an MSI to one vector: a second message while the
//! vector is still pending (its IRR bit set) merges with it, as at a local
//! APIC (Intel SDM 3A §10.8.4); the driver takes the vector when it wakes.

use crate::device::HostMemory;
use crate::nic::Mailbox;

pub use crate::memory::{BUF, Memory, RECV_BUFS, RECV_RING, RET_RING, RING, SEND_BUFS, SEND_RING, STATUS};

pub struct Host {
    pub mem: Memory,
    frame_bytes: u32,
    delay: u64,
    sends: bool,
    receives: bool,
    /// Frames and buffers posted so far (the mailbox counts).
    pub send_posted: u64,
    pub recv_posted: u64,
    /// Send completions and received frames the driver has taken back.
    pub sent_seen: u64,
    pub received: u64,
    /// MSIs the NIC sent, and those that merged with a pending one.
    pub interrupts: u64,
    pub merged: u64,
    /// The vector's IRR bit: an MSI is pending and the driver has not taken it.
    pending: bool,
    wake_at: Option<u64>,
}

fn slot(i: u64) -> u32 {
    (i % RING) as u32
}

impl Host {
    pub fn new(frame_bytes: u32, delay: u64, sends: bool, receives: bool) -> Self {
        let mut h = Host {
            mem: Memory::default(),
            frame_bytes,
            delay,
            sends,
            receives,
            send_posted: 0,
            recv_posted: 0,
            sent_seen: 0,
            received: 0,
            interrupts: 0,
            merged: 0,
            pending: false,
            wake_at: None,
        };
        h.post();
        h
    }

    pub fn read(&mut self, addr: u32) -> u32 {
        self.mem.read(addr)
    }

    pub fn write(&mut self, addr: u32, v: u32) {
        self.mem.write(addr, v);
    }

    /// When the driver next wakes, if an interrupt is pending.
    pub fn wake_at(&self) -> Option<u64> {
        self.wake_at
    }

    /// The producer indices the driver has written to the NIC's mailboxes.
    pub fn mailboxes(&self) -> [(Mailbox, u64); 2] {
        [(Mailbox::Send, self.send_posted), (Mailbox::Receive, self.recv_posted)]
    }

    /// The NIC sent its MSI at `now`; the driver runs `delay` later unless one is pending.
    pub fn interrupt(&mut self, now: u64) {
        self.interrupts += 1;
        if self.pending {
            self.merged += 1;
            return;
        }
        self.pending = true;
        self.wake_at.get_or_insert(now + self.delay);
    }

    /// Runs the driver if it is due; an error is a violated delivery invariant.
    pub fn advance(&mut self, now: u64) -> Result<(), String> {
        if self.wake_at.is_none_or(|t| t > now) {
            return Ok(());
        }
        self.wake_at = None;
        if !std::mem::take(&mut self.pending) {
            return Err("host: woke for an interrupt the controller does not hold".into());
        }
        let sent = self.read(STATUS) as u64;
        if sent > self.send_posted {
            return Err(format!("the NIC reported {sent} frames sent, but only {} were posted", self.send_posted));
        }
        self.sent_seen = self.sent_seen.max(sent);
        let produced = self.read(STATUS + 4) as u64;
        for k in self.received..produced.max(self.received) {
            self.check_received(k)?;
        }
        self.received = self.received.max(produced);
        self.post();
        Ok(())
    }

    /// Receive return descriptor `k` must be the `k`th frame the MAC accepted, in its buffer.
    fn check_received(&mut self, k: u64) -> Result<(), String> {
        let bd = RET_RING + slot(k) * 16;
        let (addr, len, stamp) = (self.read(bd), self.read(bd + 4), self.read(bd + 8) as u64);
        let expect = RECV_BUFS + slot(k) * BUF;
        if stamp != k {
            return Err(format!("host: receive descriptor {k} carries frame {stamp} (out of order, lost or duplicated)"));
        }
        if addr != expect || len != self.frame_bytes || self.read(addr) as u64 != k {
            return Err(format!(
                "host: frame {k} landed at 0x{addr:08x} with length {len} and header {} (want 0x{expect:08x}, {})",
                self.read(addr),
                self.frame_bytes
            ));
        }
        Ok(())
    }

    /// Fills the send ring with new frames and the receive ring with buffers.
    fn post(&mut self) {
        while self.sends && self.send_posted < self.sent_seen + RING {
            let i = self.send_posted;
            let (bd, buf) = (SEND_RING + slot(i) * 16, SEND_BUFS + slot(i) * BUF);
            for (k, v) in [buf, self.frame_bytes, i as u32, 0].into_iter().enumerate() {
                self.write(bd + 4 * k as u32, v);
            }
            self.write(buf, i as u32);
            self.write(buf + 4, self.frame_bytes);
            self.send_posted += 1;
        }
        while self.receives && self.recv_posted < self.received + RING {
            let j = self.recv_posted;
            self.write(RECV_RING + slot(j) * 16, RECV_BUFS + slot(j) * BUF);
            self.write(RECV_RING + slot(j) * 16 + 4, BUF);
            self.recv_posted += 1;
        }
    }
}
