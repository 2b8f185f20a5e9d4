//! Host memory as the programmable NIC's DMA engines and a host driver
//! see it: the ring and buffer addresses both sides agree on (shared with
//! programs/firmware/nic.h) and a sparse word store behind
//! [`HostMemory`].

use crate::device::HostMemory;

/// Host addresses, shared with programs/firmware/nic.h.
pub const SEND_RING: u32 = 0x1000_0000;
pub const RECV_RING: u32 = 0x1100_0000;
pub const RET_RING: u32 = 0x1200_0000;
pub const STATUS: u32 = 0x1300_0000;
pub const SEND_BUFS: u32 = 0x2000_0000;
pub const RECV_BUFS: u32 = 0x3000_0000;
/// Entries in each host ring.
pub const RING: u64 = 256;
/// Bytes of each host frame buffer.
pub const BUF: u32 = 2048;

/// Host memory, sparse: 4 KiB pages made as they are first written
/// (others read 0), found through a two-level directory (the top ten bits
/// of an address, then the next ten), without hashing.
#[derive(Default)]
pub struct Memory {
    pages: Vec<Box<[u32; PAGE_WORDS]>>,
    /// Per top ten bits of an address, the index in `pages` of each of its
    /// 1,024 pages ([`NONE`]: not made), once one of them is.
    directory: Vec<Option<Box<[u32; 1024]>>>,
}

const PAGE_WORDS: usize = 1024;
const NONE: u32 = u32::MAX;

impl Memory {
    fn page(&mut self, addr: u32, make: bool) -> Option<usize> {
        let (top, mid) = ((addr >> 22) as usize, (addr >> 12) as usize & 1023);
        if let Some(Some(pages)) = self.directory.get(top)
            && pages[mid] != NONE
        {
            return Some(pages[mid] as usize);
        }
        if !make {
            return None;
        }
        if self.directory.is_empty() {
            self.directory.resize_with(1024, || None);
        }
        self.pages.push(Box::new([0; PAGE_WORDS]));
        let k = self.pages.len() - 1;
        self.directory[top].get_or_insert_with(|| Box::new([NONE; 1024]))[mid] = k as u32;
        Some(k)
    }
}

impl HostMemory for Memory {
    fn read(&mut self, addr: u32) -> u32 {
        self.page(addr, false).map_or(0, |k| self.pages[k][(addr >> 2) as usize % PAGE_WORDS])
    }

    fn write(&mut self, addr: u32, v: u32) {
        let k = self.page(addr, true).expect("made");
        self.pages[k][(addr >> 2) as usize % PAGE_WORDS] = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words written read back wherever they are (pages under one top-level
    /// entry and under several, the address space's ends); others read 0.
    #[test]
    fn words_read_back_and_others_read_zero() {
        let mut m = Memory::default();
        let addrs = [0, 4, 0xFFC, 0x1000, 0x1000_0000, 0x1000_1FFC, 0x3FFF_F000, 0x4000_0000, 0xFFFF_FFFC];
        for (i, &a) in addrs.iter().enumerate() {
            m.write(a, i as u32 + 1);
        }
        for (i, &a) in addrs.iter().enumerate() {
            assert_eq!(m.read(a), i as u32 + 1, "0x{a:08x}");
        }
        for a in [8, 0x2000, 0x1000_2000, 0x2000_0000, 0xFFFF_F000] {
            assert_eq!(m.read(a), 0, "0x{a:08x}");
        }
        assert_eq!(m.pages.len(), 7, "one page per distinct 4 KiB");
    }
}
