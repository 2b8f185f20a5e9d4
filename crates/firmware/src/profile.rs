//! Where the firmware's cycles go, by program counter: per-instruction
//! execution counts (the basic-block weights of the VLIW study) and
//! cycles, and their roll-up by function and by handler. A core's cycle is
//! charged to the instruction it is issuing or stalled on: as each
//! instruction issues, the [`Recorder`] charges it the cycles since the
//! core's previous issue, so the cores run at the simulator's speed and
//! nothing is done per cycle. A block of code run whole (irqsim-mips's
//! `Devices::issued_block`) on a core that does not run ahead is counted
//! once, per (handler, block): its instructions' cycles after the first are
//! fixed by the block's schedule, so they are expanded onto its words only
//! when the profile is taken.

use irqsim_mips::Program;
use irqsim_mips::block::Step;

/// The firmware's top-level handlers, in the order of `enum handler` in
/// programs/firmware/fw.c (the index is what `fw_cfg.owner` is indexed by).
pub const HANDLERS: [&str; 8] =
    ["mailbox", "fetch_send_bds", "fetch_recv_bds", "dma_read_complete", "fetch_frame_data", "receive", "dma_write_complete", "send_complete"];
/// Index of "in the dispatch loop, in no handler".
pub const DISPATCH: usize = HANDLERS.len();

/// What kind of time a function's own cycles are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Spinning on or taking a lock (lock_acquire, try_lock).
    Lock,
    /// Keeping frames in order (deliver_in_order).
    Ordering,
    /// Waiting for room in a DMA queue (dma_wait_space).
    DmaWait,
    Work,
}

/// Functions of a program, and which one each text word belongs to.
#[derive(Clone)]
pub struct Functions {
    pub base: u32,
    pub names: Vec<String>,
    pub kinds: Vec<Kind>,
    /// Handler index of each function (None: not a top-level handler).
    pub handler: Vec<Option<usize>>,
    pub entry: Vec<u32>,
    of_word: Vec<u16>,
    pub dispatch: Option<u16>,
}

pub const NO_FUNCTION: u16 = u16::MAX;

impl Functions {
    pub fn new(p: &Program) -> Self {
        let exec = p.segments.iter().filter(|s| s.executable);
        let base = exec.clone().map(|s| s.vaddr & !3).min().unwrap_or(0);
        let end = exec.map(|s| s.vaddr + s.memsz).max().unwrap_or(0);
        let mut f = Functions {
            base,
            names: vec![],
            kinds: vec![],
            handler: vec![],
            entry: vec![],
            of_word: vec![NO_FUNCTION; ((end - base) / 4) as usize],
            dispatch: None,
        };
        let mut syms: Vec<_> = p.symbols.iter().filter(|s| s.size > 0 && s.addr >= base && s.addr < end).collect();
        syms.sort_by_key(|s| (s.addr, s.name.clone()));
        syms.dedup_by_key(|s| s.addr);
        for s in syms {
            let id = f.names.len() as u16;
            let kind = match s.name.as_str() {
                "lock_acquire" | "try_lock" => Kind::Lock,
                "deliver_in_order" => Kind::Ordering,
                "dma_wait_space" => Kind::DmaWait,
                _ => Kind::Work,
            };
            if s.name == "fw_main" {
                f.dispatch = Some(id);
            }
            f.names.push(s.name.clone());
            f.kinds.push(kind);
            f.handler.push(HANDLERS.iter().position(|h| *h == s.name));
            f.entry.push(s.addr);
            let lo = ((s.addr - base) / 4) as usize;
            let hi = (((s.addr + s.size).min(end) - base) / 4) as usize;
            f.of_word[lo..hi].fill(id);
        }
        f
    }

    /// Index of the text word at `pc`, if in the text.
    #[inline]
    pub fn word(&self, pc: u32) -> Option<usize> {
        let i = (pc.wrapping_sub(self.base) / 4) as usize;
        (pc >= self.base && i < self.of_word.len()).then_some(i)
    }

