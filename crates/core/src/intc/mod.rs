//! Interrupt controllers: how a device's request becomes a vector on a CPU.
//!
//! The ideal wire and three generations of controllers, one module each,
//! each a [`Controller`] with its [`Kind`] row, found by [`IntcKind::kind`] (the registry):
//! - `direct.rs`: no controller; the interrupt reaches its CPU at once, free.
//! - `xtpic.rs`: two cascaded 8259As; 15 lines, fixed priority, vector
//!   fetched by an INTA cycle, mask and EOI by port I/O; one CPU.
//! - `ioapic.rs`: 24 pins, each with a programmable vector priority and
//!   destination; assert messages become local-APIC writes; level pins wait
//!   for the EOI broadcast.
//! - `msi.rs`: the device writes the vector to the local APIC itself.
//!
//! A machine may hold several at once (`set.rs`, [`Controllers`]): MSI-X
//! for the NIC beside an IO-APIC or the 8259s for legacy devices, as on a PC.
//!
//! The controller sees the device side as arrivals: a level change on a
//! line ([`Controller::level`], from Assert/Deassert_INTx) or a message
//! ([`Controller::message`], an MSI write). The CPU side asks it for the most
//! urgent pending input ([`Controller::take`]) when interrupts are enabled, and
//! tells it when the kernel's handling ends ([`Controller::finish`]). What the CPU
//! pays on the way in and out (INTA, port I/O, EOI writes) is returned as
//! cycles; what travels on the bus later is returned as a [`Signal`] with
//! its delay, for the model to schedule. All costs are cycles of the CPU
//! clock, converted once from the scenario's nanoseconds.

pub mod config;
mod direct;
mod ioapic;
mod msi;
mod set;
mod xtpic;

use crate::engine::Time;
use serde::{Deserialize, Serialize};

pub use config::{BusConfig, EXERCISER_LINK_MBPS, IntcConfig};
pub use ioapic::{IoApic, PINS as IOAPIC_PINS};
pub use msi::Msi;
pub use set::Controllers;
pub use xtpic::XtPic;

/// Which delivery mechanism: a value of `intc.kind` (or of a source's
/// `intc`), whose properties are its [`Kind`] row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IntcKind {
    Direct,
    Xtpic,
    Ioapic,
    Msi,
    Msix,
}

/// What the machine and the checks know of a kind of controller, declared
/// once beside its model (each module's `KIND`): adding a controller is its
/// file, its [`IntcKind`] value and one line in [`IntcKind::kind`].
pub struct Kind {
    /// Its value of `intc.kind`.
    pub key: &'static str,
    /// Its name in messages.
    pub name: &'static str,
    /// Legacy INTx delivery: lines may be shared, so every handler must read
    /// its device's status, and the interrupt is not ordered behind DMA data.
    pub legacy: bool,
    /// Inputs it numbers: lines, pins or vectors.
    pub inputs: u32,
    /// It reaches CPU 0 only (one INTR pin).
    pub cpu0_only: bool,
    /// It delivers through the local APIC's vectors by message: every such
    /// kind on a machine is one controller with one vector space.
    pub local_apic: bool,
    /// A device may take several of its inputs (MSI's and MSI-X's vectors),
    /// at most this many and, when `power_of_two`, a power of two of them.
    pub vectors: Option<(u32, bool)>,
    /// It sits across the bus, whose costs a device on it pays (all but the
    /// ideal wire).
    pub bus: bool,
    /// The inputs a device that names none gets, in the order tried.
    pub auto_order: fn() -> Vec<u32>,
    /// Why `input` is not one of its inputs.
    pub no_input: fn(u32) -> String,
    /// The controller, with its routes (destination and priority of each
    /// input) and costs.
    pub build: fn(Trigger, Vec<Route>, Costs) -> Intc,
}

