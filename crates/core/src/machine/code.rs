//! The machine's side of kernel activities that are code (`crate::code`).
//!
//! Before each event the loop runs the simulated cores up to that event's
//! cycle, never past it, so code and the rest of the machine see one
//! another in time order. A run stops early when code needs the machine:
//! its activity returned, it made a system call, or a device-register
//! access asks for an interrupt, a bottom half, a wake-up or a transmission.
//! The machine then acts at that very cycle, like any event.
//!
//! Which activity holds a hardware thread follows the CPU model's dispatch:
//! when the running level changes, the old activity's registers are saved
//! at the instruction boundary and the new one's given, after the entry and
//! context costs the CPU model charges.
//!
//! The receive side (NIC 0's queues, the other NICs' rings, their
//! interrupts, coalescing) is in `code_rx.rs`.
//!
//! A kernel per core (`code.cpus`): code runs only on the CPUs it names;
//! the others run the abstract kernel's jobs and never start their
//! simulated cores. The first NIC, the application and the tick are
//! code's (checked at load); another NIC is the program's when its
//! interrupts go to a code CPU (`Code::drives_port`), else the abstract
//! driver's (`machine/nics.rs`), polled by the abstract NAPI steps.

use super::{Event, Machine, SLICE};
use crate::code::fold::Folds;
use crate::code::ports::{Action, CAUSE_TXDW, DD, DESC_BYTES, service};
use crate::code::{Activity, Code, EAGAIN, SYS_READ};
use crate::cpu::{IRQ, Level, SOFT, USER};
use crate::engine::{Key, Time, key_time};
use crate::error::Result;
use crate::kernel::Job;
use irqsim_mips::Stop;
use irqsim_mips::context::reg;

impl Machine {
    fn code(&mut self) -> &mut Code {
        self.code.as_mut().expect("code part selected")
    }

    pub(super) fn start_code(&mut self) {
        self.start_firmware_driver();
        // A finished frame may wait past a folded stop to be counted unless counting
        // it offers the next (a closed-loop flood's, `code_outcomes`).
        let late = self.net.workload.rx_serviced(0).is_none();
        if let Some(code) = &mut self.code {
            code.sys.devices.fold.late = late;
            // On thread 0, or the first that runs code.
            let first = (0..self.threads.len()).find(|&t| code.runs(t)).expect("a CPU runs code (checked at load)");
            self.post(first, SOFT, Job::Code(Activity::Init));
            if self.code().tick > 0 {
                let first = self.code().tick;
                self.queue.schedule(first, Event::CodeTick);
            }
        }
    }

    /// The timer tick: every hardware thread that runs code takes it at
    /// interrupt level (unless its last tick has not run yet), then the
    /// next is armed.
    pub(super) fn code_tick(&mut self, now: Time) {
        for t in 0..self.threads.len() {
            if self.code().runs(t) {
                self.code_post_tick(t);
            }
        }
        let next = now + self.code().tick;
        if next < self.end {
            self.queue.schedule(next, Event::CodeTick);
        }
    }

    /// Thread `t` takes the tick, unless its last one has not run yet or a
    /// critical section of its code is open (the tick then waits for it).
    fn code_post_tick(&mut self, t: usize) {
        if self.masking.holds(t) {
            self.code().tick_held[t] = true;
            return;
        }
        if !std::mem::replace(&mut self.code().tick_posted[t], true) {
            self.post(t, IRQ, Job::Code(Activity::Tick));
            self.dispatch(t);
        }
    }

    /// Whether NAPI instance `q` is the program's: the first NIC's queue,
    /// an RPS backlog, or another NIC's whose driver is code.
    #[inline(always)]
    pub(crate) fn code_queue(&self, q: usize) -> bool {
        self.code.as_ref().is_some_and(|c| !self.net.ports.holds(q) || c.drives_port[usize::from(self.net.ports.owner[q - self.net.ports.base].0)])
    }

