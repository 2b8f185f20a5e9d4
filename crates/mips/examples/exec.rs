//! Runs a MIPS program and prints its output and speed; the speed benchmark
//! of docs/performance.md:
//!
//! `cargo run --release -p irqsim-mips --example exec -- PROGRAM.elf [KEY=VALUE ...]`

use irqsim_mips::config::ExecConfig;
use irqsim_mips::{Program, run::run_program};
use std::io::Write;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: exec PROGRAM.elf [KEY=VALUE ...]");
        std::process::exit(2);
    };
    let run = || -> Result<_, irqsim_mips::Error> {
        let config = ExecConfig::from_sets(&args[1..])?;
        let program = Program::load(path.as_ref())?;
        let t = Instant::now();
        let out = run_program(program, &config)?;
        Ok((out, t.elapsed().as_secs_f64()))
    };
    match run() {
        Ok((out, wall)) => {
            std::io::stdout().write_all(&out.stdout).unwrap();
            std::io::stderr().write_all(&out.stderr).unwrap();
            let s = &out.system.0;
            let n = s["instructions"].as_u64().unwrap_or(0) as f64;
            eprintln!(
                "exit {} | {} instructions, {} cycles | {wall:.3} s wall, {:.1} M instructions/s",
                out.exit_code,
                s["instructions"],
                s["cycles"],
                n / wall / 1e6
            );
            if let Some(c) = s.get("caches") {
                eprintln!("{c}");
            }
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
}
