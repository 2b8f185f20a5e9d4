//! Instruction semantics: one decoded instruction applied to a register
//! context, with data accesses going through a [`Bus`]. Timing is not
//! decided here; the core charges cycles from the outcome.

use crate::context::Context;
use crate::decode::{Inst, Op};
use crate::error::Fault;

/// Data side of memory as an instruction sees it. Every access is to the
/// aligned word containing the address; stores carry a byte mask so that
/// `sb`, `sh`, `swl` and `swr` are a single access, as in hardware.
pub trait Bus {
    /// Reads the aligned word at `addr`.
    fn load(&mut self, addr: u32) -> Result<u32, Fault>;
    /// Writes the bytes of `value` selected by `mask` (0xFF per byte) into the aligned word at `addr`.
    fn store(&mut self, addr: u32, value: u32, mask: u32) -> Result<(), Fault>;
    /// `ll`: remember the linked word for this hardware thread.
    fn link(&mut self, addr: u32);
    /// `sc`: true (and the link is consumed) if no store touched the word since `ll`.
    fn take_link(&mut self, addr: u32) -> bool;
}

/// What the instruction did besides updating registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Flow {
    /// On to the next instruction in order (or the delay slot of a branch not taken).
    Next,
    /// A taken branch or jump: the delay slot, then the target.
    Taken,
    /// A branch-likely fell through: its delay slot was annulled.
    Annulled,
    /// `syscall`: the PC is already past it; the caller services it.
    Syscall,
}

#[inline(always)]
fn byte_lane(addr: u32) -> u32 {
    (3 - (addr & 3)) * 8
}

/// Executes `i` (located at `c.pc`). On a fault, the context is unchanged.
#[inline(always)]
pub fn execute<B: Bus>(c: &mut Context, i: Inst, bus: &mut B) -> Result<Flow, Fault> {
    if i.op.transfers() {
        return transfer(c, i);
    }
    if i.class & Inst::MEMORY != 0 {
        access(c, i, bus)?
    } else {
        compute(c, i)?
    }
    sequential(c);
    Ok(Flow::Next)
}

/// Executes a jump, branch, `syscall`, `break` or undecodable word.
#[inline(always)]
pub fn transfer(c: &mut Context, i: Inst) -> Result<Flow, Fault> {
    Ok(match decide(c, i, c.pc)? {
        Exit::Taken(target) => redirect(c, target),
        Exit::NotTaken => {
            sequential(c);
            Flow::Next
        }
        Exit::Annulled => {
            c.pc = c.npc.wrapping_add(4);
            c.npc = c.npc.wrapping_add(8);
            Flow::Annulled
        }
        Exit::Syscall => {
            sequential(c);
            Flow::Syscall
        }
    })
}

/// Where a control transfer goes, decided before its delay slot runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// To this address after the delay slot.
    Taken(u32),
    /// On in order: the delay slot, then the instruction after it.
    NotTaken,
    /// A branch-likely not taken: its delay slot is skipped.
    Annulled,
    /// `syscall`: the caller services it.
    Syscall,
}

/// Decides the jump, branch, `syscall`, `break` or undecodable word `i` at
/// `pc`, writing its link register, without moving the PC (a block keeps
/// none). On a fault, the context is unchanged.
#[inline(always)]
pub fn decide(c: &mut Context, i: Inst, pc: u32) -> Result<Exit, Fault> {
    use Op::*;
    let (rs, rt) = (c.r[i.rs as usize], c.r[i.rt as usize]);
    let (srs, link) = (rs as i32, pc.wrapping_add(8));
    let branch = |taken: bool| if taken { Exit::Taken(i.imm) } else { Exit::NotTaken };
    // A likely one that is not taken skips its slot.
    let likely = |taken: bool| if taken { Exit::Taken(i.imm) } else { Exit::Annulled };
    let exit = match i.op {
        Jr => Exit::Taken(rs),
        Jalr => {
            c.r[i.rd as usize] = link;
            Exit::Taken(rs)
        }
        Syscall => Exit::Syscall,
        Break => return Err(Fault::Break { code: i.imm }),
        Bltz => branch(srs < 0),
        Bgez => branch(srs >= 0),
        Bltzal => {
            c.r[31] = link;
            branch(srs < 0)
        }
        Bgezal => {
            c.r[31] = link;
            branch(srs >= 0)
        }
        Beq => branch(rs == rt),
        Bne => branch(rs != rt),
        Blez => branch(srs <= 0),
        Bgtz => branch(srs > 0),
        Bltzl => likely(srs < 0),
        Bgezl => likely(srs >= 0),
        Bltzall => {
            c.r[31] = link;
            likely(srs < 0)
        }
        Bgezall => {
            c.r[31] = link;
            likely(srs >= 0)
        }
        Beql => likely(rs == rt),
        Bnel => likely(rs != rt),
        Blezl => likely(srs <= 0),
        Bgtzl => likely(srs > 0),
        J => Exit::Taken(i.imm),
        Jal => {
            c.r[31] = link;
            Exit::Taken(i.imm)
        }
        _ => return Err(Fault::Unsupported),
    };
    c.r[0] = 0;
    Ok(exit)
}

