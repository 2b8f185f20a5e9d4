//! A set-associative cache with LRU replacement and the four pinning
//! modes (see [`crate::pin`]). It models tags only: data always comes from
//! [`crate::mem::Memory`]; the cache decides hits, misses and what is kept.

use crate::pin::Pinning;

/// Geometry and hit time of one cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub size_bytes: u32,
    pub ways: u32,
    pub line_bytes: u32,
    /// Cycles an access that hits here costs beyond the pipeline's own stage.
    pub hit_cycles: u32,
}

impl Geometry {
    pub fn sets(&self) -> u32 {
        self.size_bytes / (self.ways * self.line_bytes)
    }

    /// Why this geometry is impossible, if it is.
    pub fn check(&self) -> Result<(), String> {
        let pow2 = |v: u32| v != 0 && v.is_power_of_two();
        if !pow2(self.line_bytes) || self.line_bytes < 4 {
            return Err(format!("line_bytes {} is not a power of two >= 4", self.line_bytes));
        }
        if self.ways == 0 || self.ways > 64 {
            return Err(format!("ways {} is not in 1..=64", self.ways));
        }
        let unit = self.ways * self.line_bytes;
        if self.size_bytes < unit || !self.size_bytes.is_multiple_of(unit) || !pow2(self.size_bytes / unit) {
            return Err(format!("size_bytes {} is not ways x line_bytes x a power of two", self.size_bytes));
        }
        Ok(())
    }
}

/// Hit and miss counts of one requester (hardware thread).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub accesses: u64,
    pub misses: u64,
}

const INVALID: u32 = u32::MAX;

/// One cache. Its ways are kept set after set in three arrays (line, last
/// use, lock bit): a lookup reads one set's lines only.
pub struct Cache {
    pub geometry: Geometry,
    line_shift: u32,
    set_mask: u32,
    ways: usize,
    /// Each way's line (`addr >> line_shift`), `INVALID` if empty.
    tags: Vec<u32>,
    /// Each way's last-use time (LRU victim: the smallest among the
    /// candidates); 0 if the way is empty, at least 1 if not.
    used: Vec<u64>,
    locked: Vec<bool>,
    /// Whether a line may be locked (a range or trace pinning since the last
    /// [`Cache::unlock_all`]): if not, and the thread may use every way, a
    /// miss's victim is chosen by age alone.
    locks: bool,
    clock: u64,
    /// Per set, its most recently used line (`INVALID`: not known): a hit
    /// on it changes nothing but the count, since LRU only compares the
    /// ages of one set's ways and that line's is already the newest.
    mru: Box<[u32]>,
    pub pin: Pinning,
    pub counts: Vec<Counts>,
}

impl Cache {
    /// An empty cache serving `requesters` hardware threads.
    pub fn new(geometry: Geometry, requesters: usize) -> Self {
        let n = (geometry.sets() * geometry.ways) as usize;
        Cache {
            geometry,
            line_shift: geometry.line_bytes.trailing_zeros(),
            set_mask: geometry.sets() - 1,
            ways: geometry.ways as usize,
            tags: vec![INVALID; n],
            used: vec![0; n],
            locked: vec![false; n],
            locks: false,
            clock: 0,
            mru: vec![INVALID; geometry.sets() as usize].into_boxed_slice(),
            pin: Pinning::new(geometry.ways, requesters),
            counts: vec![Counts::default(); requesters],
        }
    }

    pub fn line_of(&self, addr: u32) -> u32 {
        addr >> self.line_shift
    }

    /// Looks `addr` up for requester `who`, allocating on a miss; true on a
    /// hit. A hit on its set's most recently used line (most accesses) is
    /// inline; the rest is not.
    #[inline(always)]
    pub fn access(&mut self, addr: u32, who: usize) -> bool {
        self.counts[who].accesses += 1;
        self.probe(addr, who)
    }

    /// [`Cache::access`] with the access left to the caller to count (a miss is counted).
    #[inline(always)]
    pub fn probe(&mut self, addr: u32, who: usize) -> bool {
        let line = addr >> self.line_shift;
        if self.is_mru(line) {
            return true;
        }
        self.lookup(line, (line & self.set_mask) as usize, who)
    }