    #[inline]
    pub fn of(&self, word: usize) -> u16 {
        self.of_word[word]
    }

    pub fn words(&self) -> usize {
        self.of_word.len()
    }
}

/// Counts gathered while measuring.
pub struct Profile {
    /// Per text word: times executed, and cycles charged to it.
    pub executed: Vec<u64>,
    pub cycles: Vec<u64>,
    /// Per handler (and [`DISPATCH`]): cycles and instructions including
    /// everything it calls, and invocations.
    pub handler_cycles: [u64; DISPATCH + 1],
    pub handler_instructions: [u64; DISPATCH + 1],
    pub invocations: [u64; DISPATCH + 1],
    /// Cycles by kind of time, split by whether a handler was running.
    pub lock: u64,
    pub ordering: u64,
    pub dma_wait: u64,
    pub handler_work: u64,
    pub dispatch_work: u64,
}

impl Profile {
    /// Executed-instruction counts by text address, nonzero only.
    pub fn counts(&self, f: &Functions) -> Vec<(u32, u64)> {
        self.executed.iter().enumerate().filter(|e| *e.1 > 0).map(|(w, &n)| (f.base + 4 * w as u32, n)).collect()
    }
}

/// Per text word, the handler a core is in once it runs there: its own
/// handler, the dispatch loop, or (a function they call) the one it was in.
/// Kept as the handler's row in [`Recorder`]'s cells (`handler * words`).
const KEEP: u32 = u32::MAX;

/// One core's place: the cycle of its last issue and the row of the handler it is in.
#[derive(Clone, Copy, Default)]
struct Place {
    last: u64,
    row: u32,
}

const UNSEEN: u8 = 0;
/// A block that enters a handler after its first word, reaches past the
/// text or is run at more than one length: charged instruction by
/// instruction.
const IRREGULAR: u8 = u8::MAX;

/// Gathers a [`Profile`] as instructions issue: per core, the cycle of its
/// last issue and the handler it is in; per (handler, word), executions
/// and cycles, each handler's words side by side (a handler's hot words
/// share cache lines); per (handler, block entry), the runs of blocks.
/// Cores that run ahead ([`irqsim_mips::System::run_ahead`]) may issue
/// past the cycle the NIC stops at (by at most [`crate::device::AHEAD`]
/// cycles), and a window's edge may fall there: their issues wait, in
/// order, until [`Recorder::settle`] says the NIC has passed them, so an
/// edge counts only what issued before it and nothing is taken back.
pub struct Recorder {
    on: bool,
    base: u32,
    /// Per word, the row it enters (its handler's index times `words`) or [`KEEP`].
    enter: Vec<u32>,
    words: usize,
    places: Vec<Place>,
    /// Indexed by `handler * words + word`: (executions, cycles).
    cells: Vec<[u64; 2]>,
    /// Indexed as `cells`, by a block's entry word: the block's runs, and
    /// the cycles charged to its first instruction.
    runs: Vec<[u64; 2]>,
    /// Per entry word, the block counted in `runs` there: its length
    /// ([`UNSEEN`] before its first run, [`IRREGULAR`] if it is charged
    /// instruction by instruction) and its instructions' issue offsets.
    shape: Vec<u8>,
    offsets: Vec<Box<[u32]>>,
    /// Per core (when cores run ahead): its issues not yet settled, (cycle, PC), in issue order.
    pending: Vec<Vec<(u64, u32)>>,
}

