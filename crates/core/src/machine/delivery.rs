//! Interrupt delivery between the devices and the CPUs: the sources (the
//! PCIe exerciser, other interrupt sources, the NIC when it is wired through
//! a controller), the machine's controllers (one, or several beside each
//! other: `intc/set.rs`), and the bus between them; each source pays its
//! own controller's bus costs.
//!
//! A legacy source keeps a status bit and asserts INTx on its own path, not
//! ordered behind its DMA data; an MSI write queues behind the data in the
//! device's posted queue. Writes from a CPU to a device stay in order too.
//! Both travel as FIFOs in the device ([`Source`]), so events carry only the
//! device's index. The interrupt path the CPU runs (entry, handler chain,
//! exit, tasklet) is in `kernel/linux.rs`.

use super::{Event, Machine};
use crate::config::Scenario;
use crate::device::source::{Kind, Source, Write};
use crate::device::sources::{ExerciserConfig, SourceConfig, SourceKind};
use crate::engine::Time;
use crate::intc::{self, Controllers, IntcKind, Rec, Route, Signal, Taken};
use crate::kernel::IrqPathConfig;
use crate::kernel::{IrqJob, IrqPathKind, Job};
use crate::stats::Distribution;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

/// MSI writes one device may have in transit (in its posted queue or on the
/// link); one more is lost, counted in `interrupts_lost`. As many as the
/// masking part lets wait.
const MAX_IN_TRANSIT: usize = 4096;

/// Bus costs in CPU cycles, converted once.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BusCycles {
    pub mmio_read: u64,
    pub posted: u64,
}

#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Counters {
    /// Interrupts taken by a CPU in which no handler found its device's bit.
    pub spurious: u64,
    /// MSIs taken by a CPU whose handler has not yet claimed them.
    pub taken_unclaimed: u64,
    pub exerciser_claims: u64,
    pub tasklet_runs: u64,
    pub tasklet_merged: u64,
    /// Legacy interrupts that reached the CPU before their DMA data was in memory.
    pub overtook_data: u64,
    /// Handlers that touched DMA data before it was in memory (must stay 0).
    pub stale_reads: u64,
}

pub(crate) struct Delivery {
    /// Every controller on the machine; inputs are numbered across them.
    pub intc: Controllers,
    pub sources: Vec<Source>,
    /// Handlers registered on each input, in registration order.
    pub chains: Vec<Vec<usize>>,
    pub rng: Pcg64Mcg,
    /// Each source's bus costs: none on the direct wire.
    pub bus: Vec<BusCycles>,
    pub path: IrqPathConfig,
    /// A CPU is inside an interrupt (entry to exit): interrupts disabled.
    pub in_irq: Vec<bool>,
    /// Result of the status read each CPU is waiting for.
    pub reads: Vec<Option<Rec>>,
    /// The MSI each CPU took, until a handler claims it.
    pub taken: Vec<Option<Rec>>,
    /// Some handler claimed the interrupt each CPU is handling.
    pub handled: Vec<bool>,
    /// The input and chain position of the NIC handler each CPU runs.
    pub serving: Vec<(u32, u32)>,
    /// The cycles of the entry, status read or exit each CPU runs now.
    pub step: Vec<u64>,
    /// Each exerciser's tasklet is scheduled (not yet started), for this
    /// interrupt; by source.
    pub tasklets: Vec<Option<Rec>>,
    pub counters: Counters,
    pub isr_hist: Distribution,
    pub tasklet_hist: Distribution,
    pub records: Vec<(Time, u64)>,
    pub max_records: usize,
    /// A CPU-bound user task on every CPU.
    pub busy_user: bool,
    /// Signature writes are recorded as they are issued, not as events
    /// when they land (`Machine::write_to_device`): the report is the same.
    pub at_issue: bool,
    /// Bus events applied as they were sent, not queued, that would have
    /// come before the end: counted in the run's `events`.
    pub applied_early: u64,
    /// An interrupt's steps that end before anything else happens run as
    /// one job (`Machine::fold`): one CPU, no stepped parts, no timeline.
    pub folds: bool,
    /// EOI broadcasts may stay out of the queue (`eoi.rs`): not with parts
    /// run up to each event.
    pub defers_eoi: bool,
    /// An EOI broadcast kept out of the queue.
    pub deferred_eoi: Option<super::eoi::Deferred>,
    /// `Line` events queued and not yet handled.
    pub lines: u64,
}

