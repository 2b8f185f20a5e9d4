//! Hand-assembled test programs: encoders for the instructions the timing,
//! cache and SMT tests use, and a system that runs them.
#![allow(dead_code)]

use irqsim_mips::elf::{Program, Segment};
use irqsim_mips::{Context, Stop, System, SystemConfig};

pub const TEXT: u32 = 0x0040_0000;
pub const DATA: u32 = 0x1000_0000;

pub fn r(funct: u32, rs: u32, rt: u32, rd: u32, sa: u32) -> u32 {
    (rs << 21) | (rt << 16) | (rd << 11) | (sa << 6) | funct
}
pub fn i(op: u32, rs: u32, rt: u32, imm: i32) -> u32 {
    (op << 26) | (rs << 21) | (rt << 16) | (imm as u32 & 0xFFFF)
}
pub fn addu(d: u32, s: u32, t: u32) -> u32 {
    r(33, s, t, d, 0)
}
pub fn addiu(t: u32, s: u32, imm: i32) -> u32 {
    i(9, s, t, imm)
}
pub fn lui(t: u32, imm: u32) -> u32 {
    i(15, 0, t, imm as i32)
}
pub fn lw(t: u32, off: i32, base: u32) -> u32 {
    i(35, base, t, off)
}
pub fn sw(t: u32, off: i32, base: u32) -> u32 {
    i(43, base, t, off)
}
pub fn mult(s: u32, t: u32) -> u32 {
    r(24, s, t, 0, 0)
}
pub fn div(s: u32, t: u32) -> u32 {
    r(26, s, t, 0, 0)
}
pub fn mflo(d: u32) -> u32 {
    r(18, 0, 0, d, 0)
}
/// `bne s, t` back or forward by `words` instructions relative to the slot.
pub fn bne(s: u32, t: u32, words: i32) -> u32 {
    i(5, s, t, words)
}
pub fn beq(s: u32, t: u32, words: i32) -> u32 {
    i(4, s, t, words)
}
pub const NOP: u32 = 0;
pub const SYSCALL: u32 = 12;

/// A program whose text is `words` at [`TEXT`] followed by `exit`, with `data_bytes` of zeroed data at [`DATA`].
pub fn program(words: &[u32], data_bytes: u32) -> Program {
    let mut all = words.to_vec();
    all.extend([addiu(2, 0, 4001), SYSCALL]);
    let text: Vec<u8> = all.iter().flat_map(|w| w.to_be_bytes()).collect();
    let len = text.len() as u32;
    let mut segments = vec![Segment { vaddr: TEXT, data: text, memsz: len, executable: true }];
    if data_bytes > 0 {
        segments.push(Segment { vaddr: DATA, data: vec![], memsz: data_bytes, executable: false });
    }
    Program { name: "test".into(), entry: TEXT, segments, sections: vec![], symbols: vec![] }
}

/// A system with every thread of core 0 (or the listed entries) started.
pub fn system(p: Program, config: &SystemConfig) -> System {
    let entry = p.entry;
    let mut s = System::new(p, config, irqsim_mips::device::NoDevices);
    for k in 0..config.cores {
        for t in 0..config.threads {
            s.start(k, t, Context::at(entry, 0x7000_0000 - (t as u32) * 0x1000), 0);
        }
    }
    s
}

/// Runs until the first syscall (the exit); returns core 0's cycle count then.
pub fn cycles_to_exit(words: &[u32], config: &SystemConfig) -> u64 {
    let mut s = system(program(words, 4096), config);
    match s.run(1_000_000) {
        Stop::Syscall { .. } => s.cores[0].now,
        other => panic!("{other:?}"),
    }
}
