//! NAPI: the NIC's interrupt only schedules a poll, and the NET_RX softirq
//! polls the receive ring with the interrupt off (Linux's
//! Documentation/networking/napi.rst; docs/models/napi-coalescing.md).
//! One instance per receive queue (one, or one per RSS queue, `device/rss.rs`).
//!
//! 1. A queue interrupts; the top half (`kernel/linux.rs`, through any
//!    controller) leaves the queue's interrupt disabled and calls
//!    `napi_schedule`: the instance goes on this CPU's poll list and NET_RX
//!    is raised.
//! 2. `Softirq`: net_rx_action starts with `budget` frames and
//!    `budget_usecs` of time, and polls the list's first instance.
//! 3. `Poll`: one call of the driver's poll. It cleans the transmit ring
//!    (`Tx`, queue 0), then takes at most `weight` frames (`Rx`: the driver's
//!    receive work and, with the stack, the protocol's, run to completion).
//! 4. A poll that took fewer than `weight` frames found the ring empty:
//!    `Complete` (napi_complete_done) takes the instance off the list and
//!    enables its interrupt again. A queue with frames waiting interrupts at
//!    once, unless the NIC is a "rotting" one: then they wait for the next
//!    arrival.
//! 5. A poll that used its whole weight stays on the list, at its end. The
//!    run polls the list's first instance while budget and time remain;
//!    once they are spent with instances left, it counts a time squeeze and
//!    raises NET_RX again, ending this run.
//!
//! With `defer_hard_irqs` and `gro_flush_timeout_ns` (napi.rst, "Software
//! IRQ coalescing"; napi_complete_done in net/core/dev.c; `complete.rs`), a completion
//! that took frames resets a count of deferrals; while it is above zero a
//! completion spends one, leaves the interrupt masked and arms a timer that
//! schedules the instance again, so a quiet queue is polled `defer_hard_irqs`
//! more times before its interrupt comes back.
//!
//! Threaded NAPI (`threaded`): the top half wakes the instance's kernel
//! thread instead of raising NET_RX (`Softirq` then costs the wakeup and
//! switch), and the thread polls until its list is empty, with no netdev
//! budget or time limit (it yields only to other work, `cond_resched`). The
//! thread runs at the software-interrupt level here: this CPU model has no
//! time sharing between it and user tasks.
//!
//! Busy polling (`busy_poll_usecs`): the receiving application polls the
//! instance from recv (`busy.rs`).
//!
//! With kernel code (`code.rs`) this part still decides when polls happen;
//! the top half, each poll's work and the interrupt enable are the program's.
//!
//! A queue's interrupt is never enabled while its instance is scheduled:
//! every step checks it (`napi_irq_enabled_while_scheduled` must stay 0).

mod busy;
mod code;
mod complete;
mod config;
mod rps;

pub use config::NapiConfig;

use super::Job as Any;
use super::net::Site;
use crate::cpu::{Bin, Label, SOFT, Work};
use crate::engine::Time;
use crate::machine::{Event, Machine};

/// A timer event's tag: the queue in the top 8 bits, the generation below.
const TIMER_GENERATION_BITS: u32 = 24;

/// A step of a CPU's NET_RX softirq; `q` is the receive queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// net_rx_action's entry: do_softirq up to the first poll.
    Softirq,
    /// One call of the driver's poll, besides its frames.
    Poll { q: u8 },
    /// Cleaning one transmit completion.
    Tx,
    /// One received frame, to its delivery.
    Rx { q: u8 },
    /// napi_complete_done and the interrupt enable.
    Complete { q: u8 },
    /// The busy-polling receiver's attempt that found nothing (`busy.rs`).
    BusySpin,
    /// One frame taken by the busy-polling receiver.
    BusyRx,
}

impl Label for Job {
    fn label(&self) -> &'static str {
        match self {
            Job::Softirq => "NET_RX softirq entry (or NAPI thread wakeup)",
            Job::Poll { .. } => "NAPI poll",
            Job::Tx => "NAPI poll (Tx clean)",
            Job::Rx { .. } => "NAPI poll (Rx frame)",
            Job::Complete { .. } => "napi_complete_done",
            Job::BusySpin => "busy poll (spin)",
            Job::BusyRx => "busy poll (Rx frame)",
        }
    }

    fn args(&self) -> crate::timeline::Args {
        match *self {
            Job::Poll { q } | Job::Rx { q } | Job::Complete { q } => [Some(("queue", u64::from(q))), None],
            _ => [None, None],
        }
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
    /// Steps taken with a queue's interrupt enabled while its instance is scheduled.
    pub irq_enabled_while_scheduled: u64,
    /// Completions that left the interrupt masked and armed the timer.
    pub deferred: u64,
}

