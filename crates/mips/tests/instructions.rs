//! Every implemented instruction, encoded by hand, executed once on a
//! context with known registers: result registers, HI/LO, memory, control
//! flow (delay slots, branch-likely annulment) and traps.

use irqsim_mips::context::Context;
use irqsim_mips::decode::{Op, decode};
use irqsim_mips::error::Fault;
use irqsim_mips::exec::{Bus, Flow, execute};
use std::collections::HashMap;

#[derive(Default)]
struct TestBus {
    words: HashMap<u32, u32>,
    link: Option<u32>,
}

impl Bus for TestBus {
    fn load(&mut self, addr: u32) -> Result<u32, Fault> {
        Ok(*self.words.get(&addr).unwrap_or(&0))
    }
    fn store(&mut self, addr: u32, value: u32, mask: u32) -> Result<(), Fault> {
        let w = self.words.entry(addr).or_default();
        *w = (*w & !mask) | (value & mask);
        Ok(())
    }
    fn link(&mut self, addr: u32) {
        self.link = Some(addr);
    }
    fn take_link(&mut self, addr: u32) -> bool {
        self.link.take() == Some(addr)
    }
}

const PC: u32 = 0x0040_0100;

fn r(funct: u32, rs: u32, rt: u32, rd: u32, sa: u32) -> u32 {
    (rs << 21) | (rt << 16) | (rd << 11) | (sa << 6) | funct
}
fn i(op: u32, rs: u32, rt: u32, imm: i32) -> u32 {
    (op << 26) | (rs << 21) | (rt << 16) | (imm as u32 & 0xFFFF)
}

/// Runs one word with $8 = a, $9 = b; returns the context, flow and bus.
fn run(word: u32, a: u32, b: u32, bus: &mut TestBus) -> (Context, Result<Flow, Fault>) {
    let mut c = Context::at(PC, 0x7000_0000);
    c.r[8] = a;
    c.r[9] = b;
    c.hi = 0x1111;
    c.lo = 0x2222;
    let f = execute(&mut c, decode(word, PC), bus);
    (c, f)
}

/// The value written to $10 by `word` with $8 = a, $9 = b.
fn rd(word: u32, a: u32, b: u32) -> u32 {
    let (c, f) = run(word, a, b, &mut TestBus::default());
    assert_eq!(f, Ok(Flow::Next), "{:?}", decode(word, PC));
    c.r[10]
}

#[test]
fn alu_register_forms() {
    let m1 = u32::MAX;
    assert_eq!(rd(r(0, 0, 9, 10, 4), 0, 0x8000_0001), 0x10); // sll
    assert_eq!(rd(r(2, 0, 9, 10, 4), 0, 0x8000_0010), 0x0800_0001); // srl
    assert_eq!(rd(r(3, 0, 9, 10, 4), 0, 0x8000_0010), 0xF800_0001); // sra
    assert_eq!(rd(r(4, 8, 9, 10, 0), 33, 3), 6); // sllv uses rs & 31
    assert_eq!(rd(r(6, 8, 9, 10, 0), 1, 0x8000_0000), 0x4000_0000); // srlv
    assert_eq!(rd(r(7, 8, 9, 10, 0), 1, 0x8000_0000), 0xC000_0000); // srav
    assert_eq!(rd(r(33, 8, 9, 10, 0), m1, 2), 1); // addu
    assert_eq!(rd(r(32, 8, 9, 10, 0), 5, m1), 4); // add
    assert_eq!(rd(r(35, 8, 9, 10, 0), 1, 2), m1); // subu
    assert_eq!(rd(r(34, 8, 9, 10, 0), 1, 2), m1); // sub
    assert_eq!(rd(r(36, 8, 9, 10, 0), 0b1100, 0b1010), 0b1000); // and
    assert_eq!(rd(r(37, 8, 9, 10, 0), 0b1100, 0b1010), 0b1110); // or
    assert_eq!(rd(r(38, 8, 9, 10, 0), 0b1100, 0b1010), 0b0110); // xor
    assert_eq!(rd(r(39, 8, 9, 10, 0), 0b1100, 0b1010), !0b1110); // nor
    assert_eq!(rd(r(42, 8, 9, 10, 0), m1, 1), 1); // slt: -1 < 1
    assert_eq!(rd(r(43, 8, 9, 10, 0), m1, 1), 0); // sltu: 0xffffffff > 1
}

