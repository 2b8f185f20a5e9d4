//! The Linux interrupt path on the machine: each step's cost, and what follows
//! each (entry, the shared line's handler chain, exit, the tasklet). The steps
//! and their parameters are the kernel part's (`kernel/linux.rs`). Steps
//! whose ends come before anything else happens run as one job (`fold`).

use super::{Event, Machine};
use crate::cpu::{Bin, IRQ, SOFT, Work};
use crate::device::source::{Kind, Write};
use crate::engine::{Key, MARKS, Time, key_time};
use crate::intc::Rec;
use crate::kernel::linux::Job;
use crate::kernel::{IrqPathKind, Job as Any};

/// A timer's mark (`engine::MARKS`): the end of an interrupt step that
/// leads into another (`Machine::step_end`).
const STEP_END: Key = 2;
/// A timer's mark: a folded claim's end, where the exit's key is taken.
const REKEY: Key = 3;

impl Machine {
    /// The job as CPU work.
    // Out of line: the network hot path inlines only its own arm of `work` and `after`.
    #[inline(never)]
    pub(super) fn irq_work(&self, job: Job) -> Work<Any> {
        let d = &self.delivery;
        let p = &d.path;
        let (cycles, bin) = match job {
            Job::User => (crate::cpu::NEVER, Bin::User),
            Job::Entry { cpu, .. } | Job::Read { cpu, .. } | Job::Claim { cpu, .. } | Job::Exit { cpu } => (d.step[cpu as usize], Bin::Interrupt),
            Job::TaskletEntry { .. } => (p.softirq_entry_cycles, Bin::BottomHalf),
            Job::Tasklet => (p.mmio_write_cycles + p.tasklet_cycles, Bin::BottomHalf),
            Job::Prologue { .. } => (self.masking.costs.prologue_check, Bin::Overhead),
            Job::Defer => (self.masking.costs.continuation + self.masking.costs.conventional_raise, Bin::Overhead),
        };
        Work { job: Any::Irq(job), cycles, bin }
    }

    /// `job` ended on `cpu`: what the same activity does next (`None` ends it).
    // Out of line: the network hot path inlines only its own arm of `work` and `after`.
    #[inline(never)]
    pub(super) fn irq_after(&mut self, now: Time, cpu: usize, job: Job) -> Option<Any> {
        // Without folds (several CPUs) `irq_end`'s result is returned as it
        // is, a copy of its own: matched and rebuilt for the fold's test, it
        // cost 64 CPUs 7.8 M (docs/performance/engine.md).
        if !self.delivery.folds {
            return self.irq_end(now, cpu, job);
        }
        match self.irq_end(now, cpu, job)? {
            Any::Irq(next) => Some(Any::Irq(self.fold(now, cpu, next))),
            next => Some(next),
        }
    }

    /// As `cpu` accepts an interrupt, its entry, if it started, is folded
    /// with the steps after it (`fold`): the running job, its work not
    /// begun, is all of them. The acceptance is the last thing its event
    /// does (`Machine::offer`), so nothing is queued between. With several
    /// threads its end is marked a step's end instead (`start_marked`).
    pub(super) fn fold_entry(&mut self, cpu: usize) {
        let Some((IRQ, Any::Irq(entry @ Job::Entry { .. }), over, _)) = self.threads[cpu].running_work() else { return };
        let now = self.queue.now();
        let job = self.fold(now + over, cpu, entry);
        if job != entry {
            let t = self.threads[cpu].replace(now, Work { job: Any::Irq(job), cycles: self.delivery.step[cpu], bin: Bin::Interrupt });
            self.arm(cpu, t);
        }
    }

    /// `cpu` accepts interrupt `job` with several threads
    /// (`Machine::marks_step_ends`): `post_dispatch`, with an entry that
    /// starts at once armed with its key marked (`STEP_END`, taken by
    /// `step_end`), the timers' paths inline. An entry that does not start
    /// at once waits behind work at or above the interrupt level, which
    /// another interrupt's entry never is (`in_irq`): it starts, unmarked,
    /// by a later dispatch.
    #[inline(always)]
    pub(super) fn start_marked(&mut self, cpu: usize, job: Job) {
        let work = self.irq_work(job);
        let thread = &mut self.threads[cpu];
        if !thread.starts_at_once(IRQ) {
            thread.post(IRQ, work);
            self.dispatch(cpu);
            debug_assert!(!matches!(self.threads[cpu].running_work(), Some((IRQ, Any::Irq(Job::Entry { .. }), ..))));
            return;
        }
        let now = self.queue.now();
        let t = thread.start_at_once(now, IRQ, work, &mut self.timeline).expect("a started job has its completion");
        let mark = if matches!(job, Job::Entry { .. }) { STEP_END } else { 0 };
        let key = self.queue.reserve_key(t);
        self.timers.set_inline(cpu, key | mark);
    }