/// A CPU's NET_RX softirq.
#[derive(Debug, Default, Clone)]
struct Softirq {
    /// Raised and not yet started.
    raised: bool,
    /// Frames this run may still take, and when its time is up.
    left: u64,
    deadline: Time,
    run_frames: u64,
    /// Scheduled instances (queues), in polling order.
    list: std::collections::VecDeque<u8>,
}

/// The NIC's NAPI instances and the CPUs' softirqs that poll them.
#[derive(Debug)]
pub struct Napi {
    pub weight: u64,
    pub budget: u64,
    pub budget_cycles: u64,
    pub rotting: bool,
    poll_cycles: u64,
    complete_cycles: u64,
    softirq_cycles: u64,
    /// Each instance is on a poll list (NAPI_STATE_SCHED).
    scheduled: Vec<bool>,
    /// Frames each instance's current poll took.
    poll_frames: Vec<u64>,
    /// The CPU each instance was last scheduled on.
    home: Vec<usize>,
    /// Deferrals each instance has left, their timeout, and the generation
    /// of each instance's armed timer.
    pub(super) defer_left: Vec<u32>,
    timer_generation: Vec<u32>,
    pub(super) defer_hard_irqs: u32,
    flush_timeout: u64,
    threaded: bool,
    /// With code: the running poll of each instance called napi_complete_done.
    completed: Vec<bool>,
    cpus: Vec<Softirq>,
    /// The busy-polling receiver (`busy_poll_usecs` > 0).
    pub busy: Option<busy::Busy>,
    /// Instances of the NIC's queues; past them, each CPU's RPS backlog.
    device_queues: usize,
    pub rps: Option<rps::Rps>,
    pub counters: Counters,
}

impl Napi {
    pub fn new(s: &crate::config::Scenario) -> Self {
        let c = &s.napi;
        let device_queues = s.rss.vectors() as usize;
        let rps = s.rss.rps().then(|| rps::Rps::new(s.rss.rps_cpus, s.cpu.threads, s.stack.backlog_packets));
        let queues = device_queues + rps.as_ref().map_or(0, |_| s.cpu.threads);
        Self {
            weight: u64::from(c.weight),
            budget: u64::from(c.budget),
            budget_cycles: (c.budget_usecs * s.cycles_per_us()).round() as u64,
            rotting: c.rotting,
            poll_cycles: c.poll_cycles,
            complete_cycles: c.complete_cycles,
            softirq_cycles: if c.threaded { c.thread_wakeup_cycles } else { s.irq_path.softirq_entry_cycles },
            threaded: c.threaded,
            busy: busy::Busy::new(c, s.cycles_per_us(), device_queues),
            device_queues,
            rps,
            scheduled: vec![false; queues],
            poll_frames: vec![0; queues],
            home: vec![0; queues],
            defer_left: vec![0; queues],
            timer_generation: vec![0; queues],
            defer_hard_irqs: c.defer_hard_irqs,
            flush_timeout: (c.gro_flush_timeout_ns as f64 * s.cycles_per_us() / 1e3).round() as u64,
            completed: vec![false; queues],
            cpus: vec![Softirq::default(); s.cpu.threads],
            counters: Counters::default(),
        }
    }
}

impl Napi {
    pub fn is_scheduled(&self, q: usize) -> bool {
        self.scheduled[q]
    }

    /// Instances of the NIC's receive queues (RPS backlogs come after).
    pub fn device_queues(&self) -> usize {
        self.device_queues
    }

    /// Frames waiting in RPS backlogs.
    pub fn backlogged(&self) -> u64 {
        self.rps.as_ref().map_or(0, rps::Rps::waiting)
    }
}

impl Machine {
    fn napi(&mut self) -> &mut Napi {
        self.net.napi.as_mut().expect("NAPI jobs run only with the NAPI path")
    }

    /// The top half of queue `q` on `cpu`: the instance goes on the poll
    /// list (its interrupt stays disabled) and NET_RX is raised.
    pub(crate) fn napi_schedule(&mut self, cpu: usize, q: usize) {
        let irq_enabled = !self.napi_irq_off(q);
        let n = self.napi();
        // Owned by the busy poller: its interrupt stays masked until it lets go.
        if n.scheduled[q] || n.busy.as_ref().is_some_and(|b| b.owned == Some(q)) {
            return;
        }
        n.scheduled[q] = true;
        n.home[q] = cpu;
        n.counters.schedules += 1;
        n.counters.irq_enabled_while_scheduled += u64::from(irq_enabled);
        n.cpus[cpu].list.push_back(q as u8);
        self.raise_net_rx(cpu);
    }

