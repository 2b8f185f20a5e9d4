//! NAPI: the NIC's interrupt only schedules a poll, and the NET_RX softirq
//! polls the receive ring with the interrupt off (Linux's
//! Documentation/networking/napi.rst; docs/models/napi-coalescing.md).
//!
//! 1. The NIC interrupts; the top half (`kernel/linux.rs`, through any
//!    controller) leaves the NIC's interrupt disabled and calls
//!    `napi_schedule`: the instance goes on this CPU's poll list and NET_RX
//!    is raised.
//! 2. `Softirq`: net_rx_action starts with `budget` frames and
//!    `budget_usecs` of time.
//! 3. `Poll`: one call of the driver's poll. It cleans the transmit ring
//!    (`Tx`), then takes at most `weight` frames (`Rx`: the driver's receive
//!    work and, with the stack, the protocol's, run to completion).
//! 4. A poll that took fewer than `weight` frames found the ring empty:
//!    `Complete` (napi_complete_done) takes the instance off the list and
//!    enables the interrupt again. A NIC with frames waiting interrupts at
//!    once, unless it is a "rotting" one: then they wait for the next arrival.
//! 5. A poll that used its whole weight stays on the list: the run polls it
//!    again, or, once its budget or time is spent, counts a time squeeze and
//!    raises NET_RX again, ending this run.
//!
//! The interrupt is never enabled while the instance is scheduled: every
//! step checks it (`napi_irq_enabled_while_scheduled` must stay 0).

mod config;

pub use config::NapiConfig;

use super::Job as Any;
use crate::cpu::{Bin, Label, SOFT, Work};
use crate::engine::Time;
use crate::machine::{Event, Machine};

/// A step of the NET_RX softirq for the NIC's NAPI instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// net_rx_action's entry: do_softirq up to the first poll.
    Softirq,
    /// One call of the driver's poll, besides its frames.
    Poll,
    /// Cleaning one transmit completion.
    Tx,
    /// One received frame, to its delivery.
    Rx,
    /// napi_complete_done and the interrupt enable.
    Complete,
}

impl Label for Job {
    fn label(&self) -> &'static str {
        match self {
            Job::Softirq => "NET_RX softirq entry",
            Job::Poll => "NAPI poll",
            Job::Tx => "NAPI poll (Tx clean)",
            Job::Rx => "NAPI poll (Rx frame)",
            Job::Complete => "napi_complete_done",
        }
    }

    fn args(&self) -> crate::timeline::Args {
        [None, None]
    }
}

/// Counts of what NAPI did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counters {
    pub schedules: u64,
    pub softirq_runs: u64,
    pub polls: u64,
    /// Polls that emptied the ring (NAPI_HOWTO's "Done").
    pub completes: u64,
    /// Runs that ended with budget or time spent (`time_squeeze`).
    pub squeezes: u64,
    pub max_poll_frames: u64,
    pub max_run_frames: u64,
    /// Frames left waiting when the interrupt was enabled again, on a rotting NIC.
    pub rotted: u64,
    /// Steps taken with the NIC's interrupt enabled while scheduled.
    pub irq_enabled_while_scheduled: u64,
}

/// The NIC's NAPI instance and the softirq that polls it.
#[derive(Debug)]
pub struct Napi {
    pub weight: u64,
    pub budget: u64,
    pub budget_cycles: u64,
    pub rotting: bool,
    poll_cycles: u64,
    complete_cycles: u64,
    softirq_cycles: u64,
    /// On the poll list (NAPI_STATE_SCHED).
    pub scheduled: bool,
    /// NET_RX raised and not yet started.
    raised: bool,
    /// Frames this run may still take, and when its time is up.
    left: u64,
    deadline: Time,
    /// Frames the current poll and run took.
    poll_frames: u64,
    run_frames: u64,
    pub counters: Counters,
}

impl Napi {
    pub fn new(s: &crate::config::Scenario) -> Self {
        let c = &s.napi;
        Self {
            weight: u64::from(c.weight),
            budget: u64::from(c.budget),
            budget_cycles: (c.budget_usecs * s.cycles_per_us()).round() as u64,
            rotting: c.rotting,
            poll_cycles: c.poll_cycles,
            complete_cycles: c.complete_cycles,
            softirq_cycles: s.irq_path.softirq_entry_cycles,
            scheduled: false,
            raised: false,
            left: 0,
            deadline: 0,
            poll_frames: 0,
            run_frames: 0,
            counters: Counters::default(),
        }
    }
}

impl Machine {
    fn napi(&mut self) -> &mut Napi {
        self.net.napi.as_mut().expect("NAPI jobs run only with the NAPI path")
    }

