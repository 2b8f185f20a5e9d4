//! Physical memory shared by every core: a flat 4 GiB big-endian address
//! space stored as 64 KiB pages allocated on first touch, so a program's
//! text, data and stacks cost only what they use. Guarded ranges of pages
//! are never allocated: a write there fails (the stacks' limits, see
//! [`crate::run`]); the check is made only when a page is first touched.
//!
//! Memory is functional only (values); time is charged by the cache model.

const PAGE_BITS: u32 = 16;
/// Bytes in a page (the unit of allocation and of the guard).
pub const PAGE_BYTES: u32 = 1 << PAGE_BITS;
const PAGE_WORDS: usize = 1 << (PAGE_BITS - 2);
const PAGES: usize = 1 << (32 - PAGE_BITS);

/// Sparse big-endian memory, stored as words (every access the cores make
/// is to an aligned word; bytes and halfwords are lanes of it).
pub struct Memory {
    pages: Box<[Option<Box<[u32; PAGE_WORDS]>>; PAGES]>,
    /// Page ranges `lo..hi` that are never allocated.
    guards: Vec<(usize, usize)>,
}

impl Default for Memory {
    fn default() -> Self {
        Self::new()
    }
}

#[inline(always)]
fn split(addr: u32) -> (usize, usize) {
    ((addr >> PAGE_BITS) as usize, (addr as usize >> 2) & (PAGE_WORDS - 1))
}

impl Memory {
    pub fn new() -> Self {
        let pages: Vec<_> = (0..PAGES).map(|_| None).collect();
        Memory { pages: pages.into_boxed_slice().try_into().unwrap_or_else(|_| unreachable!()), guards: Vec::new() }
    }

    /// Guards the whole pages within `lo..hi` (besides those guarded
    /// before): writes there fail from now on.
    pub fn guard(&mut self, lo: u32, hi: u32) {
        let pages = ((lo as usize).div_ceil(PAGE_BYTES as usize), (hi >> PAGE_BITS) as usize);
        for p in pages.0..pages.1 {
            self.pages[p] = None;
        }
        self.guards.push(pages);
    }

    /// Whether `addr` is in a guarded page.
    pub fn guarded(&self, addr: u32) -> bool {
        let p = split(addr).0;
        self.guards.iter().any(|g| (g.0..g.1).contains(&p))
    }

    /// Whether the page holding `addr` has been written (it exists).
    pub fn allocated(&self, addr: u32) -> bool {
        self.pages[split(addr).0].is_some()
    }

    /// The aligned word containing `addr`.
    #[inline(always)]
    pub fn read_u32(&self, addr: u32) -> u32 {
        let (p, w) = split(addr);
        match &self.pages[p] {
            Some(page) => page[w],
            None => 0,
        }
    }

    /// The aligned word containing `addr`, if its page has been written.
    #[inline(always)]
    pub fn word_mut(&mut self, addr: u32) -> Option<&mut u32> {
        let (p, w) = split(addr);
        self.pages[p].as_mut().map(|page| &mut page[w])
    }

    /// Writes the bytes of `value` selected by `mask` into the aligned word
    /// containing `addr`; `false` (nothing written) in a guarded page.
    #[inline(always)]
    pub fn write_masked(&mut self, addr: u32, value: u32, mask: u32) -> bool {
        let (p, w) = split(addr);
        match &mut self.pages[p] {
            Some(page) => {
                page[w] = (page[w] & !mask) | (value & mask);
                true
            }
            None => self.first_write(addr, value, mask),
        }
    }

    /// A write to a page not yet allocated: allocates it unless it is guarded.
    #[cold]
    #[inline(never)]
    fn first_write(&mut self, addr: u32, value: u32, mask: u32) -> bool {
        let Some(page) = self.page_mut(addr) else { return false };
        page[split(addr).1] = value & mask;
        true
    }

    /// The page holding `addr`, allocated if need be; None if it is guarded.
    fn page_mut(&mut self, addr: u32) -> Option<&mut [u32; PAGE_WORDS]> {
        let p = split(addr).0;
        if self.pages[p].is_none() && self.guarded(addr) {
            return None;
        }
        Some(self.pages[p].get_or_insert_with(|| Box::new([0; PAGE_WORDS])))
    }

    pub fn write_u32(&mut self, addr: u32, v: u32) {
        self.write_masked(addr, v, u32::MAX);
    }