    /// Runs the cores until `next` (the next event's key), a slice of at
    /// most [`SLICE`] cycles at a time. Returns whether the loop must look
    /// again: code stopped first and the machine acted, or the slice ended
    /// before the event. Out of line: runs without code never call it.
    #[inline(never)]
    pub(super) fn run_code(&mut self, next: Key) -> Result<bool> {
        let mut before = self.queue.now();
        let event = key_time(next).min(self.end);
        let code = self.code.as_mut().expect("code part selected");
        // Stops fold (`code/fold.rs`) before the watchdog's next due cycle; not beside
        // the programmable NIC, whose runs take their bound from each stop; nor with
        // perfect memory on several cores, whose turns may be a step of one cycle (after
        // a stop it goes on otherwise than a run that did not stop).
        let due = code.watchdog.next;
        let perfect = code.sys.caches.is_none();
        let folds = code.folds && self.net.firmware.is_none() && !(perfect && code.sys.cores.len() > 1) && before < due;
        let quiet = if folds { self.code_quiet() } else { 0 };
        let code = self.code.as_mut().expect("code part selected");
        let late = code.sys.devices.fold.late;
        code.sys.devices.fold = Folds { until: 0, since: before, held: 0, quiet, late };
        let (stop, horizon) = loop {
            let horizon = event.min(before.saturating_add(SLICE));
            // With perfect memory, the run after a stop one cycle before its limit is a
            // step (`System::run_core`), which may move the core past the limit: no fold there.
            let until = if perfect { due.min(horizon.saturating_sub(1)) } else { due };
            code.sys.devices.fold.until = if folds { until } else { 0 };
            let stop = code.sys.run(horizon);
            // The slice ran from the last folded stop, had it returned.
            let since = code.sys.devices.fold.since;
            if stop == Stop::Limit && horizon < event && since > before {
                before = since;
                continue;
            }
            break (stop, horizon);
        };
        self.code_folded();
        let (core, hw) = match stop {
            Stop::Limit if horizon < event => {
                // Time moves on by the slice, so the loop's monitor sees
                // progress (Ctrl-C, the event budget) in long stretches of code.
                self.queue.advance_to(horizon);
                self.sliced = true;
                self.code_outcomes();
                self.code_fault()?;
                self.code_lockup(horizon)?;
                return Ok(true);
            }
            Stop::Limit | Stop::Idle => {
                self.code_outcomes();
                self.code_lockup(horizon)?;
                return self.code_fault();
            }
            Stop::Device { core, thread } | Stop::Syscall { core, thread } | Stop::Returned { core, thread } | Stop::Fault { core, thread, .. } => {
                (core, thread)
            }
        };
        let code = self.code.as_mut().expect("code part selected");
        // The last stop, folded or not, is where this one's core may lag to.
        let c = code.sys.cores[core].now.max(code.sys.devices.fold.since).min(horizon);
        let t = code.thread_of(core, hw);
        self.queue.advance_to(c);
        self.code_outcomes();
        match stop {
            Stop::Device { .. } => {}
            Stop::Syscall { .. } => self.code_syscall(c, t)?,
            Stop::Returned { .. } => self.code_returned(c, t),
            Stop::Fault { error, .. } => return Err(crate::Error::Code { file: self.name().to_string(), msg: self.faulting(t, error.to_string()) }),
            Stop::Limit | Stop::Idle => unreachable!(),
        }
        self.code_actions(c)?;
        self.code_fault()?;
        self.code_lockup(c)?;
        Ok(true)
    }

    /// The actions of the stops the run folded, as each stop would have
    /// taken them (none reads the time, none can fail), each stop an event
    /// of the loop.
    fn code_folded(&mut self) {
        let held = std::mem::take(&mut self.code().sys.devices.fold.held);
        if held == 0 {
            return;
        }
        self.events += held as u64;
        for i in 0..held {
            match self.code().sys.devices.actions[i] {
                Action::IrqSave { thread } => self.code_irq_save(thread),
                Action::IrqRestore { thread } => self.code_irq_restore(self.queue.now(), thread),
                // Its NIC asserted nothing, so its raise would have found nothing:
                // until an unmask (which stops) it still asserts nothing.
                Action::Eoi { irq } => self.code().irq_posted[irq as usize] = false,
                _ => unreachable!("only a critical section's opening and closing and an idle NIC's EOI fold"),
            }
        }
        self.code().sys.devices.actions.drain(..held);
    }

