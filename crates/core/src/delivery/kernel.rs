//! What the CPU runs for an interrupt, Linux 2.6 style.
//!
//! At an interrupt level (interrupts disabled throughout, as with
//! `IRQF_DISABLED`, so interrupts never nest):
//! 1. `Entry`: hardware vectoring (the thread's entry cost), the
//!    controller's acknowledge (INTA, 8259 mask and EOI, or a local-APIC EOI
//!    write) and the kernel's path to the first handler.
//! 2. For each handler registered on the input, in order, every one of them:
//!    legacy lines first `Read` the device's status (a non-posted read: the
//!    CPU stalls for the round trip, and the completion cannot overtake the
//!    device's DMA data, so it also flushes it); a handler whose device's bit
//!    is set `Claim`s: it writes the clear, then the exerciser's ISR-entry
//!    signature, and schedules the tasklet. An MSI handler claims at once,
//!    its first MMIO write being the signature.
//! 3. `Exit`: the controller's end (8259 unmask, level EOI) and irq_exit.
//!
//! Then, at the software-interrupt level (preempted by any new interrupt,
//! above user work, after all pending interrupts since those are above it):
//! `TaskletEntry` (softirq entry, then the tasklet's signature write) and
//! `Tasklet`, its work.

use super::{Model, Write};
use crate::cpu::{Bin, Label, SOFT, Work};
use crate::engine::Time;
use crate::intc::Rec;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Job {
    /// The busy user task.
    User,
    Entry {
        input: u32,
        rec: Option<Rec>,
        ack: u64,
    },
    /// Handler `h` of the input's chain reads its device's status, stalling
    /// `stall` cycles.
    Read {
        input: u32,
        h: usize,
        stall: u64,
    },
    /// Handler `h` services its device's interrupt `rec`.
    Claim {
        input: u32,
        h: usize,
        rec: Rec,
    },
    Exit {
        cycles: u64,
    },
    TaskletEntry {
        rec: Rec,
    },
    Tasklet,
}

impl Label for Job {
    fn label(&self) -> &'static str {
        match self {
            Job::User => "user task",
            Job::Entry { .. } => "irq entry",
            Job::Read { .. } => "ISR status read",
            Job::Claim { .. } => "ISR",
            Job::Exit { .. } => "irq exit",
            Job::TaskletEntry { .. } => "softirq entry",
            Job::Tasklet => "tasklet",
        }
    }
}

impl Model {
    /// The job as CPU work.
    pub(super) fn work(&self, job: Job) -> Work<Job> {
        let p = &self.path;
        let (cycles, bin) = match job {
            Job::User => (u64::MAX / 4, Bin::User),
            Job::Entry { ack, .. } => (p.entry_cycles + ack, Bin::Interrupt),
            Job::Read { stall, .. } => (stall, Bin::Interrupt),
            Job::Claim { input, h, .. } => {
                let s = &self.sources[self.chains[input as usize][h]];
                let clear = if self.legacy { p.mmio_write_cycles } else { 0 };
                let exerciser = if s.exerciser { p.mmio_write_cycles + p.tasklet_schedule_cycles } else { 0 };
                (clear + exerciser + s.isr_cycles, Bin::Interrupt)
            }
            Job::Exit { cycles } => (cycles, Bin::Interrupt),
            Job::TaskletEntry { .. } => (p.softirq_entry_cycles, Bin::BottomHalf),
            Job::Tasklet => (p.mmio_write_cycles + p.tasklet_cycles, Bin::BottomHalf),
        };
        Work { job, cycles, bin }
    }

    /// `job` ended on `cpu`: what the same activity does next (`None` ends it).
    pub(super) fn after(&mut self, now: Time, cpu: usize, job: Job) -> Option<Job> {
        match job {
            Job::User => Some(Job::User),
            Job::Entry { input, rec, .. } => match rec {
                Some(rec) => Some(self.claim(now, cpu, input, 0, rec)),
                None => Some(self.next_handler(now, cpu, input, 0)),
            },
            Job::Read { input, h, .. } => match self.reads[cpu].take() {
                Some(rec) => Some(self.claim(now, cpu, input, h, rec)),
                None => Some(self.next_handler(now, cpu, input, h + 1)),
            },
            Job::Claim { input, h, .. } => {
                let next = if self.legacy { h + 1 } else { usize::MAX };
                Some(self.next_handler(now, cpu, input, next))
            }
            Job::Exit { .. } => None,
            Job::TaskletEntry { rec } => {
                // The tasklet runs: it may be scheduled again from now on.
                self.tasklet_scheduled = false;
                self.counters.tasklet_runs += 1;
                if self.sources[rec.src].data_visible > now {
                    self.counters.stale_reads += 1;
                }
                self.write_to_device(now, rec.src, Write::TaskletSignature(rec), "tasklet signature");
                Some(Job::Tasklet)
            }
            Job::Tasklet => None,
        }
    }

    /// Handler `h` of the chain (a status read on legacy lines), or the exit
    /// once every handler has run.
    fn next_handler(&mut self, now: Time, cpu: usize, input: u32, h: usize) -> Job {
        if h < self.chains[input as usize].len() {
            let src = self.chains[input as usize][h];
            let s = &self.sources[src];
            // The request queues behind earlier writes to the device; the
            // completion cannot pass the device's DMA data (it flushes it).
            let half = self.bus.mmio_read / 2;
            let at = (now + half).max(s.downstream_tail);
            let back = (at + self.bus.mmio_read - half).max(s.data_visible);
            self.queue.schedule(at, super::Event::ReadAtDevice { cpu, src });
            self.timeline.bus(now, back, "status read");
            return Job::Read { input, h, stall: back - now };
        }
        if !std::mem::take(&mut self.handled[cpu]) {
            self.counters.spurious += 1;
        }
        let (cycles, signal) = self.intc.finish(input);
        if let Some((delay, sig)) = signal {
            self.queue.schedule(now + delay, super::Event::Signal(sig));
            self.timeline.bus(now, now + delay, super::signal_label(sig));
        }
        Job::Exit { cycles: cycles + self.path.exit_cycles }
    }

    /// Handler `h` claims interrupt `rec`: clear (legacy), signature and
    /// tasklet (exerciser).
    fn claim(&mut self, now: Time, cpu: usize, input: u32, h: usize, rec: Rec) -> Job {
        let src = rec.src;
        self.handled[cpu] = true;
        let s = &mut self.sources[src];
        s.serviced += 1;
        if self.legacy {
            s.claimed = true;
            self.write_to_device(now, src, Write::Clear, "status clear");
        } else {
            self.counters.taken_unclaimed -= 1;
        }
        if self.sources[src].exerciser {
            let at = now + if self.legacy { self.path.mmio_write_cycles } else { 0 };
            if self.sources[src].data_visible > now && !self.legacy {
                self.counters.stale_reads += 1;
            }
            self.write_to_device(at, src, Write::IsrSignature(rec), "ISR signature");
            self.counters.exerciser_claims += 1;
            if self.tasklet_scheduled {
                self.counters.tasklet_merged += 1;
            } else {
                self.tasklet_scheduled = true;
                let work = self.work(Job::TaskletEntry { rec });
                self.threads[cpu].post(SOFT, work);
            }
        }
        Job::Claim { input, h, rec }
    }
}
