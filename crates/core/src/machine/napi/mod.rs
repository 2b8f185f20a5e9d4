//! The NAPI receive path on the machine: the interrupt schedules a poll, the
//! NET_RX softirq polls each scheduled instance with its weight within the
//! budget, and the instance completes or stays scheduled. The instances'
//! state and parameters are the kernel part's (`kernel/napi/`); busy
//! polling, RPS, kernel code's polls and napi_complete_done's timer are in
//! the files beside this one.

mod busy;
mod code;
mod complete;
mod fold;
mod rps;

use super::{Event, Machine};
use crate::cpu::{Bin, SOFT, Work};
use crate::engine::{Time, key_time};
use crate::kernel::Job as Any;
use crate::kernel::napi::{Job, Napi};
use crate::kernel::net::Site;

impl Machine {
    fn napi(&mut self) -> &mut Napi {
        self.net.napi.as_mut().expect("NAPI jobs run only with the NAPI path")
    }

    /// The top half of queue `q` on `cpu`: the instance goes on the poll
    /// list (its interrupt stays disabled) and NET_RX is raised.
    pub(crate) fn napi_schedule(&mut self, cpu: usize, q: usize) {
        // One queue without code (`Napi::plain`): instance 0's mask is
        // whether its interrupt is posted (`first_unmasked`), no call.
        let irq_enabled = !if self.napi().plain && q == 0 { self.net.irq_posted } else { self.napi_irq_off(q) };
        let n = self.napi();
        // Owned by the busy poller: its interrupt stays masked until it lets go.
        if n.scheduled.contains(q) || n.busy.as_ref().is_some_and(|b| b.owned == Some(q)) {
            return;
        }
        n.scheduled.insert(q);
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

    /// The job as CPU work: a step the softirq went on with costs what
    /// `napi_begin` set.
    pub(super) fn napi_work(&mut self, job: Job) -> Work<Any> {
        let cycles = match job {
            Job::Softirq => self.napi().softirq_cycles,
            Job::Poll { .. } | Job::Tx { .. } | Job::Rx { .. } | Job::Complete { .. } => self.napi().step,
            Job::BusySpin | Job::BusyRx => return self.busy_work(job),
        };
        Work { job: Any::Napi(job), cycles, bin: Bin::BottomHalf }
    }

    /// The cycles of a step, computed once, as it begins (a drawn cost draws).
    fn step_cycles(&mut self, job: Job) -> u64 {
        match job {
            Job::Poll { .. } => self.napi().poll_cycles,
            Job::Tx { .. } => self.net.costs.work(Any::PollTx).cycles,
            Job::Rx { q } => self.rx_cycles(q as usize),
            Job::Complete { .. } => self.napi().complete_cycles,
            Job::Softirq | Job::BusySpin | Job::BusyRx => 0,
        }
    }

    /// The softirq on `cpu` goes on with `job` at `now`: its cost set for
    /// `napi_work` (the steps after it whose ends come first folded into
    /// it), and the step as a job.
    #[inline(always)]
    fn napi_begin(&mut self, now: Time, cpu: usize, job: Job) -> Any {
        let cycles = self.step_cycles(job);
        // The fold's first test inline: most steps' ends come after an event.
        let (job, cycles) =
            if self.napi().folds && key_time(self.queue.peek_key()) > now + cycles { self.napi_fold(now, cpu, job, cycles) } else { (job, cycles) };
        self.napi().step = cycles;
        self.napi_step(job)
    }

    /// `job` ended on `cpu`: the softirq's next step (`None` ends the run).
    pub(super) fn napi_after(&mut self, now: Time, cpu: usize, job: Job) -> Option<Any> {
        let next = self.napi_end(now, cpu, job)?;
        Some(match next {
            Ok(step) => self.napi_begin(now, cpu, step),
            Err(other) => other,
        })
    }

    /// What follows `job`'s end at `now` on `cpu`: a step of the softirq,
    /// or another job (a critical section, a busy poll's); `None` ends the
    /// run.
    #[inline(always)]
    fn napi_end(&mut self, now: Time, cpu: usize, job: Job) -> Option<Result<Job, Any>> {
        self.check_masked();
        let next = match job {
            Job::BusyRx => {
                let q = self.napi().busy.as_ref().and_then(|b| b.owned).expect("a busy-poll frame is taken from an owned instance");
                self.rx_done(now, self.net.app_thread, q);
                if let Some(section) = self.busy_section(Site::Busy) {
                    return Some(Err(section));
                }
                return self.busy_after(now, job).map(|j| Err(Any::Napi(j)));
            }
            Job::BusySpin if self.code.is_some() => return self.code_busy_step(now).map(Err),
            Job::BusySpin => return self.busy_after(now, job).map(|j| Err(Any::Napi(j))),
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
                self.ack_cause(q as usize);
                self.poll_step(now, cpu, q)?
            }
            Job::Tx { q: 0 } => {
                if let Some(out) = self.net.nic.ack_tx(now) {
                    self.queue.schedule(out, Event::TxOut);
                }
                self.poll_step(now, cpu, 0)?
            }
            Job::Tx { q } => {
                self.port_tx_clean(usize::from(q));
                self.poll_step(now, cpu, q)?
            }
            Job::Rx { q } => {
                self.rx_done(now, cpu, q as usize);
                let n = self.napi();
                n.poll_frames[q as usize] += 1;
                n.cpus[cpu].run_frames += 1;
                if let Some(section) = self.poll_section(q, Site::Poll) {
                    return Some(Err(section));
                }
                self.poll_step(now, cpu, q)?
            }
            Job::Complete { q } => {
                self.napi_complete(cpu, q as usize);
                self.next_poll(now, cpu)?
            }
        };
        Some(Ok(next))
    }

