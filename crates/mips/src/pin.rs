//! Cache pinning state: which ways and sets each hardware thread may
//! allocate into and whether its new lines are locked. Locking itself lives
//! in the cache's per-line lock bits; the four modes are:
//!
//! - **way**: a contiguous, non-zero way mask per thread limits where its
//!   misses allocate; lines already cached elsewhere are never evicted by a
//!   mask change and still hit (Intel CAT, SDM Vol. 3B §17.17; Linux resctrl).
//! - **set**: a range of sets reserved for one thread; another thread's
//!   miss in a reserved set is served without allocating.
//! - **range**: an address range's lines are locked in (ARM lockdown,
//!   Intel's cache pseudo-locking); see [`crate::cache::Cache::lock_range`].
//! - **trace**: while a thread's trace flag is on, every line it allocates is
//!   locked (ARM L2C-310 lockdown by line, DDI0246 §3.3.11).

/// Pinning configuration of one cache.
#[derive(Clone, Debug)]
pub struct Pinning {
    all: u64,
    masks: Vec<u64>,
    trace: Vec<bool>,
    /// Reserved set ranges `[first, first + count)` and their owner.
    reserved: Vec<(u32, u32, usize)>,
    /// Per thread, the first set and range base written to the control
    /// registers, waiting for the count or length that applies them.
    staged: Vec<(u32, u32)>,
    /// Whether no thread's allocation is limited or locked: every mask all
    /// ways, no trace on, no set reserved (kept by the setters).
    open: bool,
}

impl Pinning {
    pub fn new(ways: u32, requesters: usize) -> Self {
        let all = if ways == 64 { u64::MAX } else { (1u64 << ways) - 1 };
        Pinning { all, masks: vec![all; requesters], trace: vec![false; requesters], reserved: Vec::new(), staged: vec![(0, 0); requesters], open: true }
    }

    /// Whether any thread may allocate into any way of any set, unlocked
    /// (no pinning set): a miss's victim is then its set's oldest way.
    #[inline(always)]
    pub fn open(&self) -> bool {
        self.open
    }

    fn reopen(&mut self) {
        self.open = self.masks.iter().all(|&m| m == self.all) && !self.trace.contains(&true) && self.reserved.is_empty();
    }

    /// Every way's bit.
    #[inline]
    pub fn all(&self) -> u64 {
        self.all
    }

    #[inline]
    pub fn way_mask(&self, who: usize) -> u64 {
        self.masks[who]
    }

    /// Sets `who`'s allocation mask: contiguous ones within the cache's ways, as CAT requires.
    pub fn set_way_mask(&mut self, who: usize, mask: u64) -> Result<(), String> {
        let contiguous = mask != 0 && (mask >> mask.trailing_zeros()).trailing_ones() == mask.count_ones();
        if !contiguous || mask & !self.all != 0 {
            return Err(format!("way mask 0x{mask:x} is not a non-empty run of contiguous ones within 0x{:x}", self.all));
        }
        self.masks[who] = mask;
        self.reopen();
        Ok(())
    }

    /// `who`'s staged (first set, range base).
    pub fn stage(&mut self, who: usize) -> &mut (u32, u32) {
        &mut self.staged[who]
    }

    #[inline]
    pub fn tracing(&self, who: usize) -> bool {
        self.trace[who]
    }

    pub fn set_trace(&mut self, who: usize, on: bool) {
        self.trace[who] = on;
        self.reopen();
    }

    /// Reserves sets `[first, first + count)` of a cache with `sets` sets for `who`;
    /// `count == 0` releases `who`'s reservations.
    pub fn reserve_sets(&mut self, who: usize, first: u32, count: u32, sets: u32) -> Result<(), String> {
        if count == 0 {
            self.reserved.retain(|r| r.2 != who);
            self.reopen();
            return Ok(());
        }
        let end = first.checked_add(count).filter(|&e| e <= sets);
        let Some(end) = end else {
            return Err(format!("sets {first}..{} exceed the cache's {sets} sets", first as u64 + count as u64));
        };
        if let Some(r) = self.reserved.iter().find(|r| r.2 != who && first < r.0 + r.1 && r.0 < end) {
            return Err(format!("sets {first}..{end} overlap sets {}..{} reserved by thread {}", r.0, r.0 + r.1, r.2));
        }
        self.reserved.push((first, count, who));
        self.reopen();
        Ok(())
    }

    #[inline]
    pub fn may_allocate_in_set(&self, set: u32, who: usize) -> bool {
        self.reserved.iter().all(|&(f, n, owner)| owner == who || set < f || set >= f + n)
    }
}
