//! The VLIW scheduler never breaks a dependence (random blocks re-executed
//! bundle by bundle give the sequential result), and small blocks get the
//! schedules worked out by hand.

use irqsim_firmware::ilp::{Memory, Units, operands, schedule};
use irqsim_mips::Context;
use irqsim_mips::decode::{Inst, decode};
use irqsim_mips::error::Fault;
use irqsim_mips::exec::{Bus, Flow, execute};
use proptest::prelude::*;
use std::collections::HashMap;

fn r(op: u32, rs: u32, rt: u32, rd: u32, sa: u32, f: u32) -> u32 {
    (op << 26) | (rs << 21) | (rt << 16) | (rd << 11) | (sa << 6) | f
}
fn i(op: u32, rs: u32, rt: u32, imm: u32) -> u32 {
    (op << 26) | (rs << 21) | (rt << 16) | (imm & 0xFFFF)
}
const BASE: u32 = 9;
const PC: u32 = 0x0040_0000;

/// Memory for re-execution: loads see `mem`, stores are collected.
struct Mem<'a> {
    mem: &'a HashMap<u32, u32>,
    stores: Vec<(u32, u32, u32)>,
}
impl Bus for Mem<'_> {
    fn load(&mut self, a: u32) -> Result<u32, Fault> {
        Ok(self.mem.get(&(a & !3)).copied().unwrap_or(a.rotate_left(7)))
    }
    fn store(&mut self, a: u32, v: u32, m: u32) -> Result<(), Fault> {
        self.stores.push((a & !3, v, m));
        Ok(())
    }
    fn link(&mut self, _: u32) {}
    fn take_link(&mut self, _: u32) -> bool {
        true
    }
}
fn apply(mem: &mut HashMap<u32, u32>, stores: &[(u32, u32, u32)]) {
    for &(a, v, m) in stores {
        let old = mem.get(&a).copied().unwrap_or(a.rotate_left(7));
        mem.insert(a, (old & !m) | (v & m));
    }
}

fn run_one(c: &mut Context, pc: u32, inst: Inst, mem: &HashMap<u32, u32>) -> (Flow, Vec<(u32, u32, u32)>) {
    c.pc = pc;
    c.npc = pc + 4;
    let mut bus = Mem { mem, stores: vec![] };
    let f = execute(c, inst, &mut bus).expect("generated instructions do not fault");
    (f, bus.stores)
}

/// Registers, memory and the branch's flow after a block.
type State = (Context, HashMap<u32, u32>, Option<Flow>);

/// Sequential execution.
fn sequential(block: &[Inst], ctx: &Context) -> State {
    let (mut c, mut mem, mut flow) = (ctx.clone(), HashMap::new(), None);
    for (k, inst) in block.iter().enumerate() {
        let (f, st) = run_one(&mut c, PC + 4 * k as u32, *inst, &mem);
        apply(&mut mem, &st);
        if operands(inst).0 == irqsim_firmware::ilp::Class::Branch {
            flow = Some(f);
        }
    }
    (c, mem, flow)
}

/// VLIW execution: a bundle's instructions all read the state before it.
fn bundled(block: &[Inst], bundle: &[Option<u32>], length: u32, ctx: &Context) -> Result<State, String> {
    let (mut c, mut mem, mut flow) = (ctx.clone(), HashMap::new(), None);
    for t in 0..length {
        let start = c.clone();
        let mut written = 0u64;
        let mut stores = Vec::new();
        for k in (0..block.len()).filter(|&k| bundle[k] == Some(t)) {
            let mut x = start.clone();
            let (f, st) = run_one(&mut x, PC + 4 * k as u32, block[k], &mem);
            if operands(&block[k]).0 == irqsim_firmware::ilp::Class::Branch {
                flow = Some(f);
            }
            for reg in 1..32 {
                if x.r[reg] != start.r[reg] {
                    if written & (1 << reg) != 0 {
                        return Err(format!("two writes of ${reg} in bundle {t}"));
                    }
                    written |= 1 << reg;
                    c.r[reg] = x.r[reg];
                }
            }
            if x.hi != start.hi {
                c.hi = x.hi;
            }
            if x.lo != start.lo {
                c.lo = x.lo;
            }
            stores.extend(st);
        }
        apply(&mut mem, &stores);
    }
    Ok((c, mem, flow))
}

