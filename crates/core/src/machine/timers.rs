//! The hardware threads' completion timers: at most one key per thread, in
//! an indexed binary min-heap, so that finding the earliest and setting or
//! clearing one thread's timer cost `O(log set timers)`, not a scan of every
//! thread on every event.
//!
//! Only set timers are in the heap: a thread with nothing to complete
//! before the end of the run (idle, or a background job) costs nothing, a
//! timer past the end counting as cleared. Keys are unique (they carry the
//! event queue's sequence number), so the order is total. The heap's root
//! is the earliest timer and its thread, where the loop looks at every
//! event (two loads); a machine of one thread, the common case, keeps its
//! timer there and nothing else: setting it is a store. Several threads'
//! sets are one call out of the loop, which handles the common cases
//! (one or two timers set) without a further call.

use crate::engine::{Key, Time};

/// Position of a thread whose timer is not set.
const ABSENT: u32 = u32::MAX;

/// Most threads a machine has (`cpu.threads`).
const THREADS: usize = crate::cpu::MAX_THREAD as usize + 1;

/// Length of a heap's arrays: twice the threads, so that the right sibling
/// of the last left child is in the array (and vacant). Indexed through
/// `& (SLOTS - 1)`, so the sifts have no bounds checks.
const SLOTS: usize = 2 * THREADS;
const _: () = assert!(SLOTS.is_power_of_two());

/// Index into a heap's arrays: in range by construction, the mask lets the
/// compiler drop the bounds check.
#[inline(always)]
fn at(i: usize) -> usize {
    i & (SLOTS - 1)
}

pub(crate) struct Timers {
    /// `(key, thread)` in heap order: `heap[0]` is the earliest timer (the
    /// loop reads it at every event: two loads). Entries from `len` on are
    /// vacant (`bound`), so a sift compares a last left child with its (vacant)
    /// right sibling without testing whether it exists. One thread keeps
    /// its timer in `heap[0]`, thread 0, and nothing else.
    heap: [(Key, u32); SLOTS],
    len: usize,
    /// Each thread's index in `heap`, or `ABSENT`.
    pos: [u32; SLOTS],
    /// The second earliest timer (the smaller of the root's children,
    /// `bound` if none): below it, a re-armed earliest timer stays the
    /// earliest.
    second: Key,
    /// The least key past the end of the run (`Key::MAX` for a run without
    /// end): with several threads, a timer from it on is cleared, and it is
    /// the key of every vacant entry.
    bound: Key,
    /// Several threads: the heap is kept. One: a set is a store.
    many: bool,
}

impl Timers {
    pub fn new(threads: usize, end: Time) -> Self {
        assert!(threads <= THREADS, "{threads} threads: a machine has at most {THREADS}");
        let bound = end.checked_add(1).map_or(Key::MAX, |t| Key::from(t) << 64);
        let mut heap = [(bound, ABSENT); SLOTS];
        let many = threads > 1;
        if !many {
            // Its timer's thread and no timer, read whether set or not.
            heap[0] = (Key::MAX, 0);
        }
        Timers { heap, len: 0, pos: [ABSENT; SLOTS], second: bound, bound, many }
    }

    /// The earliest timer and its thread (a key past the end: none set).
    #[inline(always)]
    pub fn first(&self) -> (usize, Key) {
        (self.heap[0].1 as usize, self.heap[0].0)
    }

    /// Sets `thread`'s timer to `key` (`Key::MAX` clears it). Inline: with
    /// one thread, the common case, it is a store; several threads' heap
    /// is one call, out of the loop.
    #[inline(always)]
    pub fn set(&mut self, thread: usize, key: Key) {
        if !self.many {
            self.heap[0].0 = key;
        } else {
            self.set_among(thread, key);
        }
    }

    /// How many timers are set.
    #[cfg(test)]
    fn len(&self) -> usize {
        if self.many { self.len } else { usize::from(self.heap[0].0 != Key::MAX) }
    }

    /// Whether every heap entry's thread knows its position, no other
    /// thread thinks it is in the heap, and every entry past the end is vacant.
    #[cfg(test)]
    fn positions_agree(&self) -> bool {
        !self.many
            || self.heap[..self.len].iter().enumerate().all(|(i, &(_, t))| self.pos[t as usize] as usize == i)
                && self.pos.iter().filter(|&&p| p != ABSENT).count() == self.len
                && self.heap[self.len..].iter().all(|&e| e == self.vacant())
                && self.second == self.heap[1].0.min(self.heap[2].0)
    }