impl Recorder {
    /// A recorder for `cores` cores; `ahead`: they run ahead of one another.
    pub fn new(f: &Functions, cores: usize, ahead: bool) -> Self {
        let words = f.words();
        let enter = (0..words)
            .map(|w| match f.of(w) {
                NO_FUNCTION => KEEP,
                id if f.dispatch == Some(id) => DISPATCH as u32 * words as u32,
                id => f.handler[id as usize].map_or(KEEP, |h| h as u32 * words as u32),
            })
            .collect();
        let places = vec![Place { last: 0, row: DISPATCH as u32 * words as u32 }; cores];
        let pending = if ahead { vec![Vec::new(); cores] } else { vec![] };
        let cells = vec![[0; 2]; (DISPATCH + 1) * f.words()];
        let (shape, offsets) = (vec![UNSEEN; f.words()], vec![Box::default(); f.words()]);
        Recorder { on: false, base: f.base, enter, words, places, runs: cells.clone(), cells, shape, offsets, pending }
    }

    /// Starts charging at cycle `at`; every core is taken to be in the
    /// dispatch loop until it runs elsewhere. Issues at or after `at` by
    /// cores already past it are charged as they settle.
    pub fn begin(&mut self, at: u64) {
        self.settle(at);
        self.on = true;
        self.places.fill(Place { last: at.wrapping_sub(1), row: (DISPATCH * self.words) as u32 });
    }

    /// The NIC has reached cycle `now`: the waiting issues before it are
    /// charged (if on) in each core's order; those at or after it wait on.
    #[inline(always)]
    pub fn settle(&mut self, now: u64) {
        if !self.pending.is_empty() {
            self.settle_pending(now);
        }
    }

    fn settle_pending(&mut self, now: u64) {
        for k in 0..self.pending.len() {
            let mut q = std::mem::take(&mut self.pending[k]);
            let n = q.partition_point(|&(cycle, _)| cycle < now);
            if self.on {
                for &(cycle, pc) in &q[..n] {
                    self.charge(k, pc, cycle, 1);
                }
            }
            q.drain(..n);
            self.pending[k] = q;
        }
    }

    /// Instructions issued at or after cycle `at` (by cores run ahead).
    pub fn issued_since(&self, at: u64) -> u64 {
        self.pending.iter().map(|q| (q.len() - q.partition_point(|&(cycle, _)| cycle < at)) as u64).sum()
    }

    /// Charges the cycles since `core`'s last issue, up to `now`, to the
    /// instruction at `pc` (`executed`: it issued at `now`, else the core
    /// waits on it).
    #[inline(always)]
    fn charge(&mut self, core: usize, pc: u32, now: u64, executed: u64) {
        let w = (pc.wrapping_sub(self.base) / 4) as usize;
        let (Some(&enter), Some(p)) = (self.enter.get(w), self.places.get_mut(core)) else {
            return;
        };
        if enter != KEEP {
            p.row = enter;
        }
        if let Some(cell) = self.cells.get_mut(p.row as usize + w) {
            cell[0] += executed;
            cell[1] += now - p.last;
            p.last = now;
        }
    }

    /// The instruction at `pc` issued at `cycle` on hardware thread `core`:
    /// it is charged the cycles since that core's last issue (on a core run
    /// ahead, once settled).
    #[inline(always)]
    pub fn issued(&mut self, core: usize, pc: u32, cycle: u64) {
        if let Some(q) = self.pending.get_mut(core) {
            q.push((cycle, pc));
            return;
        }
        if self.on {
            self.charge(core, pc, cycle, 1);
        }
    }

    /// The block entered at `pc` ran `steps` on hardware thread `core`
    /// from cycle `t0` (see irqsim-mips's `Devices::issued_block`): one run
    /// of the block counted, and the cycles since the core's last issue
    /// charged to its first instruction; the rest is expanded at
    /// [`Recorder::finish`]. Cores that run ahead keep each issue.
    #[inline(always)]
    pub fn issued_block(&mut self, core: usize, pc: u32, t0: u64, steps: &[Step]) {
        if let Some(q) = self.pending.get_mut(core) {
            q.extend(steps.iter().enumerate().map(|(j, s)| (t0 + u64::from(s.off), pc.wrapping_add(4 * j as u32))));
            return;
        }
        let w = (pc.wrapping_sub(self.base) / 4) as usize;
        let (true, Some(&n), Some(first), Some(last)) = (self.on, self.shape.get(w), steps.first(), steps.last()) else {
            return;
        };
        if n as usize != steps.len() {
            return self.irregular(core, pc, t0, steps);
        }
        let (enter, Some(p)) = (self.enter[w], self.places.get_mut(core)) else { return };
        if enter != KEEP {
            p.row = enter;
        }
        let run = &mut self.runs[p.row as usize + w];
        run[0] += 1;
        run[1] += t0 + u64::from(first.off) - p.last;
        p.last = t0 + u64::from(last.off);
    }

