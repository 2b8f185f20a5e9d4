//! The programmable NIC as a device a machine drives: its firmware cores
//! and its hardware ([`crate::nic`]) behind a small interface.
//!
//! - [`Nic::advance`] runs the cores and the hardware to a cycle and
//!   reports what the host must see ([`Effect`]s): DMA writes into host
//!   memory, frames put on the wire, interrupt requests. Host memory is
//!   whatever implements [`HostMemory`]; the DMA engines read and write it
//!   at the cycle their descriptors complete.
//! - [`Nic::frame_arrives`] and [`Nic::host_writes_mailbox`] are the wire's
//!   and the host driver's inputs: a frame at its arrival cycle, now or
//!   later (the wire knows it ahead), a mailbox write now.
//!
//! Time: the device is at the start of cycle [`Nic::now`], its hardware
//! having retired what is due by then and its cores not yet having run
//! it; inputs given now act before the cores run this cycle. Between
//! calls the cores run to the next hardware event, never cycle by cycle:
//! a register write that queues work stops them (the new event may come
//! first), and every core runs to the event before the hardware acts on
//! it, so cores and hardware see one another in cycle order, cores within
//! a cycle in index order. Several cores take turns in that order; a core
//! whose turn is over runs up to [`AHEAD`] cycles ahead through work no
//! other core can see (its stack and registers), and what it issued past
//! the cycle `advance` returns at is not counted there
//! ([`Nic::instructions`], the profile). `advance` returns at its target
//! or at the end of the first cycle in which a frame left, an interrupt
//! was asked for or a host address the host watches was written
//! ([`Nic::watch_host_writes`]), whichever is first, so the host can act
//! on them at that cycle (other DMA writes are reported with their cycle
//! but do not end it: their bytes are in host memory from that cycle on).
//! Frames given ahead ([`Nic::frame_arrives`]) end nothing: the cores run
//! on, and each lands when its cycle comes; [`Nic::landings`] says which
//! took a slot.
//!
//! Bad firmware stops `advance` with one [`Error::Stopped`] naming the
//! program, the function and the PC: a fault or an unsupported
//! instruction (irqsim-mips's message, with the core and cycle; with
//! several cores, a store into the firmware's read-only data or `fw_cfg`
//! too, which cores run ahead load at any cycle: [`read_only`]), leaving
//! the dispatch loop, or a core that has not read the event flags for
//! [`WATCHDOG_CYCLES`] (an infinite loop), checked at least every
//! 2^18 cycles. (Ctrl-C is the machine's: it runs the device in
//! slices and polls between them.)

use crate::config::{NicConfig, Organisation};
use crate::error::Error;
use crate::nic::{Arrival, Hardware, Mailbox};
use crate::profile::{Functions, HANDLERS, Profile, Recorder};
use irqsim_mips::mem::PAGE_BYTES;
use irqsim_mips::run::STACK_TOP;
use irqsim_mips::{Context, Program, Stop, System, SystemConfig};
use std::ops::Range;

/// Core `k`'s stack top is `k` times this below [`STACK_TOP`]; the lowest
/// whole page of each such span is a guard (a write there is a stack
/// overflow fault), leaving each core 60 KiB of stack.
const STACK_BYTES: u32 = 0x2_0000;

/// Cycles a core may run ahead of the others, and past the cycle the cores
/// are run to, through work they and the hardware cannot see
/// (irqsim-mips's `System::run_ahead`: its own stack and registers only).
/// Any bound gives the same reports; 64 ends fewer private stretches than 16
/// (at 6 cores 57,158 rather than 86,197 of about 320,000 in 4,400 frames).
pub const AHEAD: u64 = 64;

/// Cycles a core may run without reading the event flags before the run
/// stops as an infinite loop. The dispatch loop reads them every pass; the
/// longest stretch without in frame-level runs of 1-6 cores and both frame
/// sizes (4,000 frames) is 6,769 cycles: a handler's batch and the lock
/// waits behind the other cores'.
pub const WATCHDOG_CYCLES: u64 = 1_000_000;

/// Cycles between two checks of the watchdog.
const CHECK_CYCLES: u64 = 1 << 18;