    /// The interrupt's steps from `job` (its work begun at `now` on `cpu`)
    /// whose ends the loop would take next, ended at once: each end is
    /// applied where it would be (the queue's time moved to it, counted as
    /// its completion in `applied_early`) and the step after it begun, as
    /// one job; `step[cpu]` is the cycles of all of them. The bins are the
    /// same: every step's cycles count as `Interrupt`.
    ///
    /// The rule (with `Delivery::folds`: one CPU, no stepped parts, no
    /// timeline): the loop takes a step's end next when no queued event
    /// comes at or before it (events queued before the step began sort
    /// first at a tie; nothing is queued meanwhile but by the steps folded,
    /// and the next is tested after those), and nothing waits above the
    /// interrupt's level to preempt it. A step is folded only if its end
    /// leads to another interrupt step (`ends_in_step`), whose cycles `step`
    /// holds.
    fn fold(&mut self, now: Time, cpu: usize, mut job: Job) -> Job {
        let mut end = now + self.delivery.step[cpu];
        while self.ends_in_step(job) && key_time(self.queue.peek_key()) > end && self.threads[cpu].starts_at_once(IRQ + 1) {
            self.queue.advance_to(end);
            self.delivery.applied_early += 1;
            let Some(Any::Irq(next)) = self.irq_end(end, cpu, job) else { unreachable!("a folded step's end is an interrupt step") };
            job = next;
            end += self.delivery.step[cpu];
        }
        self.delivery.step[cpu] = end - now;
        job
    }

    /// The end at `now` of the interrupt step `cpu` runs, its timer's
    /// `key` marked (several threads, `Machine::marks_step_ends`).
    ///
    /// `STEP_END`: the step leads into another. What `complete` does for
    /// it, without matching the job twice nor wrapping the next in an
    /// `Option`; the next step's end is marked in turn. A mark goes with
    /// its key: a preemption's new timer has none.
    ///
    /// With `folds_claims`, a claim next whose end only ends the chain on
    /// a message-signalled vector (`claim_ends_alone`) has that end
    /// applied now, at its time: it touches this CPU's `handled` and
    /// `step`, read only by its own interrupt's steps, and the
    /// controller's `finish`, which for a vector that is not a legacy
    /// line changes nothing and sends nothing. Every other CPU's step in
    /// between touches neither, so they commute with it. The thread runs
    /// the claim and the exit as one job; nothing can preempt it (nothing
    /// posts above the interrupt level). Its timer stays at the claim's
    /// end, marked `REKEY`: there the exit's key is taken, where the
    /// claim's end would take it, so ties with keys taken meanwhile
    /// break as they did.
    ///
    /// Only the re-key is done here; a `STEP_END` goes on in
    /// `marked_step_end`, so the re-key saves no registers (16 host
    /// instructions an interrupt at 64 CPUs, docs/performance/engine.md).
    #[inline(never)]
    pub(super) fn step_end(&mut self, now: Time, cpu: usize, key: Key) {
        if key & MARKS != REKEY {
            debug_assert_eq!(key & MARKS, STEP_END);
            return self.marked_step_end(now, cpu);
        }
        #[cfg(test)]
        {
            self.marked_ends[1] += 1;
        }
        // SAFETY: `cpu` is the timers' first, as in `complete`.
        let end = unsafe { super::again(&mut self.threads, cpu) }.end_time().expect("a folded claim runs");
        let key = self.queue.reserve_key(end);
        self.timers.set_inline(cpu, key);
    }

