//! Pipeline timing by hand: one cycle per instruction, plus the load-use,
//! HI/LO and taken-branch interlocks of the R4000 defaults.

mod common;
use common::*;
use irqsim_mips::SystemConfig;
use irqsim_mips::timing::Pipeline;

fn cycles(words: &[u32]) -> u64 {
    cycles_to_exit(words, &SystemConfig::default())
}

/// `n` independent instructions plus the two-instruction exit, each one cycle.
#[test]
fn one_cycle_per_independent_instruction() {
    assert_eq!(cycles(&[addiu(8, 0, 1), addiu(9, 0, 2), addiu(10, 0, 3)]), 5);
}

#[test]
fn load_use_interlock_is_two_cycles_then_none() {
    let base = [lui(8, DATA >> 16)];
    let used_next = cycles(&[base[0], lw(9, 0, 8), addu(10, 9, 9)]);
    let used_after_one = cycles(&[base[0], lw(9, 0, 8), NOP, addu(10, 9, 9)]);
    let used_after_two = cycles(&[base[0], lw(9, 0, 8), NOP, NOP, addu(10, 9, 9)]);
    assert_eq!(used_next, 5 + 2);
    assert_eq!(used_after_one, 6 + 1);
    assert_eq!(used_after_two, 7);
    // An unrelated instruction after the load does not wait.
    assert_eq!(cycles(&[base[0], lw(9, 0, 8), addu(10, 8, 8)]), 5);
}

#[test]
fn mult_and_div_latency_to_mflo() {
    // mult at cycle 2 (after two addiu), mflo may issue at 2 + 10.
    let m = cycles(&[addiu(8, 0, 3), addiu(9, 0, 4), mult(8, 9), mflo(10)]);
    assert_eq!(m, 12 + 1 + 2);
    let d = cycles(&[addiu(8, 0, 3), addiu(9, 0, 4), div(8, 9), mflo(10)]);
    assert_eq!(d, 2 + 69 + 1 + 2);
    // Independent work hides the latency.
    let hidden: Vec<u32> = [addiu(8, 0, 3), addiu(9, 0, 4), mult(8, 9)].into_iter().chain([NOP; 9]).chain([mflo(10)]).collect();
    assert_eq!(cycles(&hidden), 13 + 2);
}

#[test]
fn taken_branch_costs_two_cycles_beyond_its_slot() {
    // beq $0,$0,+2 (taken, relative to the slot) ; nop (slot) ; nop (skipped) ; exit
    let taken = cycles(&[beq(0, 0, 2), NOP, NOP]);
    assert_eq!(taken, 2 + 2 + 2);
    // bne $0,$0 (not taken) runs straight through: 3 + exit.
    assert_eq!(cycles(&[bne(0, 0, 1), NOP, NOP]), 3 + 2);
}

#[test]
fn a_loop_costs_its_instructions_plus_the_back_edge() {
    // $8 = 10; loop: addiu $8,-1 ; bne $8,$0,loop ; nop  -> 10 iterations of 3 + 2 (taken) except the last.
    let words = [addiu(8, 0, 10), addiu(8, 8, -1), bne(8, 0, -2), NOP];
    assert_eq!(cycles(&words), 1 + 10 * 3 + 9 * 2 + 2);
}

#[test]
fn latencies_are_configurable() {
    let p = Pipeline { load_use_cycles: 1, branch_taken_cycles: 0, mult_cycles: 3, div_cycles: 5 };
    let c = SystemConfig { pipeline: p, ..Default::default() };
    assert_eq!(cycles_to_exit(&[lui(8, DATA >> 16), lw(9, 0, 8), addu(10, 9, 9)], &c), 5 + 1);
    assert_eq!(cycles_to_exit(&[mult(0, 0), mflo(10)], &c), 3 + 1 + 2);
    assert_eq!(cycles_to_exit(&[beq(0, 0, 2), NOP, NOP], &c), 4);
}
