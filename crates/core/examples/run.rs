//! Runs scenario files with the core alone (no Python) and prints each
//! report as JSON with the wall time of the simulation: the tool for
//! profiling the event loop (`perf record`) and for quick speed checks.
//!
//! `cargo run --release -p irqsim-core --example run -- [--repeat=N [--seeds]] SCENARIO.toml [KEY=VALUE ...]`
//!
//! `--repeat=N` loads and runs the scenario N times in the one process and
//! prints the last report: a warm run's cost (a tiny run's loading, say) is
//! then the profile's total over N, start-up and first-use costs aside. The
//! core keeps the scenarios it last loaded, so a repeat loads from that
//! cache; with `--seeds` the i-th run sets `run.seed=i` as well, so that
//! every run is loaded anew, as a sweep's are.

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    let repeat = match args.next_if(|a| a.starts_with("--repeat=")) {
        Some(a) => a["--repeat=".len()..].parse().unwrap_or_else(|_| {
            eprintln!("--repeat=N: N must be a whole number above 0");
            std::process::exit(2);
        }),
        None => 1,
    };
    let seeds = args.next_if(|a| a == "--seeds").is_some();
    let Some(path) = args.next() else {
        eprintln!("usage: run [--repeat=N [--seeds]] SCENARIO.toml [KEY.PATH=VALUE ...]");
        std::process::exit(2);
    };
    let sets: Result<Vec<_>, _> = args.map(|a| irqsim_core::parse_override(&a)).collect();
    let t0 = Instant::now();
    let run = |i: usize, sets: &[irqsim_core::Override]| {
        let mut sets = sets.to_vec();
        if seeds {
            sets.push(irqsim_core::parse_override(&format!("run.seed={i}"))?);
        }
        irqsim_core::run_file(std::path::Path::new(&path), &sets, Default::default())
    };
    let report = sets.and_then(|sets| {
        for i in 1..repeat.max(1) {
            run(i, &sets)?;
        }
        run(repeat.max(1), &sets)
    });
    let wall = t0.elapsed().as_secs_f64();
    match report {
        Ok(r) => {
            let mut doc = r.to_json();
            doc["wall_seconds"] = wall.into();
            doc["invariants"] = r.check_invariants().err().unwrap_or_else(|| "ok".into()).into();
            // One write: `Value`'s `Display` straight to stdout makes a
            // line-buffered write of every token (64 CPUs' report: 0.8 M
            // host instructions, docs/performance/engine.md).
            let text = doc.to_string();
            println!("{text}");
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