    /// The threads (a bit each) on which a critical section's closing
    /// takes nothing and dispatches nothing (`code/fold.rs`): no NIC
    /// interrupt or tick held for the mask, no interrupt held or deferred
    /// by the masking part, none behind a controller, and the thread's
    /// dispatch settled.
    fn code_quiet(&self) -> u64 {
        let code = self.code.as_ref().expect("code part selected");
        if self.masking.wired || code.irq_held.iter().any(|&h| h) {
            return 0;
        }
        let mut quiet = 0;
        for t in 0..self.threads.len().min(64) {
            let m = &self.masking.cpus[t];
            if code.on_cpu(t).is_some()
                && !code.tick_held[t]
                && m.deferred.is_empty()
                && m.deferred_input.is_none()
                && m.held.iter().all(|h| h.is_empty())
                && self.threads[t].settled()
            {
                quiet |= 1 << t;
            }
        }
        quiet
    }

    /// A fault's message with what thread `t` was running: the timer tick
    /// calls the program's `isr` with a number no NIC has, which a program
    /// written without a tick (rx_min) takes for a NIC's.
    fn faulting(&mut self, t: usize, msg: String) -> String {
        match self.threads[t].running_work() {
            Some((_, Job::Code(Activity::Tick), _, _)) => {
                format!(
                    "{msg}, in the timer tick on CPU {t} (`isr({})`, code.ticks_per_s): the program's isr must take it, or set code.ticks_per_s = 0",
                    crate::code::TICK_IRQ as usize + t
                )
            }
            Some((_, Job::Code(a), _, _)) => format!("{msg}, in the {} on CPU {t}", a.label()),
            _ => msg,
        }
    }

    /// The lockup watchdog's look at cycle `now` (`code/watchdog.rs`): one
    /// comparison until an invocation may be stuck.
    fn code_lockup(&self, now: Time) -> Result<()> {
        let code = self.code.as_ref().expect("code part selected");
        if now < code.watchdog.next {
            return Ok(());
        }
        match code.lockup(now) {
            Some(msg) => Err(crate::Error::Code { file: self.name().to_string(), msg }),
            None => Ok(()),
        }
    }

    /// A model error code caused outside a register access (a frame sent
    /// with a tag not in flight) ends the run at the next look.
    fn code_fault(&mut self) -> Result<bool> {
        match self.code().fault.take() {
            Some(msg) => Err(crate::Error::Code { file: self.name().to_string(), msg }),
            None => Ok(false),
        }
    }

    /// Frames software finished with since the last look. A closed-loop
    /// receive flood offers its next frame as each one leaves software.
    /// Another NIC's frame counts as taken by its port's driver (its
    /// arrivals are open).
    pub(super) fn code_outcomes(&mut self) {
        if self.code().sys.devices.outcomes.is_empty() {
            return;
        }
        let mut outcomes = std::mem::take(&mut self.code().sys.devices.outcomes);
        let now = self.queue.now();
        for o in outcomes.drain(..) {
            let q = usize::from(o.frame.queue);
            if self.net.ports.holds(q) {
                self.port_took(q, o.frame.bytes);
            } else if let Some((t, s)) = self.net.workload.rx_serviced(now) {
                self.queue.schedule(t, Event::Feedback(s));
            }
            if let Some(r) = self.net.rss.as_mut().filter(|_| !self.net.ports.holds(q)) {
                // Off its queue's ring (the counts its DIM samples).
                let t = &mut r.taken[usize::from(o.frame.queue)];
                (t.0, t.1) = (t.0 + 1, t.1 + u64::from(o.frame.bytes));
            }
            if o.delivered {
                self.code_busy_mark(usize::from(o.frame.queue));
                self.deliver(o.frame.arrival, o.at, o.frame.bytes);
            } else {
                self.code().dropped_software += 1;
            }
        }
        self.code().sys.devices.outcomes = outcomes;
    }