impl Delivery {
    /// No interrupt sources: nothing is delivered through a controller.
    pub fn idle() -> Self {
        let wire = intc::build(IntcKind::Direct, intc::Trigger::Edge, Vec::new(), intc::Costs::default());
        Self::with(Controllers::new(&[IntcKind::Direct], vec![wire]), 0, IrqPathConfig::default(), 0, 0)
    }

    fn with(intc: Controllers, cpus: usize, path: IrqPathConfig, seed: u64, max_records: usize) -> Self {
        Self {
            intc,
            sources: Vec::new(),
            chains: Vec::new(),
            rng: Pcg64Mcg::seed_from_u64(seed),
            bus: Vec::new(),
            path,
            in_irq: vec![false; cpus],
            reads: vec![None; cpus],
            taken: vec![None; cpus],
            handled: vec![false; cpus],
            serving: vec![(0, 0); cpus],
            step: vec![0; cpus],
            tasklets: Vec::new(),
            counters: Counters::default(),
            isr_hist: Distribution::unused(),
            tasklet_hist: Distribution::unused(),
            records: Vec::new(),
            max_records,
            busy_user: false,
            at_issue: false,
            applied_early: 0,
            folds: false,
            defers_eoi: true,
            deferred_eoi: None,
            lines: 0,
        }
    }

    /// The exerciser and its fellow sources (the `exerciser` workload).
    pub fn exerciser(s: &Scenario, w: &ExerciserConfig) -> Result<Self, (String, String)> {
        let wiring = intc::assign(
            s.intc.kind,
            intc::First { key: "workload.line", line: w.line, vectors: s.intc.vectors },
            SourceConfig::requests(&w.others, "workload.others"),
        )?;
        let per_s = s.cpu.clock_mhz * 1e6;
        let mut exerciser = Source::new(wiring.exerciser, Kind::Exerciser, s.irq_path.isr_cycles, w.process, w.rate_hz, per_s);
        exerciser.dma_transfer = dma_cycles(s, w.dma_bytes);
        let mut sources = vec![exerciser];
        sources.extend(others(s, &w.others, &wiring.others));
        let mut d =
            Self::wired(s, &wiring.controllers, sources, |i| if i == 0 { (w.cpu, w.priority) } else { (w.others[i - 1].cpu, w.others[i - 1].priority) });
        d.busy_user = w.busy_user;
        Ok(d)
    }

    /// The NIC as interrupt source 0, on its controller's first free
    /// input(s), routed to `nic.irq_thread`, and the sources beside it. On
    /// the mt path the controller's costs and the bus's are the only
    /// additions to the study's driver costs (Linux's do_IRQ entry and exit
    /// are not part of that path); on the Linux path the top half
    /// acknowledges and schedules NET_RX.
    pub fn nic(s: &Scenario, linux: bool) -> Self {
        let others = &s.sources.others;
        let wiring = crate::config::nic_wiring(s).expect("wiring checked at load");
        let top_half = if linux { s.irq_path.isr_cycles + s.irq_path.tasklet_schedule_cycles } else { 0 };
        let nic = |inputs, top_half| Source::new(inputs, Kind::Nic, top_half, crate::workload::config::Process::Periodic, 1.0, 1.0);
        let mut sources = vec![nic(wiring.exerciser, top_half)];
        sources.extend(self::others(s, others, &wiring.others));
        // The other NICs, after the other sources (`Ports::src` is the
        // first); one whose own path is the ISR's has no top half.
        let ports = s.nics.others.iter().zip(&wiring.others[others.len()..]);
        sources.extend(
            ports.map(|(n, inputs)| nic(inputs.clone(), if IrqPathKind::of_nic(n.irq_path, s.irq_path.kind) == IrqPathKind::Mt { 0 } else { top_half })),
        );
        let nics = &s.nics.others;
        let route = |i: usize| match i {
            0 => (s.nic.irq_thread, DEFAULT_PRIORITY),
            i if i <= others.len() => (others[i - 1].cpu, others[i - 1].priority),
            i => (nics[i - 1 - others.len()].irq_thread, nics[i - 1 - others.len()].priority),
        };
        let mut d = Self::wired(s, &wiring.controllers, sources, route);
        if !linux {
            (d.path.entry_cycles, d.path.exit_cycles) = (0, 0);
        }
        d
    }

