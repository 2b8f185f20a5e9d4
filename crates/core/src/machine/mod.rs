//! The machine: every part a scenario selects, wired together, and the one
//! event loop that runs them.
//!
//! Data flows one way: workload → devices (NIC, exerciser, interrupt sources)
//! → interrupt delivery ([`crate::intc`], `direct` being an ideal wire) → CPU
//! hardware threads ([`crate::cpu`]) → kernel software ([`crate::kernel`]:
//! drivers, the mt-interrupts or Linux interrupt path, protocol layers,
//! applications, critical sections) → statistics ([`crate::report`]).
//!
//! There is one [`Event`] enum, one completion scheme and one report. A
//! hardware thread's next completion is a timer kept beside the queue (a
//! preempted job's completion is overwritten instead of lingering in the
//! heap), in an indexed heap of every thread's timer (`timers.rs`); it takes
//! a sequence number from the queue, so ties between timers and events break
//! in scheduling order like any two events. A part the
//! scenario does not select holds no state that the loop looks at: its events
//! never occur.
//!
//! The machine is the only module that names every part: the parts
//! (`crate::device`, `crate::intc`, `crate::kernel`, `crate::masking`,
//! `crate::code`, `crate::workload`) own their keys, state and methods, and
//! the files here are the steps that move work from one to the next.
//!
//! Files: `build.rs` (the machine from a scenario); `net.rs`, `nics.rs`, `delivery.rs`,
//! `code.rs` and `firmware.rs` (each group of parts' state and events);
//! `jobs.rs` (each job's cost and what follows it), `driver.rs`,
//! `stack.rs`, `linux.rs`, `napi/`, `rss.rs`, `coalesce.rs`, `masking/`
//! (the kernel's and the devices' steps); `timers.rs`; `report.rs`.

mod build;
mod coalesce;
mod code;
mod code_rx;
#[cfg(test)]
mod code_tests;
mod delivery;
mod driver;
mod eoi;
mod firmware;
mod forward;
mod jobs;
mod linux;
pub mod masking;
mod napi;
mod net;
mod nics;
mod report;
mod rss;
mod stack;
mod timers;

pub(crate) use crate::masking::state::Masking;
pub(crate) use delivery::Delivery;
pub(crate) use net::{Net, Route};

use crate::cpu::Thread;
use crate::engine::{EventQueue, Key, MARKS, Time};
use crate::error::Result;
use crate::intc::Signal;
use crate::kernel::Job;
use crate::monitor::POLL_EVERY;
use crate::report::Report;
use crate::timeline::Timeline;
use crate::workload::Stimulus;

/// Everything that can happen, for every part. Small and `Copy`: records
/// that travel (an MSI's identity, a write to a device) wait in their
/// device's FIFO, and the event names the device.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event {
    /// The workload's pending stimulus happens.
    Stimulus(Stimulus),
    /// A closed-loop frame arrives (not from the open-loop stream).
    Feedback(Stimulus),
    /// The NIC's transmitter has put a frame on the wire.
    TxOut,
    /// A received frame that waited for the wire lands at the NIC.
    Landed { bytes: u32 },
    /// A frame arrives for NIC `port` beside the first (`nics.rs`).
    PortArrive { port: u8, bytes: u32 },
    /// Its frame that waited for its wire lands.
    PortLanded { port: u8, bytes: u32 },
    /// Its transmitter has put a frame on the wire (`forward.rs`).
    PortTxOut { port: u8 },
    /// Interrupt source `src` raises its next interrupt.
    Raise(u32),
    /// Assert_INTx (`true`) or Deassert_INTx reaches the controller.
    Line { input: u32, assert: bool },
    /// The oldest MSI write of source `src` reaches the local APIC.
    Msi { input: u32, src: u32 },
    /// A controller's own bus message arrives.
    Signal(Signal),
    /// A status read request of `cpu` reaches device `src`.
    ReadAtDevice { cpu: u32, src: u32 },
    /// The oldest CPU write to device `src` lands.
    AtDevice { src: u32 },
    /// NIC `nic` has sent the frame of its next transmit descriptor (code).
    CodeSent { nic: u8 },
    /// The timer tick for code (`code.ticks_per_s`).
    CodeTick,
    /// The NIC's coalescing timer of this generation expires.
    CoalesceTimer(u32),
    /// A NAPI instance's deferral timer (gro_flush_timeout) expires.
    NapiTimer(u32),
    /// An interrupt of a priority-level source (the masking study's machines).
    Arrive { priority: u8, program: u32 },
    /// The end of the run, when it comes before its configured time (the
    /// programmable NIC's last window; the configured end is the queue's).
    End,
}