/// Cycles cores that run ahead run before their waiting issues are settled
/// (a core issues at most one instruction a cycle, so at most this many
/// and [`AHEAD`] wait per core in the profile).
const SETTLE_CYCLES: u64 = 1 << 12;

/// The host's memory as the NIC's DMA engines see it (32-bit words).
pub trait HostMemory {
    fn read(&mut self, addr: u32) -> u32;
    fn write(&mut self, addr: u32, value: u32);

    /// The words from `addr` on into `out` (a DMA read's copy).
    fn read_words(&mut self, addr: u32, out: &mut [u32]) {
        for (k, w) in out.iter_mut().enumerate() {
            *w = self.read(addr.wrapping_add(4 * k as u32));
        }
    }

    /// `words` from `addr` on (a DMA write's copy).
    fn write_words(&mut self, addr: u32, words: &[u32]) {
        for (k, &w) in words.iter().enumerate() {
            self.write(addr.wrapping_add(4 * k as u32), w);
        }
    }
}

/// What the host must see, stamped with the core cycle it happened in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// The DMA write engine finished a descriptor: `len` bytes at host
    /// address `addr` (already in host memory).
    DmaWrite { at: u64, addr: u32, len: u32 },
    /// A frame's last bit left on the wire: its header (sequence number) and length.
    Transmit { at: u64, seq: u32, len: u32 },
    /// The firmware asked for a host interrupt on `vector` (its register write's value).
    Interrupt { at: u64, vector: u32 },
}

/// The NIC: N cores running the firmware against its hardware.
pub struct Nic {
    sys: System<Hardware>,
    functions: Functions,
    now: u64,
    /// When the watchdog is next checked.
    check_at: u64,
    /// Per core, the memory no other core touches (its stack), when several cores run ahead.
    private: Vec<Range<u32>>,
    /// Memory no core writes, which cores run ahead load from at any cycle ([`read_only`]).
    read_only: Vec<Range<u32>>,
    /// Cycles a core may run ahead ([`AHEAD`]; 0: in lockstep).
    ahead: u64,
    /// Host addresses whose DMA writes end [`Nic::advance`] ([`Nic::watch_host_writes`]).
    watched: Range<u32>,
}

/// Memory no core writes: the firmware's read-only data (`.rodata*`) and
/// `fw_cfg` (written by [`Nic::new`] before the cores run), whole words
/// within each. Cores run ahead load them at any cycle (a store there
/// faults: irqsim-mips's `System::run_ahead`); in the dispatch loop each
/// pass reads `fw_cfg` and the event table `prio_src`, which otherwise
/// end a core's turn (at 6 cores about 10% of turns ended there).
fn read_only(p: &Program, fw_cfg: u32) -> Vec<Range<u32>> {
    let cfg = p.symbols.iter().find(|s| s.name == "fw_cfg").map_or(0, |s| s.size);
    let rodata = p.sections.iter().filter(|s| s.name.starts_with(".rodata")).map(|s| (s.addr, s.size));
    rodata.chain([(fw_cfg, cfg)]).map(|(a, n)| a.next_multiple_of(4)..(a + n) & !3).filter(|r| !r.is_empty()).collect()
}

fn symbol(p: &Program, name: &str) -> Result<u32, Error> {
    p.symbol(name).ok_or_else(|| Error::Input(format!("{}: no symbol {name} (is this the NIC firmware?)", p.name)))
}

/// The handler owners the firmware is given: `owners` for task-level
/// (required), every handler on any core for frame-level.
fn owners_of(cfg: &NicConfig, owners: Option<&[u32]>) -> Result<Vec<u32>, Error> {
    let owners: Vec<u32> = match (cfg.organisation, owners) {
        (Organisation::Task, Some(o)) => o.to_vec(),
        (Organisation::Task, None) => return Err(Error::Config("organisation: task-level needs handler owners (from a 1-core profile)".into())),
        (Organisation::Frame, _) => vec![0; HANDLERS.len()],
    };
    if let Some(k) = owners.iter().find(|&&k| k as usize >= cfg.cores) {
        return Err(Error::Config(format!("owners: core {k} does not exist (cores is {})", cfg.cores)));
    }
    Ok(owners)
}