    /// Builds the controllers of `kinds` for `sources` (inputs numbered
    /// across them), routing source `i`'s inputs to `route(i) = (cpu,
    /// priority)`; the first source's handler ends each shared chain (its
    /// driver loads last).
    fn wired(s: &Scenario, kinds: &[IntcKind], sources: Vec<Source>, route: impl Fn(usize) -> (usize, u8)) -> Self {
        let bases = intc::bases(kinds);
        // Each controller's routes, by its own input number; as many as it
        // has inputs in use, and at least an IO-APIC's pins.
        let mut routes: Vec<Vec<Route>> = vec![vec![Route::default(); intc::IOAPIC_PINS as usize]; kinds.len()];
        let mut chains = Vec::new();
        for (i, src) in sources.iter().enumerate().skip(1).chain(sources.iter().enumerate().take(1)) {
            let (cpu, prio) = route(i);
            for (k, &input) in src.inputs.iter().enumerate() {
                let c = intc::owner(&bases, input);
                let local = (input - bases[c]) as usize;
                if routes[c].len() <= local {
                    routes[c].resize(local + 1, Route::default());
                }
                routes[c][local] = Route { cpu: (cpu + k) % s.cpu.threads, priority: u32::from(prio) };
                if chains.len() <= input as usize {
                    chains.resize(input as usize + 1, Vec::new());
                }
                chains[input as usize].push(i);
            }
        }
        chains.resize(chains.len().max(intc::IOAPIC_PINS as usize), Vec::new());
        // The direct wire has no bus: its interrupts arrive at once.
        let costs = |kind: IntcKind| match kind.kind().bus {
            false => intc::Costs::default(),
            true => intc::Costs::new(s.irq_path.lapic_eoi_cycles, &s.bus, |ns| cycles(s, ns)),
        };
        let kind_of = |input: u32| kinds[intc::owner(&bases, input)];
        let bus = sources.iter().map(|x| match kind_of(x.inputs[0]) {
            k if !k.kind().bus => BusCycles::default(),
            k => BusCycles { mmio_read: cycles(s, s.bus.mmio_read_ns), posted: costs(k).posted },
        });
        let bus = bus.collect();
        let intcs = kinds.iter().zip(routes).map(|(&k, r)| intc::build(k, s.intc.trigger, r, costs(k))).collect();
        let mut d = Self::with(Controllers::new(kinds, intcs), s.cpu.threads, s.irq_path.clone(), s.run.seed, s.stats.max_packet_records);
        // Only exercisers' signature writes are timed.
        let exercisers = sources.iter().filter(|x| x.kind == Kind::Exerciser).count();
        if exercisers > 0 {
            (d.isr_hist, d.tasklet_hist) = (Distribution::default(), Distribution::default());
        }
        // A signature write only records its latency, known as it is
        // issued: recorded then, in issue order, which is the order the
        // writes land in while one device keeps records (its writes are a FIFO).
        d.at_issue = exercisers == 1;
        d.tasklets = vec![None; sources.len()];
        d.sources = sources;
        d.chains = chains;
        d.bus = bus;
        d
    }

    pub fn active(&self) -> bool {
        !self.sources.is_empty()
    }
}

impl Delivery {
    /// A signature write lands at `at`: the bus analyzer's latency.
    fn signature(&mut self, at: Time, write: Write) {
        match write {
            Write::IsrSignature(rec) => {
                let lat = at - rec.sent;
                self.isr_hist.record(lat);
                if self.records.len() < self.max_records {
                    self.records.push((rec.sent, lat));
                }
            }
            Write::TaskletSignature(rec) => self.tasklet_hist.record(at - rec.sent),
            Write::Clear => unreachable!("a status clear is an event"),
        }
    }
}

/// The vector priority class a device gets when the scenario gives none
/// (the exerciser's default).
const DEFAULT_PRIORITY: u8 = 4;