/// Random instructions over a few registers (many dependences), with
/// memory through $9 (never written).
fn arb_inst() -> impl Strategy<Value = u32> {
    let reg = 1u32..6;
    (0u32..14, reg.clone(), reg.clone(), reg, 0u32..4).prop_map(|(kind, a, b, d, off)| match kind {
        0 => r(0, a, b, d, 0, 0x21),       // addu
        1 => r(0, a, b, d, 0, 0x23),       // subu
        2 => r(0, a, b, d, 0, 0x25),       // or
        3 => r(0, a, b, d, 0, 0x2a),       // slt
        4 => r(0, 0, a, d, off + 1, 0),    // sll
        5 => i(9, a, d, off * 3 + 1),      // addiu
        6 => i(15, 0, d, off + 0x10),      // lui
        7 | 8 => i(35, BASE, d, off * 4),  // lw
        9 | 10 => i(43, BASE, a, off * 4), // sw
        11 => i(40, BASE, a, off + 1),     // sb
        12 => r(0, a, b, 0, 0, 0x19),      // multu
        _ => r(0, 0, 0, d, 0, 0x12),       // mflo
    })
}

fn arb_block() -> impl Strategy<Value = Vec<u32>> {
    (proptest::collection::vec(arb_inst(), 1..18), proptest::option::of((0u32..3, 1u32..6, 1u32..6, arb_inst()))).prop_map(|(mut body, br)| {
        if let Some((kind, a, b, slot)) = br {
            body.push(match kind {
                0 => i(4, a, b, 5),         // beq
                1 => i(5, a, b, 5),         // bne
                _ => (3 << 26) | 0x10_0040, // jal (writes $31)
            });
            body.push(slot);
        }
        body
    })
}

fn units() -> impl Strategy<Value = Units> {
    (1u32..5, 1u32..5).prop_map(|(int, mem)| Units { int, mem, branch: 1 })
}

/// Schedules `words` under `memory` and checks the bundles against
/// sequential execution, the unit limits and the delay bundle.
fn check(words: &[u32], units: Units, memory: Memory, seed: [u32; 6]) -> Result<(), TestCaseError> {
    let block: Vec<Inst> = words.iter().enumerate().map(|(k, &w)| decode(w, PC + 4 * k as u32)).collect();
    let s = schedule(&block, units, memory);
    let mut ctx = Context::default();
    ctx.r[1..7].copy_from_slice(&seed);
    ctx.r[BASE as usize] = 0x1000_0000;
    let want = sequential(&block, &ctx);
    let got = bundled(&block, &s.bundle, s.length, &ctx).map_err(TestCaseError::fail)?;
    prop_assert_eq!(&want.0.r[..], &got.0.r[..], "registers differ; schedule {:?}", s);
    prop_assert_eq!((want.0.hi, want.0.lo), (got.0.hi, got.0.lo));
    prop_assert_eq!(want.1, got.1, "memory differs; schedule {:?}", s);
    prop_assert_eq!(want.2, got.2, "branch outcome differs");
    // Units per bundle, and the branch's delay bundle is the block's last.
    for t in 0..s.length {
        let mut used = [0u32; 3];
        for k in (0..block.len()).filter(|&k| s.bundle[k] == Some(t)) {
            used[operands(&block[k]).0 as usize] += 1;
        }
        prop_assert!(used[0] <= units.int && used[1] <= units.mem && used[2] <= units.branch);
    }
    if let Some(b) = (0..block.len()).find(|&k| operands(&block[k]).0 == irqsim_firmware::ilp::Class::Branch) {
        prop_assert_eq!(s.bundle[b].map(|t| t + 2), Some(s.length));
    }
    Ok(())
}

/// `block` with each load's and store's offset its own (no two accesses overlap).
fn disjoint(block: &[u32]) -> Vec<u32> {
    block.iter().enumerate().map(|(k, &w)| if matches!(w >> 26, 35 | 40 | 43) { (w & !0xFFFF) | (0x100 + 4 * k as u32) } else { w }).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn schedules_preserve_semantics(words in arb_block(), units in units(), seed in any::<[u32; 6]>()) {
        check(&words, units, Memory::Ordered, seed)?;
    }

    /// The seed's rule is sound where no two accesses overlap. (It is not
    /// always shorter than the ordered rule: a list scheduler given fewer
    /// edges can pick a worse order.)
    #[test]
    fn register_rule_preserves_disjoint_blocks(words in arb_block(), units in units(), seed in any::<[u32; 6]>()) {
        check(&disjoint(&words), units, Memory::Registers, seed)?;
    }
}