    /// What register accesses asked for, in order.
    fn code_actions(&mut self, now: Time) -> Result<()> {
        let mut actions = std::mem::take(&mut self.code().sys.devices.actions);
        for a in actions.drain(..) {
            match a {
                Action::SoftIrq { thread } => {
                    if !std::mem::replace(&mut self.code().softirq_pending[thread], true) {
                        self.post(thread, SOFT, Job::Code(Activity::BottomHalf));
                        self.dispatch(thread);
                    }
                }
                Action::Wake { socket } => {
                    if self.code().app_blocked == Some(socket) {
                        self.code().app_blocked = None;
                        let app = self.code().app_thread;
                        self.post(app, USER, Job::Code(Activity::App));
                        self.dispatch(app);
                    } else {
                        // The reader may be between its last look at the queue and
                        // blocking (on another thread): the wake-up is kept for it.
                        self.code().wake_pending = Some(socket);
                    }
                }
                Action::Eoi { irq } => {
                    self.code().irq_posted[irq as usize] = false;
                    self.code_raise(now, irq as usize);
                }
                Action::Unmask { nic } => self.code_raise(now, nic),
                Action::Transmit { nic } => {
                    if !self.code().tx_busy[nic] {
                        self.code_transmit(now, nic);
                    }
                }
                Action::RxEnabled { queue } => self.dim_sample(queue),
                Action::IrqSave { thread } => self.code_irq_save(thread),
                Action::IrqRestore { thread } => self.code_irq_restore(now, thread),
                Action::NapiSchedule { thread, queue } => self.code_napi_schedule(thread, queue),
                Action::NapiComplete { thread, work } => {
                    let answer = self.code_napi_complete(thread, work);
                    self.code().sys.devices.answers[thread] = Some((service::NAPI_COMPLETE, answer));
                }
                Action::RpsCpu { thread, tag } => {
                    let cpu = self.code_rps_cpu(thread, tag);
                    self.code().sys.devices.answers[thread] = Some((service::RPS_CPU, cpu));
                }
                Action::Mailbox { send, value } => self.firmware_mailbox(now, send, value)?,
                Action::Frame { addr } => self.firmware_frame(now, addr)?,
            }
        }
        self.code().sys.devices.actions = actions;
        Ok(())
    }

    /// Code on `thread` opened a critical section (`local_irq_save`): its
    /// CPU's mask goes up (conventional) or its software mask does
    /// (optimistic, `masking.code_sections`), as the masking part's
    /// sections do (`masking/jobs.rs`). The stall is the service's.
    fn code_irq_save(&mut self, thread: usize) {
        let Some(level) = self.code().on_cpu(thread) else { return };
        self.masking.counters.masking_cycles += u64::from(self.code().sys.devices.mask_cycles[0]);
        self.section_enter(thread, level, 1);
    }

    /// Code on `thread` closed its innermost section: what the mask held
    /// is taken now (a deferred interrupt's continuation runs, then the
    /// hardware mask drops; its lower is charged to the continuation's
    /// entry), and the thread dispatches, so it preempts the code.
    fn code_irq_restore(&mut self, now: Time, thread: usize) {
        let Some(level) = self.code().on_cpu(thread) else { return };
        if self.masking.cpus[thread].open[level as usize].is_empty() {
            let code = self.code();
            code.fault = Some(format!("{}: local_irq_restore on thread {thread} with no section open (IRQ_RESTORE without IRQ_SAVE)", code.sys.program.name));
            return;
        }
        self.masking.counters.masking_cycles += u64::from(self.code().sys.devices.mask_cycles[1]);
        let last = self.masking.cpus[thread].open[level as usize].len() == 1;
        if last && self.masking.cpus[thread].deferred_input.is_some() {
            let lower = self.masking.costs.conventional_lower;
            self.masking.counters.masking_cycles += lower;
            self.delivery.step[thread] += lower;
        }
        if self.section_exit(thread, level) {
            self.section_restore(thread);
        }
        for nic in 0..self.code().irq_held.len() {
            if std::mem::take(&mut self.code().irq_held[nic]) {
                self.code_interrupt(now, nic);
            }
        }
        if std::mem::take(&mut self.code().tick_held[thread]) {
            self.code_post_tick(thread);
        }
        self.dispatch(thread);
    }