    /// `step_end` for a `STEP_END` mark.
    #[inline(never)]
    fn marked_step_end(&mut self, now: Time, cpu: usize) {
        #[cfg(test)]
        {
            self.marked_ends[0] += 1;
        }
        // SAFETY (both): as above.
        let Some((level, Any::Irq(job))) = unsafe { super::again(&mut self.threads, cpu) }.complete(now, &mut self.timeline) else {
            unreachable!("a marked end is an interrupt step's")
        };
        let Some(Any::Irq(mut next)) = self.irq_end(now, cpu, job) else { unreachable!("a marked step leads into another") };
        let mut at = now + self.delivery.step[cpu];
        let mark = match next {
            Job::Claim { input, h, .. } if self.folds_claims && self.claim_ends_alone(u32::from(input), u32::from(h)) => {
                next = self.next_handler(at, cpu, u32::from(input), u32::MAX);
                self.delivery.step[cpu] += at - now;
                REKEY
            }
            _ if self.ends_in_step(next) => STEP_END,
            _ => 0,
        };
        let work = Work { job: Any::Irq(next), cycles: self.delivery.step[cpu], bin: Bin::Interrupt };
        match unsafe { super::again(&mut self.threads, cpu) }.go_on(now, level, work) {
            Some(t) => {
                if mark != REKEY {
                    at = t;
                }
                let key = self.queue.reserve_key(at);
                self.timers.set_inline(cpu, key | mark);
            }
            None => {
                debug_assert!(mark != REKEY, "a folded claim is never preempted");
                self.dispatch(cpu)
            }
        }
    }

    /// Whether handler `h`'s claim on `input` ends the chain and nothing
    /// else (`irq_end`): not a NIC's handler, not a legacy line (its next
    /// handler, its unmask or EOI).
    #[inline(always)]
    fn claim_ends_alone(&self, input: u32, h: u32) -> bool {
        let d = &self.delivery;
        !d.intc.legacy(input) && d.sources[d.chains[input as usize][h as usize]].kind != Kind::Nic
    }

    /// Whether `job`'s end leads to another step of the interrupt (`Read`,
    /// `Claim` or `Exit`): an entry's and a read's always; a claim's unless
    /// its handler is a NIC's that goes on with its own jobs (another
    /// NIC's, the mt path's ISR; code is a stepped part).
    #[inline(always)]
    fn ends_in_step(&self, job: Job) -> bool {
        match job {
            Job::Entry { .. } | Job::Read { .. } => true,
            Job::Claim { input, h, .. } => {
                let src = self.delivery.chains[input as usize][h as usize];
                self.delivery.sources[src].kind != Kind::Nic || (src == 0 && self.net.path != IrqPathKind::Mt)
            }
            _ => false,
        }
    }

    /// What follows `job`'s end at `now` on `cpu` (`None` ends the activity).
    #[inline(always)]
    fn irq_end(&mut self, now: Time, cpu: usize, job: Job) -> Option<Any> {
        let next = match job {
            Job::User => Job::User,
            Job::Entry { input, .. } => match self.delivery.taken[cpu].take() {
                Some(rec) => return self.claim(now, cpu, u32::from(input), 0, rec),
                None => self.next_handler(now, cpu, u32::from(input), 0),
            },
            Job::Read { input, h, .. } => match self.delivery.reads[cpu].take() {
                Some(rec) => return self.claim(now, cpu, u32::from(input), u32::from(h), rec),
                None => self.next_handler(now, cpu, u32::from(input), u32::from(h) + 1),
            },
            Job::Claim { input, h, .. } => {
                let (input, h) = (u32::from(input), u32::from(h));
                let src = self.delivery.chains[input as usize][h as usize];
                if self.delivery.sources[src].kind == Kind::Nic {
                    self.delivery.serving[cpu] = (input, h);
                    // The queue whose vector this is (RSS, or another NIC's), for NAPI.
                    let q = || match src {
                        0 => self.delivery.sources[src].inputs.iter().position(|&i| i == input).unwrap_or(0),
                        _ => self.net.ports.queue_of_input(src - self.net.ports.src, &self.delivery.sources[src].inputs, input),
                    };
                    if self.code.as_ref().is_some_and(|c| src == 0 || c.drives_port[src - self.net.ports.src]) {
                        // The handler is code; the chain goes on when it returns.
                        // Another NIC's handler is its NIC's (`code.other_isr`).
                        let irq = if src == 0 { 0 } else { (1 + src - self.net.ports.src) as u8 };
                        let top = if self.net.path == IrqPathKind::Napi {
                            crate::code::Activity::QueueIsr { q: q() as u8 }
                        } else {
                            crate::code::Activity::Isr { irq }
                        };
                        return Some(Any::Code(top));
                    }
                    if src != 0 {
                        let q = q();
                        if let Some(step) = self.port_claimed(cpu, src - self.net.ports.src, q) {
                            return Some(step);
                        }
                    } else {
                        match self.net.path {
                            IrqPathKind::Napi => {
                                let q = q();
                                self.napi_schedule(cpu, q);
                            }
                            IrqPathKind::Linux => self.post(cpu, SOFT, Any::Softirq),
                            IrqPathKind::Mt => {
                                if let Some(step) = self.nic_step(false) {
                                    return Some(step);
                                }
                            }
                        }
                    }
                    return Some(Any::Irq(self.nic_handler_done(now, cpu)));
                }
                let next = if self.delivery.intc.legacy(input) { h + 1 } else { u32::MAX };
                self.next_handler(now, cpu, input, next)
            }
            Job::Exit { .. } | Job::Defer => return None,
            Job::Prologue { input, .. } => return self.wired_prologue(cpu, input),
            Job::TaskletEntry { src } => {
                // The tasklet runs: it may be scheduled again from now on.
                let rec = self.delivery.tasklets[usize::from(src)].take().expect("a scheduled tasklet has its interrupt");
                self.delivery.counters.tasklet_runs += 1;
                // The tasklet reads this interrupt's data, not a later one's.
                if rec.data > now {
                    self.delivery.counters.stale_reads += 1;
                }
                self.write_to_device(now, rec.src, Write::TaskletSignature(rec), "tasklet signature");
                Job::Tasklet
            }
            Job::Tasklet => return None,
        };
        Some(Any::Irq(next))
    }

