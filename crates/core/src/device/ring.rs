//! A growable first-in first-out ring for the NIC's receive buffer.
//!
//! `VecDeque` would do, but its `push_back` is one generic function shared by
//! every queue of the same element type: once a second NIC path (the RSS
//! rings) pushed too, LLVM stopped inlining it and each arriving frame paid
//! a call. Here the pushes and reads are always inline; only growing, which
//! happens a few times per run, is a call, and the caller decides when.
//! The buffer is never empty (64 slots from the start), so that a slot,
//! masked by its length less one, is always in it: reads and writes have
//! no bounds check (two instructions each, four a frame on the bench).

/// A queue of `Copy` values in a power-of-two buffer.
#[derive(Debug, Clone)]
pub struct Ring<T> {
    /// A power of two, at least 64 long: assigned by `new` and `grow` only.
    buf: Vec<T>,
    /// Index of the oldest value.
    head: usize,
    len: usize,
}

impl<T: Copy + Default> Ring<T> {
    pub fn new() -> Self {
        Self { buf: vec![T::default(); 64], head: 0, len: 0 }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// The buffer has no room for another value.
    #[inline(always)]
    pub fn is_full(&self) -> bool {
        self.len == self.buf.len()
    }

    /// Where the `i`th oldest value sits; the buffer's length is a power of two.
    #[inline(always)]
    fn slot(&self, i: usize) -> usize {
        (self.head + i) & (self.buf.len() - 1)
    }

    /// The `i`th oldest value's place (or a later one's, or a free slot).
    #[inline(always)]
    fn nth(&self, i: usize) -> &T {
        // SAFETY: `slot` masks by the length less one, and the length is
        // not zero (`buf`).
        unsafe { self.buf.get_unchecked(self.slot(i)) }
    }

    /// `nth`, to write.
    #[inline(always)]
    fn nth_mut(&mut self, i: usize) -> &mut T {
        let at = self.slot(i);
        // SAFETY: as `nth`'s.
        unsafe { self.buf.get_unchecked_mut(at) }
    }

    /// Appends `value`. The caller makes room first (`is_full`, `grow`):
    /// it tests fullness anyway, and a second test here would cost one per
    /// frame. A full ring would lose its oldest value (debug builds panic).
    #[inline(always)]
    pub fn push_back(&mut self, value: T) {
        debug_assert!(!self.is_full());
        *self.nth_mut(self.len) = value;
        self.len += 1;
    }

    /// Drops the `n` oldest values.
    pub fn discard_front(&mut self, n: usize) {
        assert!(n <= self.len, "discarding {n} of {} values", self.len);
        self.head = self.slot(n);
        self.len -= n;
    }

    /// How many of the `n` oldest values (`n` at most the length) come
    /// before the first for which `pred` is false; `pred` holds for a
    /// prefix of them, which is found by bisection.
    #[inline]
    pub fn partition_point(&self, n: usize, mut pred: impl FnMut(&T) -> bool) -> usize {
        debug_assert!(n <= self.len);
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.nth(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<&T> {
        if i < self.len { Some(self.nth(i)) } else { None }
    }

    #[inline(always)]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i < self.len { Some(self.nth_mut(i)) } else { None }
    }

    /// Doubles the buffer, oldest value first.
    #[cold]
    #[inline(never)]
    pub fn grow(&mut self) {
        let mut buf = vec![T::default(); self.buf.len() * 2];
        for (i, v) in buf.iter_mut().take(self.len).enumerate() {
            *v = *self.nth(i);
        }
        self.buf = buf;
        self.head = 0;
    }
}

impl<T: Copy + Default> Default for Ring<T> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;
    use std::collections::VecDeque;

    fn pop(ring: &mut Ring<u32>) -> Option<u32> {
        let v = ring.get(0).copied();
        if v.is_some() {
            ring.discard_front(1);
        }
        v
    }

    #[test]
    fn behaves_as_a_vecdeque_across_growth_and_wrap() {
        let mut ring = Ring::new();
        let mut model = VecDeque::new();
        // Pushes outrun pops, so the ring wraps and grows several times.
        for i in 0..1000u32 {
            if ring.is_full() {
                ring.grow();
            }
            ring.push_back(i);
            model.push_back(i);
            if i % 3 == 0 {
                assert_eq!(pop(&mut ring), model.pop_front());
            }
            if i % 7 == 0 && ring.len() >= 2 {
                ring.discard_front(2);
                model.drain(..2);
            }
            assert_eq!(ring.len(), model.len());
            assert_eq!(ring.get(0), model.front());
            assert_eq!(ring.get(ring.len() / 2), model.get(model.len() / 2));
            assert_eq!(ring.get(ring.len()), None);
        }
        if let Some(v) = ring.get_mut(1) {
            *v = 7;
        }
        model[1] = 7;
        while let Some(v) = model.pop_front() {
            assert_eq!(pop(&mut ring), Some(v));
        }
        assert_eq!(pop(&mut ring), None);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic]
    fn a_push_without_room_panics_in_debug_builds() {
        let mut ring = Ring::new();
        while !ring.is_full() {
            ring.push_back(1u32);
        }
        ring.push_back(1u32);
    }
}
