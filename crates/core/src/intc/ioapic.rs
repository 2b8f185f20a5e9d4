//! The IO-APIC: 24 pins, each programmed with a vector (whose priority class
//! orders service at the local APIC), a destination CPU and a trigger mode.
//!
//! Sequence for a request on pin `p`:
//! 1. The device's Assert_INTx reaches the IO-APIC in the I/O hub.
//! 2. The IO-APIC sends the pin's vector to the destination's local APIC as
//!    a message (over DMI and FSB; on the P6 family, the serial APIC bus:
//!    `bus.apic_message_ns`). A level pin then sets its
//!    Remote IRR and sends nothing more until the EOI comes back.
//! 3. The local APIC holds the vector (one IRR bit per vector) until the CPU
//!    enables interrupts, then delivers its most urgent vector.
//! 4. Edge pins (`handle_edge_irq`): the kernel writes the local APIC's EOI
//!    register before the handlers. Level pins (`handle_fasteoi_irq`, PCI
//!    INTx): the handlers run first, then the EOI write, which the local APIC
//!    broadcasts to the IO-APIC (`bus.apic_eoi_ns`). There Remote IRR clears,
//!    and a pin still asserted (the device's Deassert not yet arrived, or
//!    another sharer) is delivered again.

use super::{Controller, Costs, Kind, Route, Signal, Taken, Trigger};
use crate::engine::Time;

pub const PINS: u32 = 24;

pub(crate) const KIND: Kind = Kind {
    key: "ioapic",
    name: "IO-APIC",
    legacy: true,
    inputs: PINS,
    cpu0_only: false,
    local_apic: false,
    vectors: None,
    bus: true,
    auto_order,
    no_input: |l| format!("IO-APIC pin {l} does not exist; the IO-APIC has pins 0..={}", PINS - 1),
    build: |trigger, routes, costs| Box::new(IoApic::new(routes, trigger, costs)),
};

/// PCI PIRQ pins first (16..=23), then the ISA ones.
pub fn auto_order() -> Vec<u32> {
    (16..PINS).chain(3..16).chain([1, 0, 2]).collect()
}

pub struct IoApic {
    routes: Vec<Route>,
    trigger: Trigger,
    asserted: Vec<u32>,
    remote_irr: Vec<bool>,
    /// Bit `p`: pin `p`'s vector is pending in its destination's local APIC
    /// (a mask, so that finding a CPU's most urgent looks at the pending
    /// pins only, not at all 24).
    lapic_irr: u32,
    /// Bit `p`: pin `p`'s EOI broadcast is on its way back (level pins),
    /// arriving at `eoi_at[p]`.
    eoi_sent: u32,
    eoi_at: [Time; PINS as usize],
    costs: Costs,
}

impl IoApic {
    pub fn new(routes: Vec<Route>, trigger: Trigger, costs: Costs) -> Self {
        let n = PINS as usize;
        Self { routes, trigger, asserted: vec![0; n], remote_irr: vec![false; n], lapic_irr: 0, eoi_sent: 0, eoi_at: [0; PINS as usize], costs }
    }

    fn send_if_due(&mut self, pin: u32) -> Option<(u64, Signal)> {
        let p = pin as usize;
        if self.asserted[p] == 0 || self.remote_irr[p] {
            return None;
        }
        self.remote_irr[p] = true;
        Some((self.costs.message, Signal::Lapic(pin)))
    }

    /// The most urgent pin pending at `cpu`'s local APIC.
    /// (The highest priority; among equals the lowest pin: pins are visited
    /// in ascending order and only a higher priority replaces the best.)
    fn best(&self, cpu: usize) -> Option<u32> {
        let mut best: Option<(u32, Route)> = None;
        let mut pending = self.lapic_irr;
        while pending != 0 {
            let p = pending.trailing_zeros();
            pending &= pending - 1;
            let r = self.routes[p as usize];
            if r.cpu == cpu && best.is_none_or(|(_, b)| r.priority > b.priority) {
                best = Some((p, r));
            }
        }
        best.map(|(p, _)| p)
    }
}

impl Controller for IoApic {
    /// Assert_INTx or Deassert_INTx reached the pin: the message to the
    /// local APIC it sends, if any.
    fn level(&mut self, pin: u32, assert: bool) -> (Option<usize>, Option<(u64, Signal)>) {
        let p = pin as usize;
        let was = self.asserted[p];
        self.asserted[p] = if assert { was + 1 } else { was.saturating_sub(1) };
        let next = match self.trigger {
            Trigger::Edge => (was == 0 && assert).then_some((self.costs.message, Signal::Lapic(pin))),
            Trigger::Level => self.send_if_due(pin),
        };
        (None, next)
    }

    /// The pin's message reached the local APIC, or the EOI broadcast the IO-APIC.
    fn signal(&mut self, s: Signal) -> (Option<usize>, Option<(u64, Signal)>) {
        match s {
            Signal::Lapic(pin) => {
                self.lapic_irr |= 1 << pin;
                (Some(self.routes[pin as usize].cpu), None)
            }
            Signal::Eoi(pin) => {
                self.remote_irr[pin as usize] = false;
                self.eoi_sent &= !(1 << pin);
                (None, self.send_if_due(pin))
            }
            Signal::Unmask(_) => (None, None),
        }
    }

    fn urgent(&self, cpu: usize) -> Option<u32> {
        self.best(cpu).map(|p| self.routes[p as usize].priority)
    }

    fn take(&mut self, cpu: usize) -> Option<Taken> {
        // Nothing pending (half the calls: the CPU asks again at each interrupt's end).
        if self.lapic_irr == 0 {
            return None;
        }
        let pin = self.best(cpu)?;
        self.lapic_irr &= !(1 << pin);
        let ack_cycles = if self.trigger == Trigger::Edge { self.costs.lapic_eoi } else { 0 };
        Some(Taken { input: pin, rec: None, ack_cycles })
    }

    fn finish(&mut self, pin: u32, now: Time) -> (u64, Option<(u64, Signal)>) {
        match self.trigger {
            Trigger::Edge => (0, None),
            Trigger::Level => {
                let delay = self.costs.lapic_eoi + self.costs.eoi;
                self.eoi_sent |= 1 << pin;
                self.eoi_at[pin as usize] = now + delay;
                (self.costs.lapic_eoi, Some((delay, Signal::Eoi(pin))))
            }
        }
    }

    fn level_count(&self, pin: u32) -> Option<u32> {
        (self.trigger == Trigger::Level).then(|| self.asserted[pin as usize])
    }

    /// On a level pin a Deassert_INTx sends nothing (a pin still asserted
    /// has its Remote IRR set: every assert and EOI that leaves it asserted
    /// sends); its count is read only by asserts, whose sends see a count
    /// above zero either way, and by the EOI. So it may land now unless the
    /// EOI on its way, or one sent from now on, could come before it.
    fn deassert_early(&mut self, pin: u32, now: Time, delay: u64) -> Option<u32> {
        let p = pin as usize;
        let lands = now + delay;
        let eoi_first = self.eoi_sent & (1 << pin) != 0 && self.eoi_at[p] <= lands;
        if self.trigger == Trigger::Edge || eoi_first || self.costs.lapic_eoi + self.costs.eoi < delay {
            return None;
        }
        debug_assert!(self.asserted[p] > 0 && self.remote_irr[p], "the pin's own assert landed and sent");
        self.asserted[p] = self.asserted[p].saturating_sub(1);
        Some(self.asserted[p])
    }
}