    pub fn read_u8(&self, addr: u32) -> u8 {
        (self.read_u32(addr) >> ((3 - (addr & 3)) * 8)) as u8
    }

    pub fn write_u8(&mut self, addr: u32, v: u8) {
        let lane = (3 - (addr & 3)) * 8;
        self.write_masked(addr, (v as u32) << lane, 0xFF << lane);
    }

    /// Copies `bytes` in at `addr` (the loader, a device's DMA; may cross
    /// pages): whole aligned words at once, the bytes around them one by one.
    pub fn write_bytes(&mut self, addr: u32, bytes: &[u8]) {
        let head = ((4 - (addr & 3)) & 3).min(bytes.len() as u32) as usize;
        let (head, rest) = bytes.split_at(head);
        for (i, &b) in head.iter().enumerate() {
            self.write_u8(addr.wrapping_add(i as u32), b);
        }
        let mut a = addr.wrapping_add(head.len() as u32);
        let mut words = rest.chunks_exact(4);
        let tail = words.remainder();
        // A page's share of the words at a time (none written in a guarded page).
        while words.len() > 0 {
            let n = words.len().min(PAGE_WORDS - split(a).1);
            let part = words.by_ref().take(n);
            if let Some(page) = self.page_mut(a) {
                let w = split(a).1;
                for (slot, b) in page[w..w + n].iter_mut().zip(part) {
                    *slot = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                }
            } else {
                part.for_each(drop);
            }
            a = a.wrapping_add(4 * n as u32);
        }
        for (i, &b) in tail.iter().enumerate() {
            self.write_u8(a.wrapping_add(i as u32), b);
        }
    }

    /// Copies `len` bytes out from `addr` (used for `write` system calls).
    pub fn read_bytes(&self, addr: u32, len: u32) -> Vec<u8> {
        (0..len).map(|i| self.read_u8(addr.wrapping_add(i))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_endian_and_untouched_pages_read_zero() {
        let mut m = Memory::new();
        assert_eq!(m.read_u32(0x1234_5678), 0);
        m.write_u32(0x1000, 0x0102_0304);
        assert_eq!((m.read_u8(0x1000), m.read_u8(0x1003)), (1, 4));
        m.write_masked(0x1000, 0xAABB_0000, 0xFFFF_0000);
        assert_eq!(m.read_u32(0x1000), 0xAABB_0304);
        m.write_bytes(0xFFFE, &[9, 8, 7, 6]);
        assert_eq!(m.read_u32(0xFFFC) & 0xFFFF, 0x0908);
        assert_eq!(m.read_bytes(0x1_0000, 2), vec![7, 6]);
        // Unaligned head, whole words and a tail, across a page boundary.
        let bytes: Vec<u8> = (1..=11).collect();
        m.write_bytes(0x1FFFB, &bytes);
        assert_eq!(m.read_bytes(0x1FFFB, 11), bytes);
        assert_eq!((m.read_u8(0x1FFFA), m.read_u8(0x20006)), (0, 0));
        // Whole words across three pages, the middle one guarded: its words are dropped.
        m.guard(0x4_0000, 0x5_0000);
        let words: Vec<u8> = (0..0x2_0010u32).map(|i| (i % 251) as u8).collect();
        m.write_bytes(0x3_fff8, &words);
        assert_eq!(m.read_bytes(0x3_fff8, 8), words[..8]);
        assert!(!m.allocated(0x4_0000) && m.read_u32(0x4_fffc) == 0);
        assert_eq!(m.read_bytes(0x5_0000, 0x10), words[0x1_0008..0x1_0018]);
    }

    #[test]
    fn guarded_pages_refuse_writes() {
        let mut m = Memory::new();
        m.write_u32(0x2_0000, 5);
        m.guard(0x1_8000, 0x3_0000); // whole pages 0x2_0000..0x3_0000 only
        assert!(!m.write_masked(0x2_0004, 1, u32::MAX) && m.read_u32(0x2_0000) == 0);
        assert!(!m.allocated(0x2_0000));
        assert!(m.write_masked(0x1_8000, 1, u32::MAX) && m.write_masked(0x3_0000, 1, u32::MAX));
        // A second range adds to the first.
        m.guard(0x5_0000, 0x6_0000);
        assert!(!m.write_masked(0x5_fffc, 1, u32::MAX) && !m.write_masked(0x2_0000, 1, u32::MAX));
        assert!(m.guarded(0x5_0000) && !m.guarded(0x6_0000) && !m.guarded(0x4_fffc));
    }
}