    /// NIC `nic` may interrupt: a receiving NIC (NIC 0, another NIC) on
    /// each of its receive queues (`code_rx.rs`), a forwarding NIC 1 at once.
    fn code_raise(&mut self, now: Time, nic: usize) {
        if nic == 0 || self.code().sys.devices.is_other(nic) {
            for q in self.code().sys.devices.rx_queues_of(nic) {
                self.code_rx_raise(now, q);
            }
            return;
        }
        self.code_interrupt(now, nic);
    }

    /// Posts NIC `nic`'s handler if the NIC asserts its interrupt and its
    /// handler is not already posted or running (until its EOI). Behind a
    /// controller, NIC 0 signals it (INTx or MSI) and the Linux path calls
    /// the handler from its chain; another NIC (`[[nics.others]]`) signals
    /// its port's input, whose chain calls `code.other_isr`; a forwarding
    /// NIC 1 is on the direct wire.
    pub(crate) fn code_interrupt(&mut self, now: Time, nic: usize) {
        let code = self.code.as_mut().expect("code part selected");
        if code.irq_posted[nic] || !code.sys.devices.nics[nic].asserted() {
            return;
        }
        if code.sys.devices.is_other(nic) {
            // Off the NAPI path another NIC has one queue.
            code.irq_posted[nic] = true;
            return self.code_port_interrupt(now, nic - 1, 0);
        }
        let (wired, irq_thread) = (nic == 0 && self.net.wired(), self.net.irq_thread);
        let masked = |t| self.masking.holds(t);
        let code = self.code.as_mut().expect("code part selected");
        let t = if nic == 1 { code.tx_irq_thread.unwrap_or(irq_thread) } else { irq_thread };
        if !wired && masked(t) {
            // Held until the section closes (`code_irq_restore`); behind a
            // controller, the controller keeps it (`Machine::accept`).
            if !std::mem::replace(&mut code.irq_held[nic], true) {
                self.masking.counters.held += 1;
            }
            return;
        }
        code.irq_posted[nic] = true;
        if nic == 0
            && let Some(c) = &mut self.net.coalesce
        {
            c.fired();
        }
        self.net.counters.interrupts += 1;
        self.timeline.mark(now, "NIC interrupt");
        if wired {
            self.signal_interrupt(now, 0, 0);
            return;
        }
        self.post(t, IRQ, Job::Code(Activity::Isr { irq: nic as u8 }));
        self.dispatch(t);
    }

    /// NIC `nic` sends the frame of its next queued descriptor, if any.
    fn code_transmit(&mut self, now: Time, nic: usize) {
        let code = self.code();
        let n = code.sys.devices.nics[nic];
        code.tx_busy[nic] = n.tdh != n.tdt;
        if n.tdh == n.tdt {
            return;
        }
        let desc = n.tdba + n.tdh * DESC_BYTES;
        let (tag, len) = (code.sys.mem.read_u32(desc + 4), code.sys.mem.read_u32(desc + 8) >> 16);
        // A forwarded frame (a received frame's tag) is offered as it
        // starts; the send entry's were offered when the workload sent them.
        code.tx_forwarding[nic] = tag != 0;
        self.net.counters.tx_offered += u64::from(tag != 0);
        let done = now + self.net.nic.wire_cycles(len);
        self.queue.schedule(done, Event::CodeSent { nic: nic as u8 });
    }

    /// NIC `nic` has put a frame on the wire: the descriptor is done, a
    /// forwarded frame is delivered, and the next one goes. Out of line:
    /// the event loop calls it only with code.
    #[inline(never)]
    pub(super) fn code_sent(&mut self, now: Time, nic: usize) {
        let code = self.code.as_mut().expect("code part selected");
        let n = code.sys.devices.nics[nic];
        let desc = n.tdba + n.tdh * DESC_BYTES;
        let (tag, len) = (code.sys.mem.read_u32(desc + 4), code.sys.mem.read_u32(desc + 8) >> 16);
        code.dma_write(desc + 12, &[DD]);
        let n = &mut code.sys.devices.nics[nic];
        n.tdh = (n.tdh + 1) % n.tdlen;
        n.icr |= CAUSE_TXDW;
        self.net.counters.tx_sent += 1;
        self.net.counters.tx_sent_bytes += u64::from(len);
        if tag == 0 {
            match code.sends_queued.checked_sub(1) {
                Some(n) => code.sends_queued = n,
                None => code.fault = Some(format!("NIC {nic} sent a frame no send put on its ring")),
            }
        } else {
            match code.sys.devices.frames.remove(&tag) {
                Some(f) => {
                    code.forwarded += 1;
                    self.deliver(f.arrival, now, f.bytes);
                }
                None => code.fault = Some(format!("NIC {nic} sent a frame with tag {tag}, which is not in flight (never received, or already counted)")),
            }
        }
        self.code_raise(now, nic);
        self.code_transmit(now, nic);
    }