/// The other sources on their inputs, exercisers among them.
fn others<'a>(s: &'a Scenario, others: &'a [SourceConfig], lines: &'a [Vec<u32>]) -> impl Iterator<Item = Source> + 'a {
    let per_s = s.cpu.clock_mhz * 1e6;
    others.iter().zip(lines).map(move |(o, line)| {
        let kind = if o.kind == SourceKind::Exerciser { Kind::Exerciser } else { Kind::Other };
        let mut src = Source::new(line.clone(), kind, o.isr_cycles, o.process, o.rate_hz, per_s);
        src.dma_transfer = dma_cycles(s, o.dma_bytes);
        src
    })
}

/// Cycles `bytes` of DMA data take over the link.
fn dma_cycles(s: &Scenario, bytes: u32) -> u64 {
    cycles(s, f64::from(bytes) * 8e3 / s.bus.link_mbps.unwrap_or(crate::intc::EXERCISER_LINK_MBPS))
}

/// Nanoseconds as CPU cycles.
fn cycles(s: &Scenario, ns: f64) -> u64 {
    (ns * s.cpu.clock_mhz / 1e3).round() as u64
}

// The event handlers marked `inline(never)` are other parts' events: inlined
// into the loop, they would change how the NIC's path is compiled.
impl Machine {
    pub(super) fn start_delivery(&mut self) {
        // Not with parts run up to each event: their steps would change,
        // and the programmable NIC may end the run early.
        self.delivery.at_issue &= !self.stepped;
        self.delivery.folds = !self.stepped && self.threads.len() == 1 && !self.timeline.enabled();
        self.delivery.defers_eoi &= !self.stepped;
        let one = self.delivery.folds && self.threads.len() == 1;
        if let Some(n) = &mut self.net.napi {
            n.folds = one && n.busy.is_none() && n.rps.is_none();
            n.plain = self.code.is_none() && self.net.rss.is_none();
        }
        if self.delivery.busy_user {
            for t in 0..self.threads.len() {
                self.post(t, crate::cpu::USER, Job::Irq(IrqJob::User));
            }
        }
        for i in 0..self.delivery.sources.len() {
            let d = &mut self.delivery;
            if let Some(first) = d.sources[i].gap(&mut d.rng) {
                self.queue.schedule(first, Event::Raise(i as u32));
            }
        }
    }

    /// Source `src`'s timer fires: it raises an interrupt and arms the next.
    #[inline(never)]
    pub(super) fn raise(&mut self, now: Time, src: usize) {
        let d = &mut self.delivery;
        if let Some(gap) = d.sources[src].gap(&mut d.rng) {
            let next = now + gap;
            if next < self.end {
                self.queue.schedule(next, Event::Raise(src as u32));
            }
        }
        // DMA data first (the exerciser only); it is in memory once it has
        // crossed the link and the fabric.
        let transfer = self.delivery.sources[src].dma_transfer;
        if transfer > 0 {
            let visible = now + transfer + self.delivery.bus[src].posted;
            self.delivery.sources[src].data_visible = visible;
            self.timeline.bus(now, visible, "DMA data");
        }
        self.signal_interrupt(now, src, transfer);
    }

    /// Device `src` signals an interrupt: INTx at once, or an MSI write that
    /// leaves after `behind` cycles of data ahead of it in the posted queue.
    pub(crate) fn signal_interrupt(&mut self, now: Time, src: usize, behind: u64) {
        self.signal_on(now, src, behind, None);
    }

    /// Device `src` signals on its `k`th vector (an RSS queue's MSI-X vector).
    pub(crate) fn signal_vector(&mut self, now: Time, src: usize, k: usize) {
        self.signal_on(now, src, 0, Some(k));
    }

    fn signal_on(&mut self, now: Time, src: usize, behind: u64, vector: Option<usize>) {
        let posted = self.delivery.bus[src].posted;
        let s = &mut self.delivery.sources[src];
        if self.delivery.intc.legacy(s.inputs[0]) {
            let rec = s.next_rec(src, now);
            if s.set_status(rec) {
                let input = s.inputs[0];
                self.delivery.lines += 1;
                self.queue.schedule(now + posted, Event::Line { input, assert: true });
                self.timeline.bus(now, now + posted, "Assert_INTx");
            }
        } else {
            let sent = now + behind;
            let rec = s.next_rec(src, sent);
            if s.transit.len() >= MAX_IN_TRANSIT {
                // Bounded like every other queue: a device with this many
                // message writes posted (behind slow DMA) loses the next.
                s.lost += 1;
                return;
            }
            let input = s.inputs[vector.unwrap_or((rec.seq % s.inputs.len() as u64) as usize)];
            s.transit.push_back(rec);
            self.queue.schedule(sent + posted, Event::Msi { input, src: src as u32 });
            self.timeline.bus(sent, sent + posted, "MSI write");
        }
    }