/// The control transfers a block ends with most, as [`decide`] would
/// decide them with no link register to write (see [`Cond::of`]);
/// anything else is `Other`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Cond {
    Other,
    Beq,
    Bne,
    Blez,
    Bgtz,
    Bltz,
    Bgez,
    J,
    Jr,
    /// The branch-likely forms: not taken, they annul their slot.
    Beql,
    Bnel,
    Blezl,
    Bgtzl,
    Bltzl,
    Bgezl,
}

impl Cond {
    /// What the transfer `i` becomes at a block's end.
    pub fn of(i: Inst) -> Cond {
        match i.op {
            Op::Beq => Cond::Beq,
            Op::Bne => Cond::Bne,
            Op::Blez => Cond::Blez,
            Op::Bgtz => Cond::Bgtz,
            Op::Bltz => Cond::Bltz,
            Op::Bgez => Cond::Bgez,
            Op::J => Cond::J,
            Op::Jr => Cond::Jr,
            Op::Beql => Cond::Beql,
            Op::Bnel => Cond::Bnel,
            Op::Blezl => Cond::Blezl,
            Op::Bgtzl => Cond::Bgtzl,
            Op::Bltzl => Cond::Bltzl,
            Op::Bgezl => Cond::Bgezl,
            _ => Cond::Other,
        }
    }

    /// A conditional branch that neither links nor annuls its slot: a
    /// block may go on past it and its slot on its fall-through path.
    pub fn inner(self) -> bool {
        matches!(self, Cond::Beq | Cond::Bne | Cond::Blez | Cond::Bgtz | Cond::Bltz | Cond::Bgez)
    }

    /// A conditional branch, likely or not (see [`taken`]).
    pub fn conditional(self) -> bool {
        !matches!(self, Cond::Other | Cond::J | Cond::Jr)
    }
}

/// [`decide`] for a transfer that [`Cond::of`] made `k`: None (nothing done) for [`Cond::Other`].
#[inline(always)]
pub fn cond(c: &Context, k: Cond, i: Inst) -> Option<Exit> {
    let rs = c.r[i.rs as usize];
    let rt = || c.r[i.rt as usize];
    // Whether it is taken, and whether its slot is annulled if not.
    let (taken, likely) = match k {
        Cond::Other => return None,
        Cond::Beq => (rs == rt(), false),
        Cond::Bne => (rs != rt(), false),
        Cond::Blez => (rs as i32 <= 0, false),
        Cond::Bgtz => (rs as i32 > 0, false),
        Cond::Bltz => ((rs as i32) < 0, false),
        Cond::Bgez => (rs as i32 >= 0, false),
        Cond::J => (true, false),
        Cond::Jr => return Some(Exit::Taken(rs)),
        Cond::Beql => (rs == rt(), true),
        Cond::Bnel => (rs != rt(), true),
        Cond::Blezl => (rs as i32 <= 0, true),
        Cond::Bgtzl => (rs as i32 > 0, true),
        Cond::Bltzl => ((rs as i32) < 0, true),
        Cond::Bgezl => (rs as i32 >= 0, true),
    };
    Some(match (taken, likely) {
        (true, _) => Exit::Taken(i.imm),
        (false, false) => Exit::NotTaken,
        (false, true) => Exit::Annulled,
    })
}

