//! The kernel's jobs on the machine: what each costs as CPU work and what
//! the activity that finished one does next (`Machine::after`), the one
//! match on the job that every completion takes. The jobs and their costs
//! are the kernel part's (`kernel/`); the steps they lead to are in
//! `driver.rs`, `stack.rs`, `linux.rs`, `napi/` and `masking/` beside this file.

use super::{Machine, Route};
use crate::cpu::{Level, Work};
use crate::engine::Time;
use crate::kernel::Job;
use crate::kernel::net::{Phase, Site};

impl Machine {
    /// The job as CPU work: its cycles and the bin they count in.
    #[inline(always)]
    pub(crate) fn work(&mut self, job: Job) -> Work<Job> {
        match job {
            Job::Irq(j) => self.irq_work(j),
            Job::Mask(j) => self.mask_work(j),
            Job::Code(a) => Work { job, cycles: crate::code::UNTIL_RETURN, bin: a.bin() },
            Job::Napi(j) => self.napi_work(j),
            Job::Port { step, .. } => self.port_work(job, step),
            _ => self.net.costs.work(job),
        }
    }

    /// What the activity at `level` of `thread` that just finished `job` does
    /// next: `Some(job)` continues it, `None` ends it.
    #[inline]
    pub(crate) fn after(&mut self, now: Time, thread: usize, level: Level, job: &Job) -> Option<Job> {
        match *job {
            Job::Background => Some(Job::Background),
            Job::AppThink => {
                // The flooding application calls send again; the SWI preempts it at once.
                if let Some((bytes, _)) = self.net.workload.send_flood() {
                    self.apply_send(thread, bytes);
                }
                Some(Job::AppThink)
            }
            Job::Syscall if self.net.costs.sections.syscall > 0 => Some(Job::section(Site::Syscall, 0, 0, 0)),
            Job::Syscall => {
                self.syscall_done();
                None
            }
            Job::IsrTx => self.tx_step(now, false).or_else(|| self.isr_done(now, thread)),
            Job::IsrRx => self.rx_step(now, thread, false).or_else(|| self.isr_done(now, thread)),
            Job::Section { phase, site, q, arrival, bytes } => self.section_step(now, thread, level, phase, Job::Section { phase, site, q, arrival, bytes }),
            Job::Softirq => self.nic_step(true),
            Job::PollTx => self.tx_step(now, true),
            Job::PollRx => self.rx_step(now, thread, true),
            Job::Irq(j) => self.irq_after(now, thread, j),
            Job::Mask(j) => self.mask_after(now, thread, level, j),
            Job::Code(a) => self.code_after(thread, level, a),
            Job::Napi(j) => self.napi_after(now, thread, j),
            Job::Port { step, q } => self.port_after(now, thread, step, usize::from(q)),
            // One protocol layer is done; the next runs in the same activation.
            Job::SendSocket { bytes } if !self.net.costs.layered => Some(Job::DriverSend { bytes }),
            Job::SendSocket { bytes } => Some(Job::SendUdp { bytes }),
            Job::SendUdp { bytes } => Some(Job::SendIp { bytes }),
            Job::SendIp { bytes } => Some(Job::DriverSend { bytes }),
            Job::DriverSend { bytes } => {
                self.driver_send(now, bytes);
                None
            }
            Job::RecvIp { arrival, bytes } if self.net.costs.layered => Some(Job::RecvUdp { arrival, bytes }),
            Job::RecvUdp { arrival, bytes } => Some(Job::RecvSocket { arrival, bytes }),
            Job::RecvIp { arrival, bytes } | Job::RecvSocket { arrival, bytes } => self.socket_done(now, arrival, bytes),
            Job::Forward { arrival, bytes, to } => {
                self.forwarded_job(now, arrival, bytes, to);
                None
            }
        }
    }

    #[inline]
    /// The Driver ISR's drain is over: the handler chain goes on (behind a
    /// controller), or the masked interrupt's handler ends.
    fn isr_done(&mut self, now: Time, thread: usize) -> Option<Job> {
        // The bare wire with nothing between (the flag the arrival path
        // tests anyway): one test instead of two.
        if self.net.direct {
            return None;
        }
        match self.net.route {
            Route::Controller => return Some(Job::Irq(self.nic_handler_done(now, thread))),
            Route::Masked(_) => self.nic_handler_finished(),
            Route::Wire => {}
        }
        None
    }

    fn syscall_done(&mut self) {
        self.net.counters.syscalls_waiting -= 1;
        self.net.counters.syscalls_done += 1;
    }

    /// A critical section in the network path goes one step on (on
    /// `thread`, whose mask it is). Out of line: only the critical-section
    /// studies take it.
    #[inline(never)]
    fn section_step(&mut self, now: Time, thread: usize, level: Level, phase: Phase, job: Job) -> Option<Job> {
        let Job::Section { site, q, arrival, bytes, .. } = job else { unreachable!("a section step is a section job") };
        let next = |phase| Some(Job::Section { phase, site, q, arrival, bytes });
        let cost = self.net.costs.work(job).cycles;
        if phase != Phase::Body {
            self.masking.counters.masking_cycles += cost;
        }
        let restore = match phase {
            Phase::Enter => {
                self.section_enter(thread, level, self.net.costs.sections.level);
                return next(Phase::Body);
            }
            Phase::Body => return next(Phase::Exit),
            Phase::Exit => self.section_exit(thread, level),
            Phase::Restore => {
                self.section_restore(thread);
                false
            }
        };
        if restore {
            return next(Phase::Restore);
        }
        match site {
            // Queue 0 is the first NIC's; on the mt and Linux paths every other queue is another NIC's.
            Site::Driver if q > 0 => self.port_step(usize::from(q), false).or_else(|| self.port_isr_done(now, thread)),
            Site::BottomHalf if q > 0 => self.port_step(usize::from(q), true),
            Site::Driver => self.nic_step(false).or_else(|| self.isr_done(now, thread)),
            Site::BottomHalf => self.nic_step(true),
            Site::Poll => self.poll_section(q, Site::PollSocket).or_else(|| self.poll_resume(now, thread, q)),
            Site::PollSocket => self.poll_resume(now, thread, q),
            Site::Busy => self.busy_section(Site::BusySocket).or_else(|| self.busy_resume(now)),
            Site::BusySocket => self.busy_resume(now),
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
}