    #[inline(never)]
    pub(super) fn line(&mut self, now: Time, input: u32, assert: bool) {
        self.delivery.lines -= 1;
        self.eoi_touched(now, input);
        let (cpu, next) = self.delivery.intc.level(input, assert);
        self.after_intc(now, cpu, next);
    }

    #[inline(never)]
    pub(super) fn msi(&mut self, input: u32, src: usize) {
        let d = &mut self.delivery;
        let rec = d.sources[src].transit.pop_front().expect("an MSI event has its write in transit");
        match d.intc.message(input, rec) {
            Ok(cpu) => self.offer(cpu),
            Err(lost) => d.sources[lost.src].lost += 1,
        }
    }

    #[inline(never)]
    pub(super) fn signal(&mut self, now: Time, sig: Signal) {
        let (cpu, next) = self.delivery.intc.signal(sig);
        self.after_intc(now, cpu, next);
    }

    #[inline(never)]
    pub(super) fn read_at_device(&mut self, cpu: usize, src: usize) {
        let s = &self.delivery.sources[src];
        self.delivery.reads[cpu] = s.read_status();
    }

    /// What the controllers' answer starts: a signal scheduled, an offer.
    /// Always inline: with `offer` inline LLVM left it out of `line` and
    /// `signal`, a call more a frame (the 1,440 B row +1.5%).
    #[inline(always)]
    fn after_intc(&mut self, now: Time, cpu: Option<usize>, next: Option<(u64, Signal)>) {
        if let Some((delay, sig)) = next {
            self.schedule_signal(now, delay, sig);
        }
        if let Some(cpu) = cpu {
            self.offer(cpu);
        }
    }

    pub(crate) fn schedule_signal(&mut self, now: Time, delay: u64, sig: Signal) {
        self.queue.schedule(now + delay, Event::Signal(sig));
        self.timeline.bus(now, now + delay, signal_label(sig));
    }

    /// A CPU write to device `src` issued now; posted writes stay in order.
    /// A signature write, when recorded at issue, counts as the event its
    /// landing would have been (if it lands before the end, as the queue
    /// would let it).
    pub(crate) fn write_to_device(&mut self, now: Time, src: usize, write: Write, label: &'static str) {
        let d = &mut self.delivery;
        let s = &mut d.sources[src];
        let at = (now + d.bus[src].posted).max(s.downstream_tail);
        s.downstream_tail = at;
        self.timeline.bus(now, at, label);
        if d.at_issue && !matches!(write, Write::Clear) {
            if at < self.end {
                self.events += 1;
                d.signature(at, write);
            }
            return;
        }
        s.writes.push_back(write);
        self.queue.schedule(at, Event::AtDevice { src: src as u32 });
    }

    #[inline(never)]
    pub(super) fn at_device(&mut self, now: Time, src: usize) {
        let d = &mut self.delivery;
        let write = d.sources[src].writes.pop_front().expect("a device write event has its write queued");
        match write {
            Write::Clear => {
                let input = d.sources[src].inputs[0];
                self.eoi_landed_by(now, input);
                let d = &mut self.delivery;
                // Whether the pin is now deasserted (an EOI deferred on it stays so).
                let mut quiet = false;
                if d.sources[src].clear_status() && d.sources[src].status.is_none() {
                    let posted = d.bus[src].posted;
                    let early = if self.stepped { None } else { d.intc.deassert_early(input, now, posted) };
                    match early {
                        Some(left) => {
                            d.applied_early += u64::from(now + posted < self.end);
                            quiet = left == 0;
                        }
                        None => {
                            d.lines += 1;
                            self.queue.schedule(now + posted, Event::Line { input, assert: false });
                        }
                    }
                    self.timeline.bus(now, now + posted, "Deassert_INTx");
                }
                if !quiet {
                    self.eoi_touched(now, input);
                }
            }
            signature => d.signature(now, signature),
        }
    }

