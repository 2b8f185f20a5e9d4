//! Runs scenario files with the core alone (no Python) and prints each
//! report as JSON with the wall time of the simulation: the tool for
//! profiling the event loop (`perf record`) and for quick speed checks.
//!
//! `cargo run --release -p irqsim-core --example run -- SCENARIO.toml [KEY=VALUE ...]`

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: run SCENARIO.toml [KEY.PATH=VALUE ...]");
        std::process::exit(2);
    };
    let sets: Result<Vec<_>, _> = args.map(|a| irqsim_core::parse_override(&a)).collect();
    let t0 = Instant::now();
    let report = sets.and_then(|sets| irqsim_core::run_file(std::path::Path::new(&path), &sets, Default::default()));
    let wall = t0.elapsed().as_secs_f64();
    match report {
        Ok(r) => {
            let mut doc = r.to_json();
            doc["wall_seconds"] = wall.into();
            doc["invariants"] = r.check_invariants().err().unwrap_or_else(|| "ok".into()).into();
            println!("{doc}");
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
