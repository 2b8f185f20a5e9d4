//! The machine's interrupt controllers, several at once: MSI-X for the NIC
//! beside an IO-APIC or the 8259s for legacy devices, as on a PC.
//!
//! Inputs are numbered across the machine: controller `c`'s input `i` is
//! `base(c) + i` ([`super::bases`]), so sources, handler chains, jobs and
//! signals name one number. The first controller (the scenario's
//! `intc.kind`) starts at 0, so a machine of one controller is numbered as
//! before. A CPU takes the most urgent request among its controllers:
//! vector priority classes compare across the IO-APIC and MSI (both end in
//! the local APIC), the 8259's ExtINT comes first, and equal priorities go
//! to the controller listed first.

use super::{Intc, IntcKind, Rec, Signal, Taken};
use crate::engine::Time;

pub struct Controllers {
    ctls: Vec<Ctl>,
}

struct Ctl {
    intc: Intc,
    legacy: bool,
    base: u32,
}

impl Controllers {
    /// The controllers of `kinds`, in the order [`super::Wiring`] lists them.
    pub fn new(kinds: &[IntcKind], intcs: Vec<Intc>) -> Self {
        let ctls = kinds.iter().zip(intcs).zip(super::bases(kinds)).map(|((k, intc), base)| Ctl { intc, legacy: k.legacy(), base }).collect();
        Self { ctls }
    }

    /// The controller of machine input `input`, and its own number for it.
    #[inline]
    fn at(&self, input: u32) -> (usize, u32) {
        let c = if self.ctls.len() == 1 { 0 } else { self.ctls.iter().rposition(|c| c.base <= input).expect("input 0 is the first controller's") };
        (c, input - self.ctls[c].base)
    }

    /// Whether `input` is a legacy line (shared, status read, not ordered
    /// behind DMA data).
    #[inline]
    pub fn legacy(&self, input: u32) -> bool {
        self.ctls[self.at(input).0].legacy
    }

    /// A signal of controller `c` in machine numbering.
    fn out(&self, c: usize, next: Option<(u64, Signal)>) -> Option<(u64, Signal)> {
        let base = self.ctls[c].base;
        next.map(|(delay, sig)| (delay, sig.map(|i| i + base)))
    }

    pub fn level(&mut self, input: u32, assert: bool) -> (Option<usize>, Option<(u64, Signal)>) {
        let (c, local) = self.at(input);
        let (cpu, next) = self.ctls[c].intc.level(local, assert);
        (cpu, self.out(c, next))
    }

    /// [`super::Controller::deassert_early`] on `input`'s controller.
    pub fn deassert_early(&mut self, input: u32, now: Time, delay: u64) -> Option<u32> {
        let (c, local) = self.at(input);
        self.ctls[c].intc.deassert_early(local, now, delay)
    }

    /// [`super::Controller::level_count`] of `input`.
    pub fn level_count(&self, input: u32) -> Option<u32> {
        let (c, local) = self.at(input);
        self.ctls[c].intc.level_count(local)
    }

    pub fn message(&mut self, input: u32, rec: Rec) -> Result<usize, Rec> {
        let (c, local) = self.at(input);
        self.ctls[c].intc.message(local, rec)
    }

    pub fn signal(&mut self, sig: Signal) -> (Option<usize>, Option<(u64, Signal)>) {
        let (c, _) = self.at(sig.input());
        let base = self.ctls[c].base;
        let (cpu, next) = self.ctls[c].intc.signal(sig.map(|i| i - base));
        (cpu, self.out(c, next))
    }

    /// `cpu` accepts the most urgent input pending at any of its controllers.
    // Inline: a call here saved registers and copied the `Taken` twice (the
    // CPU asks twice a frame, once to find nothing).
    #[inline]
    pub fn take(&mut self, cpu: usize) -> Option<Taken> {
        let c = match self.ctls.len() {
            1 => 0,
            _ => self.ctls.iter().enumerate().filter_map(|(c, x)| Some((x.intc.urgent(cpu)?, std::cmp::Reverse(c)))).max()?.1.0,
        };
        let ctl = &mut self.ctls[c];
        let taken = ctl.intc.take(cpu)?;
        Some(Taken { input: taken.input + ctl.base, ..taken })
    }

    pub fn finish(&mut self, input: u32, now: Time) -> (u64, Option<(u64, Signal)>) {
        let (c, local) = self.at(input);
        let (cycles, next) = self.ctls[c].intc.finish(local, now);
        (cycles, self.out(c, next))
    }

    pub fn holding(&self) -> u64 {
        self.ctls.iter().map(|c| c.intc.holding()).sum()
    }
}

impl Signal {
    /// The input the signal is about.
    pub fn input(self) -> u32 {
        match self {
            Signal::Lapic(i) | Signal::Unmask(i) | Signal::Eoi(i) => i,
        }
    }

    fn map(self, f: impl Fn(u32) -> u32) -> Self {
        match self {
            Signal::Lapic(i) => Signal::Lapic(f(i)),
            Signal::Unmask(i) => Signal::Unmask(f(i)),
            Signal::Eoi(i) => Signal::Eoi(f(i)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Costs, Route, Trigger};
    use super::*;

    const COSTS: Costs = Costs { port_io: 1000, posted: 100, lapic_eoi: 10, message: 100, eoi: 100 };

    /// MSI-X vectors 0..4096, then the IO-APIC's pins from 4096.
    fn msix_and_ioapic(msi_priority: u32, pin_priority: u32) -> Controllers {
        let kinds = [IntcKind::Msix, IntcKind::Ioapic];
        let msi = super::super::build(IntcKind::Msix, Trigger::Edge, vec![Route { cpu: 0, priority: msi_priority }; 24], COSTS);
        let ioapic = super::super::build(IntcKind::Ioapic, Trigger::Level, vec![Route { cpu: 0, priority: pin_priority }; 24], COSTS);
        Controllers::new(&kinds, vec![msi, ioapic])
    }

    #[test]
    fn a_cpu_takes_the_most_urgent_request_of_either_controller() {
        let mut c = msix_and_ioapic(4, 9);
        let rec = Rec { src: 0, seq: 0, sent: 0, data: 0 };
        assert_eq!(c.message(0, rec), Ok(0));
        // The pin's message travels to the local APIC, numbered as the machine numbers it.
        assert_eq!(c.level(4096 + 16, true), (None, Some((100, Signal::Lapic(4096 + 16)))));
        assert_eq!(c.signal(Signal::Lapic(4096 + 16)), (Some(0), None));
        assert!(c.legacy(4096 + 16) && !c.legacy(0));
        assert_eq!(c.take(0).map(|t| t.input), Some(4096 + 16), "priority class 9 before 4");
        assert_eq!(c.finish(4096 + 16, 0), (10, Some((110, Signal::Eoi(4096 + 16)))));
        assert_eq!(c.take(0).map(|t| t.input), Some(0));
        assert!(c.take(0).is_none());
    }

    #[test]
    fn equal_priorities_go_to_the_first_controller() {
        let mut c = msix_and_ioapic(4, 4);
        c.level(4096 + 16, true);
        c.signal(Signal::Lapic(4096 + 16));
        c.message(3, Rec { src: 0, seq: 0, sent: 0, data: 0 }).unwrap();
        assert_eq!(c.holding(), 1);
        assert_eq!(c.take(0).map(|t| t.input), Some(3));
        assert_eq!(c.take(0).map(|t| t.input), Some(4096 + 16));
    }
}
