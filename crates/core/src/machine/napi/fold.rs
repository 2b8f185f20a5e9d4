//! The softirq's steps whose ends come before anything else happens, run
//! as one job, as the interrupt's are (`Machine::fold`, `linux.rs`): on the
//! e1000 rows the softirq's entry, the poll's start and a frame's step, up
//! to the poll's completion.

use crate::cpu::{Bin, IRQ, SOFT, Work};
use crate::engine::{Time, key_time};
use crate::kernel::Job as Any;
use crate::kernel::napi::Job;
use crate::machine::Machine;

impl Machine {
    /// The softirq's steps from `job` (of `cycles`, begun at `now` on
    /// `cpu`) whose ends the loop would take next, ended at once: each end
    /// is applied where it would be (the queue's time moved to it, counted
    /// as its completion in `applied_early`) and the step after it begun,
    /// its cost computed once (a drawn cost draws as the step begins). The
    /// last step and the cycles of all of them; every step's cycles count as
    /// `BottomHalf`.
    ///
    /// The rule is the interrupt's (with `Napi::folds`: one CPU, no stepped
    /// parts, no timeline): the loop takes a step's end next when no queued
    /// event comes at or before it (events queued before the step began
    /// sort first at a tie; nothing is queued meanwhile but by the steps
    /// folded, and the next is tested after those), and nothing waits above
    /// the softirq's level to preempt it. A step is folded only if its end
    /// leads to another step of the softirq (`ends_in_napi_step`).
    // Out of line: inlined, it took the completion out of the event loop.
    #[inline(never)]
    pub(super) fn napi_fold(&mut self, now: Time, cpu: usize, mut job: Job, cycles: u64) -> (Job, u64) {
        // The first step's end comes before any queued event (`napi_begin`).
        let mut end = now + cycles;
        while self.ends_in_napi_step(cpu, job) && self.threads[cpu].starts_at_once(IRQ) {
            self.queue.advance_to(end);
            self.delivery.applied_early += 1;
            let Some(Ok(next)) = self.napi_end(end, cpu, job) else { unreachable!("a folded step's end is a softirq step") };
            job = next;
            end += self.step_cycles(job);
            if key_time(self.queue.peek_key()) <= end {
                break;
            }
        }
        (job, end - now)
    }

    /// After an interrupt's end on `cpu` (`Machine::complete`, its dispatch
    /// the last thing it does): if the softirq's entry started, its end is
    /// folded with the steps after it, as `fold_entry` (`linux.rs`) folds
    /// the interrupt's entry at its acceptance. One test where NAPI does not
    /// fold.
    #[inline(always)]
    pub(in crate::machine) fn fold_softirq(&mut self, cpu: usize) {
        if self.net.napi.as_ref().is_some_and(|n| n.folds) {
            self.fold_softirq_entry(cpu);
        }
    }

    /// The softirq's entry (its work not begun) and the steps after it
    /// whose ends come first, by `napi_fold`'s rule, as one job: the running
    /// one, replaced (the same bin), its completion armed again. The entry's
    /// end leads to a poll when the list is not empty.
    #[inline(never)]
    fn fold_softirq_entry(&mut self, cpu: usize) {
        let Some((SOFT, Any::Napi(Job::Softirq), over, cycles)) = self.threads[cpu].running_work() else { return };
        let now = self.queue.now();
        let end = now + over + cycles;
        if key_time(self.queue.peek_key()) <= end || !self.threads[cpu].starts_at_once(IRQ) || self.napi().cpus[cpu].list.is_empty() {
            return;
        }
        self.queue.advance_to(end);
        self.delivery.applied_early += 1;
        let Some(Ok(poll)) = self.napi_end(end, cpu, Job::Softirq) else { unreachable!("a softirq with a poll list polls") };
        let job = self.napi_begin(end, cpu, poll);
        let work = Work { job, cycles: cycles + self.napi().step, bin: Bin::BottomHalf };
        let t = self.threads[cpu].replace(now, work);
        self.arm(cpu, t);
    }