    /// [`Cache::probe`] of an address whose line [`Cache::newest`] found
    /// not to be its set's most recently used (no second test).
    #[inline(always)]
    pub fn probe_older(&mut self, addr: u32, who: usize) -> bool {
        let line = addr >> self.line_shift;
        self.lookup(line, (line & self.set_mask) as usize, who)
    }

    /// Whether `addr`'s line is known to be its set's most recently used:
    /// an access to it would be a hit that changes nothing but the count.
    #[inline(always)]
    pub fn newest(&self, addr: u32) -> bool {
        self.is_mru(addr >> self.line_shift)
    }

    /// Whether `line` is its set's most recently used: read without a
    /// bounds check, as every probe asks it (2 of a cached access's ~27 host instructions).
    #[inline(always)]
    fn is_mru(&self, line: u32) -> bool {
        let set = (line & self.set_mask) as usize;
        debug_assert!(set < self.mru.len());
        // SAFETY: `mru` has `set_mask + 1` entries, so `set` is in range: both
        // fields are private and fixed in `Cache::new` (a boxed slice keeps its length).
        unsafe { *self.mru.get_unchecked(set) == line }
    }

    /// The slot of `line` (in `set`), if cached.
    #[inline(always)]
    fn slot_of(&self, line: u32, set: usize) -> Option<usize> {
        let base = set * self.ways;
        self.tags[base..base + self.ways].iter().position(|&t| t == line).map(|w| base + w)
    }

    /// Whether `line` (in `set`) is cached, where it seldom is (a DMA
    /// write's): four ways at a time in one vector comparison, without a branch each.
    #[inline(always)]
    fn holds_rare(&self, line: u32, set: usize) -> bool {
        let base = set * self.ways;
        let (quads, rest) = self.tags[base..base + self.ways].as_chunks::<4>();
        quads.iter().any(|four| four.iter().fold(false, |any, &t| any | (t == line))) || rest.contains(&line)
    }

    /// [`Cache::access`] of a line that is not its set's most recently used.
    #[inline(never)]
    fn lookup(&mut self, line: u32, set: usize, who: usize) -> bool {
        self.clock += 1;
        if let Some(slot) = self.slot_of(line, set) {
            self.used[slot] = self.clock;
            self.mru[set] = line;
            return true;
        }
        self.miss(line, set, who)
    }

    /// [`Cache::lookup`] of a line not cached: counted, placed if its set allows.
    #[cold]
    #[inline(never)]
    fn miss(&mut self, line: u32, set: usize, who: usize) -> bool {
        self.counts[who].misses += 1;
        if !self.locks && self.pin.open() {
            // Every way permitted, none locked, nor to be (no trace): no lock bit to write.
            let base = set * self.ways;
            let slot = base + oldest(&self.used[base..base + self.ways]);
            (self.tags[slot], self.used[slot], self.mru[set]) = (line, self.clock, line);
            return false;
        }
        // A bypassed miss (reserved set) leaves the set as it was.
        if self.allocate(line, who).is_some() {
            self.mru[set] = line;
        }
        false
    }

    /// Places `line` for `who`; returns the slot, or None if its set is reserved for another thread.
    fn allocate(&mut self, line: u32, who: usize) -> Option<usize> {
        let set = line & self.set_mask;
        if !self.pin.may_allocate_in_set(set, who) {
            return None;
        }
        let base = set as usize * self.ways;
        // The first permitted, unlocked way that is empty, else least recently used (an
        // empty way's age is 0, a line's at least 1: the clock moves before it is placed).
        let mask = self.pin.way_mask(who);
        let used = &self.used[base..base + self.ways];
        let mut victim = usize::MAX;
        if !self.locks && mask == self.pin.all() {
            victim = oldest(used);
        } else {
            let locked = &self.locked[base..base + self.ways];
            let mut oldest = u64::MAX;
            for (w, (&u, &l)) in used.iter().zip(locked).enumerate() {
                if mask >> w & 1 == 1 && !l && u < oldest {
                    (victim, oldest) = (w, u);
                }
            }
        }
        // Every permitted way is locked: replace the lowest permitted one
        // as if it were unlocked (ARM1176 with all ways locked uses way 0).
        if victim == usize::MAX {
            victim = (0..self.ways).find(|&w| mask >> w & 1 == 1).unwrap_or(0);
        }
        let slot = base + victim;
        let lock = self.pin.tracing(who);
        self.locks |= lock;
        (self.tags[slot], self.used[slot], self.locked[slot]) = (line, self.clock, lock);
        Some(slot)
    }

