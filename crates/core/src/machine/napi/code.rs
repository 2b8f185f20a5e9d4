//! NAPI with kernel code: this part decides when polls happen, the program
//! does the work (net/core/dev.c of Linux 5.x: `napi_schedule`,
//! `net_rx_action`, `napi_poll`, `napi_complete_done`, `napi_busy_loop`,
//! `busy_poll_stop`; docs/models/cores.md, "NAPI with code").
//!
//! 1. A receive queue's interrupt (NIC 0's, or another NIC's past them)
//!    runs the program's top half (`code.napi_isr`): it
//!    masks its receive cause (IMC) and writes NAPI_SCHEDULE, which puts
//!    the instance on its CPU's poll list and raises NET_RX (or wakes the
//!    NAPI thread), as the abstract top half does.
//! 2. NET_RX's run (its budget, time limit and squeezes are this part's)
//!    calls the program's `napi_poll(queue, weight)` instead of the abstract
//!    poll; the poll returns the frames it took.
//! 3. A poll that took fewer than `weight` frames must have called
//!    napi_complete_done (NAPI_COMPLETE with its frames): this part takes
//!    the instance off the list, decides whether to defer
//!    (`defer_hard_irqs`, `gro_flush_timeout_ns`) and answers; the program
//!    reads the answer and writes IMS only if it is 1. A poll that used the
//!    whole weight stays on the list and must not have completed.
//! 4. Busy polling (`busy_poll_usecs`): a recv that finds the socket empty
//!    does not block at once. The loop takes the instance when NET_RX does
//!    not own it and calls the same `napi_poll` with `busy_poll_budget`
//!    from process context (napi_complete_done answers 0 there: the
//!    instance is the loop's); while NET_RX owns it the loop spins
//!    (`napi.poll_cycles` a turn). It ends when the program wakes the socket
//!    or the window is over; then `busy_poll_stop` polls once more as the
//!    instance's owner no longer (that poll's napi_complete_done decides
//!    about the interrupt as NET_RX's would; with `prefer_busy_poll` the
//!    deferral count is reset first and the timer armed, so it stays
//!    masked), and recv runs again or sleeps.
//!
//! A driver that breaks NAPI's contract (a poll above its budget,
//! napi_complete_done after using the whole weight or twice, a poll below
//! its budget that never completes, so the instance would never be polled
//! again) ends the run with an error naming the program.

use crate::code::Activity;
use crate::engine::Time;
use crate::kernel::Job as Any;
use crate::kernel::napi::Job;
use crate::machine::Machine;

impl Machine {
    /// Whether instance `q`'s interrupt is disabled: for code's instances,
    /// the receive cause the program's NIC register masks (its NIC's: NIC
    /// 0's queue or another NIC's).
    pub(super) fn napi_irq_off(&self, q: usize) -> bool {
        match &self.code {
            Some(c) if self.code_queue(q) && q < self.net.napi.as_ref().map_or(0, |n| n.device_queues) => {
                let (k, cause) = c.sys.devices.rx_nic(q);
                c.sys.devices.nics[k].ims & cause == 0
            }
            Some(_) if self.code_queue(q) => true,
            _ => self.queue_irq_off(q),
        }
    }

    /// A model error of the program's NAPI driver, reported at the next look.
    fn napi_fault(&mut self, msg: String) {
        let code = self.code.as_mut().expect("code part selected");
        code.fault = Some(format!("{}: {msg}", code.sys.program.name));
    }

    /// Code on `cpu` wrote NAPI_SCHEDULE for instance `queue`: a receive
    /// queue's (its top half), scheduled on this CPU, or with RPS a CPU's
    /// backlog (`queues + cpu`), scheduled on that CPU (an IPI when it is
    /// another, whose cost is not modelled, as in `rps.rs`).
    pub(crate) fn code_napi_schedule(&mut self, cpu: usize, queue: u32) {
        let n = self.napi();
        let (queues, backlogs) = (n.device_queues, n.rps.as_ref().map_or(0, |r| r.backlogs.len()));
        let target = match (queue as usize).checked_sub(queues) {
            None => cpu,
            Some(c) if c < backlogs => c,
            Some(_) => {
                let rps = if backlogs > 0 { format!(" and {backlogs} RPS backlogs after them") } else { String::new() };
                return self.napi_fault(format!("napi_schedule of instance {queue}: the NIC has {queues} receive queue(s){rps}"));
            }
        };
        self.napi_schedule(target, queue as usize);
        self.dispatch(target);
    }