#[test]
fn alu_immediate_forms() {
    assert_eq!(rd(i(9, 8, 10, -3), 10, 0), 7); // addiu
    assert_eq!(rd(i(8, 8, 10, -3), 10, 0), 7); // addi
    assert_eq!(rd(i(10, 8, 10, -1), (-5i32) as u32, 0), 1); // slti
    assert_eq!(rd(i(11, 8, 10, -1), 5, 0), 1); // sltiu: imm sign-extended, compared unsigned
    assert_eq!(rd(i(12, 8, 10, 0xFFFF), 0x1234_5678, 0), 0x5678); // andi zero-extends
    assert_eq!(rd(i(13, 8, 10, 0x8000), 0x1, 0), 0x8001); // ori
    assert_eq!(rd(i(14, 8, 10, 0xFFFF), 0xF0F0, 0), 0x0F0F); // xori
    assert_eq!(rd(i(15, 0, 10, 0x1234), 0, 0), 0x1234_0000); // lui
}

#[test]
fn overflow_traps_and_zero_register() {
    let mut bus = TestBus::default();
    assert_eq!(run(r(32, 8, 9, 10, 0), 0x7FFF_FFFF, 1, &mut bus).1, Err(Fault::Overflow)); // add
    assert_eq!(run(r(34, 8, 9, 10, 0), 0x8000_0000, 1, &mut bus).1, Err(Fault::Overflow)); // sub
    assert_eq!(run(i(8, 8, 10, 1), 0x7FFF_FFFF, 0, &mut bus).1, Err(Fault::Overflow)); // addi
    let (c, _) = run(r(33, 8, 9, 0, 0), 1, 2, &mut bus); // addu $0
    assert_eq!(c.r[0], 0);
}

#[test]
fn multiply_divide_and_hilo() {
    let mut bus = TestBus::default();
    let hl = |w, a, b, bus: &mut TestBus| {
        let (c, _) = run(w, a, b, bus);
        (c.hi, c.lo)
    };
    assert_eq!(hl(r(24, 8, 9, 0, 0), (-3i32) as u32, 5, &mut bus), (u32::MAX, (-15i32) as u32)); // mult
    assert_eq!(hl(r(25, 8, 9, 0, 0), u32::MAX, 2, &mut bus), (1, u32::MAX - 1)); // multu
    assert_eq!(hl(r(26, 8, 9, 0, 0), (-7i32) as u32, 2, &mut bus), ((-1i32) as u32, (-3i32) as u32)); // div
    assert_eq!(hl(r(27, 8, 9, 0, 0), u32::MAX, 2, &mut bus), (1, 0x7FFF_FFFF)); // divu
    assert_eq!(hl(r(26, 8, 9, 0, 0), 0x8000_0000, u32::MAX, &mut bus), (0, 0x8000_0000)); // div overflow wraps
    assert_eq!(hl(r(26, 8, 9, 0, 0), 5, 0, &mut bus), (0x1111, 0x2222)); // by zero: unchanged
    assert_eq!(rd(r(16, 0, 0, 10, 0), 0, 0), 0x1111); // mfhi
    assert_eq!(rd(r(18, 0, 0, 10, 0), 0, 0), 0x2222); // mflo
    assert_eq!(hl(r(17, 8, 0, 0, 0), 77, 0, &mut bus).0, 77); // mthi
    assert_eq!(hl(r(19, 8, 0, 0, 0), 78, 0, &mut bus).1, 78); // mtlo
}

/// Flow and the (pc, npc) pair after a control instruction at PC.
fn flow(word: u32, a: u32, b: u32) -> (Result<Flow, Fault>, u32, u32, u32) {
    let (c, f) = run(word, a, b, &mut TestBus::default());
    (f, c.pc, c.npc, c.r[31])
}