    /// Whether `job`'s end on `cpu` leads to another step of the softirq:
    /// a poll's start or a transmit clean-up while the poll is below its
    /// limit, a frame's step that leaves it below (without critical
    /// sections: `poll_step` goes on with the poll then); never its
    /// completion.
    fn ends_in_napi_step(&mut self, cpu: usize, job: Job) -> bool {
        let limit = self.napi().poll_limit(cpu);
        let sections = &self.net.costs.sections;
        let free = sections.driver | sections.protocol == 0;
        let frames = &self.napi().poll_frames;
        match job {
            Job::Poll { .. } => limit > 0,
            Job::Tx { q } => frames[usize::from(q)] < limit,
            Job::Rx { q } => free && frames[usize::from(q)] + 1 < limit,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::machine::Machine;
    use crate::machine::delivery::{assert_reports_unchanged, tweaked_run};
    use crate::report::Report;

    /// The softirq's steps folded (where the machine would) or each a completion.
    fn fold(m: &mut Machine, on: bool) {
        if let Some(n) = &mut m.net.napi {
            n.folds &= on;
        }
    }

    /// The run of bundled scenario `file` with `sets`, `fold` or not, and
    /// the events it applied early.
    fn run(file: &str, sets: &[&str], on: bool) -> (Report, u64) {
        tweaked_run(file, sets, |m| fold(m, on))
    }

    /// Folding the softirq's steps changes nothing reported (the events
    /// counted included): the e1000 rows (quiet; drawn costs with their
    /// transmit clean-ups; livelocked, frames landing inside each step; a
    /// fast EOI; an edge pin), the free wire, a receiver with its stack,
    /// deferred interrupts, the NAPI thread, critical sections (a frame's
    /// step not folded), a router's second NIC; never with two CPUs or a
    /// busy poller; and it folds where it should.
    #[test]
    fn folded_softirq_steps_report_as_their_completions() {
        let router = "livelock/e1000-router.toml";
        let row = ["workload.packet_bytes=1440", "workload.rate_per_s=85193", "run.duration_ms=10"];
        let with = |extra: &'static str| [row[0], row[1], row[2], extra];
        let receiver = |a: &'static str, b: &'static str| ["irq_path.kind=\"napi\"", "workload.rate_per_s=5000.0", "run.duration_ms=100", a, b];
        let cases: [(&str, &[&str], bool); 14] = [
            (router, &row, true),
            (router, &["workload.packet_bytes=512", "workload.rate_per_s=232666", "run.duration_ms=10", "driver.isr_rx_spread=[0.7, 0.7, 0.7, 1.9]"], true),
            (router, &["run.duration_ms=10"], false),
            (router, &with("bus.apic_eoi_ns=100.0"), true),
            (router, &with("intc.trigger=\"edge\""), true),
            ("livelock/e1000-forward.toml", &["workload.packet_bytes=512", "workload.rate_per_s=200000", "run.duration_ms=10"], true),
            ("livelock/receiver.toml", &receiver("run.seed=1", "run.seed=2"), true),
            ("livelock/receiver.toml", &receiver("napi.defer_hard_irqs=2", "napi.gro_flush_timeout_ns=20000"), true),
            ("livelock/receiver.toml", &receiver("napi.threaded=true", "run.seed=2"), true),
            ("compose/rx-sections.toml", &["run.duration_ms=100", "irq_path.kind=\"napi\""], true),
            ("compose/router.toml", &["run.duration_ms=5"], true),
            (router, &with("cpu.threads=2"), false),
            ("livelock/receiver.toml", &receiver("napi.busy_poll_usecs=50", "app.background=false"), false),
            ("compose/two-nics.toml", &["run.duration_ms=10"], false),
        ];
        assert_reports_unchanged(&cases, fold);
        // The quiet row: each frame's softirq one job from its entry to the
        // poll's completion (the entry's, the poll's start's and the frame's
        // ends folded).
        let ((a, folded), (_, applied)) = (run(router, &row, true), run(router, &row, false));
        let frames = a.metric("rx_delivered").unwrap() as u64;
        assert!(folded - applied + 3 >= 3 * frames, "{folded} applied early folded, {applied} not, {frames} frames");
    }
}
