//! Message-signaled interrupts (MSI, MSI-X): the device itself writes the
//! vector to the destination's local APIC.
//!
//! Sequence:
//! 1. The device posts a memory write of the vector to the local APIC's
//!    address (0xFEExxxxx). It travels in the device's posted queue behind
//!    any DMA data, so when it lands the data is already in memory.
//! 2. The local APIC sets the vector's IRR bit. A second MSI of a vector
//!    still pending merges with it: that interrupt is lost as an event.
//! 3. With interrupts enabled the CPU takes the most urgent vector; Linux's
//!    `handle_edge_irq` writes the local APIC's EOI first, then runs the one
//!    handler: vectors are never shared, so there is no status to read.
//!
//! MSI grants up to 32 vectors per function, MSI-X up to 2,048, each with
//! its own destination. The model numbers vectors globally (x86 has 224
//! device vectors per CPU; that per-CPU limit is not modelled).

use super::{Costs, Rec, Route, Taken};

/// Message inputs the model numbers (room for a full MSI-X table and more).
pub const INPUTS: u32 = 4096;

pub struct Msi {
    routes: Vec<Route>,
    irr: Vec<Option<Rec>>,
    costs: Costs,
}

impl Msi {
    pub fn new(routes: Vec<Route>, costs: Costs) -> Self {
        Self { irr: vec![None; routes.len()], routes, costs }
    }

    pub fn message(&mut self, v: u32, rec: Rec) -> Result<usize, Rec> {
        let slot = &mut self.irr[v as usize];
        if slot.is_some() {
            return Err(rec);
        }
        *slot = Some(rec);
        Ok(self.routes[v as usize].cpu)
    }

    pub fn take(&mut self, cpu: usize) -> Option<Taken> {
        let v = (0..self.irr.len()).filter(|&v| self.irr[v].is_some() && self.routes[v].cpu == cpu).max_by_key(|&v| (self.routes[v].priority, std::cmp::Reverse(v)))?;
        let rec = self.irr[v].take();
        Some(Taken { input: v as u32, rec, ack_cycles: self.costs.lapic_eoi })
    }

    pub fn holding(&self) -> u64 {
        self.irr.iter().filter(|r| r.is_some()).count() as u64
    }
}