/// The mark of every key of a machine with stepped parts (`engine::MARKS`):
/// the loop steps them before each turn.
const STEPPED: Key = 1;

/// Cycles the parts that run on their own (kernel code, the programmable
/// NIC) run at most before the loop looks again (Ctrl-C, the event budget).
const SLICE: Time = 1 << 20;

/// Events at one instant after which a run is declared stalled; a real
/// scenario has at most a few per frame or source at any instant.
const STALL_EVENTS: u64 = 1_000_000;

/// Options that change what a run records, not what it simulates.
#[derive(Debug, Clone, Copy, Default)]
pub struct Record {
    pub timeline: bool,
}

pub struct Machine {
    pub(crate) queue: EventQueue<Event>,
    /// Built once (`build.rs`, its only assignment) and never resized: a
    /// thread number once in bounds stays in bounds ([`again`]).
    pub(crate) threads: Box<[Thread<Job>]>,
    /// Each thread's next completion as an event key (`Key::MAX`: none).
    timers: timers::Timers,
    pub(crate) end: Time,
    pub(crate) clock_mhz: f64,
    pub(crate) timeline: Timeline,
    /// Events handled, completions and writes recorded as issued included.
    pub(crate) events: u64,
    /// The scenario's name, for errors.
    name: String,
    pub(crate) net: Net,
    pub(crate) delivery: Delivery,
    pub(crate) masking: Masking,
    /// The cores that run the kernel's code, when it is code (`[code]`).
    pub(crate) code: Option<Box<crate::code::Code>>,
    /// Parts run up to each event before it (kernel code, the programmable NIC).
    stepped: bool,
    /// One of them ended its step at the slice's end, not at an event.
    sliced: bool,
    /// Several threads and no kernel code: the end of an interrupt step
    /// that leads into another has its timer's key marked
    /// (`engine::MARKS`), and the loop takes it by `Machine::step_end`.
    marks_step_ends: bool,
    /// With `marks_step_ends`, nothing that posts above the interrupt
    /// level (the masking part), no stepped parts, no timeline: a claim's
    /// end that touches only its CPU and vector is applied with the
    /// claim's start (`Machine::step_end`).
    folds_claims: bool,
    /// Marked step ends and folded claims' ends taken (`linux.rs`'s test).
    #[cfg(test)]
    marked_ends: [u64; 2],
}

impl Machine {
    /// Runs to the end and reports.
    pub fn run(mut self, monitor: &mut dyn crate::Monitor) -> Result<Report> {
        self.simulate(monitor)?;
        Ok(Report::new(self))
    }

    /// Runs to the end, leaving the parts' state to be read.
    pub(crate) fn simulate(&mut self, monitor: &mut dyn crate::Monitor) -> Result<()> {
        self.start()?;
        self.event_loop(monitor)
    }

    fn start(&mut self) -> Result<()> {
        if self.stepped {
            self.queue.mark_keys(STEPPED);
            self.timers.mark_none(STEPPED);
        }
        self.queue.end_at(self.end);
        self.start_net()?;
        self.start_delivery();
        self.start_masking();
        self.start_code();
        for t in 0..self.threads.len() {
            self.dispatch(t);
        }
        self.marks_step_ends = self.threads.len() > 1 && self.code.is_none();
        self.folds_claims = self.marks_step_ends && self.masking.levels == 0 && !self.stepped && !self.timeline.enabled();
        Ok(())
    }

