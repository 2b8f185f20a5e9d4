//! Kernel software on the simulated CPUs, as jobs with costs.
//!
//! - `net.rs`: the network jobs (application, system calls, NIC driver,
//!   protocol layers) and their costs; `driver.rs` and `stack.rs` decide what
//!   runs after each.
//! - `linux.rs`: the Linux 2.6 interrupt path around device handlers (entry,
//!   shared-line handler chain, exit, tasklet).
//! - `napi/`: the NAPI receive path (poll with a weight and a budget, the
//!   interrupt off while polling).
//! - `masking.rs`: programs with critical sections under conventional or
//!   optimistic interrupt masking.
//!
//! [`Job`] is the one job type every hardware thread runs; this file maps
//! each job to its cost and to what its activity does next.

mod driver;
pub mod linux;
pub mod masking;
pub mod napi;
pub mod net;
mod stack;

pub use linux::Job as IrqJob;
pub use masking::Job as MaskJob;
pub use napi::Job as NapiJob;
pub use net::Job as NetJob;

use crate::cpu::{Label, Level, Work};
use crate::engine::Time;
use crate::machine::Machine;
use net::{Phase, Site};

/// One piece of software work on a hardware thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    Net(NetJob),
    Irq(IrqJob),
    Mask(MaskJob),
    /// An activity that is code: it runs until its entry returns.
    Code(crate::code::Activity),
    Napi(NapiJob),
}

impl Job {
    /// Whether an activity that ends with this job ends an interrupt taken
    /// through the controller (interrupts are enabled again after it).
    #[inline]
    pub fn ends_interrupt(&self) -> bool {
        matches!(self, Job::Irq(IrqJob::Exit { .. }))
    }
}

impl Label for Job {
    fn label(&self) -> &'static str {
        match self {
            Job::Net(j) => j.label(),
            Job::Irq(j) => j.label(),
            Job::Mask(j) => j.label(),
            Job::Code(a) => a.label(),
            Job::Napi(j) => j.label(),
        }
    }

    fn args(&self) -> crate::timeline::Args {
        match self {
            Job::Net(j) => j.args(),
            Job::Irq(j) => j.args(),
            Job::Mask(j) => j.args(),
            Job::Code(_) => [None, None],
            Job::Napi(j) => j.args(),
        }
    }
}

impl Machine {
    /// The job as CPU work: its cycles and the bin they count in.
    #[inline(always)]
    pub(crate) fn work(&mut self, job: Job) -> Work<Job> {
        match job {
            Job::Net(j) => self.net.costs.work(j),
            Job::Irq(j) => self.irq_work(j),
            Job::Mask(j) => self.mask_work(j),
            Job::Code(a) => Work { job, cycles: crate::code::UNTIL_RETURN, bin: a.bin() },
            Job::Napi(j) => self.napi_work(j),
        }
    }

    /// What the activity at `level` of `thread` that just finished `job` does
    /// next: `Some(job)` continues it, `None` ends it.
    #[inline]
    pub(crate) fn after(&mut self, now: Time, thread: usize, level: Level, job: &Job) -> Option<Job> {
        match *job {
            Job::Net(ref j) => self.net_after(now, thread, level, j),
            Job::Irq(j) => self.irq_after(now, thread, j),
            Job::Mask(j) => self.mask_after(now, level, j),
            Job::Code(a) => self.code_after(thread, a),
            Job::Napi(j) => self.napi_after(now, thread, j),
        }
    }

    #[inline]
    /// The Driver ISR's drain is over: the handler chain goes on (behind a
    /// controller), or the masked interrupt's handler ends.
    fn isr_done(&mut self, now: Time, thread: usize) -> Option<Job> {
        if self.net.wired {
            return Some(Job::Irq(self.nic_handler_done(now, thread)));
        }
        if self.net.masked.is_some() {
            self.nic_handler_finished();
        }
        None
    }

    fn syscall_done(&mut self) {
        self.net.counters.syscalls_waiting -= 1;
        self.net.counters.syscalls_done += 1;
    }

    /// A critical section in the network path goes one step on. Out of
    /// line: only the critical-section studies take it.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn section_step(&mut self, now: Time, thread: usize, level: Level, phase: Phase, site: Site, arrival: Time, bytes: u32) -> Option<Job> {
        let job = |phase| Some(Job::Net(NetJob::Section { phase, site, arrival, bytes }));
        let cost = self.net.costs.work(NetJob::Section { phase, site, arrival, bytes }).cycles;
        if phase != Phase::Body {
            self.masking.counters.masking_cycles += cost;
        }
        let restore = match phase {
            Phase::Enter => {
                self.section_enter(level, self.net.costs.sections.level);
                return job(Phase::Body);
            }
            Phase::Body => return job(Phase::Exit),
            Phase::Exit => self.section_exit(level),
            Phase::Restore => {
                self.section_restore();
                false
            }
        };
        if restore {
            return job(Phase::Restore);
        }
        match site {
            Site::Driver => match self.nic_step(false) {
                Some(step) => Some(Job::Net(step)),
                None => self.isr_done(now, thread),
            },
            Site::Protocol => {
                self.received(now, arrival, bytes);
                None
            }
            Site::Syscall => {
                self.syscall_done();
                None
            }
        }
    }

    fn net_after(&mut self, now: Time, thread: usize, level: Level, job: &NetJob) -> Option<Job> {
        let next = match *job {
            NetJob::Background => Some(NetJob::Background),
            NetJob::AppThink => {
                // The flooding application calls send again; the SWI preempts it at once.
                if let Some((bytes, _)) = self.net.workload.send_flood() {
                    self.apply_send(thread, bytes);
                }
                Some(NetJob::AppThink)
            }
            NetJob::Syscall if self.net.costs.sections.syscall > 0 => Some(NetJob::Section { phase: Phase::Enter, site: Site::Syscall, arrival: 0, bytes: 0 }),
            NetJob::Syscall => {
                self.syscall_done();
                None
            }
            NetJob::IsrTx | NetJob::IsrRx => {
                let next = self.isr_step(now, thread, *job);
                if next.is_none() {
                    return self.isr_done(now, thread);
                }
                next
            }
            NetJob::Section { phase, site, arrival, bytes } => return self.section_step(now, thread, level, phase, site, arrival, bytes),
            NetJob::Softirq => self.nic_step(true),
            NetJob::PollTx | NetJob::PollRx => self.isr_step(now, thread, *job),
            _ => self.layer_done(now, thread, *job),
        };
        next.map(Job::Net)
    }
}

#[cfg(test)]
mod tests {
    /// Jobs are copied on every post and dispatch: the three parts' jobs
    /// together stay as small as the network jobs alone.
    #[test]
    fn a_job_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<super::Job>(), 16);
        assert_eq!(std::mem::size_of::<crate::cpu::Work<super::Job>>(), 32);
    }
}