    /// The step as a job: with kernel code a poll of its instance is the
    /// program's (`code.rs`), every other step the NAPI part's own.
    #[inline(always)]
    fn napi_step(&self, job: Job) -> Any {
        match job {
            Job::Poll { q } if self.code_queue(usize::from(q)) => Any::Code(crate::code::Activity::Poll { q }),
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
        // A forwarded frame has no socket layer.
        let socket = sec.protocol > 0 && self.net.costs.stack && (!ring || n.rps.is_none()) && !(ring && self.forward_of(usize::from(q)).is_some());
        socket.then(|| Any::section(Site::PollSocket, q, 0, 0))
    }

    /// After a frame's critical sections: the poll of `q` goes on.
    pub(crate) fn poll_resume(&mut self, now: Time, cpu: usize, q: u8) -> Option<Any> {
        let step = self.poll_step(now, cpu, q)?;
        Some(self.napi_begin(now, cpu, step))
    }

    /// Counts a step taken while a scheduled instance's interrupt is enabled.
    /// One queue without code (the e1000 rows, 4 steps a frame) is two
    /// flags' tests inline; the rest in `count_unmasked`, whose loops would
    /// cost this path register saves.
    #[inline(always)]
    fn check_masked(&mut self) {
        let n = self.net.napi.as_ref().expect("NAPI jobs run only with the NAPI path");
        let bad = if n.plain && n.scheduled.len() == 1 { self.first_unmasked(n) } else { self.count_unmasked() };
        self.napi().counters.irq_enabled_while_scheduled += bad as u64;
    }

    /// The scheduled instances whose interrupt is enabled.
    #[inline(never)]
    fn count_unmasked(&self) -> usize {
        let n = self.net.napi.as_ref().expect("NAPI jobs run only with the NAPI path");
        // Without code the first NIC's RSS queues' masks are a set of bits
        // beside the scheduled instances': a few words' `and`, no call per
        // queue (its one queue's, a flag). The instances past them (other
        // NICs', RPS backlogs) one by one.
        let (bad, rest) = match (&self.code, &self.net.rss) {
            (None, Some(r)) => (n.scheduled.count_outside(&r.irq_off), r.irq_off.len()),
            (None, None) => (self.first_unmasked(n), 1),
            _ => (0, 0),
        };
        if rest < n.scheduled.len() { bad + n.scheduled.count_from(rest, |q| !self.napi_irq_off(q)) } else { bad }
    }

    /// Whether instance 0, the first NIC's one queue, is scheduled with its
    /// interrupt enabled: its mask is whether its interrupt is posted.
    #[inline(always)]
    fn first_unmasked(&self, n: &Napi) -> usize {
        usize::from(n.scheduled.contains(0) && !self.net.irq_posted)
    }

    /// The poll's next step, or how it ends. The frames waiting are read
    /// once (nothing here takes one) and the instances borrowed once: each
    /// `napi()` is a test of the `Option`.
    fn poll_step(&mut self, now: Time, cpu: usize, q: u8) -> Option<Job> {
        let i = usize::from(q);
        if self.tx_done_pending(i) {
            return Some(Job::Tx { q });
        }
        let waiting = self.waiting(i);
        let n = self.napi();
        let (frames, limit) = (n.poll_frames[i], n.poll_limit(cpu));
        if frames < limit && waiting > 0 {
            return Some(Job::Rx { q });
        }
        n.poll_ended(cpu, frames);
        // Done below its limit; within the run's budget (2.4's e1000_poll)
        // also at it when nothing waits.
        if frames < limit || (n.poll_within_budget && waiting == 0) {
            return Some(Job::Complete { q });
        }
        // Still scheduled: to the end of the list.
        n.cpus[cpu].list.rotate_left(1);
        self.next_poll(now, cpu)
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
    /// Inline: asked three times a frame on the e1000 rows, and a call's
    /// register saves cost more than its few tests.
    #[inline(always)]
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
                let (_, bytes, from) = r.backlogs[q - base].front().copied().unwrap_or_default();
                if self.forward_of(usize::from(from)).is_some() {
                    return self.net.costs.forward_cycles();
                }
                return self.net.costs.stack_rx_cycles(bytes);
            }
            return self.net.costs.driver_rx_cycles();
        }
        if self.forward_of(q).is_some() {
            return self.net.costs.driver_rx_cycles() + self.net.costs.forward_cycles();
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
            match self.forward_of(usize::from(from)) {
                Some(to) => self.forward_out(now, arrival, bytes, to),
                None => {
                    self.deliver(arrival, now, bytes);
                    self.busy_wake(usize::from(from));
                }
            }
            return;
        }
        let (frame, in_memory) = self.ring(q).take_rx(now).expect("an Rx poll step always has a frame");
        let port = self.net.ports.holds(q);
        if port {
            self.port_took(q, frame.bytes);
        } else if let Some(r) = &mut self.net.rss {
            let t = &mut r.taken[q];
            (t.0, t.1) = (t.0 + 1, t.1 + u64::from(frame.bytes));
        }
        if self.napi().rps.is_some() {
            self.rps_enqueue(cpu, q, frame.arrival, frame.bytes);
        } else if let Some(to) = self.forward_of(q) {
            self.forward_out(now, frame.arrival, frame.bytes, to);
        } else {
            let at = if self.net.costs.stack { now } else { in_memory };
            self.deliver_in_memory(frame.arrival, at, frame.bytes);
            self.busy_wake(q);
        }
        if port {
            return;
        }
        if let Some((t, s)) = self.net.workload.rx_serviced(now) {
            self.queue.schedule(t, Event::Feedback(s));
        }
    }
}
