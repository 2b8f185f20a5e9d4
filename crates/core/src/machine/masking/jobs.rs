//! The masking study's programs on the machine: what each step of a handler,
//! a critical section or a continuation costs, and what follows it
//! (`masking/jobs.rs` holds the steps and the schemes).

use crate::cpu::{Bin, IRQ, Level, Work};
use crate::engine::Time;
use crate::kernel::Job as Any;
use crate::machine::Machine;
use crate::masking::jobs::{HandlerRun, Irq, Job, NIC_HANDLER, Scheme, Step, What};

impl Machine {
    /// The base program's first job, if it has one.
    pub(crate) fn base_job(&self) -> Option<Any> {
        self.step_job(0, 0, Irq::NONE).map(Any::Mask)
    }

    /// `cpu`'s masking level: the highest section open in any activity.
    fn masking_level(&self, cpu: usize) -> u8 {
        self.masking.cpus[cpu].level()
    }

    /// Hands an interrupt to `cpu`, which starts it at once if it is above
    /// what runs. `check`: its prologue tests the software mask.
    pub(crate) fn post_interrupt(&mut self, cpu: usize, irq: Irq, program: u16, check: bool) {
        self.masking.counters.posted += 1;
        let now = self.queue.now();
        self.timeline.flow_from(cpu, IRQ + irq.priority - 1, now, "interrupt");
        self.post(cpu, IRQ + irq.priority - 1, Any::Mask(Job::new(program, 0, irq, What::Prologue { check })));
    }

    /// Posts the interrupts `cpu`'s hardware mask no longer holds: from its
    /// held queues, or (`wired`) the controller's next one, once the mask is
    /// down.
    fn deliver_held(&mut self, cpu: usize) {
        if self.masking.wired {
            if self.masking.cpus[cpu].hw == 0 && self.offer_posted(cpu) {
                self.masking.counters.held += 1;
            }
            return;
        }
        let check = self.masking.scheme == Scheme::Optimistic;
        for p in (self.masking.cpus[cpu].hw as usize + 1)..self.masking.cpus[cpu].held.len() {
            while let Some((irq, program)) = self.masking.cpus[cpu].held[p].pop_front() {
                self.post_interrupt(cpu, irq, program, check);
            }
        }
    }

    /// What the activity at `level` does after `job`: `None` ends it.
    // Out of line: the network hot path inlines only its own arm of `work` and `after`.
    #[inline(never)]
    pub(crate) fn mask_after(&mut self, now: Time, cpu: usize, level: Level, job: Job) -> Option<Any> {
        let cost = self.mask_work(job).cycles;
        if !matches!(job.what, What::Run) {
            self.masking.counters.masking_cycles += cost;
            if job.irq() == Irq::NONE {
                self.masking.counters.pass_masking_cycles += cost;
            }
        }
        let l = level as usize;
        let next = match job.what {
            What::Run => self.next_step(now, cpu, level, job),
            What::Prologue { check } => {
                let masking = self.masking_level(cpu);
                let m = &mut self.masking.cpus[cpu];
                if check && job.priority <= masking {
                    // Masked in software: keep a continuation, mask in hardware, return.
                    self.masking.counters.deferred += 1;
                    m.deferred.push_back((job.irq(), job.program));
                    m.hw = m.hw.max(masking);
                    return Some(Any::Mask(Job { what: What::Defer, ..job }));
                }
                m.began[l] = (now, masking);
                if job.program == NIC_HANDLER {
                    // The NIC's Driver ISR runs in this activity (`machine/driver.rs`).
                    return self.nic_step(false).or_else(|| self.finish(now, cpu, level, job).map(Any::Mask));
                }
                self.step_job(job.program, 0, job.irq()).or_else(|| self.finish(now, cpu, level, job))
            }
            What::Defer => {
                // The interrupted activity resumes; the handler waits in `deferred`.
                self.masking.counters.posted -= 1;
                None
            }
            What::Enter => {
                if let Some(Step::Enter(p)) = self.step(job) {
                    self.section_enter(cpu, level, p);
                }
                self.next_step(now, cpu, level, job)
            }
            What::Exit => {
                if self.section_exit(cpu, level) {
                    Some(Job { what: What::Restore, ..job })
                } else {
                    self.next_step(now, cpu, level, job)
                }
            }
            What::Restore => {
                self.section_restore(cpu);
                self.next_step(now, cpu, level, job)
            }
        };
        next.map(Any::Mask)
    }