    /// Locks every line of `[base, base + len)` in, allocating those absent
    /// (range pinning); returns how many lines had to be fetched. A range
    /// of more lines than the cache holds cannot be pinned and is refused.
    pub fn lock_range(&mut self, base: u32, len: u32, who: usize) -> Result<u32, String> {
        if len == 0 {
            return Ok(0);
        }
        let (first, last) = (self.line_of(base), self.line_of(base.saturating_add(len - 1)));
        if (last - first) as usize >= self.tags.len() {
            let size = self.geometry.size_bytes;
            return Err(format!("range 0x{base:08x}+{len} spans {} lines, more than the cache's {} ({size} bytes)", last - first + 1, self.tags.len()));
        }
        let mut fetched = 0;
        self.locks = true;
        for line in first..=last {
            let slot = match self.slot_of(line, (line & self.set_mask) as usize) {
                Some(s) => Some(s),
                None => {
                    fetched += 1;
                    self.clock += 1;
                    self.allocate(line, who)
                }
            };
            if let Some(s) = slot {
                self.locked[s] = true;
            }
        }
        // Allocations made lines the newest of their sets.
        self.mru.fill(INVALID);
        Ok(fetched)
    }

    /// Unlocks every line (they stay cached and return to LRU order).
    pub fn unlock_all(&mut self) {
        self.locked.fill(false);
        self.locks = false;
    }

    /// Lines currently locked.
    pub fn locked_lines(&self) -> usize {
        self.locked.iter().filter(|&&l| l).count()
    }

    /// True if `addr`'s line is cached (no state change).
    pub fn contains(&self, addr: u32) -> bool {
        let line = self.line_of(addr);
        self.slot_of(line, (line & self.set_mask) as usize).is_some()
    }

    /// Drops `addr`'s line if present (a write by another core).
    pub fn invalidate(&mut self, addr: u32) {
        let line = self.line_of(addr);
        let set = (line & self.set_mask) as usize;
        self.drop_line(line, set);
    }

    /// Drops every line of `[addr, addr + len)` that is present (a device's DMA write).
    pub fn invalidate_range(&mut self, addr: u32, len: u32) {
        if len == 0 {
            return;
        }
        for line in self.line_of(addr)..=self.line_of(addr.saturating_add(len - 1)) {
            let set = (line & self.set_mask) as usize;
            if self.holds_rare(line, set) {
                self.drop_line(line, set);
            }
        }
    }

    /// Drops `line` (in `set`) if present.
    fn drop_line(&mut self, line: u32, set: usize) {
        if let Some(s) = self.slot_of(line, set) {
            (self.tags[s], self.used[s], self.locked[s]) = (INVALID, 0, false);
            if self.mru[set] == line {
                self.mru[set] = INVALID;
            }
        }
    }

    /// Accesses and misses summed over requesters.
    pub fn total(&self) -> Counts {
        self.counts.iter().fold(Counts::default(), |a, c| Counts { accesses: a.accesses + c.accesses, misses: a.misses + c.misses })
    }
}

/// The first of `used`'s ways with the smallest age (an empty one if any).
#[inline(always)]
fn oldest(used: &[u64]) -> usize {
    let (mut victim, mut oldest) = (0, u64::MAX);
    for (w, &u) in used.iter().enumerate() {
        if u < oldest {
            (victim, oldest) = (w, u);
        }
    }
    victim
}
