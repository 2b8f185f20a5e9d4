//! Replays the MIPS fuzz seeds (`fuzz/seeds/{elf,program}/`) and every kept
//! finding (`fuzz/regressions/{elf,program}/`) through the entry points the
//! cargo-fuzz targets call (`fuzz/src/mips.rs`, included here), so `cargo
//! test` checks the same laws without nightly or cargo-fuzz.

#[path = "../../../fuzz/src/mips.rs"]
mod entry;

use std::path::{Path, PathBuf};

fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz").join(kind).join(target);
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    files.sort();
    files
}

/// Every seed is accepted, and no seed or regression breaks a law.
fn replay(target: &str, entry: fn(&[u8]) -> entry::Outcome) {
    let seeds = inputs("seeds", target);
    assert!(!seeds.is_empty(), "no seeds in fuzz/seeds/{target}");
    let mut failed = Vec::new();
    for (path, is_seed) in seeds.iter().map(|p| (p, true)).chain(inputs("regressions", target).iter().map(|p| (p, false)).collect::<Vec<_>>()) {
        let data = std::fs::read(path).unwrap();
        match std::panic::catch_unwind(|| entry(&data)) {
            Err(_) => failed.push(format!("{}: broke a law", path.display())),
            Ok(outcome) if is_seed && outcome != entry::Outcome::Accepted => failed.push(format!("{}: seed {outcome:?}", path.display())),
            Ok(_) => {}
        }
    }
    assert!(failed.is_empty(), "{target}: {failed:#?}");
}

#[test]
fn elf_corpus() {
    replay("elf", entry::elf);
}

#[test]
fn program_corpus() {
    replay("program", entry::program);
}

/// A few hostile files the loader must refuse cleanly: truncated, wrong
/// class, and a seed with its header fields scrambled.
#[test]
fn broken_elves_are_refused_in_one_line() {
    let seed = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/elf/arith.elf")).unwrap();
    let mut wrong_class = seed.clone();
    wrong_class[4] = 2;
    let mut scrambled = seed.clone();
    for b in &mut scrambled[16..52] {
        *b = 0xff;
    }
    for data in [&seed[..10], &wrong_class[..], &scrambled[..], b"\x7fELF"] {
        assert_eq!(entry::elf(data), entry::Outcome::Rejected);
    }
}