impl Nic {
    /// Loads `program` (the NIC firmware) on `cfg.cores` cores, each
    /// starting in `fw_main` at cycle 0; `owners` (task-level) assigns
    /// handlers to cores. Returns the device and the owners it uses.
    pub fn new(program: &Program, cfg: &NicConfig, owners: Option<&[u32]>) -> Result<(Nic, Vec<u32>), Error> {
        let owners = owners_of(cfg, owners)?;
        let (main, gp, fw_cfg) = (symbol(program, "fw_main")?, symbol(program, "_gp")?, symbol(program, "fw_cfg")?);
        let functions = Functions::new(program);
        let hw = Hardware::new(cfg, Recorder::new(&functions, cfg.cores, cfg.cores > 1));
        let mut sys = System::new(program.clone(), &SystemConfig { cores: cfg.cores, ..SystemConfig::default() }, hw);
        let words = [(cfg.organisation == Organisation::Frame) as u32, cfg.batch].into_iter().chain(owners.iter().copied());
        for (i, w) in words.enumerate() {
            sys.mem.write_u32(fw_cfg + 4 * i as u32, w);
        }
        for k in 0..cfg.cores {
            let top = STACK_TOP - k as u32 * STACK_BYTES;
            let lo = top - STACK_BYTES;
            sys.mem.guard(lo, lo.next_multiple_of(PAGE_BYTES) + PAGE_BYTES);
            let mut ctx = Context::call(main, top, &[]);
            ctx.r[28] = gp; // $gp: small data, as start.S sets it
            sys.start(k, 0, ctx, 0);
        }
        // Each core's stack above its guard page (and so above the next core's outgoing arguments).
        let private = (0..cfg.cores as u32)
            .map(|k| {
                let top = STACK_TOP - k * STACK_BYTES;
                (top - STACK_BYTES).next_multiple_of(PAGE_BYTES) + PAGE_BYTES..top
            })
            .collect();
        let read_only = read_only(program, fw_cfg);
        Ok((Nic { sys, functions, now: 0, check_at: CHECK_CYCLES, private, read_only, ahead: AHEAD, watched: 0..0 }, owners))
    }

    /// Lets cores run up to `cycles` ahead of one another through work the
    /// others cannot see ([`AHEAD`] by default; 0 runs them in lockstep, as
    /// before run-ahead): nothing the host, the wire or the profile sees changes.
    pub fn set_ahead(&mut self, cycles: u64) {
        self.ahead = cycles.min(AHEAD);
    }

    /// The cycle the device is at (see the module's note on time).
    pub fn now(&self) -> u64 {
        self.now
    }

    pub fn hardware(&self) -> &Hardware {
        &self.sys.devices
    }

    pub fn program(&self) -> &Program {
        &self.sys.program
    }

    pub fn functions(&self) -> &Functions {
        &self.functions
    }

    /// Instructions the cores have completed before [`Nic::now`].
    pub fn instructions(&self) -> u64 {
        let all: u64 = self.sys.cores.iter().map(|c| c.threads[0].instructions).sum();
        all - self.sys.devices.recorder.issued_since(self.now)
    }

    /// Frame `a` from the wire, arriving at the start of cycle `a.at` (now
    /// or later, in order): it lands in a receive slot, stamped with its
    /// number among those accepted and with `a.hash` (its flow's RSS hash),
    /// or is dropped if the firmware has freed none.
    pub fn frame_arrives(&mut self, a: Arrival) {
        debug_assert!(a.at >= self.now, "a frame arriving at {}, before {}", a.at, self.now);
        self.sys.devices.frame_arrives(a);
    }

    /// Frames given that have not landed, tagged after `tag`, never arrive; returns how many.
    pub fn withdraw_after(&mut self, tag: u64) -> usize {
        self.sys.devices.withdraw_after(tag)
    }

