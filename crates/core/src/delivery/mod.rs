//! The interrupt-delivery study (the MSI latency paper's methodology): an
//! exerciser device raises interrupts through a swappable controller
//! ([`crate::intc`]) to CPUs running a Linux-style kernel path (ISR top
//! half, tasklet bottom half), and a bus analyzer at the device measures
//! the time from the interrupt message leaving the device to the ISR's and
//! the tasklet's signature writes arriving.
//!
//! Files: `config.rs` (parameters), `device.rs` (sources), `kernel.rs`
//! (what the CPU runs: entry, handler chain, exit, tasklet), `report.rs`
//! (metrics and conservation laws). This file wires the parts and runs the
//! event loop; it converts every nanosecond parameter to cycles once.

mod config;
mod device;
mod kernel;
mod report;

pub use config::{BusConfig, ExerciserConfig, IntcConfig, IrqPathConfig, SourceConfig, check};

use crate::config::{Scenario, WorkloadConfig};
use crate::cpu::{ContextPolicy, EntryCosts, Thread, USER};
use crate::engine::{EventQueue, Time};
use crate::error::Result;
use crate::intc::{self, Intc, Rec, Route, Signal};
use crate::report::Report;
use crate::sim::Record;
use crate::timeline::Timeline;
use device::Source;
use hdrhistogram::Histogram;
use kernel::Job;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

#[derive(Debug, Clone, Copy)]
enum Event {
    /// A source raises its next interrupt.
    Raise(usize),
    /// Assert_INTx (`true`) or Deassert_INTx reaches the controller.
    Line {
        input: u32,
        assert: bool,
    },
    /// An MSI write reaches the local APIC.
    Msi {
        input: u32,
        rec: Rec,
    },
    /// A controller's own bus message arrives.
    Signal(Signal),
    /// A status read request reaches the device.
    ReadAtDevice {
        cpu: usize,
        src: usize,
    },
    /// A CPU write reaches the device.
    AtDevice {
        src: usize,
        write: Write,
    },
    Done {
        thread: usize,
        epoch: u64,
    },
    End,
}

#[derive(Debug, Clone, Copy)]
enum Write {
    Clear,
    IsrSignature(Rec),
    TaskletSignature(Rec),
}

/// Costs in cycles, converted once.
#[derive(Debug, Clone, Copy)]
struct Cycles {
    mmio_read: u64,
    posted: u64,
    dma_transfer: u64,
}

pub struct Model {
    queue: EventQueue<Event>,
    threads: Vec<Thread<Job>>,
    intc: Intc,
    legacy: bool,
    sources: Vec<Source>,
    /// Handlers registered on each input, in registration order.
    chains: Vec<Vec<usize>>,
    rng: Pcg64Mcg,
    bus: Cycles,
    path: IrqPathConfig,
    /// A CPU is inside an interrupt (entry to exit): interrupts disabled.
    in_irq: Vec<bool>,
    /// Result of the status read each CPU is waiting for.
    reads: Vec<Option<Rec>>,
    /// Some handler claimed the interrupt each CPU is handling.
    handled: Vec<bool>,
    /// The exerciser's tasklet is scheduled (not yet started).
    tasklet_scheduled: bool,
    counters: Counters,
    isr_hist: Histogram<u64>,
    tasklet_hist: Histogram<u64>,
    records: Vec<(Time, u64)>,
    max_records: usize,
    timeline: Timeline,
    end: Time,
    clock_mhz: f64,
    policy: ContextPolicy,
}

#[derive(Debug, Default, Clone, Copy)]
struct Counters {
    events: u64,
    /// Interrupts taken by a CPU in which no handler found its device's bit.
    spurious: u64,
    /// MSIs taken by a CPU whose handler has not yet claimed them.
    taken_unclaimed: u64,
    exerciser_claims: u64,
    tasklet_runs: u64,
    tasklet_merged: u64,
    /// Legacy interrupts that reached the CPU before their DMA data was in memory.
    overtook_data: u64,
    /// Handlers that touched DMA data before it was in memory (must stay 0).
    stale_reads: u64,
}

/// Runs an `exerciser` scenario.
pub fn run(s: &Scenario, record: Record, monitor: &mut dyn crate::Monitor) -> Result<Report> {
    let mut m = Model::new(s, record)?;
    m.start();
    m.event_loop(monitor).map_err(|at| crate::Error::Cancelled { file: s.name.clone(), at })?;
    Ok(m.report())
}

