//! Memory stays bounded however long an overloaded run goes: replayed calls
//! that find `app.max_waiting_calls` waiting are dropped and counted (F5 in
//! docs/reliability.md: a synthetic run at 2 M system calls a second grew by
//! about 62 MB per simulated second).

use irqsim_core::run_str;

/// Four times more system calls than the CPU can do: the waiting ones never
/// pass the cap, the rest are dropped, and every call is accounted for.
#[test]
fn system_calls_beyond_the_cap_are_dropped_and_counted() {
    let text = "[run]\nduration_ms = 100.0\n[cpu]\nclock_mhz = 200.0\n[app]\nmax_waiting_calls = 100\n\
                [workload]\nkind = \"synthetic\"\nsyscalls_per_s = 2000000\n";
    let r = run_str(text, "s.toml", &[]).unwrap();
    r.check_invariants().unwrap();
    let (calls, dropped) = (r.metric("syscalls").unwrap(), r.metric("syscalls_dropped").unwrap());
    assert!(calls > 150_000.0, "{calls}");
    // 400 cycles each at 200 MHz: at most 50,000 done in 100 ms, 100 waiting.
    assert!(dropped >= calls - 50_000.0 - 100.0, "{dropped} of {calls} dropped");
}