    /// Gives firmware that moderates its host interrupts (`-DFW_COAL`:
    /// symbol `fw_coal`) return ring `ring`'s frame count and timer (NIC
    /// cycles; 0 turns either rule off; with several rings, `-DFW_RSS
    /// -DFW_COAL`, `fw_coal` holds a pair per ring), as a host driver writes a Tigon's host-coalescing
    /// parameters through the NIC's memory window: before the cores run,
    /// or at any later cycle (DIM). The two words change at the start of
    /// [`Nic::now`], before any core issues there (a core past its turn
    /// has run ahead through its own stack and registers only), so the
    /// firmware counts each batch from then on against the new count and
    /// arms its timer, at the next first frame, with the new delay; a
    /// timer already armed keeps its expiry. An error names the program
    /// when it has none (it interrupts after each batch).
    pub fn coalesce(&mut self, ring: u32, frames: u32, cycles: u32) -> Result<(), Error> {
        let p = &self.sys.program;
        let Some(at) = p.symbol("fw_coal").map(|a| a + 8 * ring) else {
            return Err(Error::Input(format!("{}: interrupts after each batch of returned frames (no `fw_coal`: build it with -DFW_COAL)", p.name)));
        };
        self.sys.mem.write_u32(at, frames);
        self.sys.mem.write_u32(at + 4, cycles);
        Ok(())
    }

    /// The host writes its interrupt mask (bit q: ring q's interrupt
    /// masked, as the Tigon's `MaskInt`) into firmware that moderates
    /// (`fw_masked`, -DFW_COAL), at [`Nic::now`]; firmware without the word
    /// ignores the host's mask.
    pub fn host_masks(&mut self, word: u32) {
        if let Some(at) = self.sys.program.symbol("fw_masked") {
            self.sys.mem.write_u32(at, word);
        }
    }

    /// Return ring `ring`'s coalescing words as the firmware reads them
    /// (frames, timer cycles); `None` for firmware without `fw_coal`.
    pub fn coalescing(&self, ring: u32) -> Option<(u32, u32)> {
        let at = self.sys.program.symbol("fw_coal")? + 8 * ring;
        Some((self.sys.mem.read_u32(at), self.sys.mem.read_u32(at + 4)))
    }

    /// Gives firmware that steers received frames over several return
    /// rings (`-DFW_RSS`: symbols `fw_rings` and `fw_indir`) its
    /// indirection table, one ring per entry, as a host driver writes an
    /// RSS NIC's (`ethtool -X`); before the cores run. An error names the
    /// program when it has no such table (it returns frames on one ring).
    pub fn steer(&mut self, table: &[u8]) -> Result<(), Error> {
        debug_assert_eq!(self.now, 0, "before the cores run");
        let p = &self.sys.program;
        let (Some(rings), Some(indir)) = (p.symbol("fw_rings"), p.symbol("fw_indir")) else {
            return Err(Error::Input(format!("{}: returns frames on one ring (no `fw_rings`, `fw_indir`: build it with -DFW_RSS)", p.name)));
        };
        let n = table.iter().max().map_or(1, |&q| u32::from(q) + 1);
        self.sys.mem.write_u32(rings, n);
        for (i, &q) in table.iter().enumerate() {
            self.sys.mem.write_u8(indir + i as u32, q);
        }
        Ok(())
    }

    /// The frames given that took a receive slot since the last call, and
    /// the tags of those the MAC dropped, each in order. Their owner drains
    /// them (the logs grow by a frame landed).
    pub fn landings(&mut self) -> (std::vec::Drain<'_, Arrival>, std::vec::Drain<'_, u64>) {
        self.sys.devices.landings()
    }

    /// Frames given that have not landed yet (arriving after [`Nic::now`],
    /// or in its cycle and not yet looked at).
    pub fn arriving(&self) -> u64 {
        self.sys.devices.arriving() as u64
    }

    /// DMA writes into host memory in `range` end [`Nic::advance`] at the
    /// end of their cycle too, so the host can read what they wrote then
    /// (a status block it polls); by default only frames sent and interrupts do.
    pub fn watch_host_writes(&mut self, range: Range<u32>) {
        self.watched = range;
    }

    /// The host driver writes a mailbox (its producer index), now.
    pub fn host_writes_mailbox(&mut self, mailbox: Mailbox, value: u64) {
        self.sys.devices.host_writes_mailbox(mailbox, value);
    }

