//! The discrete-event core: integer time and an ordered event queue.
//!
//! The engine knows nothing of networking. Time is a count of reference-clock
//! cycles (`Time = u64`); every model converts its own units into cycles once,
//! at configuration time. Events leave the queue in `(time, seq)` order, where
//! `seq` is the order of scheduling, so ties are first-in first-out and a run
//! is a pure function of its inputs.
//!
//! [`EventQueue`] is a hand-written binary min-heap over one flat `Vec`: after
//! warm-up it never allocates, and with the few pending events a model keeps
//! (one per source, per busy context, per in-flight transfer) every operation
//! touches a handful of cache lines. In front of the heap sits one slot for
//! an event that, when scheduled, is earlier than everything queued (the
//! common case: the next arrival, scheduled as the last one is popped). It
//! stays the earliest, so popping it compares nothing, and it enters the
//! heap only if an even earlier event displaces it. The slot keeps its
//! `(time, seq)` key, so the order is exactly the heap's.
//!
//! The run's end is a key beside the heap ([`EventQueue::end_at`]), not an
//! event in it: the queue is empty when only the end is left, and an event
//! that would come after it is never queued, since it would never leave.

/// Simulated time in reference-clock cycles.
pub type Time = u64;

/// Order of an event: its time in the high 64 bits, its scheduling sequence
/// number in the low 64. Sequence numbers are multiples of four: a model
/// may set a key's low two bits ([`MARKS`]) to say what it is, which keeps
/// its order.
pub type Key = u128;

/// The low two bits of a key, free for the model (sequence numbers step by
/// four): a marked key sorts where it was, since no key lies between it
/// and the next sequence number.
pub const MARKS: Key = 3;

/// The time part of a key.
#[inline]
pub fn key_time(key: Key) -> Time {
    (key >> 64) as Time
}

struct Entry<E> {
    key: u128,
    event: E,
}