    /// Handler `h` of the chain (a status read on legacy lines), or the exit
    /// once every handler has run.
    /// The NIC's handler on `cpu` is done: the chain goes on after it.
    pub(crate) fn nic_handler_done(&mut self, now: Time, cpu: usize) -> Job {
        let (input, h) = self.delivery.serving[cpu];
        let next = if self.delivery.intc.legacy(input) { h + 1 } else { u32::MAX };
        self.next_handler(now, cpu, input, next)
    }

    pub(crate) fn next_handler(&mut self, now: Time, cpu: usize, input: u32, h: u32) -> Job {
        let d = &self.delivery;
        if let Some(&src) = d.chains[input as usize].get(h as usize) {
            let s = &d.sources[src];
            // The request queues behind earlier writes to the device; the
            // completion cannot pass any DMA data the device wrote before
            // it, so it waits for the latest (it flushes it).
            let read = d.bus[src].mmio_read;
            let half = read / 2;
            let at = (now + half).max(s.downstream_tail);
            let back = (at + read - half).max(s.data_visible);
            // A set status reads the same whenever the read lands if only a
            // write (none on the way) or this CPU (in the read) can clear or
            // claim it: taken now, it needs no event.
            if s.status.is_some() && s.writes.is_empty() && !self.stepped && self.threads.len() == 1 {
                self.delivery.reads[cpu] = s.read_status();
                self.delivery.applied_early += u64::from(at < self.end);
            } else {
                self.queue.schedule(at, Event::ReadAtDevice { cpu: cpu as u32, src: src as u32 });
            }
            self.timeline.bus(now, back, "status read");
            self.delivery.step[cpu] = back - now;
            return Job::Read { input: input as u16, h: h as u16, cpu: cpu as u16 };
        }
        if !std::mem::take(&mut self.delivery.handled[cpu]) {
            self.delivery.counters.spurious += 1;
        }
        let (cycles, signal) = self.delivery.intc.finish(input, now);
        if let Some((delay, sig)) = signal {
            self.send_end_of_interrupt(now, delay, sig);
        }
        self.delivery.step[cpu] = cycles + self.delivery.path.exit_cycles;
        Job::Exit { cpu: cpu as u16 }
    }