    fn raise_net_rx(&mut self, cpu: usize) {
        let s = &mut self.napi().cpus[cpu];
        if !s.raised {
            s.raised = true;
            self.post(cpu, SOFT, Any::Napi(Job::Softirq));
        }
    }

    /// The job as CPU work.
    pub(super) fn napi_work(&mut self, job: Job) -> Work<Any> {
        let cycles = match job {
            Job::Softirq => self.napi().softirq_cycles,
            Job::Poll { .. } => self.napi().poll_cycles,
            Job::Tx => self.net.costs.work(Any::PollTx).cycles,
            Job::Rx { q } => self.rx_cycles(q as usize),
            Job::Complete { .. } => self.napi().complete_cycles,
            Job::BusySpin | Job::BusyRx => return self.busy_work(job),
        };
        Work { job: Any::Napi(job), cycles, bin: Bin::BottomHalf }
    }

    /// `job` ended on `cpu`: the softirq's next step (`None` ends the run).
    pub(super) fn napi_after(&mut self, now: Time, cpu: usize, job: Job) -> Option<Any> {
        self.check_masked();
        let next = match job {
            Job::BusyRx => {
                let q = self.napi().busy.as_ref().and_then(|b| b.owned).expect("a busy-poll frame is taken from an owned instance");
                self.rx_done(now, self.net.app_thread, q);
                if let Some(section) = self.busy_section(Site::Busy) {
                    return Some(section);
                }
                self.busy_after(now, job)?
            }
            Job::BusySpin if self.code.is_some() => return self.code_busy_step(now),
            Job::BusySpin => self.busy_after(now, job)?,
            Job::Softirq => {
                let n = self.napi();
                n.counters.softirq_runs += 1;
                let (budget, deadline) = (n.budget, now + n.budget_cycles);
                let s = &mut n.cpus[cpu];
                s.raised = false;
                (s.left, s.deadline, s.run_frames) = (budget, deadline, 0);
                Job::Poll { q: *s.list.front()? }
            }
            Job::Poll { q } => {
                let n = self.napi();
                n.counters.polls += 1;
                n.poll_frames[q as usize] = 0;
                self.poll_step(now, cpu, q)?
            }
            Job::Tx => {
                if let Some(out) = self.net.nic.ack_tx(now) {
                    self.queue.schedule(out, Event::TxOut);
                }
                self.poll_step(now, cpu, 0)?
            }
            Job::Rx { q } => {
                self.rx_done(now, cpu, q as usize);
                let n = self.napi();
                n.poll_frames[q as usize] += 1;
                n.cpus[cpu].run_frames += 1;
                if let Some(section) = self.poll_section(q, Site::Poll) {
                    return Some(section);
                }
                self.poll_step(now, cpu, q)?
            }
            Job::Complete { q } => {
                self.napi_complete(cpu, q as usize);
                self.next_poll(now, cpu)?
            }
        };
        Some(self.napi_step(next))
    }

    /// The step as a job: with kernel code a poll is the program's
    /// (`code.rs`), every other step the NAPI part's own.
    #[inline(always)]
    fn napi_step(&self, job: Job) -> Any {
        match job {
            Job::Poll { q } if self.code.is_some() => Any::Code(crate::code::Activity::Poll { q }),
            _ => Any::Napi(job),
        }
    }

    /// The critical section of a frame's receive work on instance `q` that
    /// comes next: from `Site::Poll` the driver's, then the socket layer's
    /// (`Site::PollSocket`); on an RPS backlog the socket layer's only.
    pub(crate) fn poll_section(&self, q: u8, from: Site) -> Option<Any> {
        let sec = &self.net.costs.sections;
        if sec.driver | sec.protocol == 0 {
            return None;
        }
        let n = self.net.napi.as_ref().expect("NAPI jobs run only with the NAPI path");
        let ring = usize::from(q) < n.device_queues;
        if from == Site::Poll && ring && sec.driver > 0 {
            return Some(Any::section(Site::Poll, q, 0, 0));
        }
        let socket = sec.protocol > 0 && self.net.costs.stack && (!ring || n.rps.is_none());
        socket.then(|| Any::section(Site::PollSocket, q, 0, 0))
    }

    /// After a frame's critical sections: the poll of `q` goes on.
    pub(crate) fn poll_resume(&mut self, now: Time, cpu: usize, q: u8) -> Option<Any> {
        self.poll_step(now, cpu, q).map(Any::Napi)
    }

