//! Predecoded program text: every word of the executable segments decoded
//! once at load, indexed by PC. A store into the text re-decodes the word
//! and counts a new [`Code::generation`], so self-modifying code stays
//! correct and the blocks built from the old text are dropped.

use crate::decode::{Inst, decode};
use crate::elf::Program;
use crate::mem::Memory;

pub struct Code {
    base: u32,
    insts: Vec<Inst>,
    generation: u32,
}

impl Code {
    /// Decodes the span covering every executable segment (gaps read as loaded in `mem`).
    pub fn new(program: &Program, mem: &Memory) -> Self {
        let exec = program.segments.iter().filter(|s| s.executable);
        let lo = exec.clone().map(|s| s.vaddr & !3).min().unwrap_or(0);
        let hi = exec.map(|s| s.vaddr + s.memsz).max().unwrap_or(0);
        let insts = (lo..hi).step_by(4).map(|pc| decode(mem.read_u32(pc), pc)).collect();
        Code { base: lo, insts, generation: 0 }
    }

    /// The text index of `pc`, or None outside the program's code or if misaligned.
    #[inline(always)]
    pub fn index(&self, pc: u32) -> Option<usize> {
        let off = pc.wrapping_sub(self.base);
        let k = (off >> 2) as usize;
        (off & 3 == 0 && k < self.insts.len()).then_some(k)
    }

    /// The instruction at `pc`, or None outside the program's code or if misaligned.
    #[inline(always)]
    pub fn get(&self, pc: u32) -> Option<Inst> {
        self.index(pc).map(|k| self.insts[k])
    }

    /// The address of the first instruction.
    pub fn base(&self) -> u32 {
        self.base
    }

    /// Every instruction, by text index.
    pub fn insts(&self) -> &[Inst] {
        &self.insts
    }

    /// Changes whenever the text is written.
    #[inline(always)]
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// Whether a store at `addr` writes the text (see [`Code::written`]).
    #[inline(always)]
    pub fn holds(&self, addr: u32) -> bool {
        ((addr.wrapping_sub(self.base) >> 2) as usize) < self.insts.len()
    }

    /// Keeps the decoded copy in step with a store at `addr` (`word` reads the stored word).
    #[inline(always)]
    pub fn written(&mut self, addr: u32, word: impl FnOnce() -> u32) {
        let off = addr.wrapping_sub(self.base) >> 2;
        if let Some(slot) = self.insts.get_mut(off as usize) {
            *slot = decode(word(), addr & !3);
            self.generation = self.generation.wrapping_add(1);
        }
    }
}