#[test]
fn branches_take_effect_after_the_delay_slot() {
    let t = PC + 4 + 0x40; // offset 0x10 words
    let taken = (Ok(Flow::Taken), PC + 4, t, 0);
    let not = (Ok(Flow::Next), PC + 4, PC + 8, 0);
    let m1 = u32::MAX;
    assert_eq!(flow(i(4, 8, 9, 0x10), 3, 3), taken); // beq
    assert_eq!(flow(i(4, 8, 9, 0x10), 3, 4), not);
    assert_eq!(flow(i(5, 8, 9, 0x10), 3, 4), taken); // bne
    assert_eq!(flow(i(6, 8, 0, 0x10), 0, 0), taken); // blez
    assert_eq!(flow(i(6, 8, 0, 0x10), 1, 0), not);
    assert_eq!(flow(i(7, 8, 0, 0x10), 1, 0), taken); // bgtz
    assert_eq!(flow(i(7, 8, 0, 0x10), m1, 0), not);
    assert_eq!(flow(i(1, 8, 0, 0x10), m1, 0), taken); // bltz
    assert_eq!(flow(i(1, 8, 1, 0x10), 0, 0), taken); // bgez
    assert_eq!(flow(i(1, 8, 1, 0x10), m1, 0), not);
    let link = PC + 8;
    assert_eq!(flow(i(1, 8, 16, 0x10), m1, 0), (Ok(Flow::Taken), PC + 4, t, link)); // bltzal
    assert_eq!(flow(i(1, 8, 17, 0x10), m1, 0), (Ok(Flow::Next), PC + 4, PC + 8, link)); // bgezal links even if not taken
    // Jumps.
    assert_eq!(flow(0x0810_0040, 0, 0), (Ok(Flow::Taken), PC + 4, 0x40_0100, 0)); // j
    assert_eq!(flow(0x0C10_0040, 0, 0), (Ok(Flow::Taken), PC + 4, 0x40_0100, link)); // jal
    assert_eq!(flow(r(8, 8, 0, 0, 0), 0x40_2000, 0), (Ok(Flow::Taken), PC + 4, 0x40_2000, 0)); // jr
    let (c, f) = run(r(9, 8, 0, 10, 0), 0x40_2000, 0, &mut TestBus::default()); // jalr $10, $8
    assert_eq!((f, c.npc, c.r[10]), (Ok(Flow::Taken), 0x40_2000, link));
}

#[test]
fn branch_likely_annuls_the_slot_when_not_taken() {
    let t = PC + 4 + 0x40;
    let taken = (Ok(Flow::Taken), PC + 4, t, 0);
    let annulled = (Ok(Flow::Annulled), PC + 8, PC + 12, 0);
    let m1 = u32::MAX;
    assert_eq!(flow(i(20, 8, 9, 0x10), 1, 1), taken); // beql
    assert_eq!(flow(i(20, 8, 9, 0x10), 1, 2), annulled);
    assert_eq!(flow(i(21, 8, 9, 0x10), 1, 1), annulled); // bnel
    assert_eq!(flow(i(22, 8, 0, 0x10), 1, 0), annulled); // blezl
    assert_eq!(flow(i(23, 8, 0, 0x10), 1, 0), taken); // bgtzl
    assert_eq!(flow(i(1, 8, 2, 0x10), 0, 0), annulled); // bltzl
    assert_eq!(flow(i(1, 8, 3, 0x10), m1, 0), annulled); // bgezl
    assert_eq!(flow(i(1, 8, 18, 0x10), m1, 0), (Ok(Flow::Taken), PC + 4, t, PC + 8)); // bltzall
    assert_eq!(flow(i(1, 8, 19, 0x10), m1, 0), (Ok(Flow::Annulled), PC + 8, PC + 12, PC + 8)); // bgezall
}

#[test]
fn loads_sign_and_zero_extend() {
    let mut bus = TestBus::default();
    bus.words.insert(0x1000, 0x80FF_7F01);
    let load = |op, off, bus: &mut TestBus| {
        let (c, f) = run(i(op, 8, 10, off), 0x1000, 0, bus);
        f.map(|_| c.r[10])
    };
    assert_eq!(load(32, 0, &mut bus), Ok(0xFFFF_FF80)); // lb
    assert_eq!(load(36, 1, &mut bus), Ok(0xFF)); // lbu
    assert_eq!(load(32, 2, &mut bus), Ok(0x7F));
    assert_eq!(load(33, 0, &mut bus), Ok(0xFFFF_80FF)); // lh
    assert_eq!(load(37, 2, &mut bus), Ok(0x7F01)); // lhu
    assert_eq!(load(35, 0, &mut bus), Ok(0x80FF_7F01)); // lw
    assert_eq!(load(33, 1, &mut bus), Err(Fault::Unaligned { addr: 0x1001 }));
    assert_eq!(load(35, 2, &mut bus), Err(Fault::Unaligned { addr: 0x1002 }));
}

#[test]
fn stores_write_only_their_bytes() {
    let store = |op, off, v| {
        let mut bus = TestBus::default();
        bus.words.insert(0x1000, 0x1122_3344);
        let (_, f) = run(i(op, 8, 9, off), 0x1000, v, &mut bus);
        f.map(|_| bus.words[&0x1000])
    };
    assert_eq!(store(40, 1, 0xAB), Ok(0x11AB_3344)); // sb
    assert_eq!(store(41, 2, 0xABCD), Ok(0x1122_ABCD)); // sh
    assert_eq!(store(43, 0, 0xDEAD_BEEF), Ok(0xDEAD_BEEF)); // sw
    assert_eq!(store(41, 1, 0), Err(Fault::Unaligned { addr: 0x1001 }));
}