    fn event_loop(&mut self, monitor: &mut dyn crate::Monitor) -> Result<()> {
        // The time at the last poll, and how many polls since found it unchanged.
        let (mut last, mut same) = (0, 0u64);
        // Events left before the next poll, counted down (a decrement and
        // its zero flag: one instruction fewer an event than counting up
        // and masking), and the polls so far: the run's events are added
        // up from both when the loop ends (nothing reads them meanwhile; a
        // run that fails reports nothing).
        let (mut left, mut polls) = (POLL_EVERY, 0u64);
        loop {
            left -= 1;
            if left == 0 {
                (left, polls) = (POLL_EVERY, polls + 1);
                let now = self.queue.now();
                if !monitor.poll(now, self.end) {
                    return Err(crate::Error::Cancelled { file: self.name.clone(), at: now });
                }
                // Time must advance: a loop of zero-cycle work would run
                // forever. Time never goes back, so an unchanged time at two
                // polls means every event between was at that instant.
                same = if now == last { same + 1 } else { 0 };
                last = now;
                if same * POLL_EVERY > STALL_EVENTS {
                    return Err(crate::Error::Stalled { file: self.name.clone(), at: now, events: same * POLL_EVERY });
                }
            }
            let (thread, key) = self.timers.first();
            // A marked key (a test on a register, no load): every key of a
            // machine with stepped parts, whose timers' none is marked too,
            // or an interrupt step's end (`Machine::step_end`).
            if key & MARKS != 0 {
                if self.stepped {
                    if self.step_devices(key.min(self.queue.peek_key()))? {
                        // A stretch of code or NIC firmware without events: Ctrl-C must still reach it.
                        if std::mem::take(&mut self.sliced) && !monitor.pulse(self.queue.now(), self.end) {
                            return Err(crate::Error::Cancelled { file: self.name.clone(), at: self.queue.now() });
                        }
                        continue;
                    }
                } else if key < self.queue.peek_key() {
                    let now = self.queue.advance(key);
                    self.step_end(now, thread, key);
                    continue;
                }
            }
            if key < self.queue.peek_key() {
                // `complete` sets this thread's timer again.
                let now = self.queue.advance(key);
                self.complete(now, thread);
                continue;
            }
            let Some((now, event)) = self.queue.pop() else {
                break;
            };
            match event {
                Event::Stimulus(s) => {
                    self.apply(now, s);
                    self.schedule_next_stimulus()?;
                }
                Event::Feedback(s) => self.apply(now, s),
                Event::TxOut => self.tx_out(now),
                Event::Landed { bytes } => {
                    self.net.wire_waiting -= 1;
                    self.land(now, bytes);
                }
                Event::PortArrive { port, bytes } => self.port_arrive(now, port as usize, bytes)?,
                Event::PortLanded { port, bytes } => self.port_landed(now, port as usize, bytes),
                Event::PortTxOut { port } => self.port_tx_out(now, port as usize),
                Event::Raise(src) => self.raise(now, src as usize),
                Event::Line { input, assert } => self.line(now, input, assert),
                Event::Msi { input, src } => self.msi(input, src as usize),
                Event::Signal(sig) => self.signal(now, sig),
                Event::ReadAtDevice { cpu, src } => self.read_at_device(cpu as usize, src as usize),
                Event::AtDevice { src } => self.at_device(now, src as usize),
                Event::CoalesceTimer(generation) => self.coalesce_timer(now, generation),
                Event::NapiTimer(tag) => self.napi_timer(tag),
                Event::Arrive { priority, program } => self.arrive(now, priority, program)?,
                Event::CodeSent { nic } => self.code_sent(now, nic as usize),
                Event::CodeTick => self.code_tick(now),
                Event::End => break,
            }
        }
        self.events += polls * POLL_EVERY + (POLL_EVERY - left) + self.delivery.applied_early;
        self.finish_code();
        let end = self.end;
        for t in &mut self.threads {
            t.charge(end, &mut self.timeline);
        }
        Ok(())
    }

    /// A thread's job ended: the kernel decides what that activity does next.
    #[inline(always)]
    fn complete(&mut self, now: Time, thread: usize) {
        // SAFETY: `thread` is the timers' first (its key set, or the loop
        // would not complete it), and every `Timers::set` follows an index
        // of `threads` by its thread (`complete`, `dispatch`,
        // `post_dispatch` before `arm` and `dispatched`; `code.rs` after
        // `end_work`). One thread's timers name thread 0 only.
        let Some((level, job)) = unsafe { again(&mut self.threads, thread) }.complete(now, &mut self.timeline) else {
            self.timers.clear(thread);
            return;
        };
        // An interrupt taken through a controller must first let the next one in.
        let (t, ends_interrupt) = match self.after(now, thread, level, &job) {
            Some(next) => {
                let work = self.work(next);
                // SAFETY: `thread` is in bounds (above).
                (unsafe { again(&mut self.threads, thread) }.go_on(now, level, work), false)
            }
            // A branch, not the flag computed and passed on: most jobs end
            // no interrupt, and the test is one compare for them.
            // SAFETY (both): `thread` is in bounds (above).
            None if job.ends_interrupt() => (unsafe { again(&mut self.threads, thread) }.proceed(now, level, false), true),
            None => (unsafe { again(&mut self.threads, thread) }.proceed(now, level, true), false),
        };
        if let Some(t) = t {
            self.rearm(thread, t);
            if self.code.is_some() {
                self.code_dispatched(thread);
            }
            return;
        }
        if ends_interrupt {
            self.interrupt_done(thread);
            self.dispatch(thread);
            // The softirq it raised may start now: its entry folded (`napi/fold.rs`).
            return self.fold_softirq(thread);
        }
        self.dispatch(thread);
    }