    /// Counts a step taken while a scheduled instance's interrupt is enabled.
    fn check_masked(&mut self) {
        let n = self.net.napi.as_ref().expect("NAPI jobs run only with the NAPI path");
        let bad = (0..n.scheduled.len()).filter(|&q| n.scheduled[q] && !self.napi_irq_off(q)).count();
        self.napi().counters.irq_enabled_while_scheduled += bad as u64;
    }

    /// The poll's next step, or how it ends.
    fn poll_step(&mut self, now: Time, cpu: usize, q: u8) -> Option<Job> {
        if q == 0 && self.net.nic.tx_done_pending {
            return Some(Job::Tx);
        }
        let (frames, weight) = (self.napi().poll_frames[q as usize], self.napi().weight);
        if frames < weight && self.waiting(q as usize) > 0 {
            return Some(Job::Rx { q });
        }
        self.poll_ended(cpu, frames);
        if frames < weight {
            return Some(Job::Complete { q });
        }
        // Still scheduled: to the end of the list.
        self.napi().cpus[cpu].list.rotate_left(1);
        self.next_poll(now, cpu)
    }

    /// A poll on `cpu` took `frames`: the run's budget and the records.
    #[inline(always)]
    fn poll_ended(&mut self, cpu: usize, frames: u64) {
        let n = self.napi();
        let s = &mut n.cpus[cpu];
        let c = &mut n.counters;
        c.max_poll_frames = c.max_poll_frames.max(frames);
        c.max_run_frames = c.max_run_frames.max(s.run_frames);
        s.left = s.left.saturating_sub(frames);
    }

    /// The run polls the next instance on its list, or ends: with none
    /// left, or with budget or time spent (a time squeeze: NET_RX again).
    fn next_poll(&mut self, now: Time, cpu: usize) -> Option<Job> {
        let n = self.napi();
        let s = &mut n.cpus[cpu];
        let q = *s.list.front()?;
        if !n.threaded && (s.left == 0 || now >= s.deadline) {
            n.counters.squeezes += 1;
            self.raise_net_rx(cpu);
            return None;
        }
        Some(Job::Poll { q })
    }

    /// Frames waiting for instance `q`: in its ring, or its CPU's backlog.
    fn waiting(&mut self, q: usize) -> u64 {
        let n = self.napi();
        match &n.rps {
            Some(r) if q >= n.device_queues => r.backlogs[q - n.device_queues].len() as u64,
            _ => self.ring(q).rx_waiting() as u64,
        }
    }

    /// The cycles of instance `q`'s next frame: the driver's and the
    /// protocol's, or with RPS the driver's on the ring and the protocol's
    /// on the backlog.
    fn rx_cycles(&mut self, q: usize) -> u64 {
        let n = self.napi();
        let base = n.device_queues;
        if let Some(r) = &n.rps {
            if q >= base {
                let bytes = r.backlogs[q - base].front().map_or(0, |f| f.1);
                return self.net.costs.stack_rx_cycles(bytes);
            }
            return self.net.costs.driver_rx_cycles();
        }
        let bytes = self.ring(q).next_rx_bytes();
        self.net.costs.napi_rx_cycles(bytes)
    }

    /// A frame's receive work is done: the driver took it off the ring and,
    /// with the stack, the protocol delivered it in the same poll (no
    /// backlog between them); without it, it is delivered once in memory.
    /// With RPS the driver hands the frame to its flow's CPU instead, and an
    /// RPS backlog's step is the protocol's part, then the delivery.
    pub(super) fn rx_done(&mut self, now: Time, cpu: usize, q: usize) {
        let base = self.napi().device_queues;
        if q >= base {
            let rps = self.napi().rps.as_mut().expect("backlogs exist with RPS");
            let (arrival, bytes, from) = rps.backlogs[q - base].pop_front().expect("a backlog step always has a frame");
            self.deliver(arrival, now, bytes);
            self.busy_wake(usize::from(from));
            return;
        }
        let (frame, in_memory) = self.ring(q).take_rx(now).expect("an Rx poll step always has a frame");
        if let Some(r) = &mut self.net.rss {
            let t = &mut r.taken[q];
            (t.0, t.1) = (t.0 + 1, t.1 + u64::from(frame.bytes));
        }
        if self.napi().rps.is_some() {
            self.rps_enqueue(cpu, q, frame.arrival, frame.bytes);
        } else {
            let at = if self.net.costs.stack { now } else { in_memory };
            self.deliver_in_memory(frame.arrival, at, frame.bytes);
            self.busy_wake(q);
        }
        if let Some((t, s)) = self.net.workload.rx_serviced(now) {
            self.queue.schedule(t, Event::Feedback(s));
        }
    }

}