#[test]
fn memory_rules() {
    // sw $1,0($9); lw $5,0($9): ordered, the load waits a bundle for the store;
    // under the seed's rule (registers only) both go in the first bundle.
    let b = [i(43, 9, 1, 0), i(35, 9, 5, 0)];
    assert_eq!(sched_with(&b, "2/2/1", Memory::Ordered), (vec![Some(0), Some(1)], 2));
    assert_eq!(sched_with(&b, "2/2/1", Memory::Registers), (vec![Some(0), Some(0)], 1));
    // ll $5,0($9) after sw $1,0($9) stays after it under either rule.
    let ll = [i(43, 9, 1, 0), i(48, 9, 5, 0)];
    assert_eq!(sched_with(&ll, "2/2/1", Memory::Registers), (vec![Some(0), Some(1)], 2));
    assert_eq!(Memory::parse("registers"), Some(Memory::Registers));
    assert_eq!(Memory::parse("alias"), None);
}

fn sched(words: &[u32], units: &str) -> (Vec<Option<u32>>, u32) {
    sched_with(words, units, Memory::Ordered)
}

fn sched_with(words: &[u32], units: &str, memory: Memory) -> (Vec<Option<u32>>, u32) {
    let block: Vec<Inst> = words.iter().enumerate().map(|(k, &w)| decode(w, PC + 4 * k as u32)).collect();
    let s = schedule(&block, Units::parse(units).unwrap(), memory);
    (s.bundle, s.length)
}

#[test]
fn hand_scheduled_blocks() {
    // lw $2,0($9); addiu $3,$3,1; addu $4,$2,$3; sw $4,4($9)
    // 1/1/1: lw and addiu together; addu after both; sw after addu.
    let b = [i(35, 9, 2, 0), i(9, 3, 3, 1), r(0, 2, 3, 4, 0, 0x21), i(43, 9, 4, 4)];
    assert_eq!(sched(&b, "1/1/1"), (vec![Some(0), Some(0), Some(1), Some(2)], 3));
    // Four independent adds: 1 integer unit takes 4 bundles, 2 take 2, 4 take 1.
    let adds = [r(0, 1, 1, 2, 0, 0x21), r(0, 1, 1, 3, 0, 0x21), r(0, 1, 1, 4, 0, 0x21), r(0, 1, 1, 5, 0, 0x21)];
    assert_eq!(sched(&adds, "1/1/1").1, 4);
    assert_eq!(sched(&adds, "2/1/1").1, 2);
    assert_eq!(sched(&adds, "4/1/1").1, 1);
    // WAR in one bundle: addu $2,$3,$4 reads $3 which addiu $3,$0,7 then writes.
    let war = [r(0, 3, 4, 2, 0, 0x21), i(9, 0, 3, 7)];
    assert_eq!(sched(&war, "2/1/1"), (vec![Some(0), Some(0)], 1));
    // WAW: two writes of $2 go one bundle apart.
    let waw = [i(9, 0, 2, 1), i(9, 0, 2, 2)];
    assert_eq!(sched(&waw, "2/1/1"), (vec![Some(0), Some(1)], 2));
    // addiu $2,$2,1; bne $2,$3,target; nop (slot dropped): the branch waits
    // for $2, and its delay bundle ends the block.
    let br = [i(9, 2, 2, 1), i(5, 2, 3, 4), 0];
    assert_eq!(sched(&br, "3/3/1"), (vec![Some(0), Some(1), None], 3));
    // Independent work fills the branch's bundle and its delay bundle:
    // sw $1,0($9); lw $5,4($9); beq $6,$7,t; addu $8,$6,$7 (slot).
    let fill = [i(43, 9, 1, 0), i(35, 9, 5, 4), i(4, 6, 7, 4), r(0, 6, 7, 8, 0, 0x21)];
    assert_eq!(sched(&fill, "1/1/1"), (vec![Some(0), Some(1), Some(0), Some(0)], 2));
}

#[test]
fn units_parse() {
    assert_eq!(Units::parse("3/3/1"), Some(Units { int: 3, mem: 3, branch: 1 }));
    assert_eq!(Units::parse("3/3"), None);
    assert_eq!(Units::parse("0/1/1"), None);
}
