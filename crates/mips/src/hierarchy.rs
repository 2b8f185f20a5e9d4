//! The memory hierarchy's timing: per-core L1 instruction and data caches,
//! a unified L2 shared by all cores or private to each, and main memory.
//! Caches are write-back and write-allocate and block the thread on a miss;
//! write-backs of dirty lines are not charged. A store invalidates the line
//! in other cores' L1 data caches (write-invalidate coherence), so sharing
//! data across cores costs misses.

use crate::cache::{Cache, Geometry};

/// Which cache a pinning control or statistic refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    L1i,
    L1d,
    L2,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::L1i, Level::L1d, Level::L2];

    pub fn name(self) -> &'static str {
        match self {
            Level::L1i => "l1i",
            Level::L1d => "l1d",
            Level::L2 => "l2",
        }
    }
}

/// Parameters of the whole hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HierarchyConfig {
    pub l1i: Geometry,
    pub l1d: Geometry,
    pub l2: Geometry,
    /// One L2 for all cores (true) or one per core.
    pub l2_shared: bool,
    /// Cycles a miss in L2 adds for the trip to main memory.
    pub memory_cycles: u32,
}

impl Default for HierarchyConfig {
    fn default() -> Self {
        let g = |size_bytes, ways, line_bytes, hit_cycles| Geometry { size_bytes, ways, line_bytes, hit_cycles };
        HierarchyConfig { l1i: g(16384, 2, 32, 0), l1d: g(16384, 2, 32, 0), l2: g(262144, 8, 64, 10), l2_shared: true, memory_cycles: 100 }
    }
}

/// The fetches of a core's two threads in a run of cycles with caches
/// (`crate::interleave`): counted when the run ends (each instruction
/// issued fetches the next), and looked up only when a thread fetches from
/// another line than the one it last fetched from. While that line is its
/// set's most recently used, a fetch there is a hit that changes nothing
/// but the count; only the pair's own fetches and a range locked in change
/// the instruction cache meanwhile.
#[derive(Clone, Copy, Debug)]
pub struct Lines {
    /// Per thread, the first address of the line it last fetched from while
    /// that line is known to be its set's most recently used, else [`Lines::NONE`].
    at: [u32; 2],
    /// Clears an address's offset in its line.
    line: u32,
    /// An address's set bits.
    set: u32,
    /// The L1's hit cycles.
    hit: u32,
    /// Per thread, the instruction count from which its fetches are not yet
    /// counted; None outside such a run.
    pub(crate) from: Option<[u64; 2]>,
}

impl Lines {
    /// No line's first address (those are multiples of 4).
    const NONE: u32 = 1;

    /// Outside a run, for L1 instruction caches of geometry `g`.
    fn new(g: Geometry) -> Self {
        let line = !(g.line_bytes - 1);
        Lines { at: [Lines::NONE; 2], line, set: (g.sets() - 1) * g.line_bytes, hit: g.hit_cycles, from: None }
    }

    /// Forgets every line (the cache's newest lines may have changed).
    pub(crate) fn forget(&mut self) {
        self.at = [Lines::NONE; 2];
    }
}

/// The caches of every core.
pub struct Hierarchy {
    pub config: HierarchyConfig,
    pub l1i: Vec<Cache>,
    pub l1d: Vec<Cache>,
    pub l2: Vec<Cache>,
    /// A pair's fetches while it runs by cycles.
    pub(crate) lines: Lines,
}

impl Hierarchy {
    /// Caches for `cores` cores of `threads` hardware threads each; a
    /// requester id is `core * threads + thread`.
    pub fn new(config: HierarchyConfig, cores: usize, threads: usize) -> Self {
        let n = cores * threads;
        let l2s = if config.l2_shared { 1 } else { cores };
        Hierarchy {
            config,
            l1i: (0..cores).map(|_| Cache::new(config.l1i, n)).collect(),
            l1d: (0..cores).map(|_| Cache::new(config.l1d, n)).collect(),
            l2: (0..l2s).map(|_| Cache::new(config.l2, n)).collect(),
            lines: Lines::new(config.l1i),
        }
    }

    fn l2_of(&mut self, core: usize) -> &mut Cache {
        let k = if self.config.l2_shared { 0 } else { core };
        &mut self.l2[k]
    }

    /// Beyond-the-pipeline cycles of an access that missed in L1.
    #[inline(never)]
    fn below_l1(&mut self, core: usize, who: usize, addr: u32) -> u32 {
        let mem = self.config.memory_cycles;
        let l2 = self.l2_of(core);
        l2.geometry.hit_cycles + if l2.access(addr, who) { 0 } else { mem }
    }

    /// Stall cycles to fetch the instruction at `pc`: inline, as every instruction fetches.
    #[inline(always)]
    pub fn fetch(&mut self, core: usize, who: usize, pc: u32) -> u32 {
        self.l1i[core].counts[who].accesses += 1;
        self.fetch_uncounted(core, who, pc)
    }

