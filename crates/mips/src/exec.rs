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
    let (rs, rt) = (c.r[i.rs as usize & 31], c.r[i.rt as usize & 31]);
    let (srs, link) = (rs as i32, pc.wrapping_add(8));
    let branch = |taken: bool| if taken { Exit::Taken(i.imm) } else { Exit::NotTaken };
    // A likely one that is not taken skips its slot.
    let likely = |taken: bool| if taken { Exit::Taken(i.imm) } else { Exit::Annulled };
    let exit = match i.op {
        Jr => Exit::Taken(rs),
        Jalr => {
            c.r[i.rd as usize & 31] = link;
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

/// Executes an instruction that goes on in order and does not touch
/// memory (neither [`Op::transfers`] nor [`Inst::MEMORY`]), leaving the PC
/// to the caller: a block runs its body with no PC to keep. On a fault,
/// the context is unchanged.
#[inline(always)]
pub fn compute(c: &mut Context, i: Inst) -> Result<(), Fault> {
    use Op::*;
    let (rs, rt) = (c.r[i.rs as usize & 31], c.r[i.rt as usize & 31]);
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
    let wr = |c: &mut Context, r: u8, v: u32| c.r[r as usize & 31] = v;
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

/// Executes a load or store ([`Inst::MEMORY`]), leaving the PC to the caller.
/// On a fault, the context is unchanged.
#[inline(always)]
pub fn access<B: Bus>(c: &mut Context, i: Inst, bus: &mut B) -> Result<(), Fault> {
    use Op::*;
    let (rs, rt) = (c.r[i.rs as usize & 31], c.r[i.rt as usize & 31]);
    let ea = rs.wrapping_add(i.imm);
    let wr = |c: &mut Context, r: u8, v: u32| c.r[r as usize & 31] = v;
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
        Lw | Ll => {
            if ea & 3 != 0 {
                return Err(Fault::Unaligned { addr: ea });
            }
            let w = bus.load(ea)?;
            if i.op == Ll {
                bus.link(ea);
            }
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