/// Whether the conditional branch `i` that [`Cond::of`] made `k` is taken
/// (false for anything else): [`cond`]'s test apart, as `cond` built on it cost 0.8% (iss.md).
#[inline(always)]
pub fn taken(c: &Context, k: Cond, i: Inst) -> bool {
    let rs = c.r[i.rs as usize];
    let rt = || c.r[i.rt as usize];
    match k {
        Cond::Beq | Cond::Beql => rs == rt(),
        Cond::Bne | Cond::Bnel => rs != rt(),
        Cond::Blez | Cond::Blezl => rs as i32 <= 0,
        Cond::Bgtz | Cond::Bgtzl => rs as i32 > 0,
        Cond::Bltz | Cond::Bltzl => (rs as i32) < 0,
        Cond::Bgez | Cond::Bgezl => rs as i32 >= 0,
        Cond::Other | Cond::J | Cond::Jr => false,
    }
}

/// Executes an instruction that goes on in order and does not touch
/// memory (neither [`Op::transfers`] nor [`Inst::MEMORY`]), leaving the PC
/// to the caller: a block runs its body with no PC to keep. On a fault,
/// the context is unchanged.
#[inline(always)]
// Clippy would fold `trap!`'s `if` into a guard on its match arm, which a
// macro's expansion cannot write.
#[allow(clippy::collapsible_match)]
pub fn compute(c: &mut Context, i: Inst) -> Result<(), Fault> {
    use Op::*;
    let (rs, rt) = (c.r[i.rs as usize], c.r[i.rt as usize]);
    let (srs, srt) = (rs as i32, rt as i32);
    // Register traps carry a code field; immediate ones have none (code 0).
    macro_rules! trap {
        ($cond:expr) => {
            if $cond {
                return Err(Fault::Trap { code: i.imm });
            }
        };
        ($cond:expr, immediate) => {
            if $cond {
                return Err(Fault::Trap { code: 0 });
            }
        };
    }
    let wr = |c: &mut Context, r: u8, v: u32| c.r[r as usize] = v;
    match i.op {
        Sll => wr(c, i.rd, rt << i.imm),
        Srl => wr(c, i.rd, rt >> i.imm),
        Sra => wr(c, i.rd, (srt >> i.imm) as u32),
        Sllv => wr(c, i.rd, rt << (rs & 31)),
        Srlv => wr(c, i.rd, rt >> (rs & 31)),
        Srav => wr(c, i.rd, (srt >> (rs & 31)) as u32),
        Sync | CacheOp => {}
        Mfhi => wr(c, i.rd, c.hi),
        Mthi => c.hi = rs,
        Mflo => wr(c, i.rd, c.lo),
        Mtlo => c.lo = rs,
        Mult => {
            let p = (srs as i64 * srt as i64) as u64;
            (c.hi, c.lo) = ((p >> 32) as u32, p as u32);
        }
        Multu => {
            let p = rs as u64 * rt as u64;
            (c.hi, c.lo) = ((p >> 32) as u32, p as u32);
        }
        // Division by zero leaves HI and LO unchanged (UNPREDICTABLE in the
        // ISA; gcc guards it with `teq $divisor, $zero, 7`).
        Div if rt != 0 => (c.lo, c.hi) = (srs.wrapping_div(srt) as u32, srs.wrapping_rem(srt) as u32),
        Divu if rt != 0 => (c.lo, c.hi) = (rs / rt, rs % rt),
        Div | Divu => {}
        Add => wr(c, i.rd, srs.checked_add(srt).ok_or(Fault::Overflow)? as u32),
        Addu => wr(c, i.rd, rs.wrapping_add(rt)),
        Sub => wr(c, i.rd, srs.checked_sub(srt).ok_or(Fault::Overflow)? as u32),
        Subu => wr(c, i.rd, rs.wrapping_sub(rt)),
        And => wr(c, i.rd, rs & rt),
        Or => wr(c, i.rd, rs | rt),
        Xor => wr(c, i.rd, rs ^ rt),
        Nor => wr(c, i.rd, !(rs | rt)),
        Slt => wr(c, i.rd, (srs < srt) as u32),
        Sltu => wr(c, i.rd, (rs < rt) as u32),
        Tge => trap!(srs >= srt),
        Tgeu => trap!(rs >= rt),
        Tlt => trap!(srs < srt),
        Tltu => trap!(rs < rt),
        Teq => trap!(rs == rt),
        Tne => trap!(rs != rt),
        Tgei => trap!(srs >= i.imm as i32, immediate),
        Tgeiu => trap!(rs >= i.imm, immediate),
        Tlti => trap!(srs < i.imm as i32, immediate),
        Tltiu => trap!(rs < i.imm, immediate),
        Teqi => trap!(rs == i.imm, immediate),
        Tnei => trap!(rs != i.imm, immediate),
        Addi => wr(c, i.rt, srs.checked_add(i.imm as i32).ok_or(Fault::Overflow)? as u32),
        Addiu => wr(c, i.rt, rs.wrapping_add(i.imm)),
        Slti => wr(c, i.rt, (srs < i.imm as i32) as u32),
        Sltiu => wr(c, i.rt, (rs < i.imm) as u32),
        Andi => wr(c, i.rt, rs & i.imm),
        Ori => wr(c, i.rt, rs | i.imm),
        Xori => wr(c, i.rt, rs ^ i.imm),
        Lui => wr(c, i.rt, i.imm),
        // Loads, stores and control transfers: see [`access`] and [`transfer`].
        _ => {}
    }
    c.r[0] = 0;
    Ok(())
}

