//! A level pin's EOI broadcast kept out of the queue while nothing could
//! tell it apart from its event.
//!
//! When the EOI lands, the IO-APIC clears the pin's Remote IRR and, if the
//! pin is still asserted, sends its vector again. On the e1000 rows the
//! status clear lands first and deasserts the pin, so the EOI only clears
//! Remote IRR, which nothing reads before the pin's next Assert_INTx lands.
//! So the EOI takes its key as it is sent (the one its event would have
//! had) and is queued with that key only when something could tell: an
//! Assert or Deassert_INTx landing before it, or the status clear it waits
//! for leaving the pin asserted. Otherwise it is applied when the pin is
//! next touched after its landing (a `Line` event, a status clear landing),
//! and counted in `events` as the event it replaced.
//!
//! Why the order is the queue's: when it is sent no `Line` event is on its
//! way and every write to the pin's sources lands before it, so whatever
//! touches the pin at or after its landing time was scheduled after its key
//! was taken (an equal time sorts after it), and whatever touches the pin
//! earlier sees it still on its way, as it was.

use super::{Event, Machine};
use crate::engine::{Key, Time};
use crate::intc::Signal;

/// An EOI broadcast not queued: the key its event would have had, its pin.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deferred {
    key: Key,
    input: u32,
}

impl Deferred {
    fn at(self) -> Time {
        crate::engine::key_time(self.key)
    }
}

impl Machine {
    /// The chain's end on `input` sends `sig` (its EOI or unmask) now,
    /// landing `delay` later: deferred when it may be, else queued.
    pub(super) fn send_end_of_interrupt(&mut self, now: Time, delay: u64, sig: Signal) {
        let Signal::Eoi(input) = sig else { return self.schedule_signal(now, delay, sig) };
        let at = now + delay;
        if !self.may_defer(input, at) {
            return self.schedule_signal(now, delay, sig);
        }
        let key = self.queue.reserve_key(at);
        self.delivery.deferred_eoi = Some(Deferred { key, input });
        self.delivery.applied_early += u64::from(at < self.end);
        self.timeline.bus(now, at, "EOI broadcast");
    }

    /// An EOI landing at `at` on `input` may be deferred: no other is, the
    /// machine defers them, no `Line` event is on its way, every
    /// write to the pin's sources lands before it, and the pin is not
    /// asserted or a status clear is on its way (a claimed status), whose
    /// landing looks at the pin again.
    #[inline(always)]
    fn may_defer(&self, input: u32, at: Time) -> bool {
        let d = &self.delivery;
        if d.deferred_eoi.is_some() || d.lines > 0 || !d.defers_eoi {
            return false;
        }
        let Some(count) = d.intc.level_count(input) else { return false };
        let mut looked_at = count == 0;
        for &s in &d.chains[input as usize] {
            let s = &d.sources[s];
            if s.downstream_tail >= at {
                return false;
            }
            looked_at |= s.claimed;
        }
        looked_at
    }

    /// Something that could tell touches `input` at `now` (an Assert or
    /// Deassert_INTx landing, a status clear leaving it asserted): an EOI
    /// deferred on it that has landed is applied (it sends nothing: the
    /// pin stayed deasserted), one still on its way is queued with its key.
    #[inline(always)]
    pub(super) fn eoi_touched(&mut self, now: Time, input: u32) {
        if let Some(e) = self.delivery.deferred_eoi.filter(|e| e.input == input) {
            self.eoi_resolve(now, e);
        }
    }

    /// A status clear lands on `input` at `now`: an EOI deferred on it that
    /// has landed is applied first (the clear's Deassert_INTx reads it).
    #[inline(always)]
    pub(super) fn eoi_landed_by(&mut self, now: Time, input: u32) {
        if let Some(e) = self.delivery.deferred_eoi.filter(|e| e.input == input && e.at() <= now) {
            self.eoi_resolve(now, e);
        }
    }

    /// Applies the deferred EOI if it has landed by `now`, else queues it.
    #[inline(never)]
    fn eoi_resolve(&mut self, now: Time, e: Deferred) {
        self.delivery.deferred_eoi = None;
        if e.at() <= now {
            let (cpu, next) = self.delivery.intc.signal(Signal::Eoi(e.input));
            debug_assert!(cpu.is_none() && next.is_none(), "a deferred EOI lands on a deasserted pin");
            return;
        }
        self.delivery.applied_early -= u64::from(e.at() < self.end);
        self.queue.schedule_reserved(e.key, Event::Signal(Signal::Eoi(e.input)));
    }
}

#[cfg(test)]
mod tests {
    use crate::report::Report;

    /// The run of bundled scenario `file` with `sets`, its EOIs deferred or
    /// always queued, and the events it applied without queueing them.
    fn run(file: &str, sets: &[&str], defer: bool) -> (Report, u64) {
        super::super::delivery::tweaked_run(file, sets, |m| m.delivery.defers_eoi &= defer)
    }

    /// Deferring the EOI changes nothing reported (the events counted
    /// included) where it applies: the e1000 rows (one interrupt a frame,
    /// livelocked, the study's drawn costs), an EOI faster than the
    /// deassert (the pin still asserted when the clear lands: queued), the
    /// exerciser and its fellow sources on level pins, several CPUs, an
    /// edge pin (never deferred); and it is deferred on the e1000 rows.
    #[test]
    fn a_deferred_eoi_reports_as_its_event() {
        let router = "livelock/e1000-router.toml";
        let cases: [(&str, &[&str], bool); 9] = [
            (router, &["workload.packet_bytes=1440", "workload.rate_per_s=85193", "run.duration_ms=30"], true),
            (router, &["run.duration_ms=10"], false),
            (router, &["workload.packet_bytes=512", "workload.rate_per_s=232666", "run.duration_ms=30", "driver.isr_rx_spread=[0.7, 1.0, 1.9]"], true),
            (router, &["workload.packet_bytes=1440", "workload.rate_per_s=85193", "run.duration_ms=10", "bus.apic_eoi_ns=100.0"], false),
            (router, &["workload.packet_bytes=1440", "workload.rate_per_s=85193", "run.duration_ms=10", "intc.trigger=\"edge\""], false),
            ("msi-latency/workstation-loaded.toml", &["run.duration_ms=20", "intc.kind=\"ioapic\""], true),
            ("compose/rx-ioapic-multithreaded.toml", &["run.duration_ms=20"], false),
            ("compose/two-nics.toml", &["run.duration_ms=20"], false),
            ("compose/rx-msix-legacy.toml", &["run.duration_ms=20"], false),
        ];
        for (file, sets, deferred) in cases {
            let ((a, applied), (b, queued)) = (run(file, sets, true), run(file, sets, false));
            assert!(a.metric("events").unwrap() > 500.0, "{file} {sets:?}");
            assert_eq!(a.to_json(), b.to_json(), "{file} {sets:?}");
            if deferred {
                assert!(applied > queued + 50, "{file} {sets:?}: EOIs deferred ({applied} against {queued} applied early)");
            }
        }
    }
}