    /// The top half on `cpu`: the instance goes on the poll list (its
    /// interrupt stays disabled) and NET_RX is raised.
    pub(crate) fn napi_schedule(&mut self, cpu: usize) {
        let irq_enabled = !self.net.irq_posted;
        let n = self.napi();
        if n.scheduled {
            return;
        }
        n.scheduled = true;
        n.counters.schedules += 1;
        n.counters.irq_enabled_while_scheduled += u64::from(irq_enabled);
        self.raise_net_rx(cpu);
    }

    fn raise_net_rx(&mut self, cpu: usize) {
        let n = self.napi();
        if !n.raised {
            n.raised = true;
            self.post(cpu, SOFT, Any::Napi(Job::Softirq));
        }
    }

    /// The job as CPU work.
    pub(super) fn napi_work(&mut self, job: Job) -> Work<Any> {
        let cycles = match job {
            Job::Softirq => self.napi().softirq_cycles,
            Job::Poll => self.napi().poll_cycles,
            Job::Tx => self.net.costs.work(super::NetJob::PollTx).cycles,
            Job::Rx => self.net.costs.napi_rx_cycles(self.net.nic.next_rx_bytes()),
            Job::Complete => self.napi().complete_cycles,
        };
        Work { job: Any::Napi(job), cycles, bin: Bin::BottomHalf }
    }

    /// `job` ended on `cpu`: the softirq's next step (`None` ends the run).
    pub(super) fn napi_after(&mut self, now: Time, cpu: usize, job: Job) -> Option<Any> {
        if self.net.napi.as_ref().is_some_and(|n| n.scheduled) && !self.net.irq_posted {
            self.napi().counters.irq_enabled_while_scheduled += 1;
        }
        let next = match job {
            Job::Softirq => {
                let n = self.napi();
                n.raised = false;
                n.counters.softirq_runs += 1;
                (n.left, n.deadline, n.run_frames) = (n.budget, now + n.budget_cycles, 0);
                if !n.scheduled {
                    return None;
                }
                Job::Poll
            }
            Job::Poll => {
                let n = self.napi();
                n.counters.polls += 1;
                n.poll_frames = 0;
                self.poll_step(now, cpu)?
            }
            Job::Tx => {
                if let Some(out) = self.net.nic.ack_tx(now) {
                    self.queue.schedule(out, Event::TxOut);
                }
                self.poll_step(now, cpu)?
            }
            Job::Rx => {
                self.rx_done(now);
                let n = self.napi();
                n.poll_frames += 1;
                n.run_frames += 1;
                self.poll_step(now, cpu)?
            }
            Job::Complete => {
                self.napi_complete();
                return None;
            }
        };
        Some(Any::Napi(next))
    }

    /// The poll's next step, or how it ends.
    fn poll_step(&mut self, now: Time, cpu: usize) -> Option<Job> {
        if self.net.nic.tx_done_pending {
            return Some(Job::Tx);
        }
        let (frames, weight) = (self.napi().poll_frames, self.napi().weight);
        if frames < weight && self.net.nic.rx_waiting() > 0 {
            return Some(Job::Rx);
        }
        let n = self.napi();
        let c = &mut n.counters;
        c.max_poll_frames = c.max_poll_frames.max(frames);
        c.max_run_frames = c.max_run_frames.max(n.run_frames);
        n.left = n.left.saturating_sub(frames);
        if frames < weight {
            return Some(Job::Complete);
        }
        if n.left == 0 || now >= n.deadline {
            c.squeezes += 1;
            self.raise_net_rx(cpu);
            return None;
        }
        Some(Job::Poll)
    }

    /// A frame's receive work is done: the driver took it off the ring and,
    /// with the stack, the protocol delivered it in the same poll (no
    /// backlog between them); without it, it is delivered once in memory.
    fn rx_done(&mut self, now: Time) {
        let (frame, in_memory) = self.net.nic.take_rx(now).expect("an Rx poll step always has a frame");
        let at = if self.net.costs.stack { now } else { in_memory };
        self.deliver(frame.arrival, at, frame.bytes);
        if let Some((t, s)) = self.net.workload.rx_serviced(now) {
            self.queue.schedule(t, Event::Feedback(s));
        }
    }

    /// napi_complete_done: off the poll list, the interrupt enabled again.
    fn napi_complete(&mut self) {
        let n = self.napi();
        n.scheduled = false;
        n.counters.completes += 1;
        self.net.irq_posted = false;
        let waiting = self.net.nic.rx_waiting() as u64;
        if waiting == 0 && !self.net.nic.tx_done_pending {
            return;
        }
        if self.napi().rotting {
            self.napi().counters.rotted += waiting;
            return;
        }
        if self.net.coalesce.is_some() && waiting > 0 {
            self.coalesce_count(waiting);
        } else {
            self.raise_nic_irq();
        }
    }
}