impl Model {
    fn new(s: &Scenario, record: Record) -> Result<Self> {
        let WorkloadConfig::Exerciser(w) = &s.workload else {
            return Err(crate::Error::Config {
                file: s.name.clone(),
                key: "workload.kind".into(),
                line: None,
                msg: "the delivery model runs `exerciser` workloads only".into(),
            });
        };
        let cfg_err = |(key, msg): (String, String)| crate::Error::Config { file: s.name.clone(), key, line: None, msg };
        let wiring = intc::assign(s.intc.kind, w, s.intc.vectors).map_err(cfg_err)?;
        let cyc = |ns: f64| (ns * s.cpu.clock_mhz / 1e3).round() as u64;
        let per_s = s.cpu.clock_mhz * 1e6;
        let mut sources = vec![Source::new(wiring.exerciser, true, s.irq_path.isr_cycles, w.process, w.rate_hz, per_s)];
        for (o, &line) in w.others.iter().zip(&wiring.others) {
            sources.push(Source::new(vec![line], false, o.isr_cycles, o.process, o.rate_hz, per_s));
        }
        let used = sources.iter().flat_map(|x| x.inputs.iter().copied()).max().map_or(1, |m| m as usize + 1);
        let inputs = used.max(intc::IOAPIC_PINS as usize);
        let mut routes = vec![Route::default(); inputs];
        let mut chains = vec![Vec::new(); inputs];
        // The exerciser's module loads last: its handler ends each shared chain.
        for (i, src) in sources.iter().enumerate().skip(1).chain(sources.iter().enumerate().take(1)) {
            let (cpu, prio) = if i == 0 { (w.cpu, w.priority) } else { (w.others[i - 1].cpu, w.others[i - 1].priority) };
            for (k, &input) in src.inputs.iter().enumerate() {
                routes[input as usize] = Route { cpu: (cpu + k) % s.cpu.threads, priority: u32::from(prio) };
                chains[input as usize].push(i);
            }
        }
        let costs = intc::Costs { port_io: cyc(s.bus.port_io_ns), posted: cyc(s.bus.posted_write_ns), lapic_eoi: s.irq_path.lapic_eoi_cycles };
        let entry = EntryCosts {
            irq_entry: s.cpu.irq_entry_cycles,
            swi_entry: s.cpu.swi_entry_cycles,
            save_restore: s.cpu.save_restore_cycles,
            context_switch: s.cpu.context_switch_cycles,
        };
        let n = s.cpu.threads;
        let hist = || Histogram::new_with_bounds(1, 1 << 48, 3).expect("valid histogram bounds");
        let dma_ns = f64::from(w.dma_bytes) * 1e3 / s.bus.link_mbytes_per_s;
        let mut m = Self {
            queue: EventQueue::new(),
            threads: (0..n).map(|i| Thread::new(i, 3, s.cpu.context_policy, entry)).collect(),
            intc: Intc::new(s.intc.kind, s.intc.trigger, routes, costs),
            legacy: s.intc.kind.legacy(),
            sources,
            chains,
            rng: Pcg64Mcg::seed_from_u64(s.run.seed),
            bus: Cycles { mmio_read: cyc(s.bus.mmio_read_ns), posted: costs.posted, dma_transfer: cyc(dma_ns) },
            path: s.irq_path.clone(),
            in_irq: vec![false; n],
            reads: vec![None; n],
            handled: vec![false; n],
            tasklet_scheduled: false,
            counters: Counters::default(),
            isr_hist: hist(),
            tasklet_hist: hist(),
            records: Vec::new(),
            max_records: s.stats.max_packet_records,
            timeline: if record.timeline { Timeline::recording(s.stats.timeline_max_items, "exerciser") } else { Timeline::disabled() },
            end: s.duration_cycles(),
            clock_mhz: s.cpu.clock_mhz,
            policy: s.cpu.context_policy,
        };
        if w.busy_user {
            for t in 0..n {
                let work = m.work(Job::User);
                m.threads[t].post(USER, work);
            }
        }
        Ok(m)
    }

    fn start(&mut self) {
        self.queue.schedule(self.end, Event::End);
        for i in 0..self.sources.len() {
            let first = self.sources[i].gap(&mut self.rng);
            self.queue.schedule(first, Event::Raise(i));
        }
        for t in 0..self.threads.len() {
            self.dispatch(t);
        }
    }

    /// Runs to the end; `Err(cycle)` when the monitor stopped it.
    fn event_loop(&mut self, monitor: &mut dyn crate::Monitor) -> std::result::Result<(), Time> {
        while let Some((now, event)) = self.queue.pop() {
            self.counters.events += 1;
            if crate::monitor::due(self.counters.events) && !monitor.poll(now, self.end) {
                return Err(now);
            }
            match event {
                Event::Raise(src) => self.raise(now, src),
                Event::Line { input, assert } => {
                    let (cpu, next) = self.intc.level(input, assert);
                    self.after_intc(now, cpu, next);
                }
                Event::Msi { input, rec } => {
                    self.sources[rec.src].in_transit -= 1;
                    match self.intc.message(input, rec) {
                        Ok(cpu) => self.offer(cpu),
                        Err(lost) => self.sources[lost.src].lost += 1,
                    }
                }
                Event::Signal(sig) => {
                    let (cpu, next) = self.intc.signal(sig);
                    self.after_intc(now, cpu, next);
                }
                Event::ReadAtDevice { cpu, src } => {
                    let s = &self.sources[src];
                    self.reads[cpu] = s.status.filter(|_| !s.claimed);
                }
                Event::AtDevice { src, write } => self.at_device(now, src, write),
                Event::Done { thread, epoch } => self.complete(now, thread, epoch),
                Event::End => break,
            }
        }
        for t in &mut self.threads {
            t.charge(self.end, &mut self.timeline);
        }
        Ok(())
    }

