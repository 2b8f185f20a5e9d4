//! The ideal wire: a device's interrupt reaches its CPU at once and costs
//! nothing to acknowledge or end, as in the mt-interrupts and Mach studies,
//! whose costs already include whatever their hardware did.
//!
//! An input is pending or not, like a vector's IRR bit: a second interrupt
//! on a pending input merges with it.

use super::{Controller, Kind, Rec, Route, Taken};

pub(crate) const KIND: Kind = Kind {
    key: "direct",
    name: "direct",
    legacy: false,
    inputs: super::msi::INPUTS,
    cpu0_only: false,
    local_apic: false,
    vectors: None,
    bus: false,
    auto_order: super::in_order::<{ super::msi::INPUTS }>,
    no_input: super::msi::no_vector,
    build: |_, routes, _| Box::new(Direct::new(routes)),
};

pub struct Direct {
    routes: Vec<Route>,
    pending: Vec<Option<Rec>>,
}

impl Direct {
    pub fn new(routes: Vec<Route>) -> Self {
        Self { pending: vec![None; routes.len()], routes }
    }

    /// The most urgent input pending for `cpu`: highest priority, then lowest input.
    fn best(&self, cpu: usize) -> Option<usize> {
        (0..self.pending.len())
            .filter(|&i| self.pending[i].is_some() && self.routes[i].cpu == cpu)
            .max_by_key(|&i| (self.routes[i].priority, std::cmp::Reverse(i)))
    }
}

impl Controller for Direct {
    fn message(&mut self, input: u32, rec: Rec) -> Result<usize, Rec> {
        let slot = &mut self.pending[input as usize];
        if slot.is_some() {
            return Err(rec);
        }
        *slot = Some(rec);
        Ok(self.routes[input as usize].cpu)
    }

    fn urgent(&self, cpu: usize) -> Option<u32> {
        self.best(cpu).map(|i| self.routes[i].priority)
    }

    fn take(&mut self, cpu: usize) -> Option<Taken> {
        let input = self.best(cpu)?;
        Some(Taken { input: input as u32, rec: self.pending[input].take(), ack_cycles: 0 })
    }

    fn holding(&self) -> u64 {
        self.pending.iter().filter(|r| r.is_some()).count() as u64
    }
}
