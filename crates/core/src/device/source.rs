//! Interrupt sources as the delivery path sees them: the PCIe exerciser,
//! other devices (timer, disk, ...) and the NIC when a controller carries its
//! interrupt.
//!
//! The exerciser and the others raise interrupts at periodic or Poisson
//! instants (one pending arrival each); the NIC raises when frames come and
//! go. A legacy source keeps one status bit: raising sets it and
//! asserts INTx; the ISR's clear write, when it lands, resets it and sends
//! Deassert_INTx. An interrupt raised while the bit is still set merges with
//! the earlier one and is lost as an event. Before each interrupt the
//! exerciser may DMA-write data; [`Source::data_visible`] is when the last
//! data reached memory.

use crate::engine::Time;
use crate::intc::Rec;
use crate::workload::config::Process;
use rand::Rng;
use rand_pcg::Pcg64Mcg;
use std::collections::VecDeque;

/// What a source's handler does when it claims an interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Signature writes to the bus analyzer, and a tasklet.
    Exerciser,
    /// Its ISR's own work only.
    Other,
    /// The NIC driver's interrupt handler.
    Nic,
}

/// A CPU write on its way to a device.
#[derive(Debug, Clone, Copy)]
pub enum Write {
    Clear,
    IsrSignature(Rec),
    TaskletSignature(Rec),
}

pub struct Source {
    /// Controller inputs: the exerciser's vectors, or the one line.
    pub inputs: Vec<u32>,
    pub kind: Kind,
    /// Its ISR's work besides bus accesses.
    pub isr_cycles: u64,
    periodic: bool,
    mean_gap: f64,
    next_seq: u64,
    /// The status bit (legacy): the interrupt it stands for.
    pub status: Option<Rec>,
    /// The ISR has claimed `status`; its clear write is on the way.
    pub claimed: bool,
    /// A new cause (the NIC's) came while the clear was on its way: the
    /// status stays set when the clear lands, as a write-1-to-clear
    /// register keeps bits it was not told to clear.
    pub rearm: Option<Rec>,
    pub data_visible: Time,
    /// Cycles the exerciser's DMA data takes to cross the link before
    /// each interrupt (0: none).
    pub dma_transfer: u64,
    pub raised: u64,
    pub serviced: u64,
    pub lost: u64,
    /// MSI writes on the bus, oldest first.
    pub transit: VecDeque<Rec>,
    /// CPU writes on their way to the device, oldest first.
    pub writes: VecDeque<Write>,
    /// Last arrival of a CPU write to this device (posted writes stay ordered).
    pub downstream_tail: Time,
}

impl Source {
    pub fn new(inputs: Vec<u32>, kind: Kind, isr_cycles: u64, process: Process, rate_hz: f64, cycles_per_s: f64) -> Self {
        Self {
            inputs,
            kind,
            isr_cycles,
            periodic: process == Process::Periodic,
            mean_gap: cycles_per_s / rate_hz,
            next_seq: 0,
            status: None,
            claimed: false,
            rearm: None,
            data_visible: 0,
            dma_transfer: 0,
            raised: 0,
            serviced: 0,
            lost: 0,
            transit: VecDeque::new(),
            writes: VecDeque::new(),
            downstream_tail: 0,
        }
    }

    /// Cycles until the next interrupt (at least one); `None` for a source
    /// that raises when its device has work (the NIC).
    pub fn gap(&self, rng: &mut Pcg64Mcg) -> Option<Time> {
        if self.kind == Kind::Nic {
            return None;
        }
        let g = if self.periodic { self.mean_gap } else { -self.mean_gap * (1.0 - rng.random::<f64>()).ln() };
        Some((g.round() as Time).max(1))
    }

    /// Numbers a new interrupt sent at `sent`.
    pub fn next_rec(&mut self, src: usize, sent: Time) -> Rec {
        self.raised += 1;
        let seq = self.next_seq;
        self.next_seq += 1;
        Rec { src, seq, sent, data: self.data_visible }
    }

    /// What a status read finds: the bit's interrupt, unless already claimed.
    #[inline(always)]
    pub fn read_status(&self) -> Option<Rec> {
        self.status.filter(|_| !self.claimed)
    }

    /// A legacy interrupt: sets the status bit. Returns whether INTx must be
    /// asserted (the bit was clear), or counts the merge as lost.
    pub fn set_status(&mut self, rec: Rec) -> bool {
        if self.status.is_some() {
            if self.kind == Kind::Nic && self.claimed && self.rearm.is_none() {
                self.rearm = Some(rec);
            } else {
                self.lost += 1;
            }
            return false;
        }
        self.status = Some(rec);
        self.claimed = false;
        true
    }

    /// The ISR's clear lands: returns whether the status was set (INTx is
    /// deasserted unless a re-armed cause keeps it set).
    pub fn clear_status(&mut self) -> bool {
        self.claimed = false;
        let was = self.status.take().is_some();
        self.status = self.rearm.take();
        was
    }

    /// Raised interrupts not yet serviced nor lost, held by the device.
    pub fn holding(&self) -> u64 {
        u64::from(self.status.is_some() && !self.claimed) + u64::from(self.rearm.is_some()) + self.transit.len() as u64
    }
}
