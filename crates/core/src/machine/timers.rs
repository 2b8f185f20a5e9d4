//! The hardware threads' completion timers: at most one key per thread, in
//! an indexed binary min-heap, so that finding the earliest and setting or
//! clearing one thread's timer cost `O(log set timers)`, not a scan of every
//! thread on every event.
//!
//! Only set timers are in the heap: a thread with nothing to complete
//! before the end of the run (idle, or a background job) costs nothing, a
//! timer past the end counting as cleared. Keys are unique (they carry the
//! event queue's sequence number), so the order is total. The earliest
//! timer and its thread are kept beside the heap, so the loop's look at
//! every event is two loads; a machine of one thread, the common case, has
//! no heap: its timer is that field, and setting it is a store.

use crate::engine::{Key, Time, key_time};

/// Position of a thread whose timer is not set.
const ABSENT: u32 = u32::MAX;

pub(crate) struct Timers {
    /// The earliest timer (`Key::MAX`: none) and its thread, kept up to
    /// date by `set`: the loop reads it at every event.
    first: Key,
    thread: usize,
    /// Several threads: the set timers in an indexed heap. One thread (no
    /// heap) keeps its timer in `first`: setting it is a store.
    heap: Option<Heap>,
}

pub(crate) struct Heap {
    /// `(key, thread)` in heap order: `heap[0]` is the earliest.
    heap: Vec<(Key, u32)>,
    /// Each thread's index in `heap`, or `ABSENT`.
    pos: Vec<u32>,
    /// The end of the run: a timer past it is cleared.
    end: Time,
}

impl Timers {
    pub fn new(threads: usize, end: Time) -> Self {
        let heap = (threads != 1).then(|| Heap { heap: Vec::with_capacity(threads), pos: vec![ABSENT; threads], end });
        Timers { first: Key::MAX, thread: 0, heap }
    }

    /// The earliest timer and its thread (`Key::MAX`: none set).
    #[inline(always)]
    pub fn first(&self) -> (usize, Key) {
        (self.thread, self.first)
    }

    /// Sets `thread`'s timer to `key` (`Key::MAX` clears it). Inline: with
    /// one timer set, the common case, it is a store.
    #[inline(always)]
    pub fn set(&mut self, thread: usize, key: Key) {
        match &mut self.heap {
            None => self.first = key,
            Some(h) => {
                h.set(thread, key);
                (self.first, self.thread) = h.heap.first().map_or((Key::MAX, 0), |&(k, t)| (k, t as usize));
            }
        }
    }

    /// How many timers are set.
    #[cfg(test)]
    fn len(&self) -> usize {
        match &self.heap {
            None => usize::from(self.first != Key::MAX),
            Some(h) => h.heap.len(),
        }
    }

    /// Whether every heap entry's thread knows its position, and no other
    /// thread thinks it is in the heap.
    #[cfg(test)]
    fn positions_agree(&self) -> bool {
        let Some(h) = &self.heap else { return true };
        h.heap.iter().enumerate().all(|(i, &(_, t))| h.pos[t as usize] as usize == i) && h.pos.iter().filter(|&&p| p != ABSENT).count() == h.heap.len()
    }
}

impl Heap {
    #[inline(always)]
    fn set(&mut self, thread: usize, key: Key) {
        let key = if key_time(key) > self.end { Key::MAX } else { key };
        // The common case of one busy thread at a time: its timer is the
        // only one set, or the first to be set. Nothing moves.
        match self.heap.as_mut_slice() {
            [(k, t)] if *t as usize == thread => {
                if key != Key::MAX {
                    *k = key;
                } else {
                    self.heap.clear();
                    self.pos[thread] = ABSENT;
                }
                return;
            }
            [] => {
                debug_assert_eq!(self.pos[thread], ABSENT);
                if key != Key::MAX {
                    self.heap.push((key, thread as u32));
                    self.pos[thread] = 0;
                }
                return;
            }
            _ => {}
        }
        let i = self.pos[thread];
        if i == ABSENT {
            if key != Key::MAX {
                self.insert(thread, key);
            }
        } else if key == Key::MAX {
            self.remove(i as usize);
        } else {
            let i = i as usize;
            // Not the only timer (that case returned above): it may move.
            let old = std::mem::replace(&mut self.heap[i].0, key);
            if key < old { self.sift_up(i) } else { self.sift_down(i) }
        }
    }

    #[inline(never)]
    fn insert(&mut self, thread: usize, key: Key) {
        self.heap.push((key, thread as u32));
        self.pos[thread] = (self.heap.len() - 1) as u32;
        self.sift_up(self.heap.len() - 1);
    }

    #[inline(never)]
    fn remove(&mut self, i: usize) {
        let (_, thread) = self.heap.swap_remove(i);
        self.pos[thread as usize] = ABSENT;
        // The last timer moved into the hole: up or down from there.
        if i < self.heap.len() {
            self.pos[self.heap[i].1 as usize] = i as u32;
            if i > 0 && self.heap[(i - 1) / 2].0 > self.heap[i].0 { self.sift_up(i) } else { self.sift_down(i) }
        }
    }

    #[inline(never)]
    fn sift_up(&mut self, mut i: usize) {
        let e = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[parent].0 <= e.0 {
                break;
            }
            self.place(i, self.heap[parent]);
            i = parent;
        }
        self.place(i, e);
    }

    #[inline(never)]
    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let e = self.heap[i];
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && self.heap[right].0 < self.heap[left].0 { right } else { left };
            if self.heap[child].0 >= e.0 {
                break;
            }
            self.place(i, self.heap[child]);
            i = child;
        }
        self.place(i, e);
    }

    #[inline]
    fn place(&mut self, i: usize, e: (Key, u32)) {
        self.heap[i] = e;
        self.pos[e.1 as usize] = i as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        /// thread's slot keeps it: the End event, queued first, comes first).
        /// Times are one cycle to 2^15 cycles apart (`scale`).
        #[test]
        fn first_is_the_smallest_timer(threads in 1usize..70, end in 0u64..45, scale in 0u32..4, ops in proptest::collection::vec((0usize..70, 0u64..40, any::<bool>()), 1..400)) {
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
                prop_assert_eq!(got.1, want.1);
                if want.1 != Key::MAX {
                    prop_assert_eq!(got.0, want.0);
                }
                prop_assert_eq!(timers.len(), model.iter().filter(|&&k| k != Key::MAX).count());
                prop_assert!(timers.positions_agree());
            }
        }
    }
}