    fn raise(&mut self, now: Time, src: usize) {
        let next = now + self.sources[src].gap(&mut self.rng);
        if next < self.end {
            self.queue.schedule(next, Event::Raise(src));
        }
        let posted = self.bus.posted;
        let s = &mut self.sources[src];
        // DMA data first (the exerciser only); it is in memory once it has
        // crossed the link and the fabric.
        let transfer = if s.exerciser { self.bus.dma_transfer } else { 0 };
        if transfer > 0 {
            s.data_visible = now + transfer + posted;
            self.timeline.bus(now, now + transfer + posted, "DMA data");
        }
        if self.legacy {
            // INTx is signalled at once, on its own path: not ordered behind the data.
            let rec = s.next_rec(src, now);
            if s.set_status(rec) {
                let input = s.inputs[0];
                self.queue.schedule(now + posted, Event::Line { input, assert: true });
                self.timeline.bus(now, now + posted, "Assert_INTx");
            }
        } else {
            // The MSI write queues behind the data in the device's posted queue.
            let sent = now + transfer;
            let rec = s.next_rec(src, sent);
            let input = s.inputs[(rec.seq % s.inputs.len() as u64) as usize];
            s.in_transit += 1;
            self.queue.schedule(sent + posted, Event::Msi { input, rec });
            self.timeline.bus(sent, sent + posted, "MSI write");
        }
    }

    fn after_intc(&mut self, now: Time, cpu: Option<usize>, next: Option<(u64, Signal)>) {
        if let Some((delay, sig)) = next {
            self.queue.schedule(now + delay, Event::Signal(sig));
            self.timeline.bus(now, now + delay, signal_label(sig));
        }
        if let Some(cpu) = cpu {
            self.offer(cpu);
        }
    }

    /// A CPU write to device `src` issued now; posted writes stay in order.
    fn write_to_device(&mut self, now: Time, src: usize, write: Write, label: &'static str) {
        let s = &mut self.sources[src];
        let at = (now + self.bus.posted).max(s.downstream_tail);
        s.downstream_tail = at;
        self.queue.schedule(at, Event::AtDevice { src, write });
        self.timeline.bus(now, at, label);
    }

    fn at_device(&mut self, now: Time, src: usize, write: Write) {
        match write {
            Write::Clear => {
                if self.sources[src].clear_status() {
                    let input = self.sources[src].inputs[0];
                    self.queue.schedule(now + self.bus.posted, Event::Line { input, assert: false });
                    self.timeline.bus(now, now + self.bus.posted, "Deassert_INTx");
                }
            }
            Write::IsrSignature(rec) => {
                let lat = now - rec.sent;
                self.isr_hist.saturating_record(lat.max(1));
                if self.records.len() < self.max_records {
                    self.records.push((rec.sent, lat));
                }
            }
            Write::TaskletSignature(rec) => self.tasklet_hist.saturating_record((now - rec.sent).max(1)),
        }
    }

    /// Lets `cpu` accept an interrupt if it has interrupts enabled.
    fn offer(&mut self, cpu: usize) {
        if self.in_irq[cpu] {
            return;
        }
        let Some(taken) = self.intc.take(cpu) else { return };
        let now = self.queue.now();
        self.in_irq[cpu] = true;
        if taken.rec.is_some() {
            self.counters.taken_unclaimed += 1;
        }
        for &src in &self.chains[taken.input as usize] {
            let s = &self.sources[src];
            if self.legacy && s.status.is_some() && !s.claimed && s.data_visible > now {
                self.counters.overtook_data += 1;
            }
        }
        let work = self.work(Job::Entry { input: taken.input, rec: taken.rec, ack: taken.ack_cycles });
        self.threads[cpu].post(crate::cpu::IRQ, work);
        self.dispatch(cpu);
    }

    fn dispatch(&mut self, thread: usize) {
        let now = self.queue.now();
        // A completion past the end never fires; keep it out of the heap.
        if let Some((t, epoch)) = self.threads[thread].dispatch(now, &mut self.timeline)
            && t <= self.end
        {
            self.queue.schedule(t, Event::Done { thread, epoch });
        }
    }

    fn complete(&mut self, now: Time, thread: usize, epoch: u64) {
        let Some((level, job)) = self.threads[thread].complete(now, epoch, &mut self.timeline) else {
            return;
        };
        let next = self.after(now, thread, job).map(|j| self.work(j));
        self.threads[thread].proceed(level, next);
        if next.is_none() && level == crate::cpu::IRQ {
            self.in_irq[thread] = false;
            self.offer(thread);
        }
        self.dispatch(thread);
    }
}

fn signal_label(s: Signal) -> &'static str {
    match s {
        Signal::Lapic(_) => "IO-APIC message",
        Signal::Unmask(_) => "8259 unmask",
        Signal::Eoi(_) => "EOI broadcast",
    }
}
