//! The hardware threads' completion timers: at most one key per thread, in
//! an indexed binary min-heap, so that finding the earliest and setting or
//! clearing one thread's timer cost `O(log set timers)`, not a scan of every
//! thread on every event.
//!
//! Only set timers are in the heap: a thread with nothing to complete
//! before the end of the run (idle, or a background job) costs nothing, a
//! timer past the end counting as cleared. Keys are unique (they carry the
//! event queue's sequence number), so the order is total. The heap holds
//! thread numbers, each thread's key is in arrays by thread: the heap's
//! root and its key are the earliest timer, where the loop looks at every
//! event (three loads); a machine of one thread, the common case, keeps
//! its timer as thread 0's key and nothing else: setting it is a store.
//! Several threads' sets handle the common cases (one or two timers set)
//! without a further call: inline for the completing thread's re-arm,
//! one call out of the loop for the others.

use crate::engine::{Key, Time};

/// Position of a thread whose timer is not set.
const ABSENT: u8 = u8::MAX;

/// Most threads a machine has (`cpu.threads`).
const THREADS: usize = crate::cpu::MAX_THREAD as usize + 1;

/// The thread number of every vacant heap entry: no thread's, its key
/// `bound` for ever.
const VOID: u8 = THREADS as u8;

/// Length of the heap's array: twice the threads, so that the right
/// sibling of the last left child is in the array (and vacant). Indexed
/// through `& (SLOTS - 1)`, so the sifts have no bounds checks.
const SLOTS: usize = 2 * THREADS;
const _: () = assert!(SLOTS.is_power_of_two() && THREADS < ABSENT as usize);

/// Index into the heap's array: in range by construction, the mask lets the
/// compiler drop the bounds check.
#[inline(always)]
fn at(i: usize) -> usize {
    i & (SLOTS - 1)
}

/// Arrays indexed by a thread number (a `u8`: no bounds check).
const BY_THREAD: usize = 1 << u8::BITS;

pub(crate) struct Timers {
    /// Thread numbers in heap order of their keys: `heap[0]` is the
    /// earliest timer's (the loop reads it and its key at every event:
    /// three loads). Entries from `len` on are `VOID`, so a sift compares a
    /// last left child with its (vacant) right sibling without testing
    /// whether it exists. One thread's `heap[0]` is 0 and nothing else.
    heap: [u8; SLOTS],
    len: usize,
    /// Each thread's key, its time and its sequence number apart, so that
    /// one thread's is two loads of one scaled index. A thread's key is
    /// written at every set, whether the timer is kept or not; only a
    /// kept timer's (and `VOID`'s) is read.
    time: [u64; BY_THREAD],
    seq: [u64; BY_THREAD],
    /// Each thread's index in `heap`, or `ABSENT`; kept only with more
    /// than two timers set (`mark_positions`).
    pos: [u8; BY_THREAD],
    /// The second earliest timer's thread (the smaller of the root's
    /// children, `VOID` if none): below its key, a re-armed earliest timer
    /// stays the earliest.
    second: u8,
    /// The least key past the end of the run (`Key::MAX` for a run without
    /// end): with several threads, a timer from it on is cleared, and it is
    /// `VOID`'s key.
    bound: Key,
    /// Several threads: the heap is kept. One: a set is a store.
    many: bool,
    /// The key of no timer (`clear`): `Key::MAX` with its marks clear
    /// (`engine::MARKS`), unless every key of the machine is marked.
    none: Key,
}

impl Timers {
    pub fn new(threads: usize, end: Time) -> Self {
        assert!(threads <= THREADS, "{threads} threads: a machine has at most {THREADS}");
        let bound = end.checked_add(1).map_or(Key::MAX, |t| Key::from(t) << 64);
        let many = threads > 1;
        let mut timers = Timers {
            heap: [VOID; SLOTS],
            len: 0,
            time: [u64::MAX; BY_THREAD],
            seq: [u64::MAX; BY_THREAD],
            pos: [ABSENT; BY_THREAD],
            second: VOID,
            bound,
            many,
            none: Key::MAX & !crate::engine::MARKS,
        };
        timers.store(VOID, bound);
        if !many {
            // Its timer's thread, read whether set or not (`Key::MAX`: not).
            timers.heap[0] = 0;
        }
        timers
    }

    /// The earliest timer and its thread (a key past the end: none set).
    #[inline(always)]
    pub fn first(&self) -> (usize, Key) {
        let thread = self.heap[0];
        (thread as usize, self.key(thread))
    }

    /// Clears `thread`'s timer: its key is `none`.
    #[inline(always)]
    pub fn clear(&mut self, thread: usize) {
        self.set(thread, self.none);
    }

    /// Marks the key of no timer (`none`, and `bound`, `VOID`'s) with
    /// `mark` (of `engine::MARKS`), as a machine whose every key has it.
    pub fn mark_none(&mut self, mark: Key) {
        self.none |= mark;
        self.bound |= mark;
        self.store(VOID, self.bound);
    }