    /// A send the workload makes: the program's send entry runs at the
    /// software-interrupt level of `thread` (the application's). A program
    /// without the entry drops it and stops the run at the next look.
    #[inline(never)]
    pub(super) fn code_send(&mut self, thread: usize, bytes: u32) {
        let code = self.code();
        if !code.sends() {
            let msg = format!(
                "{}: the workload sends a frame, but the program has no send entry (`code.send`): give one that puts the frame on NIC 0's transmit ring",
                code.sys.program.name
            );
            code.fault = Some(msg);
            self.net.counters.tx_dropped += 1;
            return;
        }
        self.net.counters.tx_in_stack += 1;
        // A frame is at most MAX_PACKET_BYTES (9,216) long.
        let bytes = u16::try_from(bytes).expect("frames fit 16 bits");
        self.post(thread, SOFT, Job::Code(Activity::Send { bytes }));
    }

    /// The application executed `syscall`: a receive runs the kernel's
    /// entry at the software-interrupt level, preempting the application.
    fn code_syscall(&mut self, now: Time, t: usize) -> Result<()> {
        let code = self.code();
        let (k, h) = code.hw(t);
        let ctx = &code.sys.cores[k].threads[h].ctx;
        let (n, args) = (ctx.r[reg::V0], [ctx.r[reg::A0], ctx.r[reg::A0 + 1], ctx.r[reg::A0 + 2]]);
        let pc = ctx.pc.wrapping_sub(4);
        if n != SYS_READ || code.on_cpu(t) != Some(USER) {
            let who = if code.on_cpu(t) == Some(USER) { "the application" } else { "kernel code" };
            let place = code.sys.program.place(pc);
            let msg = format!("{}: {who} made system call {n}{place} at pc {pc:#010x}; only the application's read ({SYS_READ}) exists", code.sys.program.name);
            return Err(crate::Error::Code { file: self.name().to_string(), msg });
        }
        code.syscall_args = args;
        self.timeline.mark(now, "recv system call");
        self.post(t, SOFT, Job::Code(Activity::Syscall));
        self.dispatch(t);
        Ok(())
    }

    /// Thread `t`'s activity returned: its job ends now.
    #[inline(never)]
    fn code_returned(&mut self, now: Time, t: usize) {
        let code = self.code();
        let (k, h) = code.hw(t);
        let v0 = code.sys.cores[k].threads[h].ctx.r[reg::V0];
        code.returned(t, v0);
        let busy_polls = self.net.napi.as_ref().is_some_and(|n| n.busy.is_some());
        if let Some((_, Job::Code(Activity::Syscall), _, _)) = self.threads[t].running_work() {
            let code = self.code();
            let socket = code.syscall_args[0];
            if v0 == EAGAIN && code.wake_pending.take() == Some(socket) {
                // Woken before it blocked: the call restarts at once.
                code.restart_app();
            } else if v0 == EAGAIN && busy_polls {
                // It polls before it sleeps (`code_after`).
                code.busy_recv = true;
            } else if v0 == EAGAIN {
                if let Some(ctx) = code.take_app_context() {
                    code.block_app(socket, ctx);
                }
            } else if let Some(ctx) = code.app_context() {
                (ctx.r[reg::V0], ctx.r[reg::A3]) = (v0, 0);
            }
        }
        // The job completes now, through the loop like any completion.
        self.threads[t].end_work(now, &mut self.timeline);
        self.timers.set(t, self.queue.reserve_key(now));
    }

