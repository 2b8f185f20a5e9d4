//! A run: the parts of one scenario wired together, and the event loop.
//!
//! Data flows one way: workload → NIC → interrupt → CPU threads → kernel
//! software → stats. The loop pops an event, hands it to the part it is for,
//! and lets the touched hardware threads decide what runs next.

use crate::config::Scenario;
use crate::cpu::{EntryCosts, SOFT, Thread, USER};
use crate::engine::{EventQueue, Key, Time};
use crate::error::Result;
use crate::kernel::{Costs, Job};
use crate::nic::Nic;
use crate::report::Report;
use crate::stats::{Counters, Latencies};
use crate::timeline::Timeline;
use crate::workload::{Stimulus, Workload};

#[derive(Debug, Clone, Copy)]
pub(crate) enum Event {
    /// The workload's pending stimulus happens.
    Stimulus(Stimulus),
    /// A closed-loop frame arrives (not from the open-loop stream).
    Feedback(Stimulus),
    /// The NIC's transmitter has put a frame on the wire.
    TxOut,
    /// The end of the run.
    End,
}

/// Events at one instant after which a run is declared stalled; a real
/// scenario has at most a few per frame or source at any instant.
const STALL_EVENTS: u64 = 1_000_000;

/// Options that change what a run records, not what it simulates.
#[derive(Debug, Clone, Copy, Default)]
pub struct Record {
    pub timeline: bool,
}

pub struct Sim {
    pub(crate) queue: EventQueue<Event>,
    pub(crate) threads: Vec<Thread<Job>>,
    /// Each thread's next completion as an event key (`Key::MAX`: none).
    /// Kept outside the queue: a preempted job's completion is simply
    /// overwritten instead of lingering in the heap.
    timers: Vec<Key>,
    pub(crate) nic: Nic,
    pub(crate) costs: Costs,
    pub(crate) workload: Workload,
    pub(crate) counters: Counters,
    pub(crate) latencies: Latencies,
    pub(crate) timeline: Timeline,
    pub(crate) end: Time,
    pub(crate) irq_thread: usize,
    pub(crate) app_thread: usize,
    /// The NIC interrupt is posted and its ISR has not finished.
    pub(crate) irq_posted: bool,
    pub(crate) backlog_limit: u64,
    /// Stimuli that came earlier than one before them (strace -f interleaving).
    pub(crate) reordered: u64,
    scenario: Scenario,
}

impl Sim {
    pub fn new(scenario: &Scenario, base_dir: &std::path::Path, record: Record) -> Result<Self> {
        let s = scenario;
        let workload = Workload::new(s, base_dir)?;
        let think = workload.send_flood().map_or(0, |(_, gap)| gap);
        let costs = EntryCosts {
            irq_entry: s.cpu.irq_entry_cycles,
            swi_entry: s.cpu.swi_entry_cycles,
            save_restore: s.cpu.save_restore_cycles,
            context_switch: s.cpu.context_switch_cycles,
        };
        let threads: Vec<_> = (0..s.cpu.threads).map(|i| Thread::new(i, 3, s.cpu.context_policy, costs)).collect();
        let timeline = if record.timeline { Timeline::recording(s.stats.timeline_max_items, "NIC") } else { Timeline::disabled() };
        Ok(Self {
            queue: EventQueue::new(),
            timers: vec![Key::MAX; threads.len()],
            threads,
            nic: Nic::new(s.nic.rx_buffer_bytes, s.nic.tx_queue_packets, s.nic.dma_bytes_per_cycle, s.cycles_per_us(), s.nic.link_mbps),
            costs: Costs::new(s, think, record.timeline),
            workload,
            counters: Counters::default(),
            latencies: Latencies::new(s.stats.max_packet_records),
            timeline,
            end: s.duration_cycles(),
            irq_thread: s.nic.irq_thread,
            app_thread: s.app.thread,
            irq_posted: false,
            backlog_limit: s.stack.backlog_packets as u64,
            reordered: 0,
            scenario: s.clone(),
        })
    }

    /// Runs to the end and reports.
    pub fn run(mut self, monitor: &mut dyn crate::Monitor) -> Result<Report> {
        self.start()?;
        self.event_loop(monitor)?;
        Ok(Report::new(self))
    }