    /// Sets `thread`'s timer to `key` (`none` clears it). Inline: with
    /// one thread, the common case, it is a store; several threads' heap
    /// is one call, out of the loop.
    #[inline(always)]
    pub fn set(&mut self, thread: usize, key: Key) {
        self.set_by::<false>(thread, key);
    }

    #[inline(always)]
    fn key(&self, thread: u8) -> Key {
        (Key::from(self.time[thread as usize]) << 64) | Key::from(self.seq[thread as usize])
    }

    #[inline(always)]
    fn store(&mut self, thread: u8, key: Key) {
        (self.time[thread as usize], self.seq[thread as usize]) = ((key >> 64) as u64, key as u64);
    }

    /// `set` with several threads' paths inline (the general one,
    /// `reorder`, still a call): for the completing thread's re-arm, the
    /// most frequent set. Inline at every set, the loop's code grew: the
    /// bench 8 a frame dearer (docs/performance/engine.md).
    #[inline(always)]
    pub fn set_inline(&mut self, thread: usize, key: Key) {
        self.set_by::<true>(thread, key);
    }

    /// `set`, several threads' paths inline or the call.
    #[inline(always)]
    fn set_by<const INLINE: bool>(&mut self, thread: usize, key: Key) {
        if !self.many {
            self.store(0, key);
        } else if INLINE {
            self.among(thread, key);
        } else {
            self.set_among(thread, key);
        }
    }

    /// `set` with several threads, out of line.
    #[inline(never)]
    fn set_among(&mut self, thread: usize, key: Key) {
        self.among(thread, key);
    }

    /// How many timers are set.
    #[cfg(test)]
    fn len(&self) -> usize {
        if self.many { self.len } else { usize::from(self.key(0) != Key::MAX) }
    }

    /// Whether every heap entry's thread knows its position, no other
    /// thread thinks it is in the heap, every entry past the end is vacant
    /// and `second` is the smaller of the root's children.
    #[cfg(test)]
    fn positions_agree(&self) -> bool {
        !self.many
            || (self.len <= 2 || self.heap[..self.len].iter().enumerate().all(|(i, &t)| self.pos[t as usize] as usize == i))
                && self.pos.iter().filter(|&&p| p != ABSENT).count() == if self.len <= 2 { 0 } else { self.len }
                && self.heap[self.len..].iter().all(|&t| t == VOID)
                && self.key(VOID) == self.bound
                && self.second == self.smaller_child()
    }

    /// `set` with several threads. One or two timers set (a fixed rate
    /// per CPU keeps it so at any thread count) take no further call: the
    /// earliest re-armed and still the earliest, the earliest of two going
    /// later than the other (the two trade places: two thread numbers
    /// move, not keys) or cleared, a timer set beside one other. A timer
    /// past the end is cleared; the re-armed earliest needs no test for
    /// it, since `second`'s key is at most `bound`.
    #[inline(always)]
    fn among(&mut self, thread: usize, key: Key) {
        debug_assert!(thread < THREADS);
        let thread = thread as u8;
        self.store(thread, key);
        let first = self.heap[0];
        if first == thread {
            // The earliest, as its completion re-arms it.
            if key < self.key(self.second) {
                return;
            }
            if self.len == 1 {
                // Past the end (`second` is `VOID`): cleared, the only one.
                (self.heap[0], self.len) = (VOID, 0);
                return;
            }
            if self.len == 2 {
                // The other of two takes the first place.
                self.heap[0] = self.second;
                if key >= self.bound {
                    (self.heap[1], self.len, self.second) = (VOID, 1, VOID);
                } else {
                    (self.heap[1], self.second) = (thread, thread);
                }
                return;
            }
        } else if self.len <= 1 {
            // Not the first, so not set: set beside the first, if any.
            if key >= self.bound {
                return;
            }
            if self.len == 0 {
                self.heap[0] = thread;
            } else if key > self.key(first) {
                (self.heap[1], self.second) = (thread, thread);
            } else {
                (self.heap[0], self.heap[1], self.second) = (thread, first, first);
            }
            self.len += 1;
            return;
        }
        self.reorder(thread, key);
    }

    /// The rest of `set_among`: an indexed heap's insert, removal or sift
    /// (`thread`'s key already stored).
    #[inline(never)]
    fn reorder(&mut self, thread: u8, key: Key) {
        self.mark_positions(0);
        let i = self.pos[thread as usize];
        if i == ABSENT {
            if key < self.bound {
                self.insert(thread, key);
            }
        } else if key >= self.bound {
            self.remove(i as usize);
        } else {
            let i = i as usize;
            if i > 0 && self.key(self.heap[at((i - 1) / 2)]) > key { self.sift_up(i) } else { self.sift_down(i) }
        }
        self.second = self.smaller_child();
        self.mark_positions(ABSENT);
    }