    /// Lets `cpu` accept an interrupt if it has interrupts enabled. The last
    /// thing its callers do (`Machine::fold_entry` relies on it: nothing
    /// is scheduled after it until the loop's next turn). Inline up to the
    /// controller's answer: half the calls on the e1000 rows (the CPU asking
    /// again as an interrupt ends) find nothing, and paid the register saves
    /// of the taking's code.
    #[inline(always)]
    pub(crate) fn offer(&mut self, cpu: usize) {
        if let Some(taken) = self.take_offered(cpu) {
            self.offer_taken(cpu, taken);
        }
    }

    /// `cpu` took `taken` (`offer`): the interrupt path's first job starts.
    #[inline(never)]
    fn offer_taken(&mut self, cpu: usize, taken: Taken) {
        let job = self.accepted(cpu, taken);
        if self.marks_step_ends {
            return self.start_marked(cpu, job);
        }
        self.post_dispatch(cpu, crate::cpu::IRQ, Job::Irq(job));
        if self.delivery.folds {
            self.fold_entry(cpu);
        }
    }

    /// As [`Machine::offer`], from inside a job's end on `cpu` (a critical
    /// section's exit): the interrupt is posted, and the thread's dispatch
    /// after that job starts it. Whether `cpu` took one.
    pub(crate) fn offer_posted(&mut self, cpu: usize) -> bool {
        let Some(job) = self.accept(cpu) else { return false };
        self.post(cpu, crate::cpu::IRQ, Job::Irq(job));
        true
    }

    /// `cpu` takes its controllers' most urgent interrupt, if its
    /// interrupts are enabled and its mask is down: the first job of the
    /// interrupt path (the optimistic prologue's mask test, with critical
    /// sections under optimistic protection).
    #[inline(always)]
    fn accept(&mut self, cpu: usize) -> Option<IrqJob> {
        let taken = self.take_offered(cpu)?;
        Some(self.accepted(cpu, taken))
    }

    /// The interrupt `cpu`'s controllers give it, if its interrupts are
    /// enabled and its mask is down.
    #[inline(always)]
    fn take_offered(&mut self, cpu: usize) -> Option<Taken> {
        if self.delivery.in_irq[cpu] || self.masking.masks(cpu) {
            return None;
        }
        self.delivery.intc.take(cpu)
    }

    /// `cpu` took `taken`: in the interrupt, the first job of its path.
    #[inline(always)]
    fn accepted(&mut self, cpu: usize, taken: Taken) -> IrqJob {
        let d = &mut self.delivery;
        let now = self.queue.now();
        d.in_irq[cpu] = true;
        if taken.rec.is_some() {
            d.counters.taken_unclaimed += 1;
        }
        d.taken[cpu] = taken.rec;
        // The device event this interrupt answers: its MSI leaving the
        // device, or the first raised status bit on the shared line.
        let mut from = taken.rec.map(|r| r.sent);
        let legacy = d.intc.legacy(taken.input);
        for &src in &d.chains[taken.input as usize] {
            let s = &d.sources[src];
            if legacy && !s.claimed && s.status.is_some_and(|r| r.data > now) {
                d.counters.overtook_data += 1;
            }
            if !s.claimed {
                from = from.or(s.status.map(|r| r.sent));
            }
        }
        self.timeline.flow_from(cpu, crate::cpu::IRQ, from.unwrap_or(now), "interrupt");
        d.step[cpu] = d.path.entry_cycles + taken.ack_cycles;
        let (input, cpu) = (taken.input as u16, cpu as u16);
        let optimistic = self.masking.wired && self.masking.scheme == crate::masking::Scheme::Optimistic;
        if optimistic { IrqJob::Prologue { input, cpu } } else { IrqJob::Entry { input, cpu } }
    }

    /// The interrupt `cpu` was handling is over: interrupts are enabled again.
    #[inline(never)]
    pub(super) fn interrupt_done(&mut self, cpu: usize) {
        self.delivery.in_irq[cpu] = false;
        self.offer(cpu);
    }
}

/// The run of bundled scenario `file` with `sets`, `tweak` applied to the
/// machine once started, and the events it applied early: the tests of
/// steps applied at once (`eoi.rs`, `napi/fold.rs`).
#[cfg(test)]
pub(super) fn tweaked_run(file: &str, sets: &[&str], tweak: impl FnOnce(&mut Machine)) -> (crate::report::Report, u64) {
    tweaked_run_read(file, sets, tweak, |m| m.delivery.applied_early)
}

