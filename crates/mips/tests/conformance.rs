//! Every shipped program must print the same stdout and stderr and exit
//! with the same code under this ISS as under qemu-mips (the oracle). Where
//! qemu-mips is absent the comparison is skipped with a message, except in
//! CI (CI=true), where its absence is a failure.

use irqsim_mips::config::ExecConfig;
use irqsim_mips::{Program, run::run_program};
use std::path::PathBuf;
use std::process::Command;

fn programs() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/programs");
    let mut v: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "elf")).collect();
    v.sort();
    assert!(v.len() >= 9, "programs missing in {}", dir.display());
    v
}

fn qemu_available() -> bool {
    let ok = Command::new("qemu-mips").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var("CI").is_err(), "qemu-mips is required in CI (apt-get install qemu-user)");
        eprintln!("SKIPPED: qemu-mips not installed (apt-get install qemu-user); the ISS is not compared with it");
    }
    ok
}

fn compare(sets: &[&str]) {
    if !qemu_available() {
        return;
    }
    let config = ExecConfig::from_sets(sets).unwrap();
    for p in programs() {
        let q = Command::new("qemu-mips").arg(&p).output().unwrap();
        let out = run_program(Program::load(&p).unwrap(), &config).unwrap_or_else(|e| panic!("{e}"));
        let name = p.file_name().unwrap().to_string_lossy();
        assert_eq!(String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&q.stdout), "{name}: stdout differs");
        assert_eq!(out.stderr, q.stderr, "{name}: stderr differs");
        assert_eq!(Some(out.exit_code), q.status.code(), "{name}: exit code differs");
    }
}

#[test]
fn same_output_as_qemu_with_perfect_memory() {
    compare(&[]);
}

#[test]
fn same_output_as_qemu_with_caches_and_smt_timing() {
    // Timing must never change results.
    compare(&["memory.model=caches", "l1d.size_bytes=1024", "l1d.ways=1", "pipeline.load_use_cycles=5"]);
}