    /// A block's run [`Recorder::issued_block`] cannot count as a run:
    /// learns the block's shape at its first run (within the text, no
    /// handler entered after its first word: one handler for the whole
    /// run), or charges it instruction by instruction.
    #[cold]
    #[inline(never)]
    fn irregular(&mut self, core: usize, pc: u32, t0: u64, steps: &[Step]) {
        let w = (pc.wrapping_sub(self.base) / 4) as usize;
        if self.shape[w] == UNSEEN {
            let n = steps.len();
            let one = n < IRREGULAR as usize && self.enter.get(w + 1..w + n).is_some_and(|e| e.iter().all(|&e| e == KEEP || e == self.enter[w]));
            self.shape[w] = if one { n as u8 } else { IRREGULAR };
            self.offsets[w] = steps.iter().map(|s| s.off).collect();
            if one {
                return self.issued_block(core, pc, t0, steps);
            }
        }
        for (j, s) in steps.iter().enumerate() {
            self.charge(core, pc.wrapping_add(4 * j as u32), t0 + u64::from(s.off), 1);
        }
    }

    /// Stops at cycle `at` (no core has issued in it): each core's cycles
    /// since its last issue go to the instruction it waits to issue, at
    /// `pcs[core]`. Returns the profile.
    pub fn finish(&mut self, at: u64, pcs: &[u32], f: &Functions) -> Profile {
        self.settle(at);
        for (k, &pc) in pcs.iter().enumerate() {
            // A core run ahead waits on the first of its issues at or after `at`.
            let pc = self.pending.get(k).and_then(|q| q.first()).map_or(pc, |&(_, pc)| pc);
            if at - 1 > self.places[k].last {
                self.charge(k, pc, at - 1, 0);
            }
        }
        self.on = false;
        let words = self.words;
        // The blocks' runs onto their words: each instruction after the first is charged its issue
        // offset less the one before it, per run.
        for (i, run) in self.runs.iter_mut().enumerate() {
            let [n, c] = std::mem::take(run);
            if n == 0 {
                continue;
            }
            let offsets = &self.offsets[i % words];
            self.cells[i][0] += n;
            self.cells[i][1] += c;
            for (j, pair) in offsets.windows(2).enumerate() {
                let cell = &mut self.cells[i + j + 1];
                cell[0] += n;
                cell[1] += n * u64::from(pair[1] - pair[0]);
            }
        }
        let mut p = Profile {
            executed: vec![0; words],
            cycles: vec![0; words],
            handler_cycles: [0; DISPATCH + 1],
            handler_instructions: [0; DISPATCH + 1],
            invocations: [0; DISPATCH + 1],
            lock: 0,
            ordering: 0,
            dma_wait: 0,
            handler_work: 0,
            dispatch_work: 0,
        };
        for (i, &[n, c]) in self.cells.iter().enumerate() {
            let (h, w) = (i / words, i % words);
            p.executed[w] += n;
            p.cycles[w] += c;
            p.handler_cycles[h] += c;
            p.handler_instructions[h] += n;
            let id = f.of(w);
            if id != NO_FUNCTION && f.handler[id as usize].is_some() && f.entry[id as usize] == f.base + 4 * w as u32 {
                p.invocations[h] += n;
            }
            match if id == NO_FUNCTION { Kind::Work } else { f.kinds[id as usize] } {
                Kind::Lock => p.lock += c,
                Kind::Ordering => p.ordering += c,
                Kind::DmaWait => p.dma_wait += c,
                Kind::Work if h == DISPATCH => p.dispatch_work += c,
                Kind::Work => p.handler_work += c,
            }
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use irqsim_mips::decode::decode;
    use irqsim_mips::elf::{Segment, Symbol};

    /// Text at 0x1000: `fw_main` (4 words), the handler `receive` (8), a
    /// helper both call (4).
    fn functions() -> Functions {
        let symbol = |name: &str, addr, size| Symbol { name: name.into(), addr, size };
        let p = Program {
            name: "t".into(),
            entry: 0x1000,
            segments: vec![Segment { vaddr: 0x1000, data: vec![0; 64], memsz: 64, executable: true }],
            sections: vec![],
            symbols: vec![symbol("fw_main", 0x1000, 16), symbol("receive", 0x1010, 32), symbol("helper", 0x1030, 16)],
        };
        Functions::new(&p)
    }

    fn steps(offs: &[u32]) -> Vec<Step> {
        let inst = decode(0, 0);
        offs.iter().map(|&off| Step::new(inst, off, false)).collect()
    }

    /// Blocks told as runs give the profile their instructions told one by
    /// one give: in the dispatch loop, a handler, a helper called from each,
    /// a block that enters the handler after its first word (charged one by
    /// one), a block run at a second length, and runs before the window.
    #[test]
    fn runs_of_blocks_give_the_profile_of_their_instructions() {
        let f = functions();
        // (entry, first issue cycle, the block's offsets).
        let runs: [(u32, u64, &[u32]); 8] = [
            (0x1000, 3, &[0, 1, 3]),
            (0x1010, 10, &[0, 2, 3, 4]),
            (0x1030, 20, &[0, 1, 2]),
            (0x100C, 30, &[0, 1]),
            (0x1030, 40, &[0, 1, 2]),
            (0x1030, 50, &[0, 1]),
            (0x1000, 60, &[0, 1, 3]),
            (0x1014, 80, &[0, 5]),
        ];
        let profile = |blocks: bool| {
            let mut r = Recorder::new(&f, 1, false);
            for (n, &(pc, t0, offs)) in runs.iter().cycle().take(3 * runs.len()).enumerate() {
                let t0 = t0 + 100 * (n / runs.len()) as u64;
                if n == 2 {
                    r.begin(t0);
                }
                if blocks {
                    r.issued_block(0, pc, t0, &steps(offs));
                } else {
                    for (j, &off) in offs.iter().enumerate() {
                        r.issued(0, pc + 4 * j as u32, t0 + u64::from(off));
                    }
                }
            }
            let p = r.finish(290, &[0x1004], &f);
            (p.executed, p.cycles, p.handler_cycles, p.handler_instructions, p.invocations, p.dispatch_work, p.handler_work)
        };
        let by_instruction = profile(false);
        assert_eq!(profile(true), by_instruction);
        assert_eq!(by_instruction.0.iter().sum::<u64>(), 59, "the instructions from the third run on");
    }

    /// A core run ahead gives its issues past the NIC's cycle before the
    /// window's edges fall there: they wait until settled, so the profile
    /// is that of a core that stopped at each edge, and `issued_since`
    /// counts them.
    #[test]
    fn issues_past_an_edge_wait_until_settled() {
        let f = functions();
        let pcs = [0x1000, 0x1004, 0x1010, 0x1014, 0x1030, 0x1034, 0x1018, 0x1008];
        let issues: Vec<(u32, u64)> = (0..60).map(|i| (pcs[i % pcs.len()], 3 * i as u64 + (i % 3) as u64)).collect();
        let (start, end) = (41, 130);
        let given = |r: &mut Recorder, by: u64| issues.iter().filter(|e| e.1 < by).for_each(|&(pc, at)| r.issued(0, pc, at));
        let mut stopped = Recorder::new(&f, 1, false);
        given(&mut stopped, start);
        stopped.begin(start);
        issues.iter().filter(|e| (start..end).contains(&e.1)).for_each(|&(pc, at)| stopped.issued(0, pc, at));
        let expected = stopped.finish(end, &[issues.iter().find(|e| e.1 >= end).expect("issues past the end").0], &f);
        let mut ahead = Recorder::new(&f, 1, true);
        given(&mut ahead, start + 16);
        ahead.settle(start);
        assert_eq!(ahead.issued_since(start), issues.iter().filter(|e| (start..start + 16).contains(&e.1)).count() as u64);
        ahead.begin(start);
        issues.iter().filter(|e| (start + 16..end + 16).contains(&e.1)).for_each(|&(pc, at)| ahead.issued(0, pc, at));
        let profile = ahead.finish(end, &[0x1000], &f);
        assert_eq!((profile.executed, profile.cycles, profile.handler_cycles), (expected.executed, expected.cycles, expected.handler_cycles));
    }

    /// A core run ahead tells blocks as runs, and the window's edges and
    /// settling cycles fall within runs: the profile is that of the same
    /// instructions told one by one to a core that stopped at each edge,
    /// and `issued_since` counts a run's instructions from the edge on.
    #[test]
    fn runs_of_a_core_run_ahead_are_cut_at_the_edges() {
        let f = functions();
        let blocks: [(u32, &[u32]); 4] = [(0x1000, &[0, 1, 3]), (0x1010, &[0, 2, 3, 4]), (0x1030, &[0, 1, 2]), (0x1014, &[0, 5])];
        // (entry, t0, offsets): the blocks in turn, 9 cycles apart.
        let runs: Vec<(u32, u64, &[u32])> = (0..40).map(|i| (blocks[i % 4].0, 9 * i as u64 + 1, blocks[i % 4].1)).collect();
        let issues: Vec<(u32, u64)> =
            runs.iter().flat_map(|&(pc, t0, offs)| offs.iter().enumerate().map(move |(j, &off)| (pc + 4 * j as u32, t0 + u64::from(off)))).collect();
        // Both edges within a run (0x1010's from cycle 118, 0x1014's from 316).
        let (start, end) = (120, 318);
        let from_runs_before = |by: u64, at: u64| {
            runs.iter().filter(|r| r.1 < by).flat_map(|r| r.2.iter().map(move |&off| r.1 + u64::from(off))).filter(|&c| c >= at).count() as u64
        };
        let mut stopped = Recorder::new(&f, 1, false);
        issues.iter().filter(|e| e.1 < start).for_each(|&(pc, at)| stopped.issued(0, pc, at));
        stopped.begin(start);
        issues.iter().filter(|e| (start..end).contains(&e.1)).for_each(|&(pc, at)| stopped.issued(0, pc, at));
        let expected = stopped.finish(end, &[issues.iter().find(|e| e.1 >= end).expect("issues past the end").0], &f);
        let mut ahead = Recorder::new(&f, 1, true);
        let given = |r: &mut Recorder, from: u64, by: u64| {
            runs.iter().filter(|r| (from..by).contains(&r.1)).for_each(|&(pc, t0, offs)| r.issued_block(0, pc, t0, &steps(offs)))
        };
        given(&mut ahead, 0, start);
        ahead.settle(start);
        assert_eq!(ahead.issued_since(start), from_runs_before(start, start));
        ahead.begin(start);
        // Settled within runs too (0x1010's from 190, 0x1014's from 280).
        for (from, by, settle) in [(start, 193, 192), (193, 290, 283), (290, end + 16, end)] {
            given(&mut ahead, from, by);
            ahead.settle(settle);
        }
        let profile = ahead.finish(end, &[0x1000], &f);
        assert_eq!(ahead.issued_since(end), from_runs_before(end + 16, end));
        assert_eq!((profile.executed, profile.cycles, profile.handler_cycles), (expected.executed, expected.cycles, expected.handler_cycles));
    }
}
