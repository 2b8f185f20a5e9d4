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

pub(crate) mod busy;
mod config;
mod rps;

pub use config::NapiConfig;

use crate::cpu::{CpuConfig, Label};
use crate::device::rss::{Queues, RssConfig};
use crate::engine::Time;
use crate::kernel::StackConfig;

/// A timer event's tag: the queue in the top 8 bits, the generation below.
pub(crate) const TIMER_GENERATION_BITS: u32 = 24;

/// A step of a CPU's NET_RX softirq; `q` is the receive queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// net_rx_action's entry: do_softirq up to the first poll.
    Softirq,
    /// One call of the driver's poll, besides its frames.
    Poll { q: u8 },
    /// Cleaning one transmit completion of queue `q`'s NIC.
    Tx { q: u8 },
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
            Job::Tx { .. } => "NAPI poll (Tx clean)",
            Job::Rx { .. } => "NAPI poll (Rx frame)",
            Job::Complete { .. } => "napi_complete_done",
            Job::BusySpin => "busy poll (spin)",
            Job::BusyRx => "busy poll (Rx frame)",
        }
    }

    fn args(&self) -> crate::timeline::Args {
        match *self {
            Job::Poll { q } | Job::Tx { q } | Job::Rx { q } | Job::Complete { q } => [Some(("queue", u64::from(q))), None],
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
    /// Interrupts raised on enable by a cause that came after the poll's acknowledgement, no frame waiting (`late_ack`).
    pub late_acks: u64,
    /// Steps taken with a queue's interrupt enabled while its instance is scheduled.
    pub irq_enabled_while_scheduled: u64,
    /// Completions that left the interrupt masked and armed the timer.
    pub deferred: u64,
}

/// A CPU's NET_RX softirq.
#[derive(Debug, Default, Clone)]
pub(crate) struct Softirq {
    /// Raised and not yet started.
    pub(crate) raised: bool,
    /// Frames this run may still take, and when its time is up.
    pub(crate) left: u64,
    pub(crate) deadline: Time,
    pub(crate) run_frames: u64,
    /// Scheduled instances (queues), in polling order.
    pub(crate) list: std::collections::VecDeque<u8>,
}

/// The NIC's NAPI instances and the CPUs' softirqs that poll them.
#[derive(Debug)]
pub struct Napi {
    pub weight: u64,
    pub budget: u64,
    pub budget_cycles: u64,
    pub rotting: bool,
    /// The receive cause is acknowledged at each poll's start only (`late_ack`).
    pub(crate) late_ack: bool,
    /// A poll takes at most what is left of the run's budget (`poll_within_budget`).
    pub(crate) poll_within_budget: bool,
    /// With `late_ack`: frames waiting in each instance's ring when its poll read the cause.
    pub(crate) waiting_at_ack: Vec<u64>,
    pub(crate) poll_cycles: u64,
    pub(crate) complete_cycles: u64,
    pub(crate) softirq_cycles: u64,
    /// The instances on a poll list (NAPI_STATE_SCHED).
    pub(crate) scheduled: Queues,
    /// Frames each instance's current poll took.
    pub(crate) poll_frames: Vec<u64>,
    /// The CPU each instance was last scheduled on.
    pub(crate) home: Vec<usize>,
    /// Deferrals each instance has left, their timeout, and the generation
    /// of each instance's armed timer.
    pub(crate) defer_left: Vec<u32>,
    pub(crate) timer_generation: Vec<u32>,
    pub(crate) defer_hard_irqs: u32,
    pub(crate) flush_timeout: u64,
    pub(crate) threaded: bool,
    /// With code: the running poll of each instance called napi_complete_done.
    pub(crate) completed: Vec<bool>,
    pub(crate) cpus: Vec<Softirq>,
    /// The cycles of the step the softirq just went on with (`Poll`, `Tx`,
    /// `Rx`, `Complete`), with those of the steps folded into it: set as
    /// the step begins (`Machine::napi_begin`), read by its `napi_work`.
    pub(crate) step: u64,
    /// The softirq's steps whose ends come first run as one job
    /// (`Machine::napi_fold`): the machine's interrupt steps fold, and no
    /// busy poller or RPS backlog can dispatch a thread from a step's end.
    pub(crate) folds: bool,
    /// No code and no RSS: with one instance scheduled, it is the first
    /// NIC's one queue (`Machine::check_masked`).
    pub(crate) plain: bool,
    /// The busy-polling receiver (`busy_poll_usecs` > 0).
    pub busy: Option<busy::Busy>,
    /// Instances of the NIC's queues; past them, each CPU's RPS backlog.
    pub(crate) device_queues: usize,
    pub rps: Option<rps::Rps>,
    pub counters: Counters,
}

impl Napi {
    /// The instances of a NIC whose receive queues are `rss`'s, on `cpu`'s
    /// threads; a softirq's entry costs `softirq_entry_cycles`.
    /// `port_queues`: the receive queues of the NICs beside the first, after its own.
    pub fn new(c: &NapiConfig, rss: &RssConfig, port_queues: usize, cpu: &CpuConfig, stack: &StackConfig, softirq_entry_cycles: u64) -> Self {
        let cycles_per_us = cpu.clock_mhz;
        let device_queues = rss.vectors() as usize + port_queues;
        let rps = rss.rps().then(|| rps::Rps::new(rss.rps_cpus, cpu.threads, stack.backlog_packets));
        let queues = device_queues + rps.as_ref().map_or(0, |_| cpu.threads);
        Self {
            weight: u64::from(c.weight),
            budget: u64::from(c.budget),
            budget_cycles: (c.budget_usecs * cycles_per_us).round() as u64,
            rotting: c.rotting,
            late_ack: c.late_ack,
            poll_within_budget: c.poll_within_budget,
            waiting_at_ack: vec![0; queues],
            poll_cycles: c.poll_cycles,
            complete_cycles: c.complete_cycles,
            softirq_cycles: if c.threaded { c.thread_wakeup_cycles } else { softirq_entry_cycles },
            threaded: c.threaded,
            busy: busy::Busy::new(c, cycles_per_us, device_queues),
            device_queues,
            rps,
            scheduled: Queues::new(queues),
            poll_frames: vec![0; queues],
            home: vec![0; queues],
            defer_left: vec![0; queues],
            timer_generation: vec![0; queues],
            defer_hard_irqs: c.defer_hard_irqs,
            flush_timeout: (c.gro_flush_timeout_ns as f64 * cycles_per_us / 1e3).round() as u64,
            completed: vec![false; queues],
            cpus: vec![Softirq::default(); cpu.threads],
            step: 0,
            folds: false,
            plain: false,
            counters: Counters::default(),
        }
    }
}

impl Napi {
    /// Frames a poll on `cpu` may take: its weight, or within the run's
    /// budget no more than is left of it (`poll_within_budget`).
    pub(crate) fn poll_limit(&self, cpu: usize) -> u64 {
        if self.poll_within_budget { self.weight.min(self.cpus[cpu].left) } else { self.weight }
    }

    /// A poll on `cpu` took `frames`: the run's budget and the records.
    #[inline(always)]
    pub(crate) fn poll_ended(&mut self, cpu: usize, frames: u64) {
        let s = &mut self.cpus[cpu];
        let c = &mut self.counters;
        c.max_poll_frames = c.max_poll_frames.max(frames);
        c.max_run_frames = c.max_run_frames.max(s.run_frames);
        s.left = s.left.saturating_sub(frames);
    }

    pub fn is_scheduled(&self, q: usize) -> bool {
        self.scheduled.contains(q)
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