#[test]
fn unaligned_word_pairs_big_endian() {
    // Memory bytes 0x1000.. = 00 11 22 33 | 44 55 66 77; load the word at 0x1001.
    let mut bus = TestBus::default();
    bus.words.insert(0x1000, 0x0011_2233);
    bus.words.insert(0x1004, 0x4455_6677);
    let mut c = Context::at(PC, 0);
    c.r[8] = 0x1001;
    c.r[10] = 0xAAAA_AAAA;
    execute(&mut c, decode(i(34, 8, 10, 0), PC), &mut bus).unwrap(); // lwl $10, 0($8)
    assert_eq!(c.r[10], 0x1122_33AA);
    execute(&mut c, decode(i(38, 8, 10, 3), PC), &mut bus).unwrap(); // lwr $10, 3($8)
    assert_eq!(c.r[10], 0x1122_3344);
    // Store 0xA1B2C3D4 at 0x1002 with swl/swr.
    c.r[9] = 0xA1B2_C3D4;
    c.r[8] = 0x1002;
    execute(&mut c, decode(i(42, 8, 9, 0), PC), &mut bus).unwrap(); // swl
    execute(&mut c, decode(i(46, 8, 9, 3), PC), &mut bus).unwrap(); // swr
    assert_eq!((bus.words[&0x1000], bus.words[&0x1004]), (0x0011_A1B2, 0xC3D4_6677));
}

#[test]
fn ll_sc_succeeds_only_on_an_unbroken_link() {
    let mut bus = TestBus::default();
    bus.words.insert(0x2000, 5);
    let (c, _) = run(i(48, 8, 10, 0), 0x2000, 0, &mut bus); // ll
    assert_eq!((c.r[10], bus.link), (5, Some(0x2000)));
    let (c, _) = run(i(56, 8, 9, 0), 0x2000, 9, &mut bus); // sc
    assert_eq!((c.r[9], bus.words[&0x2000]), (1, 9));
    let (c, _) = run(i(56, 8, 9, 0), 0x2000, 7, &mut bus); // link consumed: fails
    assert_eq!((c.r[9], bus.words[&0x2000]), (0, 9));
}

#[test]
fn traps_syscall_break_sync_cache() {
    let t = |w, a, b| run(w, a, b, &mut TestBus::default()).1;
    let trap = |code| Err(Fault::Trap { code });
    let rt = |f, code: u32| r(f, 8, 9, 0, 0) | (code << 6);
    assert_eq!(t(rt(52, 7), 3, 3), trap(7)); // teq
    assert_eq!(t(rt(52, 7), 3, 4), Ok(Flow::Next));
    assert_eq!(t(rt(54, 1), 3, 4), trap(1)); // tne
    assert_eq!(t(rt(48, 2), 4, 3), trap(2)); // tge
    assert_eq!(t(rt(49, 2), u32::MAX, 3), trap(2)); // tgeu
    assert_eq!(t(rt(50, 2), u32::MAX, 3), trap(2)); // tlt
    assert_eq!(t(rt(51, 2), 1, 3), trap(2)); // tltu
    let ti = |rtf, a, imm| t(i(1, 8, rtf, imm), a, 0);
    assert_eq!(ti(8, 5, 5), Err(Fault::Trap { code: 0 })); // tgei
    assert!(ti(9, u32::MAX, 5).is_err()); // tgeiu
    assert!(ti(10, u32::MAX, 0).is_err()); // tlti
    assert!(ti(11, 1, 5).is_err()); // tltiu
    assert!(ti(12, 5, 5).is_err()); // teqi
    assert!(ti(14, 5, 6).is_err()); // tnei
    assert_eq!(ti(14, 6, 6), Ok(Flow::Next));
    assert_eq!(t(12, 0, 0), Ok(Flow::Syscall)); // syscall
    assert_eq!(t(13 | (9 << 16), 0, 0), Err(Fault::Break { code: 9 << 10 })); // break
    assert_eq!(t(15, 0, 0), Ok(Flow::Next)); // sync
    assert_eq!(t(i(47, 8, 0, 0), 0, 0), Ok(Flow::Next)); // cache
    assert_eq!(t(0x4600_0000, 0, 0), Err(Fault::Unsupported)); // add.s
    assert_eq!(decode(0x0000_000C, 0).op, Op::Syscall);
}
