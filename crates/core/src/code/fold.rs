//! Stops a run of code need not make. A register access whose action reads
//! no time and changes nothing the run can see (a critical section's
//! opening, `IRQ_SAVE`: a mask that only the machine's events and stops
//! consult) is kept and the run goes on, saving the round trip through the
//! event loop; the machine takes it at the run's next stop, before anything
//! else, as if the run had stopped for it (`machine/code.rs`). The
//! section's closing (`IRQ_RESTORE`) folds too when its opening folded in
//! the same run and its thread is quiet: nothing held to take when the mask
//! drops (no interrupt, tick or deferred handler) and nothing for its
//! dispatch to change, so the closing too reads no time. An end of
//! interrupt (`EOI`) folds while its NIC asserts nothing: its raise would
//! find nothing, and the NIC asserts again only after an event (which ends
//! the run first) or an unmask (which stops it), so the machine need only
//! mark the interrupt ended.
//!
//! The folded stop must leave no trace: the loop counts it as the event it
//! was; the run's slice runs from it; a frame software finished waits to
//! be counted at it only if counting reads no time and schedules nothing
//! (else, a closed-loop flood, counting one offers the next frame, an event
//! that would have ended the run sooner); and the lockup watchdog, which
//! looks at every stop, sees the same stops: none folds once the
//! watchdog's next look could find a lockup.

/// Whether the next stops may fold, and what the folded ones left.
#[derive(Debug, Clone, Copy, Default)]
pub struct Folds {
    /// A stop may fold only at a cycle before this one: the watchdog's
    /// next due cycle (0: none may).
    pub until: u64,
    /// The cycle of the run's last stop, folded or not: where its slice runs from.
    pub since: u64,
    /// Actions at the front of the ports' list whose stops were folded.
    pub held: usize,
    /// Bit `t` set: machine thread `t` is quiet (a section's closing there
    /// takes nothing and dispatches nothing).
    pub quiet: u64,
    /// Frames software finished may wait past a folded stop to be counted:
    /// counting one reads no time and schedules nothing.
    pub late: bool,
}

impl Folds {
    /// Whether the stop after an access issued at `cycle` may fold: the
    /// stop would be the cycle after it (the machine's look at the run's
    /// cores), before the watchdog's next due cycle, and no frame waits to
    /// be counted (`counting`) unless it may wait.
    #[inline(always)]
    pub fn may(&self, cycle: u64, counting: bool) -> bool {
        cycle.saturating_add(1) < self.until && (self.late || !counting)
    }

    /// Whether thread `t` is quiet.
    #[inline(always)]
    pub fn quiet(&self, t: usize) -> bool {
        t < 64 && self.quiet & (1 << t) != 0
    }

    /// A stop folded after an access issued at `cycle`.
    #[inline(always)]
    pub fn folded(&mut self, cycle: u64) {
        self.held += 1;
        self.since = self.since.max(cycle + 1);
    }
}

#[cfg(test)]
mod tests {
    use crate::code::ports::{Action, InFlight, Outcome, Ports, SERVICES, service};
    use irqsim_mips::device::{Access, Devices};

    /// `IRQ_SAVE` at `cycle` with stops folding before cycle 100: whether it stops the run.
    fn save_stops(ports: &mut Ports, cycle: u64) -> bool {
        ports.fold.until = 100;
        ports.write(SERVICES + service::IRQ_SAVE, 0, u32::MAX, Access { core: 0, thread: 0, cycle }).unwrap();
        let leaves = ports.wants_stop();
        assert_eq!(leaves, ports.take_stop(), "only an access that stops leaves a block");
        leaves
    }

    /// `IRQ_RESTORE` at `cycle` on thread 0: whether it stops the run.
    fn restore_stops(ports: &mut Ports, cycle: u64) -> bool {
        ports.write(SERVICES + service::IRQ_RESTORE, 0, u32::MAX, Access { core: 0, thread: 0, cycle }).unwrap();
        ports.take_stop()
    }

    #[test]
    fn a_section_closes_without_a_stop_if_it_opened_so_on_a_quiet_thread() {
        let mut ports = Ports::new(0, 1);
        ports.fold.quiet = 1;
        assert!(!save_stops(&mut ports, 10));
        assert!(!restore_stops(&mut ports, 20));
        assert!(restore_stops(&mut ports, 30), "its opening was not since the last stop");
        ports.actions.clear();
        ports.fold.held = 0;
        assert!(!save_stops(&mut ports, 40));
        ports.fold.quiet = 0;
        assert!(restore_stops(&mut ports, 50), "not quiet: the closing may take a held interrupt");
    }

    #[test]
    fn a_section_opens_without_a_stop_with_a_frame_to_count_only_if_it_may_wait() {
        let mut ports = Ports::new(0, 1);
        let frame = InFlight { arrival: 0, bytes: 64, queue: 0, flow: 0 };
        ports.outcomes.push(Outcome { frame, at: 5, delivered: true });
        assert!(save_stops(&mut ports, 10), "counting the frame may offer the next (a closed-loop flood)");
        ports.fold.late = true;
        assert!(!save_stops(&mut ports, 20));
        assert_eq!(ports.fold.held, 1);
    }

    #[test]
    fn an_eoi_stops_the_run_only_if_its_nic_asserts() {
        let mut ports = Ports::new(0, 1);
        ports.fold.until = 100;
        let eoi = |ports: &mut Ports, cycle| {
            ports.write(SERVICES + service::EOI, 0, u32::MAX, Access { core: 0, thread: 0, cycle }).unwrap();
            ports.take_stop()
        };
        assert!(!eoi(&mut ports, 10), "nothing to raise");
        (ports.nics[0].icr, ports.nics[0].ims) = (1, 1);
        assert!(eoi(&mut ports, 20), "its raise interrupts again");
        assert_eq!((ports.fold.held, ports.actions.len()), (1, 2));
    }

    #[test]
    fn a_section_opens_without_a_stop_until_the_watchdog_may_look() {
        let mut ports = Ports::new(0, 1);
        assert!(!save_stops(&mut ports, 10));
        assert!(!save_stops(&mut ports, 98), "its stop would be at 99");
        assert_eq!((ports.fold.held, ports.fold.since), (2, 99));
        assert!(save_stops(&mut ports, 99), "its stop would be at 100, the watchdog's due cycle");
        assert_eq!(ports.actions, [Action::IrqSave { thread: 0 }; 3]);
        assert_eq!(ports.fold.held, 2);
    }
}
