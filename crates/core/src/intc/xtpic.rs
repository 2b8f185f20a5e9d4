//! The XT-PIC: two cascaded 8259As in the I/O hub, as Linux 2.6 drives them.
//!
//! Sequence for a request on line `n` (slave lines are 8..=15):
//! 1. The device's Assert_INTx reaches the 8259 (the model's posted latency);
//!    the line is level-sensitive (ELCR), so the request stands while any
//!    device on it asserts and the line is unmasked.
//! 2. The 8259 raises INTR; the CPU, interrupts enabled, runs an interrupt
//!    acknowledge cycle over FSB and DMI to the I/O hub, where it becomes the
//!    8259A's two INTA pulses and returns the vector: one port-I/O round trip.
//! 3. Linux's `mask_and_ack_8259A`: a dummy IMR read, the IMR write masking
//!    the line, a specific EOI (and for a slave line a second EOI to the
//!    master's cascade input): 3 port-I/O round trips, 4 for a slave line.
//!    x86 port I/O is never posted, so each one stalls the CPU.
//! 4. The handlers run (the model's kernel path).
//! 5. `enable_8259A_irq`: one IMR write unmasks the line; when it reaches the
//!    8259 a still-asserted line requests again.
//!
//! Priority is fixed by line: 0, 1, then the slave's 8..=15 (through the
//! cascade on line 2), then 3..=7. There is one INTR pin: uniprocessor only.

use super::{Controller, Costs, Kind, Signal, Taken};
use crate::engine::Time;

/// The master's input wired to the slave 8259.
pub const CASCADE: u32 = 2;
/// First-free order for PCI devices, the lines BIOSes usually route PIRQs to.
pub const AUTO_ORDER: [u32; 15] = [11, 10, 9, 5, 7, 3, 4, 6, 12, 14, 15, 1, 8, 13, 0];

pub(crate) const KIND: Kind = Kind {
    key: "xtpic",
    name: "XT-PIC",
    legacy: true,
    inputs: 16,
    cpu0_only: true,
    local_apic: false,
    vectors: None,
    bus: true,
    auto_order: || AUTO_ORDER.to_vec(),
    no_input: |l| match l {
        CASCADE => "XT-PIC line 2 is the cascade from the slave 8259; use 0..=15 except 2".into(),
        _ => format!("XT-PIC line {l} does not exist; use 0..=15 except 2"),
    },
    build: |_, _, costs| Box::new(XtPic::new(costs)),
};

/// Above every vector priority class (0..=15).
const URGENCY: u32 = 16;

/// Service order, most urgent first.
const PRIORITY: [u32; 15] = [0, 1, 8, 9, 10, 11, 12, 13, 14, 15, 3, 4, 5, 6, 7];

pub struct XtPic {
    /// Devices asserting each line, as seen at the 8259.
    asserted: [u32; 16],
    /// Interrupt mask register bits.
    masked: [bool; 16],
    costs: Costs,
}

impl XtPic {
    pub fn new(costs: Costs) -> Self {
        Self { asserted: [0; 16], masked: [false; 16], costs }
    }

    fn pending(&self, line: u32) -> bool {
        self.asserted[line as usize] > 0 && !self.masked[line as usize]
    }
}

impl Controller for XtPic {
    fn level(&mut self, line: u32, assert: bool) -> (Option<usize>, Option<(u64, Signal)>) {
        let a = &mut self.asserted[line as usize];
        *a = if assert { *a + 1 } else { a.saturating_sub(1) };
        (self.pending(line).then_some(0), None)
    }

    /// The kernel's unmask reached the 8259: a line still asserted asks again.
    fn signal(&mut self, s: Signal) -> (Option<usize>, Option<(u64, Signal)>) {
        let Signal::Unmask(line) = s else { return (None, None) };
        self.masked[line as usize] = false;
        (self.pending(line).then_some(0), None)
    }

    /// A request on the INTR pin, which only CPU 0 has: the 8259 drives
    /// ExtINT outside the local APIC's priority arbitration, so beside an
    /// APIC it is served before any vector class.
    fn urgent(&self, cpu: usize) -> Option<u32> {
        (cpu == 0 && PRIORITY.iter().any(|&l| self.pending(l))).then_some(URGENCY)
    }

    fn take(&mut self, cpu: usize) -> Option<Taken> {
        if cpu != 0 {
            return None;
        }
        let line = PRIORITY.iter().copied().find(|&l| self.pending(l))?;
        // mask_and_ack_8259A masks the line and ends it in the 8259 at once.
        self.masked[line as usize] = true;
        let port_ios = if line >= 8 { 4 } else { 3 };
        Some(Taken { input: line, rec: None, ack_cycles: self.costs.port_io * (1 + port_ios) })
    }

    /// The unmask OUT: the CPU waits for its round trip; the 8259 sees it halfway.
    fn finish(&mut self, line: u32, _now: Time) -> (u64, Option<(u64, Signal)>) {
        (self.costs.port_io, Some((self.costs.port_io / 2, Signal::Unmask(line))))
    }
}