impl IntcKind {
    /// The registry: each kind's row.
    pub fn kind(self) -> &'static Kind {
        match self {
            IntcKind::Direct => &direct::KIND,
            IntcKind::Xtpic => &xtpic::KIND,
            IntcKind::Ioapic => &ioapic::KIND,
            IntcKind::Msi => &msi::KIND,
            IntcKind::Msix => &msi::KIND_X,
        }
    }

    pub fn name(self) -> &'static str {
        self.kind().name
    }

    /// Legacy INTx delivery ([`Kind::legacy`]).
    pub fn legacy(self) -> bool {
        self.kind().legacy
    }

    /// Inputs the controller numbers: lines, pins or vectors.
    pub fn inputs(self) -> u32 {
        self.kind().inputs
    }

    /// Two kinds a machine holds as one controller: the same, or two that
    /// write to the local APIC (MSI and MSI-X share its vector space).
    fn same_controller(self, other: IntcKind) -> bool {
        self == other || (self.kind().local_apic && other.kind().local_apic)
    }
}

/// Inputs `0..n` in order: a controller whose inputs are all alike.
pub(crate) fn in_order<const N: u32>() -> Vec<u32> {
    (0..N).collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    Edge,
    Level,
}

/// The identity of one raised interrupt, for latency and conservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rec {
    pub src: usize,
    pub seq: u64,
    /// When its interrupt message left the device.
    pub sent: Time,
    /// When the DMA data written for this interrupt is in memory (0: none).
    pub data: Time,
}

/// A bus event a controller asks the model to deliver back to it later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// An IO-APIC message reaches the local APIC.
    Lapic(u32),
    /// The kernel's unmask (port write) reaches the 8259.
    Unmask(u32),
    /// A local APIC's EOI broadcast reaches the IO-APIC.
    Eoi(u32),
}

/// An input the CPU accepted.
#[derive(Debug, Clone, Copy)]
pub struct Taken {
    pub input: u32,
    /// The MSI it came from (legacy lines carry no identity).
    pub rec: Option<Rec>,
    /// CPU stall before the first handler: INTA, mask/EOI port I/O, EOI write.
    pub ack_cycles: u64,
}

/// Costs in CPU cycles the controllers need.
#[derive(Debug, Clone, Copy, Default)]
pub struct Costs {
    pub port_io: u64,
    pub posted: u64,
    pub lapic_eoi: u64,
    /// The IO-APIC's message to the local APIC, and the EOI's way back.
    pub message: u64,
    pub eoi: u64,
}

impl Costs {
    /// The bus's latencies in cycles (`to_cycles` converts nanoseconds);
    /// the APIC messages travel as posted writes unless the bus says otherwise.
    pub fn new(lapic_eoi: u64, bus: &config::BusConfig, to_cycles: impl Fn(f64) -> u64) -> Self {
        let posted = to_cycles(bus.posted_write_ns);
        let or_posted = |ns: Option<f64>| ns.map_or(posted, &to_cycles);
        Self { port_io: to_cycles(bus.port_io_ns), posted, lapic_eoi, message: or_posted(bus.apic_message_ns), eoi: or_posted(bus.apic_eoi_ns) }
    }
}

/// Static per-input programming: destination CPU and priority.
#[derive(Debug, Clone, Copy, Default)]
pub struct Route {
    pub cpu: usize,
    /// Larger is more urgent.
    pub priority: u32,
}

/// What a controller does, as the machine sees it (`set.rs` holds every
/// controller of a machine and numbers their inputs). A controller has the
/// device side it needs (lines, messages, its own bus signals) and the CPU
/// side every controller has; the defaults are "not this kind's".
pub trait Controller {
    /// Assert_INTx (`assert`) or Deassert_INTx reached the controller:
    /// the CPU to offer an interrupt to, and a signal to schedule.
    fn level(&mut self, _input: u32, _assert: bool) -> (Option<usize>, Option<(u64, Signal)>) {
        (None, None)
    }

    /// An MSI write reached the local APIC: `Ok(cpu)` to offer it to, or
    /// `Err(rec)` when the vector was already pending and the two merged.
    fn message(&mut self, _input: u32, rec: Rec) -> Result<usize, Rec> {
        Err(rec)
    }

    /// A scheduled signal arrived: the CPU to offer an interrupt to, and a
    /// follow-up signal.
    fn signal(&mut self, _s: Signal) -> (Option<usize>, Option<(u64, Signal)>) {
        (None, None)
    }

    /// The priority of the most urgent input pending for `cpu`, if any.
    fn urgent(&self, cpu: usize) -> Option<u32>;

