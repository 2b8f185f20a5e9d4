//! Replays the fuzz seed corpora (`fuzz/seeds/TARGET/`) and every fuzz finding kept as a
//! regression (`fuzz/regressions/TARGET/`) through the entry points the cargo-fuzz
//! targets call (`fuzz/src/lib.rs`, included here), so `cargo test` checks the same laws
//! on them without nightly or cargo-fuzz. See docs/reliability.md.

#[path = "../../../fuzz/src/lib.rs"]
mod entry;

use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// Files of `fuzz/KIND/TARGET`, sorted; none if the directory does not exist.
fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(fuzz_dir().join(kind).join(target)) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = dir.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    files.sort();
    files
}

/// Runs `entry` on every seed and regression input of `target`; fails naming each input
/// that breaks a law, and each seed (a valid input) that is not accepted.
fn replay(target: &str, entry: fn(&[u8]) -> entry::Outcome) {
    let seeds = inputs("seeds", target);
    assert!(!seeds.is_empty(), "no seeds in fuzz/seeds/{target}");
    let regressions = inputs("regressions", target);
    let mut failed = Vec::new();
    for (path, is_seed) in seeds.iter().map(|p| (p, true)).chain(regressions.iter().map(|p| (p, false))) {
        let data = std::fs::read(path).unwrap();
        match std::panic::catch_unwind(|| entry(&data)) {
            Err(_) => failed.push(format!("{}: broke a law", path.display())),
            Ok(outcome) if is_seed && outcome != entry::Outcome::Accepted => {
                failed.push(format!("{}: seed {outcome:?}", path.display()));
            }
            Ok(_) => {}
        }
    }
    assert!(failed.is_empty(), "{target}: {failed:#?}");
}

#[test]
fn pcap_corpus() {
    replay("pcap", entry::pcap);
}

#[test]
fn strace_corpus() {
    replay("strace", entry::strace);
}

#[test]
fn scenario_corpus() {
    replay("scenario", entry::scenario);
}

#[test]
fn short_run_corpus() {
    replay("short_run", entry::short_run);
}

#[test]
fn trace_run_corpus() {
    replay("trace_run", entry::trace_run);
}
