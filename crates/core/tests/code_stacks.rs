//! Each kernel activity's stack (per thread and level) ends in a guard: an
//! activity that recurses without end faults at its own stack's limit, in
//! one line naming the program, the function and the PC, instead of
//! writing on through the stacks of the activities below it.

use irqsim_core::{Record, Scenario, parse_override, simulate};
use std::path::Path;

/// rx-min with every entry `deeper` of hostile/overflow.elf, which calls
/// itself forever with a 64-byte frame or more; the error the run ends with.
fn overflow(sets: &[&str]) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios");
    let mut all = vec![
        "run.duration_ms=20",
        "code.program=\"../../programs/hostile/overflow.elf\"",
        "code.init=\"deeper\"",
        "code.isr=\"deeper\"",
        "code.bottom_half=\"deeper\"",
        "code.syscall=\"deeper\"",
        "code.app=\"\"",
    ];
    all.extend_from_slice(sets);
    let o: Vec<_> = all.iter().map(|s| parse_override(s).unwrap()).collect();
    let s = Scenario::from_file(&dir.join("code/rx-min.toml"), &o).unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    simulate(&s, &dir.join("code"), Record::default()).err().unwrap_or_else(|| panic!("{sets:?}: the recursion ran to the end")).to_string()
}

/// How far below the top of some activity's stack the fault wrote, the
/// stacks' tops being `stride` apart from 0x7ff00000.
fn below_a_stack_top(err: &str, stride: u32) -> u32 {
    let at = err.find("write to 0x").unwrap_or_else(|| panic!("{err}")) + 11;
    let addr = u32::from_str_radix(&err[at..at + 8], 16).unwrap();
    (0x7FF0_0000 - addr) % stride
}

/// The page right below an activity's 64 KiB of stack.
const FIRST_GUARD_PAGE: std::ops::RangeInclusive<u32> = 0x1_0001..=0x2_0000;

/// Each faults in the page below its stack, its guard, with perfect memory
/// (a one-page guard: stacks 128 KiB apart), with caches (a guard of the
/// largest way span, 32 KiB for the default L2, so still a page), and with
/// two threads.
#[test]
fn a_kernel_stack_overflow_faults_at_its_own_limit() {
    for sets in [&[][..], &["code.core.memory.model=\"caches\""][..], &["cpu.threads=2", "code.app_thread=1"][..]] {
        let err = overflow(sets);
        assert!(!err.contains('\n'), "{err}");
        assert!(
            err.contains("overflow.elf: stack overflow (segmentation fault: write to 0x") && err.contains(" in deeper+0x") && err.contains(" at pc 0x"),
            "{sets:?}: {err}"
        );
        assert!(FIRST_GUARD_PAGE.contains(&below_a_stack_top(&err, 0x2_0000)), "{sets:?}: {err}");
    }
}

/// With a cache whose way span is 1 MiB (an 8 MiB 8-way L2), the stacks are
/// 1 MiB + 64 KiB apart: the guard is the 1 MiB below each, and the fault
/// comes in its top page, right below the stack.
#[test]
fn the_guard_spans_the_largest_way() {
    let err = overflow(&["code.core.memory.model=\"caches\"", "code.core.l2.size_bytes=8388608"]);
    assert!(FIRST_GUARD_PAGE.contains(&below_a_stack_top(&err, 0x11_0000)), "{err}");
}

/// A fault names what its thread was running; the timer tick calls the
/// program's `isr` with a number no NIC has, which rx_min takes for a
/// NIC's, so the error says so and names the key.
#[test]
fn a_fault_in_the_tick_names_the_tick_and_its_key() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios");
    let o: Vec<_> = ["run.duration_ms=2", "code.ticks_per_s=1000"].iter().map(|s| parse_override(s).unwrap()).collect();
    let s = Scenario::from_file(&dir.join("code/rx-min.toml"), &o).unwrap();
    let err = simulate(&s, &dir.join("code"), Record::default()).err().expect("rx_min takes no tick").to_string();
    assert!(
        err.contains(" in nic_isr+0x")
            && err.ends_with(", in the timer tick on CPU 0 (`isr(2)`, code.ticks_per_s): the program's isr must take it, or set code.ticks_per_s = 0"),
        "{err}"
    );
    assert!(!err.contains('\n'), "{err}");
}