/// One operation of [`Simple`] as a function of its own.
type Handler = fn(&mut Context, &Inst);

/// The instructions a block runs most, each as a function of its own
/// chosen when the block is built (threaded dispatch: one indirect call,
/// no match on the operation): no fault, nothing in flight, no memory, and
/// a destination that is not `$zero`, so the function neither tests for a
/// fault nor rewrites `$zero`. None for anything else.
#[derive(Clone, Copy, Debug)]
pub struct Simple(Option<Handler>);

impl Simple {
    /// What `i` becomes in a block.
    pub fn of(i: Inst) -> Simple {
        use Op::*;
        // `$v`, computed from `rs`, `rt`, the instruction `i` and the context `c`, written to `$d`.
        macro_rules! h {
            ($d:ident, |$rs:ident, $rt:ident, $i:ident, $c:ident| $v:expr) => {
                |c: &mut Context, i: &Inst| {
                    #[allow(unused_variables)]
                    let ($rs, $rt, $i, $c) = (c.r[i.rs as usize], c.r[i.rt as usize], i, &*c);
                    let v = $v;
                    c.r[i.$d as usize] = v;
                }
            };
        }
        let dest = match i.op {
            Sll | Srl | Sra | Sllv | Srlv | Srav | Addu | Subu | And | Or | Xor | Nor | Slt | Sltu | Mfhi | Mflo => i.rd,
            Addiu | Slti | Sltiu | Andi | Ori | Xori | Lui => i.rt,
            Sync | CacheOp => 0,
            _ => return Simple(None),
        };
        // (An `mfhi` or `mflo` waits for HI/LO: the block's issue offsets hold that.)
        let h: Handler = match i.op {
            _ if dest == 0 => |_, _| {},
            Sll => h!(rd, |rs, rt, i, c| rt << i.imm),
            Srl => h!(rd, |rs, rt, i, c| rt >> i.imm),
            Sra => h!(rd, |rs, rt, i, c| ((rt as i32) >> i.imm) as u32),
            Sllv => h!(rd, |rs, rt, i, c| rt << (rs & 31)),
            Srlv => h!(rd, |rs, rt, i, c| rt >> (rs & 31)),
            Srav => h!(rd, |rs, rt, i, c| ((rt as i32) >> (rs & 31)) as u32),
            Addu => h!(rd, |rs, rt, i, c| rs.wrapping_add(rt)),
            Subu => h!(rd, |rs, rt, i, c| rs.wrapping_sub(rt)),
            And => h!(rd, |rs, rt, i, c| rs & rt),
            Or => h!(rd, |rs, rt, i, c| rs | rt),
            Xor => h!(rd, |rs, rt, i, c| rs ^ rt),
            Nor => h!(rd, |rs, rt, i, c| !(rs | rt)),
            Slt => h!(rd, |rs, rt, i, c| ((rs as i32) < rt as i32) as u32),
            Sltu => h!(rd, |rs, rt, i, c| (rs < rt) as u32),
            Addiu => h!(rt, |rs, rt, i, c| rs.wrapping_add(i.imm)),
            Slti => h!(rt, |rs, rt, i, c| ((rs as i32) < i.imm as i32) as u32),
            Sltiu => h!(rt, |rs, rt, i, c| (rs < i.imm) as u32),
            Andi => h!(rt, |rs, rt, i, c| rs & i.imm),
            Ori => h!(rt, |rs, rt, i, c| rs | i.imm),
            Xori => h!(rt, |rs, rt, i, c| rs ^ i.imm),
            Lui => h!(rt, |rs, rt, i, c| i.imm),
            Mfhi => h!(rd, |rs, rt, i, c| c.hi),
            Mflo => h!(rd, |rs, rt, i, c| c.lo),
            _ => return Simple(None),
        };
        Simple(Some(h))
    }