    /// `set` with several threads. One or two timers set (a fixed rate
    /// per CPU keeps it so at any thread count) take no further call: the
    /// earliest re-armed and still the earliest, the earliest of two going
    /// later than the other (the two trade places) or cleared, a timer
    /// set beside one other. A timer past the end is cleared; the
    /// re-armed earliest needs no test for it, since `second` is at most
    /// `bound`.
    #[inline(never)]
    fn set_among(&mut self, thread: usize, key: Key) {
        debug_assert!(thread < THREADS);
        let thread = at(thread);
        if self.heap[0].1 as usize == thread {
            // The earliest, as its completion re-arms it.
            if key < self.second {
                self.heap[0].0 = key;
                return;
            }
            if self.len == 1 {
                // Past the end (`second` is `bound`): cleared, the only one.
                (self.heap[0], self.len) = (self.vacant(), 0);
                self.pos[thread] = ABSENT;
                return;
            }
            if self.len == 2 {
                // The other of two takes the first place.
                let other = self.heap[1];
                self.place(0, other);
                if key >= self.bound {
                    (self.heap[1], self.len, self.second) = (self.vacant(), 1, self.bound);
                    self.pos[thread] = ABSENT;
                } else {
                    self.place(1, (key, thread as u32));
                    self.second = key;
                }
                return;
            }
        } else if self.len <= 1 {
            // Not the first, so not set: set beside the first, if any.
            if key >= self.bound {
                return;
            }
            if self.len == 0 {
                self.place(0, (key, thread as u32));
            } else if key > self.heap[0].0 {
                self.place(1, (key, thread as u32));
                self.second = key;
            } else {
                let first = self.heap[0];
                self.place(1, first);
                self.place(0, (key, thread as u32));
                self.second = first.0;
            }
            self.len += 1;
            return;
        }
        self.reorder(thread, key);
    }

    /// An entry past the heap's end: its key above every set one.
    #[inline(always)]
    fn vacant(&self) -> (Key, u32) {
        (self.bound, ABSENT)
    }

    /// The rest of `set_among`: an indexed heap's insert, removal or sift.
    #[inline(never)]
    fn reorder(&mut self, thread: usize, key: Key) {
        let i = self.pos[thread];
        if i == ABSENT {
            if key < self.bound {
                self.insert(thread, key);
            }
        } else if key >= self.bound {
            self.remove(i as usize);
        } else {
            let i = at(i as usize);
            let old = std::mem::replace(&mut self.heap[i].0, key);
            if key < old { self.sift_up(i) } else { self.sift_down(i) }
        }
        self.second = self.heap[1].0.min(self.heap[2].0);
    }

    fn insert(&mut self, thread: usize, key: Key) {
        let i = self.len;
        self.len += 1;
        self.place(i, (key, thread as u32));
        // Later than its parent (at 64 CPUs under a fixed rate per CPU, most
        // often), it stays at the end: no call.
        if i > 0 && self.heap[at((i - 1) / 2)].0 > key {
            self.sift_up(i);
        }
    }

    #[inline(never)]
    fn remove(&mut self, i: usize) {
        let (_, thread) = self.heap[at(i)];
        self.pos[at(thread as usize)] = ABSENT;
        self.len -= 1;
        let vacant = self.vacant();
        let last = std::mem::replace(&mut self.heap[at(self.len)], vacant);
        // The last timer moves into the hole: up or down from there.
        if i < self.len {
            self.place(i, last);
            if i > 0 && self.heap[at((i - 1) / 2)].0 > last.0 { self.sift_up(i) } else { self.sift_down(i) }
        }
    }

    #[inline(never)]
    fn sift_up(&mut self, mut i: usize) {
        let e = self.heap[at(i)];
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[at(parent)].0 <= e.0 {
                break;
            }
            self.place(i, self.heap[at(parent)]);
            i = parent;
        }
        self.place(i, e);
    }

    #[inline(never)]
    fn sift_down(&mut self, mut i: usize) {
        let e = self.heap[at(i)];
        loop {
            let left = 2 * i + 1;
            if left >= self.len {
                break;
            }
            // A vacant right child (`bound`) is never the smaller.
            let right = left + 1;
            let child = if self.heap[at(right)].0 < self.heap[at(left)].0 { right } else { left };
            if self.heap[at(child)].0 >= e.0 {
                break;
            }
            self.place(i, self.heap[at(child)]);
            i = child;
        }
        self.place(i, e);
    }

    #[inline(always)]
    fn place(&mut self, i: usize, e: (Key, u32)) {
        self.heap[at(i)] = e;
        self.pos[at(e.1 as usize)] = i as u32;
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