    /// Code on `cpu` asked get_rps_cpu for frame `tag`: the CPU whose
    /// backlog its flow goes to (`rss.rps_cpus` scaled from the flow's
    /// hash, as `rps.rs`), or `u32::MAX` without RPS.
    pub(crate) fn code_rps_cpu(&mut self, cpu: usize, tag: u32) -> u32 {
        let frame = self.code.as_ref().and_then(|c| c.sys.devices.frames.get(&tag)).map(|f| (usize::from(f.queue), f.flow));
        // Its flow is its NIC's: the first NIC's, or another NIC's own.
        let rss = |q: usize| match self.net.ports.holds(q) {
            true => Some(&self.net.ports.list[self.net.ports.at(q).0].rx),
            false => self.net.rss.as_ref(),
        };
        let Some(hash) = frame.and_then(|(q, flow)| Some(rss(q)?.flow_hash(flow))) else {
            self.napi_fault(format!("get_rps_cpu of frame tag {tag}, which is not in flight (never received, or already counted)"));
            return u32::MAX;
        };
        let Some(rps) = self.napi().rps.as_mut() else { return u32::MAX };
        let target = rps.cpu(hash);
        rps.remote += u64::from(target != cpu);
        target as u32
    }

    /// The poll on `cpu` wrote NAPI_COMPLETE with `work` frames: the answer
    /// the program reads (1: enable the interrupt again).
    pub(crate) fn code_napi_complete(&mut self, cpu: usize, work: u32) -> u32 {
        let running = self.threads[cpu].running_work().map(|(_, j, _, _)| j);
        let (q, busy) = match running {
            Some(Any::Code(Activity::Poll { q })) => (usize::from(q), false),
            Some(Any::Code(Activity::BusyPoll { q })) => (usize::from(q), true),
            _ => {
                self.napi_fault(format!("napi_complete_done on thread {cpu} outside a poll (NAPI_COMPLETE from another entry)"));
                return 0;
            }
        };
        let n = self.napi();
        let (owned, budget) = match &n.busy {
            Some(b) if busy => (b.owned == Some(q), b.budget),
            _ => (false, n.weight),
        };
        if owned {
            // NAPI_STATE_IN_BUSY_POLL: the loop keeps the instance.
            return 0;
        }
        if !busy && std::mem::replace(&mut n.completed[q], true) {
            self.napi_fault(format!("napi_complete_done twice in one poll of queue {q}"));
            return 0;
        }
        if u64::from(work) >= budget {
            self.napi_fault(format!(
                "napi_complete_done after {work} frames, the poll's whole budget of {budget}: a poll that uses its budget leaves the instance to NAPI"
            ));
            return 0;
        }
        n.poll_frames[q] = u64::from(work);
        u32::from(self.complete_done(cpu, q))
    }

    /// The program's poll of `q` on `cpu` returned `work` frames: NET_RX's
    /// run goes on (the next instance, a squeeze) or ends.
    pub(crate) fn code_poll_done(&mut self, now: Time, cpu: usize, q: u8, work: u32) -> Option<Any> {
        let (frames, weight) = (u64::from(work), self.napi().weight);
        let n = self.napi();
        n.counters.polls += 1;
        n.cpus[cpu].run_frames += frames;
        // Completed, it may be scheduled again already (an interrupt after the enable).
        let completed = std::mem::take(&mut n.completed[usize::from(q)]);
        if frames > weight {
            self.napi_fault(format!("napi_poll of queue {q} returned {work}, above its budget of {weight}"));
            return None;
        }
        if frames < weight && !completed {
            self.napi_fault(format!(
                "napi_poll of queue {q} returned {work}, below its budget of {weight}, without napi_complete_done: the instance would stay scheduled and never be polled again"
            ));
            return None;
        }
        self.napi().poll_ended(cpu, frames);
        if !completed {
            self.napi().cpus[cpu].list.rotate_left(1);
        }
        let step = self.next_poll(now, cpu)?;
        Some(self.napi_begin(now, cpu, step))
    }

