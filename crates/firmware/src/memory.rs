//! Host memory as the programmable NIC's DMA engines and a host driver
//! see it: the ring and buffer addresses both sides agree on (shared with
//! programs/firmware/nic.h) and a sparse word store behind
//! [`HostMemory`].

use crate::device::HostMemory;
use std::collections::HashMap;

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
/// (others read 0), the last one used looked up without hashing (the DMA
/// engines copy runs of words).
#[derive(Default)]
pub struct Memory {
    pages: Vec<Box<[u32; PAGE_WORDS]>>,
    index: HashMap<u32, usize>,
    /// (page number, its index in `pages`) of the last page used.
    last: Option<(u32, usize)>,
}

const PAGE_WORDS: usize = 1024;

impl Memory {
    fn page(&mut self, addr: u32, make: bool) -> Option<usize> {
        let n = addr >> 12;
        if let Some((m, k)) = self.last
            && m == n
        {
            return Some(k);
        }
        let k = match self.index.get(&n) {
            Some(&k) => k,
            None if make => {
                self.pages.push(Box::new([0; PAGE_WORDS]));
                self.index.insert(n, self.pages.len() - 1);
                self.pages.len() - 1
            }
            None => return None,
        };
        self.last = Some((n, k));
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