    /// With two timers set or fewer (the fast paths'), the positions are
    /// not kept: every thread's is `ABSENT`. `mark_positions(0)` writes the two
    /// timers' positions before a general step, `mark_positions(ABSENT)` clears them
    /// after one that leaves two or fewer.
    #[inline(always)]
    fn mark_positions(&mut self, at_zero: u8) {
        if self.len <= 2 {
            let (one, two) = (self.heap[0], self.heap[1]);
            self.pos[one as usize] = at_zero;
            self.pos[two as usize] = at_zero.saturating_add(1);
            // `VOID`'s stays `ABSENT`.
            self.pos[VOID as usize] = ABSENT;
        }
    }

    /// The root's smaller child (`VOID`, whose key is `bound`, if none).
    fn smaller_child(&self) -> u8 {
        let (left, right) = (self.heap[1], self.heap[2]);
        if self.key(right) < self.key(left) { right } else { left }
    }

    fn insert(&mut self, thread: u8, key: Key) {
        let i = self.len;
        self.len += 1;
        self.place(i, thread);
        // Later than its parent (at 64 CPUs under a fixed rate per CPU, most
        // often), it stays at the end: no call.
        if i > 0 && self.key(self.heap[at((i - 1) / 2)]) > key {
            self.sift_up(i);
        }
    }

    #[inline(never)]
    fn remove(&mut self, i: usize) {
        let thread = self.heap[at(i)];
        self.pos[thread as usize] = ABSENT;
        self.len -= 1;
        let last = std::mem::replace(&mut self.heap[at(self.len)], VOID);
        // The last timer moves into the hole: up or down from there.
        if i < self.len {
            self.place(i, last);
            if i > 0 && self.key(self.heap[at((i - 1) / 2)]) > self.key(last) { self.sift_up(i) } else { self.sift_down(i) }
        }
    }

    #[inline(never)]
    fn sift_up(&mut self, mut i: usize) {
        let thread = self.heap[at(i)];
        let key = self.key(thread);
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.key(self.heap[at(parent)]) <= key {
                break;
            }
            self.place(i, self.heap[at(parent)]);
            i = parent;
        }
        self.place(i, thread);
    }

    #[inline(never)]
    fn sift_down(&mut self, mut i: usize) {
        let thread = self.heap[at(i)];
        let key = self.key(thread);
        loop {
            let left = 2 * i + 1;
            if left >= self.len {
                break;
            }
            // A vacant right child (`bound`) is never the smaller.
            let right = left + 1;
            let child = if self.key(self.heap[at(right)]) < self.key(self.heap[at(left)]) { right } else { left };
            if self.key(self.heap[at(child)]) >= key {
                break;
            }
            self.place(i, self.heap[at(child)]);
            i = child;
        }
        self.place(i, thread);
    }

    #[inline(always)]
    fn place(&mut self, i: usize, thread: u8) {
        self.heap[at(i)] = thread;
        self.pos[thread as usize] = i as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::key_time;
    use proptest::prelude::*;

    #[test]
    fn no_threads_no_timer() {
        assert_eq!(Timers::new(0, Time::MAX).first(), (0, Key::MAX));
        assert_eq!(Timers::new(3, Time::MAX).first().1, Key::MAX);
    }

    proptest! {
        /// Whatever the sequence of sets and clears, the first timer is the
        /// smallest set key and its thread, as a scan of every thread finds
        /// it; in the heap, a timer past the end counts as cleared (one
        /// thread's slot keeps it: the queue's end, its key taken first, comes first).
        /// Times are one cycle to 2^15 cycles apart (`scale`).
        #[test]
        fn first_is_the_smallest_timer(threads in 1usize..=THREADS, end in 0u64..45, scale in 0u32..4, ops in proptest::collection::vec((0usize..70, 0u64..40, any::<bool>()), 1..400)) {
            let end = end << (5 * scale);
            let mut timers = Timers::new(threads, end);
            let mut model = vec![Key::MAX; threads];
            for (seq, (t, time, clear)) in ops.into_iter().enumerate() {
                let t = t % threads;
                let time = time << (5 * scale);
                // Set keys are unique, as the queue's sequence numbers make them.
                let key = if clear { Key::MAX } else { (Key::from(time) << 64) | seq as Key };
                timers.set(t, key);
                model[t] = if time > end && threads > 1 { Key::MAX } else { key };
                let want = model.iter().copied().enumerate().min_by_key(|&(_, k)| k).unwrap();
                let got = timers.first();
                if want.1 == Key::MAX {
                    prop_assert!(key_time(got.1) > end);
                } else {
                    prop_assert_eq!(got, want);
                }
                prop_assert_eq!(timers.len(), model.iter().filter(|&&k| k != Key::MAX).count());
                prop_assert!(timers.positions_agree());
            }
        }
    }
}
