//! Host memory as the programmable NIC's DMA engines and a host driver
//! see it: the ring and buffer addresses both sides agree on (shared with
//! programs/firmware/nic.h) and a sparse word store behind
//! [`HostMemory`].

use crate::device::HostMemory;
use std::ops::Range;

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

    fn read_words(&mut self, addr: u32, out: &mut [u32]) {
        for (w, r) in runs(addr, out.len()) {
            match self.page(w << 2, false) {
                Some(k) => out[r.clone()].copy_from_slice(&self.pages[k][w as usize % PAGE_WORDS..][..r.len()]),
                None => out[r].fill(0),
            }
        }
    }

    fn write_words(&mut self, addr: u32, words: &[u32]) {
        for (w, r) in runs(addr, words.len()) {
            let k = self.page(w << 2, true).expect("made");
            self.pages[k][w as usize % PAGE_WORDS..][..r.len()].copy_from_slice(&words[r]);
        }
    }
}

/// `len` words from byte address `addr` as runs that each lie in one page:
/// each run's first word address (`addr >> 2` wrapping at the address
/// space's end) and its range among the `len`.
fn runs(addr: u32, len: usize) -> impl Iterator<Item = (u32, Range<usize>)> {
    let (mut w, mut done) = (addr >> 2, 0);
    std::iter::from_fn(move || {
        (done < len).then(|| {
            let n = (len - done).min(PAGE_WORDS - w as usize % PAGE_WORDS);
            let run = (w, done..done + n);
            (w, done) = (w.wrapping_add(n as u32), done + n);
            run
        })
    })
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

    /// Runs of words copied at once are the words copied one by one: across
    /// a page's end, from an unaligned address, over pages never written,
    /// across the address space's end.
    #[test]
    fn runs_of_words_are_their_words() {
        let words: Vec<u32> = (1..=1500).collect();
        for addr in [0x1000_0FF0, 0x2000_0002, 0x3000_0000] {
            let (mut runs, mut one) = (Memory::default(), Memory::default());
            runs.write_words(addr, &words);
            words.iter().enumerate().for_each(|(k, &w)| one.write(addr + 4 * k as u32, w));
            for probe in [addr - 8, addr + 0x1800] {
                let (mut a, mut b) = (vec![7; 1200], vec![7; 1200]);
                runs.read_words(probe, &mut a);
                b.iter_mut().enumerate().for_each(|(k, w)| *w = one.read(probe + 4 * k as u32));
                assert_eq!(a, b, "0x{addr:08x} read at 0x{probe:08x}");
            }
        }
        let mut out = [7; 3];
        Memory::default().read_words(0x5000_0FFC, &mut out);
        assert_eq!(out, [0; 3], "pages never written read 0");
        let mut m = Memory::default();
        m.write_words(0xFFFF_FFF8, &[1, 2, 3, 4]);
        assert_eq!([0xFFFF_FFF8, 0xFFFF_FFFC, 0, 4].map(|a| m.read(a)), [1, 2, 3, 4], "a run wraps at the address space's end");
    }
}
