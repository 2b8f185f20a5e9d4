//! An offline VLIW list scheduler for one basic block of MIPS R4000 code,
//! as Brogioli, Willmann and Rixner describe it: instructions are packed
//! into bundles within the block (nothing moves across blocks); register
//! dependences are kept as in the binary (RAW and WAW one bundle apart,
//! WAR allowed in one bundle since a bundle reads its operands before it
//! writes); memory accesses follow a [`Memory`] rule; each bundle
//! has at most so many integer, load/store and branch units; and the
//! branch keeps its one delay slot: the bundle after the branch's is the
//! last of the block. Results are usable in the next bundle (perfect
//! memory, as in the paper). `nop`s are dropped: the scheduler pads.

use crate::blocks::is_control;
use irqsim_mips::decode::{Inst, Op};

/// Functional units per bundle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Units {
    pub int: u32,
    pub mem: u32,
    pub branch: u32,
}

impl Units {
    /// `INT/MEM/BRANCH`, e.g. `3/3/1`.
    pub fn parse(s: &str) -> Option<Units> {
        let v: Vec<u32> = s.split('/').map(|x| x.trim().parse().ok()).collect::<Option<_>>()?;
        match v[..] {
            [int, mem, branch] if int > 0 && mem > 0 && branch > 0 && int + mem + branch <= 64 => Some(Units { int, mem, branch }),
            _ => None,
        }
    }

    pub fn width(&self) -> u32 {
        self.int + self.mem + self.branch
    }
}

/// What the scheduler assumes about two memory accesses of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    /// No alias analysis: loads and stores keep their order against stores
    /// (safe: two addresses may be the same, device registers stay in order).
    Ordered,
    /// The seed's scheduler (its Section 3.2): only register dependences are
    /// kept, so loads and stores move freely within the block (`ll`/`sc`
    /// still keep their place). Sound only where no two accesses of a block
    /// overlap.
    Registers,
}