    /// The activity at `level` of `cpu` opens a section masking priorities
    /// `<= p`.
    pub(crate) fn section_enter(&mut self, cpu: usize, level: Level, p: u8) {
        let m = &mut self.masking.cpus[cpu];
        m.open[level as usize].push(p);
        if self.masking.scheme == Scheme::Conventional {
            m.hw = m.level();
        }
    }

    /// The activity at `level` of `cpu` closes its innermost section.
    /// Returns whether deferred handlers were released and the hardware
    /// mask must be restored after them (optimistic only).
    pub(crate) fn section_exit(&mut self, cpu: usize, level: Level) -> bool {
        let m = &mut self.masking.cpus[cpu];
        m.open[level as usize].pop();
        let masking = m.level();
        match self.masking.scheme {
            Scheme::Conventional => {
                m.hw = masking;
                self.deliver_held(cpu);
                false
            }
            Scheme::Optimistic => self.release_deferred(cpu, masking),
        }
    }

    /// Deferred handlers have run (they preempted the exiting activity):
    /// lower `cpu`'s hardware mask as far as the remaining ones allow.
    pub(crate) fn section_restore(&mut self, cpu: usize) {
        let m = &mut self.masking.cpus[cpu];
        m.hw = if m.deferred.is_empty() && m.deferred_input.is_none() { 0 } else { m.level() };
        self.deliver_held(cpu);
    }

    /// The NIC raises its interrupt at priority `priority` on `cpu`, whose
    /// kernel has critical sections (the direct wire): held by the hardware
    /// mask, or taken (and, under optimistic protection, tested against the
    /// software mask).
    // Out of line: only the critical-section studies take it.
    #[inline(never)]
    pub(crate) fn raise_masked(&mut self, cpu: usize, priority: u8) {
        if self.masking.merge_if_full() {
            return;
        }
        let m = &mut self.masking;
        let irq = Irq { id: m.next_id, priority };
        m.next_id += 1;
        if priority <= m.cpus[cpu].hw {
            m.counters.held += 1;
            m.cpus[cpu].held[priority as usize].push_back((irq, NIC_HANDLER));
        } else {
            let check = m.scheme == Scheme::Optimistic;
            self.post_interrupt(cpu, irq, NIC_HANDLER, check);
        }
        self.dispatch(cpu);
    }

    /// An interrupt taken through the controller on `cpu` (optimistic
    /// protection): its prologue tests the software mask. Masked, it keeps
    /// the interrupt as a continuation and raises the hardware mask (the CPU
    /// stays inside the interrupt, so the controller delivers nothing more
    /// to it); otherwise the interrupt path goes on from its entry.
    pub(crate) fn wired_prologue(&mut self, cpu: usize, input: u16) -> Option<Any> {
        self.masking.counters.masking_cycles += self.masking.costs.prologue_check;
        let masking = self.masking_level(cpu);
        if masking == 0 {
            return Some(Any::Irq(crate::kernel::IrqJob::Entry { input, cpu: cpu as u16 }));
        }
        let c = &mut self.masking.counters;
        c.deferred += 1;
        c.masking_cycles += self.masking.costs.continuation + self.masking.costs.conventional_raise;
        let m = &mut self.masking.cpus[cpu];
        m.deferred_input = Some(input);
        m.hw = m.hw.max(masking);
        Some(Any::Irq(crate::kernel::IrqJob::Defer))
    }

    /// The NIC's Driver ISR, run as a masked interrupt's handler, is done.
    pub(crate) fn nic_handler_finished(&mut self) {
        self.masking.counters.handled += 1;
        self.masking.counters.posted -= 1;
    }