    /// The CPU, interrupts enabled, accepts its most urgent pending input.
    fn take(&mut self, cpu: usize) -> Option<Taken>;

    /// The kernel finished the handlers of `input` at `now`: CPU cycles of
    /// the unmask or EOI, and the signal it sends.
    fn finish(&mut self, _input: u32, _now: Time) -> (u64, Option<(u64, Signal)>) {
        (0, None)
    }

    /// A Deassert_INTx sent at `now` would reach `input` `delay` cycles later:
    /// applies it now, when nothing could tell (no message, no CPU offer,
    /// nothing read before it lands), and says whether it did: the sources
    /// still asserting the input if so. The caller then schedules nothing.
    fn deassert_early(&mut self, _input: u32, _now: Time, _delay: u64) -> Option<u32> {
        None
    }

    /// How many sources assert `input`, when it is a level pin whose EOI
    /// broadcast does nothing but clear its Remote IRR unless the pin is
    /// asserted as it lands (the IO-APIC's): such an EOI may stay out of
    /// the queue while the count is 0 (`machine/eoi.rs`). `None`: any other.
    fn level_count(&self, _input: u32) -> Option<u32> {
        None
    }

    /// Interrupt identities the controller holds (conservation).
    fn holding(&self) -> u64 {
        0
    }
}

/// One controller, of any kind.
pub type Intc = Box<dyn Controller>;

/// A controller of `kind`.
pub fn build(kind: IntcKind, trigger: Trigger, routes: Vec<Route>, costs: Costs) -> Intc {
    (kind.kind().build)(trigger, routes, costs)
}

/// Which controllers the machine has and which inputs each source uses,
/// numbered across the machine ([`Controllers`]): the first device's (the
/// exerciser's vectors, or the NIC's), then one per other source.
#[derive(Debug, Clone)]
pub struct Wiring {
    /// The first device's controller (`intc.kind`), then each other kind a
    /// source names, in order.
    pub controllers: Vec<IntcKind>,
    pub exerciser: Vec<u32>,
    /// Each other source's inputs (one, or one per RSS queue of a NIC).
    pub others: Vec<Vec<u32>>,
}

/// The first device's request: its key prefix for errors, its line if
/// given, how many vectors it takes.
pub struct First<'a> {
    pub key: &'a str,
    pub line: Option<u32>,
    pub vectors: u32,
}

/// Where controller `c` of `kinds` starts in the machine's numbering.
pub fn bases(kinds: &[IntcKind]) -> Vec<u32> {
    kinds.iter().scan(0, |next, k| Some(std::mem::replace(next, *next + k.inputs()))).collect()
}

/// Which of the controllers starting at `bases` owns machine input `input`.
pub fn owner(bases: &[u32], input: u32) -> usize {
    bases.iter().rposition(|&b| b <= input).expect("input 0 is the first controller's")
}

/// Another device's request: its own controller (else the first device's),
/// the CPU it interrupts, its line if given, how many vectors it takes.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    pub intc: Option<IntcKind>,
    pub cpu: usize,
    pub line: Option<u32>,
    pub vectors: u32,
    /// The key `cpu` is set by, in the device's table (errors name it).
    pub cpu_key: &'static str,
}

/// Assigns inputs (explicit or first free) on each source's controller
/// (its `intc`, else `kind`) and checks the controllers' limits; errors
/// name the offending key (each other source's table is `(its key, request)`).
pub fn assign(kind: IntcKind, first: First, others: impl ExactSizeIterator<Item = (String, Request)>) -> Result<Wiring, (String, String)> {
    let mut controllers = vec![kind];
    let mut used: Vec<Vec<u32>> = vec![Vec::new()];
    let exerciser = pick(kind, &mut used[0], first.key, first.line, first.vectors)?;
    let mut wired = Vec::with_capacity(others.len());
    for (item, o) in others {
        let own = o.intc.unwrap_or(kind);
        let c = match controllers.iter().position(|k| k.same_controller(own)) {
            Some(c) => c,
            None => {
                controllers.push(own);
                used.push(Vec::new());
                controllers.len() - 1
            }
        };
        if controllers[c].kind().cpu0_only && o.cpu != 0 {
            return Err((
                format!("{item}.{}", o.cpu_key),
                format!("the {} delivers to CPU 0 only, not {}; use an IO-APIC or MSI to route elsewhere", controllers[c].name(), o.cpu),
            ));
        }
        let base = bases(&controllers)[c];
        wired.push(pick(controllers[c], &mut used[c], &format!("{item}.line"), o.line, o.vectors)?.into_iter().map(|l| base + l).collect());
    }
    Ok(Wiring { controllers, exerciser, others: wired })
}