    #[inline(always)]
    pub(crate) fn post(&mut self, thread: usize, level: crate::cpu::Level, job: Job) {
        let _ = &self.threads[thread];
        // SAFETY: `thread` indexed `threads` just now.
        unsafe { self.post_again(thread, level, job) }
    }

    /// `post` without a bounds check, for a thread that indexed `threads`
    /// before: the protocol's thread is the completing one.
    ///
    /// # Safety
    /// As [`again`]'s.
    #[inline(always)]
    pub(crate) unsafe fn post_again(&mut self, thread: usize, level: crate::cpu::Level, job: Job) {
        let work = self.work(job);
        // SAFETY: the caller's.
        unsafe { again(&mut self.threads, thread) }.post(level, work);
    }

    /// Lets `thread` pick what to run and arms its completion.
    pub(crate) fn dispatch(&mut self, thread: usize) {
        let now = self.queue.now();
        let t = self.threads[thread].dispatch(now, &mut self.timeline);
        // Out of the loop: the timers' paths inline cost the loop nothing.
        self.dispatched::<true>(thread, t);
    }

    /// Posts `job` at `level` of `thread` and lets it pick what to run
    /// (`post` then `dispatch`, in one step when the job starts at once).
    /// Inline (it has three callers): the job is usually a constant, and so
    /// is its cost, and the call's register saves cost more than the code.
    #[inline(always)]
    pub(crate) fn post_dispatch(&mut self, thread: usize, level: crate::cpu::Level, job: Job) {
        let _ = &self.threads[thread];
        // SAFETY: `thread` indexed `threads` just now.
        unsafe { self.post_dispatch_again(thread, level, job) }
    }

    /// `post_dispatch` without a bounds check, for a thread that indexed
    /// `threads` before: the NIC's interrupt thread, checked when the
    /// machine was built.
    ///
    /// # Safety
    /// As [`again`]'s.
    #[inline(always)]
    pub(crate) unsafe fn post_dispatch_again(&mut self, thread: usize, level: crate::cpu::Level, job: Job) {
        let work = self.work(job);
        // SAFETY (all three): the caller's.
        if !unsafe { again(&mut self.threads, thread) }.starts_at_once(level) {
            unsafe { again(&mut self.threads, thread) }.post(level, work);
            return self.dispatch(thread);
        }
        let now = self.queue.now();
        let t = unsafe { again(&mut self.threads, thread) }.start_at_once(now, level, work, &mut self.timeline);
        self.dispatched::<false>(thread, t);
    }

    /// After a thread's dispatch: its timer follows what it now runs.
    #[inline(always)]
    fn dispatched<const INLINE: bool>(&mut self, thread: usize, completion: Option<Time>) {
        if let Some(t) = completion {
            if INLINE { self.rearm(thread, t) } else { self.arm(thread, t) }
        } else if self.threads[thread].running().is_none() {
            self.timers.clear(thread);
        }
        if self.code.is_some() {
            self.code_dispatched(thread);
        }
    }

    /// Sets `thread`'s timer to its completion at `t`.
    #[inline(always)]
    fn arm(&mut self, thread: usize, t: Time) {
        // The queue's end (its key taken first) wins any tie at the end, and
        // comes before any later completion; the heap of several threads'
        // timers keeps only those before the end (`timers.rs`).
        let key = self.queue.reserve_key(t);
        self.timers.set(thread, key);
    }

    /// `arm` for a completing thread that goes on, the timers' paths inline:
    /// with several threads, four of an interrupt's six sets under a fixed
    /// rate per CPU (docs/performance/engine.md).
    #[inline(always)]
    fn rearm(&mut self, thread: usize, t: Time) {
        let key = self.queue.reserve_key(t);
        self.timers.set_inline(thread, key);
    }

    /// The scenario's name (its file), for errors.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }
}

/// Thread `thread` of a machine's `threads` without a bounds check, on the
/// completion path, whose thread was indexed (checked) when its timer was
/// set: the checks were 9 host instructions a frame on the bench
/// (docs/performance/engine.md).
///
/// # Safety
/// `thread` indexed this machine's `threads` (bounds-checked) before, or
/// was checked against its length when the machine was built. That
/// suffices: the slice is boxed, so it cannot grow or shrink, and it is
/// assigned once, when the machine is built (`build.rs`).
#[inline(always)]
unsafe fn again(threads: &mut [Thread<Job>], thread: usize) -> &mut Thread<Job> {
    debug_assert!(thread < threads.len());
    // SAFETY: the caller's (above).
    unsafe { threads.get_unchecked_mut(thread) }
}