    fn start(&mut self) -> Result<()> {
        self.queue.schedule(self.end, Event::End);
        if self.workload.send_flood().is_some() {
            self.post(self.app_thread, USER, Job::AppThink);
        } else if self.scenario.app.background {
            self.post(self.app_thread, USER, Job::Background);
        }
        self.schedule_next_stimulus()?;
        for t in 0..self.threads.len() {
            self.dispatch(t);
        }
        Ok(())
    }

    fn event_loop(&mut self, monitor: &mut dyn crate::Monitor) -> Result<()> {
        let (mut last, mut same) = (0, 0u64);
        loop {
            self.counters.events += 1;
            // Time must advance: a loop of zero-cycle work would run forever.
            let now = self.queue.now();
            if crate::monitor::due(self.counters.events) && !monitor.poll(now, self.end) {
                return Err(crate::Error::Cancelled { file: self.scenario.name.clone(), at: now });
            }
            if now == last {
                same += 1;
                if same > STALL_EVENTS {
                    let file = if self.scenario.name.is_empty() { "scenario".into() } else { self.scenario.name.clone() };
                    return Err(crate::Error::Stalled { file, at: now, events: same });
                }
            } else {
                (last, same) = (now, 0);
            }
            let (thread, key) = self.timers.iter().enumerate().min_by_key(|&(_, k)| *k).map_or((0, Key::MAX), |(i, &k)| (i, k));
            if key < self.queue.peek_key() {
                self.timers[thread] = Key::MAX;
                let now = self.queue.advance(key);
                self.complete(now, thread);
                continue;
            }
            let Some((now, event)) = self.queue.pop() else { break };
            match event {
                Event::Stimulus(s) => {
                    self.apply(now, s);
                    self.schedule_next_stimulus()?;
                }
                Event::Feedback(s) => self.apply(now, s),
                Event::TxOut => self.tx_out(now),
                Event::End => break,
            }
        }
        let end = self.end;
        for t in &mut self.threads {
            t.charge(end, &mut self.timeline);
        }
        Ok(())
    }

    fn schedule_next_stimulus(&mut self) -> Result<()> {
        if let Some((t, s)) = self.workload.next_stimulus()? {
            let now = self.queue.now();
            if t < now {
                self.reordered += 1;
            }
            if t < self.end {
                self.queue.schedule(t.max(now), Event::Stimulus(s));
            }
        }
        Ok(())
    }

    fn apply(&mut self, now: Time, s: Stimulus) {
        match s {
            Stimulus::Receive { bytes } => self.receive(now, bytes),
            Stimulus::Send { bytes } => {
                self.apply_send(self.app_thread, bytes);
                self.dispatch(self.app_thread);
            }
            Stimulus::Syscall => {
                self.counters.syscalls += 1;
                self.post(self.app_thread, SOFT, Job::Syscall);
                self.dispatch(self.app_thread);
            }
        }
    }

    /// A thread's job ended: the kernel decides what that activity does next.
    fn complete(&mut self, now: Time, thread: usize) {
        let epoch = self.threads[thread].epoch();
        let Some((level, job)) = self.threads[thread].complete(now, epoch, &mut self.timeline) else {
            return;
        };
        let next = self.after(now, thread, job);
        let next = next.map(|j| self.costs.work(j));
        self.threads[thread].proceed(level, next);
        self.dispatch(thread);
    }

    #[inline]
    pub(crate) fn post(&mut self, thread: usize, level: crate::cpu::Level, job: Job) {
        let work = self.costs.work(job);
        self.threads[thread].post(level, work);
    }

    /// Lets `thread` pick what to run and arms its completion.
    pub(crate) fn dispatch(&mut self, thread: usize) {
        let now = self.queue.now();
        if let Some((t, _)) = self.threads[thread].dispatch(now, &mut self.timeline) {
            // The End event (scheduled first) wins any tie at the end.
            self.timers[thread] = if t <= self.end { self.queue.reserve_key(t) } else { Key::MAX };
        } else if self.threads[thread].running().is_none() {
            self.timers[thread] = Key::MAX;
        }
    }

    pub(crate) fn scenario(&self) -> &Scenario {
        &self.scenario
    }
}