    /// [`Hierarchy::fetch`] with the L1 access left to the caller to count
    /// (a block's fetches are counted at once: [`crate::bus::DataBus::hits`]).
    #[inline(always)]
    pub fn fetch_uncounted(&mut self, core: usize, who: usize, pc: u32) -> u32 {
        let l1 = &mut self.l1i[core];
        let hit = l1.geometry.hit_cycles;
        if l1.probe(pc, who) { hit } else { hit + self.below_l1(core, who, pc) }
    }

    /// A core's two threads, at instruction counts `from`, start a run of cycles ([`Lines`]).
    pub(crate) fn pair_starts(&mut self, from: [u64; 2]) {
        (self.lines.at, self.lines.from) = ([Lines::NONE; 2], Some(from));
    }

    /// The pair's run of cycles ends with the threads (global `id`, `id + 1`)
    /// at instruction counts `to`: their fetches are counted.
    pub(crate) fn pair_ends(&mut self, core: usize, id: usize, to: [u64; 2]) {
        if let Some(from) = self.lines.from.take() {
            for t in 0..2 {
                self.l1i[core].counts[id + t].accesses += to[t] - from[t];
            }
        }
    }

    /// [`Hierarchy::fetch_uncounted`] by thread `t` of a pair in a run of cycles
    /// ([`Lines`]): without a lookup in the line it last fetched from.
    #[inline(always)]
    pub fn fetch_pair(&mut self, core: usize, who: usize, pc: u32, t: usize) -> u32 {
        if pc & self.lines.line == self.lines.at[t] { self.lines.hit } else { self.fetch_line(core, who, pc, t) }
    }

    /// [`Hierarchy::fetch_pair`] in another line than the thread's last:
    /// without a call where that line is its set's newest.
    #[inline(never)]
    fn fetch_line(&mut self, core: usize, who: usize, pc: u32, t: usize) -> u32 {
        let lines = &mut self.lines;
        let at = pc & lines.line;
        // Another line of the other thread's set may become its set's newest (or evict it).
        let o = &mut lines.at[t ^ 1];
        if (*o ^ at) & lines.set == 0 && *o != at {
            *o = Lines::NONE;
        }
        let l1 = &self.l1i[core];
        if l1.newest(pc) {
            lines.at[t] = at;
            return l1.geometry.hit_cycles;
        }
        self.fetch_looked_up(core, who, pc, t)
    }

    /// [`Hierarchy::fetch_line`] of a line not its set's newest ([`Cache::newest`] false).
    #[inline(never)]
    fn fetch_looked_up(&mut self, core: usize, who: usize, pc: u32, t: usize) -> u32 {
        let l1 = &mut self.l1i[core];
        let hit = l1.geometry.hit_cycles;
        // A hit leaves the line its set's newest; a miss's line may have bypassed the set.
        if l1.probe_older(pc, who) {
            self.lines.at[t] = pc & self.lines.line;
            hit
        } else {
            self.lines.at[t] = Lines::NONE;
            hit + self.below_l1(core, who, pc)
        }
    }

    /// Stall cycles of a data access to `addr`.
    #[inline(always)]
    pub fn data(&mut self, core: usize, who: usize, addr: u32, write: bool) -> u32 {
        if write && self.l1d.len() > 1 {
            self.invalidate_others(core, addr);
        }
        let l1 = &mut self.l1d[core];
        let hit = l1.geometry.hit_cycles;
        if l1.access(addr, who) { hit } else { hit + self.below_l1(core, who, addr) }
    }

    /// A store by `core`: the line leaves every other core's L1 data cache.
    #[inline(never)]
    fn invalidate_others(&mut self, core: usize, addr: u32) {
        for (k, c) in self.l1d.iter_mut().enumerate() {
            if k != core {
                c.invalidate(addr);
            }
        }
    }

    /// The cache of `level` that `core` uses.
    pub fn cache(&mut self, core: usize, level: Level) -> &mut Cache {
        match level {
            Level::L1i => &mut self.l1i[core],
            Level::L1d => &mut self.l1d[core],
            Level::L2 => self.l2_of(core),
        }
    }

    /// Every cache of `level` (one per core, or the shared L2).
    pub fn level(&self, level: Level) -> &[Cache] {
        match level {
            Level::L1i => &self.l1i,
            Level::L1d => &self.l1d,
            Level::L2 => &self.l2,
        }
    }

    /// [`Hierarchy::level`], mutable (pinning settings apply to each).
    pub fn all(&mut self, level: Level) -> &mut [Cache] {
        match level {
            Level::L1i => &mut self.l1i,
            Level::L1d => &mut self.l1d,
            Level::L2 => &mut self.l2,
        }
    }
}