    /// Runs to cycle `to` (later than [`Nic::now`]), or to the end of the
    /// first cycle in which a frame left, an interrupt was asked for or a
    /// watched host address was written, appending the effects to `effects` in time order.
    pub fn advance(&mut self, to: u64, host: &mut dyn HostMemory, effects: &mut Vec<Effect>) -> Result<(), Error> {
        debug_assert!(to > self.now, "advance to {to} from {}", self.now);
        loop {
            // Never past the next check: an infinite loop is caught within a check's cycles.
            let mut until = to.min(self.sys.devices.next_event()).min(self.check_at);
            loop {
                let stop = if self.private.len() > 1 { self.run_ahead(&mut until) } else { self.sys.run(until) };
                match stop {
                    Stop::Limit | Stop::Idle => break,
                    // A register write queued work or asked for an interrupt: the host sees it the next cycle.
                    Stop::Device { .. } => until = until.min(self.sys.devices.stop_by()),
                    Stop::Fault { core, error, .. } => return Err(Error::Stopped(format!("{error} on core {core}, cycle {}", self.sys.cores[core].now))),
                    Stop::Returned { core, .. } => return Err(self.stopped(core, "returned from fw_main", None)),
                    Stop::Syscall { core, .. } => {
                        let pc = self.sys.cores[core].threads[0].ctx.pc.wrapping_sub(4);
                        return Err(self.stopped(core, "made a system call", Some(pc)));
                    }
                }
            }
            self.now = until;
            self.sys.devices.recorder.settle(until);
            self.watch()?;
            let hw = &mut self.sys.devices;
            let before = effects.len();
            effects.extend(hw.interrupts.drain(..).map(|(at, vector)| Effect::Interrupt { at, vector }));
            hw.retire(until, host, effects);
            hw.arrive_by(until);
            let ends = |e: &Effect| !matches!(e, Effect::DmaWrite { addr, .. } if !self.watched.contains(addr));
            if until == to || effects[before..].iter().any(ends) {
                return Ok(());
            }
        }
    }

    /// Several cores run ahead to `until` (irqsim-mips's `System::run_ahead`)
    /// [`SETTLE_CYCLES`] at a time, the profile's waiting issues settled at
    /// each stretch's end: every core has reached it, so no later stop falls
    /// before it, and the waiting issues stay few however far `until` is.
    /// A register write that queues work or asks for an interrupt lowers
    /// `until` ([`Hardware::stop_by`]) within the run, as the single core's
    /// [`Stop::Device`] does in [`Nic::advance`].
    fn run_ahead(&mut self, until: &mut u64) -> Stop {
        let mut part = self.now;
        loop {
            part = (*until).min(part.saturating_add(SETTLE_CYCLES));
            let stop = self.sys.run_ahead(part, &self.private, &self.read_only, self.ahead, Some(Hardware::stop_by));
            let by = self.sys.devices.stop_by();
            (*until, part) = ((*until).min(by), part.min(by));
            if part == *until || stop != Stop::Limit {
                return stop;
            }
            self.sys.devices.recorder.settle(part);
        }
    }

    /// Stops a run whose cores loop without reading the event flags (see the module's note).
    fn watch(&mut self) -> Result<(), Error> {
        let polled = &self.sys.devices.polled;
        if let Some(k) = (0..polled.len()).find(|&k| self.now.saturating_sub(polled[k]) > WATCHDOG_CYCLES) {
            let pc = self.sys.cores[k].threads[0].ctx.pc;
            return Err(self.stopped(k, &format!("has not read the event flags for {WATCHDOG_CYCLES} cycles (an infinite loop?)"), Some(pc)));
        }
        if self.now >= self.check_at {
            self.check_at = self.now + CHECK_CYCLES;
        }
        Ok(())
    }

    /// Core `k` stopped doing the firmware's work (`what`), at `pc` if known.
    fn stopped(&self, k: usize, what: &str, pc: Option<u32>) -> Error {
        let p = &self.sys.program;
        let at = pc.map_or(String::new(), |pc| format!("{} at pc 0x{pc:08x}", p.place(pc)));
        Error::Stopped(format!("{}: core {k} {what}{at}, cycle {}", p.name, self.sys.cores[k].now))
    }

    /// Starts the profile now (see [`crate::profile`]).
    pub fn begin_profile(&mut self) {
        self.sys.devices.recorder.begin(self.now);
    }

    /// Ends the profile now and returns it.
    pub fn finish_profile(&mut self) -> Profile {
        let pcs: Vec<u32> = self.sys.cores.iter().map(|c| c.threads[0].ctx.pc).collect();
        self.sys.devices.recorder.finish(self.now, &pcs, &self.functions)
    }
}