    /// A frame from receive queue `q` reached the application: its socket
    /// busy-polls that queue's instance next (`sk_napi_id`).
    pub(crate) fn code_busy_mark(&mut self, q: usize) {
        if let Some(b) = self.net.napi.as_mut().and_then(|n| n.busy.as_mut()) {
            b.napi_id = q;
        }
    }

    /// The receive call on the application's thread found its socket
    /// empty: with busy polling it polls before it sleeps. Returns the
    /// first step, or `None` when recv blocks at once (no busy polling).
    pub(crate) fn code_busy_start(&mut self, now: Time) -> Option<Any> {
        let b = self.net.napi.as_mut()?.busy.as_mut()?;
        b.deadline = now + b.window;
        self.code_busy_step(now)
    }

    /// The busy loop's next step: poll the instance if NET_RX does not own
    /// it, spin if it does, or stop (the socket has data, or the window is
    /// over) with busy_poll_stop's last poll.
    pub(super) fn code_busy_step(&mut self, now: Time) -> Option<Any> {
        let code = self.code.as_mut().expect("code part selected");
        let socket = code.syscall_args[0];
        let data = code.wake_pending == Some(socket);
        let n = self.napi();
        let b = n.busy.as_mut().expect("busy polling");
        let q = b.napi_id;
        if data || now >= b.deadline {
            b.stopping = Some(data);
            if let Some(q) = b.owned.take() {
                return Some(self.code_busy_stop(now, q));
            }
            return self.code_busy_end();
        }
        if n.scheduled.contains(q) {
            return Some(Any::Napi(Job::BusySpin));
        }
        b.owned = Some(q);
        Some(Any::Code(Activity::BusyPoll { q: q as u8 }))
    }

    /// busy_poll_stop: the loop lets instance `q` go and polls it once more
    /// as NET_RX would; preferring busy polling, the deferrals are reset
    /// and the timer armed first, so the interrupt stays masked.
    fn code_busy_stop(&mut self, now: Time, q: usize) -> Any {
        if self.napi().busy.as_ref().is_some_and(|b| b.prefer) {
            let n = self.napi();
            n.defer_left[q] = n.defer_hard_irqs;
            self.arm_napi_timer(now, q);
        }
        Any::Code(Activity::BusyPoll { q: q as u8 })
    }

    /// The busy loop is over: recv runs again (the socket has data) or the
    /// application sleeps until the program wakes it.
    fn code_busy_end(&mut self) -> Option<Any> {
        let b = self.napi().busy.as_mut().expect("busy polling");
        let data = b.stopping.take().expect("the loop is stopping");
        b.sleeps += u64::from(!data);
        let code = self.code.as_mut().expect("code part selected");
        if data {
            code.wake_pending = None;
            code.restart_app();
        } else {
            let socket = code.syscall_args[0];
            if let Some(ctx) = code.take_app_context() {
                code.block_app(socket, ctx);
            }
        }
        None
    }

    /// A busy poll of `q` returned `work` frames.
    pub(crate) fn code_busy_poll_done(&mut self, now: Time, q: u8, work: u32) -> Option<Any> {
        let q = usize::from(q);
        let b = self.napi().busy.as_mut().expect("busy polling");
        (b.frames, b.by_queue[q]) = (b.frames + u64::from(work), b.by_queue[q] + u64::from(work));
        if u64::from(work) > b.budget {
            let budget = b.budget;
            self.napi_fault(format!("napi_poll of queue {q} returned {work}, above its busy-poll budget of {budget}"));
            return None;
        }
        if b.stopping.is_none() {
            return self.code_busy_step(now);
        }
        // busy_poll_stop's poll: a full one leaves the instance to NET_RX
        // (__busy_poll_stop schedules it, its interrupt still masked).
        if u64::from(work) == b.budget {
            let cpu = self.net.app_thread;
            self.napi_schedule(cpu, q);
        }
        self.code_busy_end()
    }
}