    /// Posts `cpu`'s deferred interrupts above `masking`, oldest first;
    /// whether any. Through a controller every section masks every
    /// interrupt, so its one continuation runs once none is open.
    fn release_deferred(&mut self, cpu: usize, masking: u8) -> bool {
        if self.masking.wired {
            if masking > 0 {
                return false;
            }
            let Some(input) = self.masking.cpus[cpu].deferred_input.take() else { return false };
            self.post(cpu, IRQ, Any::Irq(crate::kernel::IrqJob::Entry { input, cpu: cpu as u16 }));
            return true;
        }
        let mut any = false;
        let mut i = 0;
        while i < self.masking.cpus[cpu].deferred.len() {
            if self.masking.cpus[cpu].deferred[i].0.priority > masking {
                if let Some((irq, program)) = self.masking.cpus[cpu].deferred.remove(i) {
                    self.post_interrupt(cpu, irq, program, false);
                    any = true;
                }
            } else {
                i += 1;
            }
        }
        any
    }

    fn step(&self, job: Job) -> Option<Step> {
        self.masking.programs.get(job.program as usize)?.steps.get(job.pc as usize).copied()
    }

    /// The job for step `pc` of `program`, if it has one.
    fn step_job(&self, program: u16, pc: u16, irq: Irq) -> Option<Job> {
        let step = self.masking.programs.get(program as usize)?.steps.get(pc as usize)?;
        let what = match step {
            Step::Run(_) => What::Run,
            Step::Enter(_) => What::Enter,
            Step::Exit => What::Exit,
        };
        Some(Job::new(program, pc, irq, what))
    }

    fn next_step(&mut self, now: Time, cpu: usize, level: Level, job: Job) -> Option<Job> {
        if let Some(next) = self.step_job(job.program, job.pc + 1, job.irq()) {
            return Some(next);
        }
        if job.irq() == Irq::NONE {
            let c = &mut self.masking.counters;
            c.passes += 1;
            c.last_pass_end = now;
            c.base_masking_cycles += std::mem::take(&mut c.pass_masking_cycles);
            if self.masking.programs[job.program as usize].repeat {
                return self.step_job(job.program, 0, job.irq());
            }
            return None;
        }
        self.finish(now, cpu, level, job)
    }

    /// A handler's activity ends.
    fn finish(&mut self, now: Time, cpu: usize, level: Level, job: Job) -> Option<Job> {
        let m = &mut self.masking;
        m.counters.handled += 1;
        m.counters.posted -= 1;
        if let Some(log) = m.log.as_mut() {
            let (started, masking_level) = m.cpus[cpu].began[level as usize];
            let arrived = m.arrived[job.id as usize];
            log.push(HandlerRun { id: job.id, priority: job.priority, arrived, started, finished: now, masking_level });
        }
        None
    }

    // Out of line: the network hot path inlines only its own arm of `work` and `after`.
    #[inline(never)]
    pub(crate) fn mask_work(&self, job: Job) -> Work<Any> {
        let m = &self.masking;
        let c = &m.costs;
        let opt = m.scheme == Scheme::Optimistic;
        let bin = if job.irq() == Irq::NONE { m.programs[job.program as usize].bin } else { Bin::Interrupt };
        let (cycles, bin) = match job.what {
            What::Run => match self.step(job) {
                Some(Step::Run(n)) => (n, bin),
                _ => (0, bin),
            },
            What::Enter if opt => (c.optimistic_enter.unwrap_or(0), Bin::Overhead),
            What::Enter => (c.conventional_raise, Bin::Overhead),
            What::Exit if opt => (c.optimistic_leave.unwrap_or(0), Bin::Overhead),
            What::Exit => (c.conventional_lower, Bin::Overhead),
            What::Prologue { check: true } => (c.prologue_check, Bin::Overhead),
            What::Prologue { check: false } => (0, Bin::Overhead),
            What::Defer => (c.continuation + c.conventional_raise, Bin::Overhead),
            What::Restore => (c.conventional_lower, Bin::Overhead),
        };
        Work { job: Any::Mask(job), cycles, bin }
    }
}