/// [`tweaked_run`], with what `read` takes from the machine after the run
/// instead of the events applied early.
#[cfg(test)]
pub(super) fn tweaked_run_read<R>(file: &str, sets: &[&str], tweak: impl FnOnce(&mut Machine), read: impl FnOnce(&Machine) -> R) -> (crate::report::Report, R) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios").join(file);
    let overrides: Vec<_> = sets.iter().map(|s| crate::config::parse_override(s).unwrap()).collect();
    let s = Scenario::from_file(&path, &overrides).unwrap();
    let mut m = Machine::new(&s, path.parent().unwrap(), super::Record::default()).unwrap();
    m.start().unwrap();
    tweak(&mut m);
    m.event_loop(&mut crate::monitor::Unwatched).unwrap();
    let read = read(&m);
    (crate::report::Report::new(m), read)
}

/// Each case's run (bundled scenario, settings, whether steps are applied
/// early there) with and without `tweak(machine, on)`: the same report, the
/// events counted included, and more than 50 events applied early with it
/// exactly where the case says (the tests of folded steps, `linux.rs`,
/// `napi/fold.rs`).
#[cfg(test)]
pub(super) fn assert_reports_unchanged(cases: &[(&str, &[&str], bool)], tweak: impl Fn(&mut Machine, bool)) {
    for &(file, sets, early) in cases {
        let ((a, on), (b, off)) = (tweaked_run(file, sets, |m| tweak(m, true)), tweaked_run(file, sets, |m| tweak(m, false)));
        assert!(a.metric("events").unwrap() > 500.0, "{file} {sets:?}");
        assert_eq!(a.to_json(), b.to_json(), "{file} {sets:?}");
        assert_eq!(on > off + 50, early, "{file} {sets:?}: {on} applied early with it, {off} without");
    }
}

fn signal_label(s: Signal) -> &'static str {
    match s {
        Signal::Lapic(_) => "IO-APIC message",
        Signal::Unmask(_) => "8259 unmask",
        Signal::Eoi(_) => "EOI broadcast",
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Machine, Record};
    use crate::config::{Scenario, parse_override};
    use crate::report::Report;
    use std::path::Path;

    /// The run of bundled scenario `file` with `sets`, its signature writes
    /// recorded as issued or as events when they land.
    fn run(file: &str, sets: &[&str], at_issue: bool) -> Report {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios").join(file);
        let overrides: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
        let s = Scenario::from_file(&path, &overrides).unwrap();
        let mut m = Machine::new(&s, path.parent().unwrap(), Record::default()).unwrap();
        m.delivery.at_issue &= at_issue;
        m.simulate(&mut crate::monitor::Unwatched).unwrap();
        assert_eq!(m.delivery.at_issue, at_issue, "{file}: one exerciser, no stepped parts");
        Report::new(m)
    }

    /// Recording a signature write as it is issued changes nothing reported:
    /// its latency, the records' order (a legacy line's clears still land
    /// as events, between them), the records cut at `max_packet_records`,
    /// the writes that land after the end, and the events counted.
    #[test]
    fn signatures_recorded_at_issue_report_as_landing() {
        let scaling = ["cpu.threads=8", "intc.vectors=8", "workload.rate_per_s=160000", "run.duration_ms=5"];
        let cases: [(&str, &[&str]); 5] = [
            ("msi-latency/workstation-loaded.toml", &["run.duration_ms=20", "intc.kind=xtpic"]),
            ("msi-latency/workstation-loaded.toml", &["run.duration_ms=20", "intc.kind=ioapic", "stats.max_packet_records=300"]),
            ("msi-latency/workstation-loaded.toml", &["run.duration_ms=20"]),
            ("msi-latency/soc-idle.toml", &["intc.kind=ioapic"]),
            ("bench/msix-scaling.toml", &scaling),
        ];
        for (file, sets) in cases {
            let (a, b) = (run(file, sets, true), run(file, sets, false));
            assert!(a.metric("events").unwrap() > 500.0 && !a.records.is_empty(), "{file} {sets:?}");
            assert_eq!(a.to_json(), b.to_json(), "{file} {sets:?}");
            assert_eq!(a.records, b.records, "{file} {sets:?}");
        }
    }
}