/// `n` inputs of a `kind` controller for one device: from `line`, or the
/// first free ones; never shared on a message-signaled controller.
fn pick(kind: IntcKind, used: &mut Vec<u32>, key: &str, line: Option<u32>, n: u32) -> Result<Vec<u32>, (String, String)> {
    let limit = kind.inputs();
    let auto = (kind.kind().auto_order)();
    let first = match line {
        Some(l) => {
            if !auto.contains(&l) {
                return Err((key.into(), (kind.kind().no_input)(l)));
            }
            l
        }
        None => {
            let free = auto.iter().copied().find(|&l| (0..n).all(|k| l + k < limit && !used.contains(&(l + k))));
            free.ok_or_else(|| {
                (
                    key.to_string(),
                    format!("no free {} input left for this device ({} usable, {} taken); give `line` to share one", kind.name(), auto.len(), used.len()),
                )
            })?
        }
    };
    let lines: Vec<u32> = (first..first + n).collect();
    if let Some(&last) = lines.last()
        && last >= limit
    {
        return Err((key.into(), format!("vectors {first}..={last} run past the {} limit of {limit}", kind.name())));
    }
    if !kind.legacy()
        && let Some(l) = lines.iter().find(|l| used.contains(l))
    {
        return Err((key.into(), format!("{} vector {l} is already taken: message-signaled interrupts are never shared", kind.name())));
    }
    used.extend(&lines);
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    const COSTS: Costs = Costs { port_io: 1000, posted: 100, lapic_eoi: 10, message: 100, eoi: 100 };

    #[test]
    fn each_kind_is_the_row_its_key_names() {
        let all = [IntcKind::Direct, IntcKind::Xtpic, IntcKind::Ioapic, IntcKind::Msi, IntcKind::Msix];
        let keys: Vec<&str> = all.iter().map(|k| k.kind().key).collect();
        assert_eq!(keys, config::KINDS, "`intc.kind`'s choices are the registry's keys");
        for k in all {
            let parsed: IntcKind = serde::Deserialize::deserialize(serde::de::value::StrDeserializer::<serde::de::value::Error>::new(k.kind().key)).unwrap();
            assert_eq!(parsed, k);
            assert!((k.kind().auto_order)().iter().all(|&i| i < k.inputs()));
        }
    }

    #[test]
    fn xtpic_serves_the_slave_between_lines_1_and_3() {
        let mut c = build(IntcKind::Xtpic, Trigger::Level, Vec::new(), COSTS);
        for line in [3, 9, 1] {
            c.level(line, true);
        }
        let order: Vec<u32> = std::iter::from_fn(|| c.take(0).map(|t| t.input)).collect();
        assert_eq!(order, [1, 9, 3]);
        // Masked until the unmask lands; a line still asserted then asks again.
        assert_eq!(c.signal(Signal::Unmask(9)), (Some(0), None));
        let t = c.take(0).unwrap();
        assert_eq!((t.input, t.ack_cycles), (9, 5000), "INTA + 4 port I/Os on a slave line");
    }

    #[test]
    fn ioapic_level_pin_waits_for_the_eoi_and_redelivers_if_still_asserted() {
        let routes = vec![Route { cpu: 0, priority: 4 }; IOAPIC_PINS as usize];
        let mut c = build(IntcKind::Ioapic, Trigger::Level, routes, COSTS);
        assert_eq!(c.level(16, true), (None, Some((100, Signal::Lapic(16)))));
        assert_eq!(c.level(16, true), (None, None), "Remote IRR holds further messages");
        assert_eq!(c.signal(Signal::Lapic(16)), (Some(0), None));
        assert_eq!(c.take(0).map(|t| t.ack_cycles), Some(0));
        assert_eq!(c.finish(16, 0), (10, Some((110, Signal::Eoi(16)))));
        assert_eq!(c.signal(Signal::Eoi(16)), (None, Some((100, Signal::Lapic(16)))));
    }

    #[test]
    fn a_level_pins_deassert_lands_early_only_when_no_eoi_can_come_first() {
        let routes = vec![Route { cpu: 0, priority: 4 }; IOAPIC_PINS as usize];
        let serve = |c: &mut Intc| {
            assert_eq!(c.level(16, true), (None, Some((100, Signal::Lapic(16)))));
            c.signal(Signal::Lapic(16));
            c.take(0).unwrap();
        };
        let mut c = build(IntcKind::Ioapic, Trigger::Level, routes.clone(), COSTS);
        serve(&mut c);
        // No EOI on its way, and one sent from now on (10 + 100 cycles) lands after it (100).
        assert_eq!(c.deassert_early(16, 0, 100), Some(0));
        assert_eq!(c.finish(16, 0), (10, Some((110, Signal::Eoi(16)))));
        assert_eq!(c.signal(Signal::Eoi(16)), (None, None), "the pin was deasserted: nothing is sent again");
        // An EOI sent at 0 lands at 110: before a deassert sent at 50, not before one sent at 5.
        serve(&mut c);
        c.finish(16, 0);
        assert!(c.deassert_early(16, 50, 100).is_none());
        assert!(c.deassert_early(16, 10, 100).is_none(), "an EOI landing with the deassert comes first (sent first)");
        assert_eq!(c.deassert_early(16, 5, 100), Some(0));
        // An EOI faster than the deassert, or an edge pin: never early.
        let mut c = build(IntcKind::Ioapic, Trigger::Level, routes.clone(), Costs { eoi: 50, ..COSTS });
        serve(&mut c);
        assert!(c.deassert_early(16, 0, 100).is_none());
        let mut c = build(IntcKind::Ioapic, Trigger::Edge, routes, COSTS);
        serve(&mut c);
        assert!(c.deassert_early(16, 0, 100).is_none());
        assert!(build(IntcKind::Xtpic, Trigger::Level, Vec::new(), COSTS).deassert_early(3, 0, 100).is_none());
    }

    #[test]
    fn ioapic_messages_take_the_apic_bus_times_where_given() {
        // A P6's serial APIC bus: the message and the EOI are not posted writes.
        let routes = vec![Route { cpu: 0, priority: 4 }; IOAPIC_PINS as usize];
        let costs = Costs { message: 2040, eoi: 840, ..COSTS };
        let mut c = build(IntcKind::Ioapic, Trigger::Level, routes, costs);
        assert_eq!(c.level(16, true), (None, Some((2040, Signal::Lapic(16)))));
        assert_eq!(c.signal(Signal::Lapic(16)), (Some(0), None));
        c.take(0);
        assert_eq!(c.finish(16, 0), (10, Some((850, Signal::Eoi(16)))));
        // Unset, they are the posted latency (every other scenario).
        let bus = config::BusConfig {
            mmio_read_ns: 900.0,
            posted_write_ns: 450.0,
            port_io_ns: 1000.0,
            apic_message_ns: None,
            apic_eoi_ns: Some(840.0),
            link_mbps: None,
        };
        let c = Costs::new(10, &bus, |ns| ns as u64);
        assert_eq!((c.posted, c.message, c.eoi), (450, 450, 840));
    }

    #[test]
    fn msi_merges_a_second_write_to_a_pending_vector_and_serves_priority_first() {
        let routes = vec![Route { cpu: 0, priority: 4 }, Route { cpu: 0, priority: 9 }];
        let mut c = build(IntcKind::Msi, Trigger::Edge, routes, COSTS);
        let rec = |seq| Rec { src: 0, seq, sent: 0, data: 0 };
        assert_eq!(c.message(0, rec(0)), Ok(0));
        assert_eq!(c.message(0, rec(1)), Err(rec(1)));
        assert_eq!(c.message(1, rec(2)), Ok(0));
        assert_eq!(c.holding(), 2);
        assert_eq!(c.take(0).map(|t| t.input), Some(1));
        assert_eq!(c.take(0).and_then(|t| t.rec), Some(rec(0)));
        assert!(c.take(0).is_none());
    }
}
