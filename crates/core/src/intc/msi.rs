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

use super::{Controller, Costs, Kind, Rec, Route, Taken};

/// Message inputs the model numbers (room for a full MSI-X table and more).
pub const INPUTS: u32 = 4096;

pub(crate) const KIND: Kind = Kind {
    key: "msi",
    name: "MSI",
    legacy: false,
    inputs: INPUTS,
    cpu0_only: false,
    local_apic: true,
    vectors: Some((32, true)),
    bus: true,
    auto_order: super::in_order::<INPUTS>,
    no_input: no_vector,
    build: |_, routes, costs| Box::new(Msi::new(routes, costs)),
};

pub(crate) const KIND_X: Kind = Kind { key: "msix", name: "MSI-X", vectors: Some((INPUTS, false)), ..KIND };

pub(crate) fn no_vector(l: u32) -> String {
    format!("vector {l} out of range (0..={})", INPUTS - 1)
}

pub struct Msi {
    routes: Vec<Route>,
    irr: Vec<Option<Rec>>,
    /// The vectors pending (set in `irr`) for each CPU, in no order: a CPU
    /// takes its next interrupt among these, not among every vector.
    pending: Vec<Vec<u32>>,
    costs: Costs,
}

impl Msi {
    pub fn new(routes: Vec<Route>, costs: Costs) -> Self {
        let cpus = routes.iter().map(|r| r.cpu + 1).max().unwrap_or(0);
        Self { irr: vec![None; routes.len()], routes, pending: vec![Vec::new(); cpus], costs }
    }

    /// The most urgent vector pending for `cpu` (highest priority class,
    /// then lowest vector) and its place in `pending`.
    fn best(&self, cpu: usize) -> Option<(usize, u32)> {
        let routes = &self.routes;
        let (i, &v) = self.pending.get(cpu)?.iter().enumerate().max_by_key(|&(_, &v)| (routes[v as usize].priority, std::cmp::Reverse(v)))?;
        Some((i, v))
    }
}

impl Controller for Msi {
    fn message(&mut self, v: u32, rec: Rec) -> Result<usize, Rec> {
        let slot = &mut self.irr[v as usize];
        if slot.is_some() {
            return Err(rec);
        }
        *slot = Some(rec);
        let cpu = self.routes[v as usize].cpu;
        self.pending[cpu].push(v);
        Ok(cpu)
    }

    fn urgent(&self, cpu: usize) -> Option<u32> {
        self.best(cpu).map(|(_, v)| self.routes[v as usize].priority)
    }

    fn take(&mut self, cpu: usize) -> Option<Taken> {
        let (i, v) = self.best(cpu)?;
        self.pending[cpu].swap_remove(i);
        let rec = self.irr[v as usize].take();
        Some(Taken { input: v, rec, ack_cycles: self.costs.lapic_eoi })
    }

    fn holding(&self) -> u64 {
        self.irr.iter().filter(|r| r.is_some()).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cpu_takes_its_own_vectors_most_urgent_then_lowest_first() {
        let r = |cpu, priority| Route { cpu, priority };
        let mut c = Msi::new(vec![r(1, 4), r(0, 4), r(1, 4), r(1, 9)], Costs::default());
        let rec = |seq| Rec { src: 0, seq, sent: 0, data: 0 };
        assert_eq!(c.message(2, rec(0)), Ok(1));
        assert_eq!(c.message(0, rec(1)), Ok(1));
        assert!(c.take(0).is_none(), "CPU 0 has nothing pending");
        assert_eq!(c.message(3, rec(2)), Ok(1));
        assert_eq!(c.message(1, rec(3)), Ok(0));
        let order: Vec<u32> = std::iter::from_fn(|| c.take(1).map(|t| t.input)).collect();
        assert_eq!(order, [3, 0, 2]);
        assert_eq!(c.take(0).map(|t| t.input), Some(1));
        assert!(c.take(7).is_none(), "a CPU no vector routes to");
        assert_eq!(c.holding(), 0);
    }
}