    /// Whether [`Simple::run`] runs it.
    pub fn is_some(self) -> bool {
        self.0.is_some()
    }

    /// Executes `i`, which [`Simple::of`] made `self`; false (nothing done) if it is not one.
    #[inline(always)]
    pub fn run(self, c: &mut Context, i: &Inst) -> bool {
        let Some(h) = self.0 else { return false };
        h(c, i);
        true
    }
}

/// Executes a load or store ([`Inst::MEMORY`]), leaving the PC to the caller.
/// On a fault, the context is unchanged.
#[inline(always)]
pub fn access<B: Bus>(c: &mut Context, i: Inst, bus: &mut B) -> Result<(), Fault> {
    use Op::*;
    let (rs, rt) = (c.r[i.rs as usize], c.r[i.rt as usize]);
    let ea = rs.wrapping_add(i.imm);
    let wr = |c: &mut Context, r: u8, v: u32| c.r[r as usize] = v;
    match i.op {
        Lb | Lbu => {
            let w = bus.load(ea & !3)? >> byte_lane(ea);
            wr(c, i.rt, if i.op == Lb { w as u8 as i8 as u32 } else { w & 0xFF })
        }
        Lh | Lhu => {
            if ea & 1 != 0 {
                return Err(Fault::Unaligned { addr: ea });
            }
            let w = bus.load(ea & !3)? >> byte_lane(ea | 1);
            wr(c, i.rt, if i.op == Lh { w as u16 as i16 as u32 } else { w & 0xFFFF })
        }
        Lw => {
            if ea & 3 != 0 {
                return Err(Fault::Unaligned { addr: ea });
            }
            wr(c, i.rt, bus.load(ea)?)
        }
        Ll => {
            if ea & 3 != 0 {
                return Err(Fault::Unaligned { addr: ea });
            }
            let w = bus.load(ea)?;
            bus.link(ea);
            wr(c, i.rt, w)
        }
        // Big-endian lwl: the bytes from `ea` to the end of its word fill rt from the top.
        Lwl => {
            let sh = (ea & 3) * 8;
            let w = bus.load(ea & !3)?;
            wr(c, i.rt, (w << sh) | (rt & !(u32::MAX << sh)))
        }
        // Big-endian lwr: the bytes from the word's start to `ea` fill rt from the bottom.
        Lwr => {
            let sh = byte_lane(ea);
            let w = bus.load(ea & !3)?;
            wr(c, i.rt, (w >> sh) | (rt & !(u32::MAX >> sh)))
        }
        Sb => bus.store(ea & !3, rt << byte_lane(ea), 0xFF << byte_lane(ea))?,
        Sh => {
            if ea & 1 != 0 {
                return Err(Fault::Unaligned { addr: ea });
            }
            let l = byte_lane(ea | 1);
            bus.store(ea & !3, rt << l, 0xFFFF << l)?
        }
        Sw => {
            if ea & 3 != 0 {
                return Err(Fault::Unaligned { addr: ea });
            }
            bus.store(ea, rt, u32::MAX)?
        }
        Swl => {
            let sh = (ea & 3) * 8;
            bus.store(ea & !3, rt >> sh, u32::MAX >> sh)?
        }
        Swr => {
            let sh = byte_lane(ea);
            bus.store(ea & !3, rt << sh, u32::MAX << sh)?
        }
        Sc => {
            if ea & 3 != 0 {
                return Err(Fault::Unaligned { addr: ea });
            }
            let ok = bus.take_link(ea);
            if ok {
                bus.store(ea, rt, u32::MAX)?;
            }
            wr(c, i.rt, ok as u32)
        }
        // Everything else: see [`compute`] and [`transfer`].
        _ => {}
    }
    c.r[0] = 0;
    Ok(())
}

