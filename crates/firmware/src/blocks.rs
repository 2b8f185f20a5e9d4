//! Basic blocks of a program's text: a block starts at a function entry, a
//! branch or jump target, or the instruction after a control transfer's
//! delay slot, and runs to the next such leader. A block that ends in a
//! control transfer keeps its delay slot as its last instruction.

use irqsim_mips::Program;
use irqsim_mips::decode::{Inst, Op, decode};

/// One basic block: its instructions with their addresses and words.
#[derive(Clone, Debug)]
pub struct Block {
    pub start: u32,
    pub insts: Vec<(u32, u32, Inst)>,
}

/// Whether `i` transfers control (a branch, jump or call; the next instruction is its delay slot).
pub fn is_control(i: &Inst) -> bool {
    use Op::*;
    matches!(
        i.op,
        Jr | Jalr | Bltz | Bgez | Bltzal | Bgezal | Beq | Bne | Blez | Bgtz | Bltzl | Bgezl | Bltzall | Bgezall | Beql | Bnel | Blezl | Bgtzl | J | Jal
    )
}

/// A direct target, if `i` has one.
fn target(i: &Inst) -> Option<u32> {
    (is_control(i) && !matches!(i.op, Op::Jr | Op::Jalr)).then_some(i.imm)
}

/// The basic blocks of every executable segment.
pub fn blocks(p: &Program) -> Vec<Block> {
    let mut out = Vec::new();
    for seg in p.segments.iter().filter(|s| s.executable) {
        let words: Vec<(u32, u32)> =
            seg.data.chunks_exact(4).enumerate().map(|(k, b)| (seg.vaddr + 4 * k as u32, u32::from_be_bytes([b[0], b[1], b[2], b[3]]))).collect();
        let (lo, hi) = (seg.vaddr, seg.vaddr + 4 * words.len() as u32);
        let inside = |a: u32| a >= lo && a < hi && a.is_multiple_of(4);
        let mut leader = vec![false; words.len()];
        let mut mark = |a: u32| {
            if inside(a) {
                leader[((a - lo) / 4) as usize] = true;
            }
        };
        mark(lo);
        p.symbols.iter().filter(|s| s.size > 0).for_each(|s| mark(s.addr));
        let insts: Vec<Inst> = words.iter().map(|&(pc, w)| decode(w, pc)).collect();
        for (k, i) in insts.iter().enumerate() {
            if is_control(i) {
                mark(lo + 4 * k as u32 + 8);
                if let Some(t) = target(i) {
                    mark(t);
                }
            }
        }
        let mut cur: Option<Block> = None;
        for (k, (&(pc, w), &i)) in words.iter().zip(&insts).enumerate() {
            if leader[k] {
                out.extend(cur.take());
            }
            cur.get_or_insert_with(|| Block { start: pc, insts: vec![] }).insts.push((pc, w, i));
        }
        out.extend(cur);
    }
    out
}
