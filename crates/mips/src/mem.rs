//! Physical memory shared by every core: a flat 4 GiB big-endian address
//! space stored as 64 KiB pages allocated on first touch, so a program's
//! text, data and stacks cost only what they use.
//!
//! Memory is functional only (values); time is charged by the cache model.

const PAGE_BITS: u32 = 16;
const PAGE: usize = 1 << PAGE_BITS;

/// Sparse big-endian memory.
pub struct Memory {
    pages: Vec<Option<Box<[u8]>>>,
}

impl Default for Memory {
    fn default() -> Self {
        Self::new()
    }
}

impl Memory {
    pub fn new() -> Self {
        Memory {
            pages: (0..1usize << (32 - PAGE_BITS)).map(|_| None).collect(),
        }
    }

    #[inline(always)]
    fn page(&mut self, addr: u32) -> &mut [u8] {
        self.pages[(addr >> PAGE_BITS) as usize]
            .get_or_insert_with(|| vec![0; PAGE].into_boxed_slice())
    }

    #[inline(always)]
    pub fn read_u8(&mut self, addr: u32) -> u8 {
        match &self.pages[(addr >> PAGE_BITS) as usize] {
            Some(p) => p[addr as usize & (PAGE - 1)],
            None => 0,
        }
    }

    /// A naturally aligned halfword (the caller checks alignment).
    #[inline(always)]
    pub fn read_u16(&mut self, addr: u32) -> u16 {
        match &self.pages[(addr >> PAGE_BITS) as usize] {
            Some(p) => {
                let o = addr as usize & (PAGE - 1);
                u16::from_be_bytes([p[o], p[o + 1]])
            }
            None => 0,
        }
    }

    /// A naturally aligned word (the caller checks alignment).
    #[inline(always)]
    pub fn read_u32(&mut self, addr: u32) -> u32 {
        match &self.pages[(addr >> PAGE_BITS) as usize] {
            Some(p) => {
                let o = addr as usize & (PAGE - 1);
                u32::from_be_bytes([p[o], p[o + 1], p[o + 2], p[o + 3]])
            }
            None => 0,
        }
    }

    #[inline(always)]
    pub fn write_u8(&mut self, addr: u32, v: u8) {
        self.page(addr)[addr as usize & (PAGE - 1)] = v;
    }

    #[inline(always)]
    pub fn write_u16(&mut self, addr: u32, v: u16) {
        let o = addr as usize & (PAGE - 1);
        self.page(addr)[o..o + 2].copy_from_slice(&v.to_be_bytes());
    }

    #[inline(always)]
    pub fn write_u32(&mut self, addr: u32, v: u32) {
        let o = addr as usize & (PAGE - 1);
        self.page(addr)[o..o + 4].copy_from_slice(&v.to_be_bytes());
    }

    /// Copies `bytes` in at `addr` (used by the loader; may cross pages).
    pub fn write_bytes(&mut self, addr: u32, bytes: &[u8]) {
        for (i, &b) in bytes.iter().enumerate() {
            self.write_u8(addr.wrapping_add(i as u32), b);
        }
    }

    /// Copies `len` bytes out from `addr` (used for `write` system calls).
    pub fn read_bytes(&mut self, addr: u32, len: u32) -> Vec<u8> {
        (0..len)
            .map(|i| self.read_u8(addr.wrapping_add(i)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_endian_and_untouched_pages_read_zero() {
        let mut m = Memory::new();
        assert_eq!(m.read_u32(0x1234_5678 & !3), 0);
        m.write_u32(0x1000, 0x0102_0304);
        assert_eq!((m.read_u8(0x1000), m.read_u8(0x1003)), (1, 4));
        assert_eq!(m.read_u16(0x1002), 0x0304);
        m.write_bytes(0xFFFE, &[9, 8, 7, 6]);
        assert_eq!(m.read_u32(0xFFFC) & 0xFFFF, 0x0908);
        assert_eq!(m.read_bytes(0x1_0000, 2), vec![7, 6]);
    }
}