    /// Handler `h` claims interrupt `rec`: clear (legacy), signature and
    /// tasklet (exerciser).
    fn claim(&mut self, now: Time, cpu: usize, input: u32, h: u32, rec: Rec) -> Option<Any> {
        let src = rec.src;
        let legacy = self.delivery.intc.legacy(input);
        self.delivery.handled[cpu] = true;
        let s = &mut self.delivery.sources[src];
        s.serviced += 1;
        if legacy {
            s.claimed = true;
            self.write_to_device(now, src, Write::Clear, "status clear");
        } else {
            self.delivery.counters.taken_unclaimed -= 1;
        }
        if self.delivery.sources[src].kind == Kind::Exerciser {
            let at = now + if legacy { self.delivery.path.mmio_write_cycles } else { 0 };
            if rec.data > now && !legacy {
                self.delivery.counters.stale_reads += 1;
            }
            self.write_to_device(at, src, Write::IsrSignature(rec), "ISR signature");
            self.delivery.counters.exerciser_claims += 1;
            if self.delivery.tasklets[src].is_some() {
                self.delivery.counters.tasklet_merged += 1;
            } else {
                self.delivery.tasklets[src] = Some(rec);
                self.post(cpu, SOFT, Any::Irq(Job::TaskletEntry { src: src as u16 }));
            }
        }
        let p = &self.delivery.path;
        let s = &self.delivery.sources[src];
        let clear = if legacy { p.mmio_write_cycles } else { 0 };
        let exerciser = if s.kind == Kind::Exerciser { p.mmio_write_cycles + p.tasklet_schedule_cycles } else { 0 };
        self.delivery.step[cpu] = clear + exerciser + s.isr_cycles;
        Some(Any::Irq(Job::Claim { input: input as u16, h: h as u16, cpu: cpu as u16 }))
    }
}

#[cfg(test)]
mod tests {
    use super::{Any, IRQ, Job};
    use crate::machine::delivery::{assert_reports_unchanged, tweaked_run, tweaked_run_read};
    use crate::report::Report;

    /// The run of bundled scenario `file` with `sets`, its interrupts' steps
    /// folded or each a completion, and the events it applied early.
    fn run(file: &str, sets: &[&str], fold: bool) -> (Report, u64) {
        tweaked_run(file, sets, |m| m.delivery.folds &= fold)
    }

    /// Folding an interrupt's steps changes nothing reported (the events
    /// counted included): the e1000 rows (quiet, livelocked with frames
    /// landing inside the interrupt, drawn costs, a fast EOI, an edge pin),
    /// the Linux path's top half and the mt path's ISR (its claim's end not
    /// folded) on an IO-APIC pin, the exerciser on an IO-APIC pin and by MSI
    /// (signature writes, tasklets), the XT-PIC, MSI-X beside the IO-APIC;
    /// two CPUs (never folded); and it folds where it should.
    #[test]
    fn folded_interrupt_steps_report_as_their_completions() {
        let router = "livelock/e1000-router.toml";
        let row = ["workload.packet_bytes=1440", "workload.rate_per_s=85193", "run.duration_ms=10"];
        let with = |extra: &'static str| [row[0], row[1], row[2], extra];
        let cases: [(&str, &[&str], bool); 14] = [
            (router, &row, true),
            (router, &["run.duration_ms=10"], false),
            (router, &["workload.packet_bytes=512", "workload.rate_per_s=232666", "run.duration_ms=10", "driver.isr_rx_spread=[0.7, 1.0, 1.9]"], true),
            (router, &with("bus.apic_eoi_ns=100.0"), true),
            (router, &with("intc.trigger=\"edge\""), true),
            ("compose/rx-ioapic-single.toml", &["run.duration_ms=10", "irq_path.kind=\"linux\""], true),
            ("compose/rx-ioapic-single.toml", &["run.duration_ms=10"], true),
            ("msi-latency/workstation-loaded.toml", &["run.duration_ms=20", "intc.kind=\"ioapic\""], true),
            ("msi-latency/workstation-loaded.toml", &["run.duration_ms=20"], true),
            ("compose/rx-xtpic-single.toml", &["run.duration_ms=10"], true),
            ("compose/rx-ioapic-multithreaded.toml", &["run.duration_ms=10"], true),
            (router, &with("cpu.threads=2"), false),
            ("compose/two-nics.toml", &["run.duration_ms=10"], false),
            ("compose/rx-msix-legacy.toml", &["run.duration_ms=10"], true),
        ];
        assert_reports_unchanged(&cases, |m, on| m.delivery.folds &= on);
        // The quiet row: each interrupt one job from its acceptance to its
        // exit (its entry's, read's and claim's ends folded).
        let ((a, folded), (_, applied)) = (run(router, &row, true), run(router, &row, false));
        let interrupts = a.metric("interrupts_serviced").unwrap() as u64;
        assert!(folded - applied + 3 >= 3 * interrupts, "{folded} applied early folded, {applied} not, {interrupts} interrupts");
    }