/// Moves on to the next instruction in order (the delay slot, if a branch came before).
#[inline(always)]
fn sequential(c: &mut Context) {
    c.pc = c.npc;
    c.npc = c.npc.wrapping_add(4);
}

/// Runs the delay slot next, then `target`.
#[inline(always)]
fn redirect(c: &mut Context, target: u32) -> Flow {
    c.pc = c.npc;
    c.npc = target;
    Flow::Taken
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode;

    /// Every operation [`Simple`] runs gives what [`compute`] gives, `$zero`
    /// as destination included, and every transfer [`cond`] decides goes
    /// where [`decide`] sends it.
    #[test]
    fn simple_and_cond_are_compute_and_decide() {
        let mut c = Context::default();
        for (k, r) in c.r[..32].iter_mut().enumerate() {
            *r = (k as u32).wrapping_mul(0x9E37_79B9) ^ if k % 3 == 0 { 0x8000_0000 } else { 0 };
        }
        (c.r[0], c.hi, c.lo) = (0, 0x1234_5678, 0x9ABC_DEF0);
        let functs = [0, 2, 3, 4, 6, 7, 15, 16, 18, 33, 35, 36, 37, 38, 39, 42, 43];
        let opcodes = [9, 10, 11, 12, 13, 14, 15];
        let mut words: Vec<u32> = Vec::new();
        for (rs, rt, rd) in [(5, 6, 7), (9, 3, 0), (0, 12, 13), (30, 31, 1)] {
            words.extend(functs.iter().map(|f| (rs << 21) | (rt << 16) | (rd << 11) | (13 << 6) | f));
            words.extend(opcodes.iter().map(|op| (op << 26) | (rs << 21) | (rd << 16) | 0x8F31));
        }
        let mut simple_ones = 0;
        for w in words {
            let i = decode(w, 0x40_0000);
            let s = Simple::of(i);
            assert!(s.is_some(), "{w:08x}");
            let (mut a, mut b) = (c.clone(), c.clone());
            compute(&mut a, i).unwrap();
            assert!(s.run(&mut b, &i));
            assert_eq!(a, b, "{w:08x} ({:?})", i.op);
            simple_ones += (b != c) as u32;
        }
        assert!(simple_ones > 60);
        // Every transfer `cond` decides, decided as `decide` does it.
        let mut decided = 0;
        for (rs, rt) in [(5, 6), (6, 6), (9, 0), (0, 0), (3, 12)] {
            let words = [
                (4 << 26) | (rs << 21) | (rt << 16) | 0x10,    // beq
                (5 << 26) | (rs << 21) | (rt << 16) | 0xFFF0,  // bne, backwards
                (6 << 26) | (rs << 21) | 0x10,                 // blez
                (7 << 26) | (rs << 21) | 0x10,                 // bgtz
                (1 << 26) | (rs << 21) | 0x10,                 // bltz
                (1 << 26) | (rs << 21) | (1 << 16) | 0x10,     // bgez
                (2 << 26) | 0x40,                              // j
                (rs << 21) | 8,                                // jr
                (20 << 26) | (rs << 21) | (rt << 16) | 0x10,   // beql
                (21 << 26) | (rs << 21) | (rt << 16) | 0xFFF0, // bnel, backwards
                (22 << 26) | (rs << 21) | 0x10,                // blezl
                (23 << 26) | (rs << 21) | 0x10,                // bgtzl
                (1 << 26) | (rs << 21) | (2 << 16) | 0x10,     // bltzl
                (1 << 26) | (rs << 21) | (3 << 16) | 0x10,     // bgezl
            ];
            for w in words {
                let i = decode(w, 0x40_0000);
                let k = Cond::of(i);
                assert_ne!(k, Cond::Other, "{w:08x}");
                let mut a = c.clone();
                assert_eq!(cond(&c, k, i), Some(decide(&mut a, i, 0x40_0000).unwrap()), "{w:08x} ({:?})", i.op);
                assert_eq!(a, c);
                decided += 1;
            }
        }
        assert_eq!(decided, 70);
        // Traps, overflow, memory and HI/LO writes stay on the general path.
        for w in [0x00A6_3820, 0x2085_0001, 0x8C85_0000, 0x00A6_0018, 0x00A0_0011] {
            assert!(!Simple::of(decode(w, 0)).is_some(), "{w:08x}");
        }
    }
}
