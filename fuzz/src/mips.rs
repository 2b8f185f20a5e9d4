//! Fuzz entry points for the execution-driven cores (`irqsim-mips`): the ELF
//! loader on arbitrary bytes, and whole programs under a cycle budget, with
//! perfect memory or caches. Apart from `lib.rs` so that the core's corpus
//! test needs no MIPS crate; `crates/mips/tests/fuzz_corpus.rs` includes it.

use irqsim_mips::config::ExecConfig;
use irqsim_mips::{Program, run::run_program};

/// The name errors must start with.
pub const ELF: &str = "fuzz.elf";

/// Cycles a fuzzed program may run: a little over twice the longest seed
/// (`arith`, 25,940 cycles with caches). A mutant that runs longer loops: at
/// 250,000 cycles (ten times the seed) such mutants, a sixth of the corpus,
/// took four fifths of the target's time, and at 20,000,000 seconds each.
const MAX_CYCLES: u64 = 60_000;

/// What an entry point made of its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Accepted,
    Rejected,
}

/// The ELF loader on arbitrary bytes: a program or one clean error.
pub fn elf(data: &[u8]) -> Outcome {
    match Program::parse(data, ELF) {
        Ok(_) => Outcome::Accepted,
        Err(e) => check_error(&e.to_string()),
    }
}

/// A whole program on one core, to its exit or an error: an unsupported
/// instruction, a fault or the cycle budget, each one clean line. Inputs of
/// even length run with caches, odd with perfect memory; the same input run
/// twice gives the same output, cycle for cycle.
pub fn program(data: &[u8]) -> Outcome {
    let Ok(program) = Program::parse(data, ELF) else { return Outcome::Rejected };
    // The two settings are the same for every input: made once (libFuzzer runs inputs on one thread).
    static CONFIGS: std::sync::OnceLock<[ExecConfig; 2]> = std::sync::OnceLock::new();
    let configs = CONFIGS.get_or_init(|| {
        ["memory.model=caches", "memory.model=perfect"]
            .map(|memory| ExecConfig { max_cycles: MAX_CYCLES, ..ExecConfig::from_sets(&[memory]).expect("valid settings") })
    });
    let config = &configs[data.len() % 2];
    let first = run_program(program.clone(), config);
    let again = run_program(program, config);
    match (first, again) {
        (Ok(a), Ok(b)) => {
            assert_eq!((a.exit_code, &a.stdout, &a.system), (b.exit_code, &b.stdout, &b.system), "rerun differs");
            Outcome::Accepted
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "rerun fails differently");
            check_error(&a.to_string())
        }
        (a, b) => panic!("rerun differs: {:?} then {:?}", a.is_ok(), b.is_ok()),
    }
}

/// Every error is one line and holds no raw control character.
fn check_error(msg: &str) -> Outcome {
    assert!(!msg.is_empty() && !msg.contains('\n'), "error over several lines: {msg:?}");
    assert!(!msg.chars().any(char::is_control), "raw control character in error: {msg:?}");
    Outcome::Rejected
}