    /// The run of bundled scenario `file` with `sets`, several threads'
    /// interrupt step ends marked and claims folded or not, and how many
    /// marked step ends and folded claims' ends it took.
    fn marked_run(file: &str, sets: &[&str], on: bool) -> (Report, [u64; 2]) {
        let tweak = |m: &mut crate::machine::Machine| (m.marks_step_ends, m.folds_claims) = (m.marks_step_ends && on, m.folds_claims && on);
        tweaked_run_read(file, sets, tweak, |m| m.marked_ends)
    }

    /// Several threads' marked step ends and folded claims change nothing
    /// reported (the events counted included): MSI-X at 2 and 8 CPUs and
    /// the exerciser by MSI at 2 (claims folded), the exerciser on IO-APIC
    /// pins (status reads; a legacy claim is not folded), the e1000 router
    /// at 2 CPUs, RSS and two NICs (NIC handlers: not folded); and they
    /// happen where they should.
    #[test]
    fn marked_step_ends_report_as_their_completions() {
        let msix = "bench/msix-scaling.toml";
        let cases: [(&str, &[&str], bool); 7] = [
            (msix, &["cpu.threads=2", "intc.vectors=2", "workload.rate_per_s=40000", "run.duration_ms=20"], true),
            (msix, &["cpu.threads=8", "intc.vectors=8", "workload.rate_per_s=160000", "run.duration_ms=10"], true),
            ("msi-latency/workstation-loaded.toml", &["run.duration_ms=20", "cpu.threads=2"], true),
            ("msi-latency/workstation-loaded.toml", &["run.duration_ms=20", "cpu.threads=2", "intc.kind=\"ioapic\""], false),
            ("livelock/e1000-router.toml", &["workload.packet_bytes=1440", "workload.rate_per_s=85193", "run.duration_ms=10", "cpu.threads=2"], false),
            ("livelock/rss.toml", &["rss.queues=4", "workload.rate_per_s=600000", "run.duration_ms=5"], false),
            ("compose/two-nics.toml", &["run.duration_ms=10"], false),
        ];
        let mut counts = Vec::new();
        for (file, sets, folded) in cases {
            let ((a, [ends, rekeys]), (b, off)) = (marked_run(file, sets, true), marked_run(file, sets, false));
            assert!(a.metric("events").unwrap() > 500.0, "{file} {sets:?}");
            assert_eq!(a.to_json(), b.to_json(), "{file} {sets:?}");
            assert_eq!(off, [0, 0], "{file} {sets:?}");
            counts.push((file, ends, rekeys, ends > 50 && (rekeys > 50) == folded));
        }
        assert!(counts.iter().all(|c| c.3), "marked step ends, folded claims: {counts:?}");
    }

    /// With several threads an entry that starts at once is armed marked
    /// (`start_marked`): each interrupt's entry end is a marked end, and
    /// its claim, folded, a re-key (but those in flight at the end). An
    /// entry that cannot start at once (behind a job that never ends,
    /// posted at the interrupt level on CPU 1) waits unmarked, and the run
    /// reports as without marks.
    #[test]
    fn entries_are_marked_as_they_start() {
        let sets = ["cpu.threads=4", "intc.vectors=4", "workload.rate_per_s=80000", "run.duration_ms=10"];
        let run = |on: bool, block: bool| {
            let tweak = |m: &mut crate::machine::Machine| {
                (m.marks_step_ends, m.folds_claims) = (m.marks_step_ends && on, m.folds_claims && on);
                if block {
                    m.post_dispatch(1, IRQ, Any::Irq(Job::User));
                }
            };
            tweaked_run_read("bench/msix-scaling.toml", &sets, tweak, |m| (m.marked_ends, m.threads[1].pending(IRQ)))
        };
        let (a, ([ends, rekeys], waiting)) = run(true, false);
        let interrupts = a.metric("interrupts_serviced").unwrap() as u64;
        assert!(interrupts > 500 && waiting == 0, "{interrupts} interrupts");
        assert!(ends.abs_diff(interrupts) <= 4 && rekeys.abs_diff(interrupts) <= 4, "{ends} entries' ends, {rekeys} re-keys, {interrupts} interrupts");
        let ((a, (_, waiting)), (b, _)) = (run(true, true), run(false, true));
        assert_eq!(waiting, 1, "CPU 1's first entry waits");
        assert_eq!(a.to_json(), b.to_json());
    }
}