/// A min-priority queue of events keyed by `(time, insertion order)`.
pub struct EventQueue<E> {
    /// The earliest event, when it was earlier than everything queued as it
    /// was scheduled (it stays the earliest: only an earlier one displaces it).
    first: Option<Entry<E>>,
    heap: Vec<Entry<E>>,
    /// The smallest key queued (the end's when none is): kept up to date
    /// by `schedule` and `pop`, since the loop peeks at every event.
    min: Key,
    /// The end's key (`Key::MAX`: none): every queued key is below it.
    end: Key,
    seq: u64,
    now: Time,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self { first: None, heap: Vec::with_capacity(64), min: Key::MAX, end: Key::MAX, seq: 0, now: 0 }
    }

    /// The time of the event most recently popped (0 before the first).
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len() + usize::from(self.first.is_some())
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    fn heap_min(&self) -> u128 {
        self.heap.first().map_or(self.end, |e| e.key)
    }

    /// Ends the queue at `time`, as an event scheduled now at `time` would
    /// come (ties with it later leave after it): `pop` returns `None` once
    /// only later events would be left. Taken before anything is scheduled.
    pub fn end_at(&mut self, time: Time) {
        debug_assert!(self.is_empty() && self.end == Key::MAX);
        self.end = self.reserve_key(time);
        self.min = self.end;
    }

    /// Schedules `event` at `time`. Scheduling into the past is a model bug:
    /// the event is clamped to `now` so time never runs backwards, and debug
    /// builds stop.
    #[inline(always)]
    pub fn schedule(&mut self, time: Time, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past: {time} < {}", self.now);
        let time = time.max(self.now);
        let key = ((time as u128) << 64) | self.seq as u128;
        self.seq += 4;
        self.insert(key, event);
    }

    /// Schedules `event` with a key [`EventQueue::reserve_key`] took
    /// earlier: it leaves where it would have had it been scheduled then (a
    /// bus message the model keeps out of the queue until something could
    /// tell, `machine/eoi.rs`). The key must not be behind the loop.
    pub fn schedule_reserved(&mut self, key: Key, event: E) {
        debug_assert!(key_time(key) >= self.now, "reserved event in the past");
        self.insert(key, event);
    }

    #[inline(always)]
    fn insert(&mut self, key: Key, event: E) {
        let entry = Entry { key, event };
        if key >= self.min {
            // After the end: it would never leave.
            if key < self.end {
                self.push_heap(entry);
            }
            return;
        }
        // The earliest of all: into the slot, whose event (earlier than the
        // heap's) moves to the heap.
        self.min = key;
        match &mut self.first {
            // The common case (the slot was just popped): nothing moves.
            None => self.first = Some(entry),
            Some(f) => {
                let old = std::mem::replace(f, entry);
                self.push_heap(old);
            }
        }
    }

    fn push_heap(&mut self, entry: Entry<E>) {
        self.heap.push(entry);
        self.sift_up(self.heap.len() - 1);
    }

    /// Sets `mark` (of [`MARKS`]) in every key taken from now on.
    pub fn mark_keys(&mut self, mark: Key) {
        debug_assert!(mark <= MARKS);
        self.seq |= mark as u64;
    }

    /// Reserves the key an event scheduled now at `time` would get, for a
    /// model that keeps a timer outside the queue (a hardware thread's next
    /// completion) and compares it with [`EventQueue::peek_key`]. Not
    /// clamped as `schedule` is: every timer is a completion, `now` plus
    /// cycles (debug builds check).
    #[inline]
    pub fn reserve_key(&mut self, time: Time) -> Key {
        debug_assert!(time >= self.now, "timer set in the past: {time} < {}", self.now);
        let key = ((time as u128) << 64) | self.seq as u128;
        self.seq += 4;
        key
    }

    /// Key of the next event (the end's if none, `Key::MAX` without an end).
    #[inline]
    pub fn peek_key(&self) -> Key {
        debug_assert_eq!(self.min, self.first.as_ref().map_or(Key::MAX, |f| f.key).min(self.heap_min()));
        self.min
    }

    /// The next event (`None` if none), left in the queue.
    #[inline]
    pub fn peek(&self) -> Option<&E> {
        match &self.first {
            Some(f) => Some(&f.event),
            None => self.heap.first().map(|e| &e.event),
        }
    }

    /// Moves time back to `time` after events were popped ahead of it (a
    /// device that runs behind the loop is given what the wire brings
    /// next); events scheduled meanwhile stay where they were scheduled.
    #[inline]
    pub fn rewind(&mut self, time: Time) {
        debug_assert!(time <= self.now);
        self.now = time;
    }

    /// Moves time to an outside timer's `key` when it comes before every
    /// queued event.
    #[inline]
    pub fn advance(&mut self, key: Key) -> Time {
        debug_assert!(key < self.peek_key());
        self.now = key_time(key);
        self.now
    }

    /// Moves time to `time`, no later than the next queued event: a model
    /// that runs outside the queue (code on the cores) acts at that cycle.
    #[inline]
    pub fn advance_to(&mut self, time: Time) -> Time {
        debug_assert!(time >= self.now && time <= key_time(self.peek_key()), "advance to {time} outside [{}, next event]", self.now);
        self.now = time;
        time
    }

    /// Removes the earliest event and advances `now` to its time (`None`:
    /// none before the end). Always
    /// inline: with a second caller (the firmware NIC's wire) LLVM left it
    /// out of the event loop, +27 instructions a frame on the bench.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        // The slot, when full, holds the earliest event: only an event earlier
        // than every other enters it.
        if let Some(f) = self.first.take() {
            debug_assert!(f.key < self.heap_min());
            self.min = self.heap_min();
            self.now = (f.key >> 64) as Time;
            return Some((self.now, f.event));
        }
        if self.heap.is_empty() {
            return None;
        }
        let last = self.heap.len() - 1;
        self.heap.swap(0, last);
        let Entry { key, event } = self.heap.pop()?;
        if !self.heap.is_empty() {
            self.sift_down(0);
        }
        self.min = self.heap_min();
        let time = (key >> 64) as Time;
        self.now = time;
        Some((time, event))
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[i].key >= self.heap[parent].key {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && self.heap[right].key < self.heap[left].key { right } else { left };
            if self.heap[child].key >= self.heap[i].key {
                break;
            }
            self.heap.swap(i, child);
            i = child;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ties_leave_in_scheduling_order() {
        let mut q = EventQueue::new();
        for i in 0..100u32 {
            q.schedule(7, i);
        }
        let order: Vec<u32> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn nothing_leaves_after_the_end() {
        let mut q = EventQueue::new();
        q.end_at(10);
        assert_eq!(q.peek_key() >> 64, 10);
        for (t, e) in [(12, 'a'), (10, 'b'), (3, 'c'), (9, 'd')] {
            q.schedule(t, e);
        }
        // A tie with the end leaves after it: `b` never leaves, nor `a`.
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ['c', 'd']);
        assert_eq!((q.peek(), q.peek_key() >> 64), (None, 10));
    }

    proptest! {
        /// Events leave sorted by (time, insertion order) whatever the insertion
        /// order, interleaved pops included, and `now` never decreases.
        #[test]
        fn pops_in_time_then_fifo_order(ops in proptest::collection::vec((0u64..50, any::<bool>()), 1..300)) {
            let mut q = EventQueue::new();
            let mut model: Vec<(u64, usize)> = Vec::new();
            let mut last = (0u64, 0usize);
            for (i, (dt, pop)) in ops.into_iter().enumerate() {
                let t = q.now() + dt;
                q.schedule(t, i);
                model.push((t, i));
                if pop {
                    model.sort();
                    let want = model.remove(0);
                    let (t, e) = q.pop().unwrap();
                    prop_assert_eq!((t, e), want);
                    prop_assert!((t, e) >= last);
                    last = (t, e);
                }
            }
            model.sort();
            for want in model {
                prop_assert_eq!(q.pop().unwrap(), want);
            }
            prop_assert!(q.pop().is_none());
        }

        /// The same with events spread over many scales (one instant apart
        /// to millions of cycles), `peek` agreeing with `pop`, and time
        /// rewound as a device running behind the loop does.
        #[test]
        fn pops_in_order_across_scales_and_rewinds(ops in proptest::collection::vec((0u64..1_000, 0u32..4, 0u8..8), 1..400)) {
            let mut q = EventQueue::new();
            let mut model: Vec<(u64, usize)> = Vec::new();
            for (i, (dt, scale, op)) in ops.into_iter().enumerate() {
                let t = q.now() + (dt << (6 * scale));
                q.schedule(t, i);
                model.push((t, i));
                if op >= 3 {
                    model.sort();
                    prop_assert_eq!(q.peek(), Some(&model[0].1));
                    prop_assert_eq!(q.pop().unwrap(), model.remove(0));
                }
                if op == 7 {
                    // Back by as much again, within the run so far.
                    q.rewind(q.now() - q.now().min(dt << (6 * scale)));
                }
            }
            model.sort();
            for want in model {
                prop_assert_eq!(q.pop().unwrap(), want);
            }
            prop_assert!(q.pop().is_none());
        }
    }
}
