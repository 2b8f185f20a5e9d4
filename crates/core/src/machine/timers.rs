//! The hardware threads' completion timers: one key per thread (`Key::MAX`:
//! none), kept in an indexed binary min-heap so that finding the earliest
//! and moving one thread's timer cost `O(log threads)`, not a scan of every
//! thread on every event.
//!
//! Every thread always has a place in the heap (an unset timer is `Key::MAX`
//! at the bottom), so setting a timer is one sift up or down and nothing is
//! ever inserted or removed. Keys of set timers are unique (they carry the
//! event queue's sequence number); among unset ones the order does not
//! matter, since an unset timer never fires.

use crate::engine::Key;

pub(crate) struct Timers {
    /// Thread ids in heap order: `keys[heap[0]]` is the smallest key.
    heap: Vec<u32>,
    /// Each thread's index in `heap`.
    pos: Vec<u32>,
    /// Each thread's timer.
    keys: Vec<Key>,
}

impl Timers {
    pub fn new(threads: usize) -> Self {
        Self { heap: (0..threads as u32).collect(), pos: (0..threads as u32).collect(), keys: vec![Key::MAX; threads] }
    }

    /// The earliest timer and its thread (`(0, Key::MAX)`: none set).
    #[inline]
    pub fn first(&self) -> (usize, Key) {
        match self.heap.first() {
            Some(&t) => (t as usize, self.keys[t as usize]),
            None => (0, Key::MAX),
        }
    }

    /// Sets `thread`'s timer to `key` (`Key::MAX` clears it). Inline up to
    /// the test whether the heap must move, which with one thread it never does.
    #[inline(always)]
    pub fn set(&mut self, thread: usize, key: Key) {
        let old = std::mem::replace(&mut self.keys[thread], key);
        let i = self.pos[thread] as usize;
        if key < old {
            if i > 0 {
                self.sift_up(i);
            }
        } else if 2 * i + 1 < self.heap.len() {
            self.sift_down(i);
        }
    }

    #[inline(never)]
    fn sift_up(&mut self, mut i: usize) {
        let t = self.heap[i];
        let key = self.keys[t as usize];
        while i > 0 {
            let parent = (i - 1) / 2;
            let p = self.heap[parent];
            if self.keys[p as usize] <= key {
                break;
            }
            self.place(i, p);
            i = parent;
        }
        self.place(i, t);
    }

    #[inline(never)]
    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let t = self.heap[i];
        let key = self.keys[t as usize];
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let mut child = left;
            if right < n && self.keys[self.heap[right] as usize] < self.keys[self.heap[left] as usize] {
                child = right;
            }
            let c = self.heap[child];
            if self.keys[c as usize] >= key {
                break;
            }
            self.place(i, c);
            i = child;
        }
        self.place(i, t);
    }

    #[inline]
    fn place(&mut self, i: usize, thread: u32) {
        self.heap[i] = thread;
        self.pos[thread as usize] = i as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn no_threads_no_timer() {
        assert_eq!(Timers::new(0).first(), (0, Key::MAX));
        assert_eq!(Timers::new(3).first().1, Key::MAX);
    }

    proptest! {
        /// Whatever the sequence of sets and clears, the first timer is the
        /// smallest set key and its thread, as a scan of every thread finds it.
        #[test]
        fn first_is_the_smallest_timer(threads in 1usize..70, ops in proptest::collection::vec((0usize..70, 0u64..40, any::<bool>()), 1..400)) {
            let mut timers = Timers::new(threads);
            let mut model = vec![Key::MAX; threads];
            for (seq, (t, time, clear)) in ops.into_iter().enumerate() {
                let t = t % threads;
                // Set keys are unique, as the queue's sequence numbers make them.
                let key = if clear { Key::MAX } else { (Key::from(time) << 64) | seq as Key };
                timers.set(t, key);
                model[t] = key;
                let want = model.iter().copied().enumerate().min_by_key(|&(_, k)| k).unwrap();
                let got = timers.first();
                prop_assert_eq!(got.1, want.1);
                if want.1 != Key::MAX {
                    prop_assert_eq!(got.0, want.0);
                }
            }
        }
    }
}
