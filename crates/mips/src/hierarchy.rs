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

/// The caches of every core.
pub struct Hierarchy {
    pub config: HierarchyConfig,
    pub l1i: Vec<Cache>,
    pub l1d: Vec<Cache>,
    pub l2: Vec<Cache>,
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