    /// What an activity of code at `level` on `thread` does after its code
    /// returned: nothing more, except that the kernel's initialisation
    /// starts the application (`thread` itself is dispatched once its
    /// activity ends), that behind a controller the interrupt path goes on
    /// after the NIC's handler (the next handler on a shared line, then the
    /// exit), that a NAPI poll's frames go to the NAPI part
    /// (`kernel/napi/code.rs`), and that a receive call that found nothing
    /// busy-polls first when busy polling is on.
    #[inline(never)]
    pub(crate) fn code_after(&mut self, thread: usize, level: Level, activity: Activity) -> Option<Job> {
        let now = self.queue.now();
        match activity {
            Activity::Tick => {
                self.code().tick_posted[thread] = false;
                return None;
            }
            Activity::Poll { q } => {
                let work = self.code().result(thread, level);
                return self.code_poll_done(now, thread, q, work);
            }
            Activity::BusyPoll { q } => {
                let work = self.code().result(thread, level);
                return self.code_busy_poll_done(now, q, work);
            }
            Activity::Syscall if std::mem::take(&mut self.code().busy_recv) => return self.code_busy_start(now),
            Activity::Send { bytes } => {
                // The entry's answer: the frame is on the ring, or an errno.
                let queued = (self.code().result(thread, level) as i32) >= 0;
                self.net.counters.tx_in_stack -= 1;
                if let (true, Some(f)) = (queued, &mut self.net.firmware) {
                    // On the programmable NIC's send ring: the wire checks it comes next.
                    f.code_sends(u32::from(bytes));
                } else if queued {
                    self.code().sends_queued += 1;
                } else {
                    self.net.counters.tx_dropped += 1;
                }
                return None;
            }
            _ => {}
        }
        if let Activity::QueueIsr { q } = activity {
            self.code_queue_isr_done(now, usize::from(q));
            return Some(Job::Irq(self.nic_handler_done(now, thread)));
        }
        if let Activity::Isr { irq } = activity
            && ((irq == 0 && self.net.wired()) || self.code().sys.devices.is_other(usize::from(irq)))
        {
            return Some(Job::Irq(self.nic_handler_done(now, thread)));
        }
        // A send flood is the application (the workload's sending loop,
        // which runs from the start): the program's does not run.
        if activity == Activity::Init && self.code().has_app() && self.net.workload.send_flood().is_none() {
            let app = self.code().app_thread;
            self.post(app, USER, Job::Code(Activity::App));
            if app != thread {
                self.dispatch(app);
            }
        }
        None
    }

    /// After thread `t`'s dispatch: the hardware thread runs the registers
    /// of the level the CPU model now runs, if that is code.
    #[inline(never)]
    pub(super) fn code_dispatched(&mut self, t: usize) {
        let now = self.queue.now();
        let running = self.threads[t].running_work();
        let code = self.code.as_mut().expect("code part selected");
        let want: Option<(Level, Activity, u64)> = match running {
            // A job whose code returned waits only for its completion (an
            // event at the same cycle may have dispatched first): no code runs.
            Some((_, Job::Code(_), _, 0)) => None,
            Some((l, Job::Code(a), pending, _)) => Some((l, a, pending)),
            _ => None,
        };
        if code.on_cpu(t).is_some() && code.on_cpu(t) != want.map(|w| w.0) {
            code.preempt(t);
        }
        let Some((level, activity, pending)) = want else { return };
        if code.on_cpu(t).is_some() {
            return;
        }
        if activity == Activity::App && code.app_blocked.is_some() {
            // The application waits in its receive call: its turn ends at once.
            self.threads[t].end_work(now, &mut self.timeline);
            self.timers.set(t, self.queue.reserve_key(now + pending));
            return;
        }
        if activity == Activity::BottomHalf {
            code.softirq_pending[t] = false;
        }
        code.start(t, level, activity, now + pending);
    }

    /// At the end: every thread's last stretch of code is counted.
    pub(super) fn finish_code(&mut self) {
        if let Some(code) = self.code.as_mut() {
            for t in 0..self.threads.len() {
                code.settle(t);
            }
        }
    }
}