impl Memory {
    /// `ordered` or `registers`.
    pub fn parse(s: &str) -> Option<Memory> {
        match s {
            "ordered" => Some(Memory::Ordered),
            "registers" => Some(Memory::Registers),
            _ => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Memory::Ordered => "ordered",
            Memory::Registers => "registers",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Int,
    Mem,
    Branch,
}

const HI: u64 = 1 << 32;
const LO: u64 = 1 << 33;

/// Unit class; registers read and written (bit r for $r, bits 32/33 for HI/LO).
pub fn operands(i: &Inst) -> (Class, u64, u64) {
    use Op::*;
    let bit = |r: u8| if r == 0 { 0 } else { 1u64 << r };
    let mut reads = bit(i.reads[0]) | bit(i.reads[1]);
    let writes = match i.op {
        Sll | Srl | Sra | Sllv | Srlv | Srav | Mfhi | Mflo | Add | Addu | Sub | Subu | And | Or | Xor | Nor | Slt | Sltu | Jalr => bit(i.rd),
        Addi | Addiu | Slti | Sltiu | Andi | Ori | Xori | Lui | Lb | Lh | Lwl | Lw | Lbu | Lhu | Lwr | Ll | Sc => bit(i.rt),
        Jal | Bltzal | Bgezal | Bltzall | Bgezall => bit(31),
        Mthi => HI,
        Mtlo => LO,
        Mult | Multu | Div | Divu => HI | LO,
        _ => 0,
    };
    match i.op {
        Mfhi => reads |= HI,
        Mflo => reads |= LO,
        _ => {}
    }
    let class = if is_control(i) {
        Class::Branch
    } else if matches!(i.op, Lb | Lh | Lwl | Lw | Lbu | Lhu | Lwr | Ll | Sb | Sh | Swl | Sw | Swr | Sc) {
        Class::Mem
    } else {
        Class::Int
    };
    (class, reads, writes)
}

fn is_store(i: &Inst) -> bool {
    use Op::*;
    matches!(i.op, Sb | Sh | Swl | Sw | Swr | Sc | Ll)
}

/// `ll`/`sc`: synchronisation, kept in order against every access under either rule.
fn is_atomic(i: &Inst) -> bool {
    matches!(i.op, Op::Ll | Op::Sc)
}

/// Orders everything around it (system calls, traps, sync).
fn is_barrier(i: &Inst) -> bool {
    use Op::*;
    matches!(i.op, Syscall | Break | Sync | Unsupported | Tge | Tgeu | Tlt | Tltu | Teq | Tne | Tgei | Tgeiu | Tlti | Tltiu | Teqi | Tnei)
}

/// A block's schedule: the bundle of each instruction (None: a dropped nop) and the bundle count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub bundle: Vec<Option<u32>>,
    pub length: u32,
}

impl Schedule {
    /// Instructions scheduled (nops excluded).
    pub fn instructions(&self) -> u32 {
        self.bundle.iter().filter(|b| b.is_some()).count() as u32
    }
}

/// The least bundle distance from `a` to a later `b` (None: independent).
fn distance(a: &Inst, b: &Inst, memory: Memory) -> Option<u32> {
    let ((ca, ra, wa), (cb, rb, wb)) = (operands(a), operands(b));
    let ordered = match memory {
        Memory::Ordered => is_store(a) || is_store(b),
        Memory::Registers => is_atomic(a) || is_atomic(b),
    };
    let mem = ca == Class::Mem && cb == Class::Mem && ordered;
    if wa & rb != 0 || wa & wb != 0 || mem || is_barrier(a) || is_barrier(b) {
        Some(1)
    } else if ra & wb != 0 {
        Some(0)
    } else {
        None
    }
}

/// Schedules `block` (its instructions in program order) on `units`.
pub fn schedule(block: &[Inst], units: Units, memory: Memory) -> Schedule {
    let n = block.len();
    let keep: Vec<bool> = block.iter().map(|i| !(i.op == Op::Sll && i.rd == 0)).collect();
    let br = (0..n).find(|&k| is_control(&block[k]) && keep[k]);
    let slot = br.map(|b| b + 1).filter(|&d| d < n && keep[d]);
    // Edges: preds[b] = (a, distance).
    let mut preds = vec![Vec::new(); n];
    for b in (0..n).filter(|&b| keep[b]) {
        for a in (0..b).filter(|&a| keep[a]) {
            if let Some(d) = distance(&block[a], &block[b], memory) {
                preds[b].push((a, d));
            }
        }
    }
    // Priority: the longest path to the block's end.
    let mut height = vec![0u32; n];
    for a in (0..n).rev() {
        for b in a + 1..n {
            if let Some(&(_, d)) = preds[b].iter().find(|p| p.0 == a) {
                height[a] = height[a].max(height[b] + d.max(1));
            }
        }
    }
    let mut used: Vec<[u32; 3]> = Vec::new();
    let cap = |c: Class| match c {
        Class::Int => units.int,
        Class::Mem => units.mem,
        Class::Branch => units.branch,
    };
    let fits = |used: &Vec<[u32; 3]>, t: u32, c: Class| used.get(t as usize).map_or(0, |u| u[c as usize]) < cap(c);
    let take = |used: &mut Vec<[u32; 3]>, t: u32, c: Class| {
        if used.len() <= t as usize {
            used.resize(t as usize + 1, [0; 3]);
        }
        used[t as usize][c as usize] += 1;
    };
    let mut at: Vec<Option<u32>> = vec![None; n];
    let ready = |at: &Vec<Option<u32>>, k: usize| preds[k].iter().map(|&(a, d)| at[a].map(|t| t + d)).try_fold(0, |m, t| t.map(|t| m.max(t)));
    // The body: everything but the branch and its slot, by list scheduling.
    let mut todo: Vec<usize> = (0..n).filter(|&k| keep[k] && Some(k) != br && Some(k) != slot).collect();
    todo.sort_by_key(|&k| (std::cmp::Reverse(height[k]), k));
    while !todo.is_empty() {
        let pos = todo.iter().position(|&k| ready(&at, k).is_some()).expect("a block's dependences are acyclic");
        let k = todo.remove(pos);
        let (c, mut t) = (operands(&block[k]).0, ready(&at, k).unwrap_or(0));
        while !fits(&used, t, c) {
            t += 1;
        }
        take(&mut used, t, c);
        at[k] = Some(t);
    }
    let body_len = used.len() as u32;
    if let Some(b) = br {
        // The branch goes late enough that the body ends by its delay bundle.
        let mut t = ready(&at, b).unwrap_or(0).max(body_len.saturating_sub(2));
        loop {
            at[b] = Some(t);
            let slot_at = slot.map(|d| {
                let mut s = ready(&at, d).unwrap_or(0).max(t);
                while !fits(&used, s, operands(&block[d]).0) {
                    s += 1;
                }
                s
            });
            if fits(&used, t, Class::Branch) && slot_at.is_none_or(|s| s <= t + 1) {
                take(&mut used, t, Class::Branch);
                if let (Some(d), Some(s)) = (slot, slot_at) {
                    take(&mut used, s, operands(&block[d]).0);
                    at[d] = Some(s);
                }
                break;
            }
            t += 1;
        }
        if used.len() < t as usize + 2 {
            used.resize(t as usize + 2, [0; 3]);
        }
    }
    Schedule { bundle: at, length: used.len() as u32 }
}
