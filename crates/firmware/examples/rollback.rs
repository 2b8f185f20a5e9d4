//! What optimistic execution of the NIC's cores would risk, from a store
//! log (a measurement: docs/performance/nic-firmware.md, twenty-sixth
//! session). Build the machine's runner with irqsim-mips's `store-log`
//! feature, run a several-core scenario with `IRQSIM_STORE_LOG=FILE`, then
//! `cargo run --release -p irqsim-firmware --example rollback -- FILE`.
//!
//! The log has every access the cores made outside their stacks and the
//! read-only data, in turn order (see irqsim-mips's `ahead::store_log`).
//! The NIC's SRAM is taken as memory (its words versioned as plain
//! memory's would be), its other registers as accesses that must wait
//! for their turn. A core that runs past its turn while the others are at
//! cycle `c` loads a word at cycle `a > c` too early exactly if another
//! core stores it at a cycle in `[c, a)` (in (cycle, core) order): that
//! core has not run there yet, so the load would have to be rolled back
//! (the first core of a round of speculating cores; later ones see the
//! earlier ones' stores, so this is the worst case of a round). Printed:
//! - for each depth `D` (cycles a load issues before its turn), the share
//!   of shared loads (plain memory, then SRAM) another core's store at
//!   most `D` cycles earlier overtakes (the roll-back rate);
//! - from every shared access of a core (its turn's end today, the others
//!   at its cycle), how many of its own instructions it could run on before
//!   its first overtaken load, before that or its first register access,
//!   and before that or its first SRAM access: percentiles.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};

/// One logged access.
#[derive(Clone, Copy)]
struct Access {
    core: usize,
    at: u64,
    instret: u64,
    kind: u8,
    word: u32,
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: rollback STORE_LOG");
    let file = std::fs::File::open(&path).expect("the store log");
    let mut log: Vec<Access> = BufReader::new(file)
        .lines()
        .map(|l| {
            let l = l.expect("a line");
            let f: Vec<&str> = l.split(' ').collect();
            Access {
                core: f[0].parse().expect("core"),
                at: f[1].parse().expect("cycle"),
                instret: f[2].parse().expect("instructions"),
                kind: f[3].as_bytes()[0],
                word: u32::from_str_radix(f[4], 16).expect("word"),
            }
        })
        .collect();
    // The SRAM's words as memory, the other registers as `D`.
    const SRAM: u32 = irqsim_mips::device::DEVICE_BASE + 0x1_0000;
    for a in &mut log {
        a.kind = match a.kind {
            b'R' | b'W' if a.word < SRAM => b'D',
            b'R' => b'l',
            b'W' => b's',
            k => k,
        };
    }
    log.sort_by_key(|a| (a.at, a.core));
    let cores = log.iter().map(|a| a.core + 1).max().unwrap_or(0);

    // For each load, the cycle of the latest store to its word by another core before it (in order).
    let mut stores: HashMap<u32, Vec<(u64, usize)>> = HashMap::new();
    let mut last_other = vec![None; log.len()];
    for (n, a) in log.iter().enumerate() {
        match a.kind {
            b'L' | b'l' => {
                let s = stores.get(&a.word).map_or(&[][..], Vec::as_slice);
                last_other[n] = s.iter().rev().find(|&&(_, j)| j != a.core).map(|&(t, _)| t);
            }
            b'S' | b's' => stores.entry(a.word).or_default().push((a.at, a.core)),
            _ => {}
        }
    }
    let count = |k: &[u8]| log.iter().filter(|a| k.contains(&a.kind)).count();
    let instructions: u64 = (0..cores).map(|k| log.iter().filter(|a| a.core == k).map(|a| a.instret + 1).max().unwrap_or(0)).sum();
    println!(
        "{cores} cores, {instructions} instructions: {} shared accesses: plain memory {} loads, {} stores; SRAM {} loads, {} stores; registers {}",
        log.len(),
        count(b"L"),
        count(b"S"),
        count(b"l"),
        count(b"s"),
        count(b"D")
    );

    // The roll-back rate by depth.
    for (what, kind) in [("plain", b'L'), ("SRAM", b'l')] {
        let loads: Vec<usize> = (0..log.len()).filter(|&n| log[n].kind == kind).collect();
        print!("{what} loads overtaken by depth (cycles):");
        for d in [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096] {
            let hit = loads.iter().filter(|&&n| last_other[n].is_some_and(|t| log[n].at - t <= d)).count();
            print!(" {d}: {:.3}", hit as f64 / loads.len().max(1) as f64);
        }
        println!();
    }

    // Run lengths from each shared access, per core in its own order.
    let mut runs = [Vec::new(), Vec::new(), Vec::new()];
    for k in 0..cores {
        let mine: Vec<usize> = (0..log.len()).filter(|&n| log[n].core == k).collect();
        let total = log[*mine.last().expect("accesses")].instret;
        for (i, &n) in mine.iter().enumerate() {
            let (c, start) = (log[n].at, log[n].instret);
            let until = |stop: &dyn Fn(&Access, Option<u64>) -> bool| {
                mine[i + 1..].iter().find(|&&m| stop(&log[m], last_other[m])).map_or(total, |&m| log[m].instret) - start
            };
            let overtaken = until(&|a, last| matches!(a.kind, b'L' | b'l') && last.is_some_and(|t| t >= c));
            let register = until(&|a, _| a.kind == b'D');
            let sram = until(&|a, _| matches!(a.kind, b'l' | b's'));
            runs[0].push(overtaken);
            runs[1].push(overtaken.min(register));
            runs[2].push(overtaken.min(register).min(sram));
        }
    }
    let names = ["to the first overtaken load", "to that or the first register", "to those or the first SRAM access"];
    for (what, mut r) in names.into_iter().zip(runs) {
        r.sort_unstable();
        let at = |q: f64| r[((r.len() - 1) as f64 * q) as usize];
        let mean = r.iter().sum::<u64>() as f64 / r.len() as f64;
        println!(
            "instructions {what}: p10 {} p25 {} median {} p75 {} p90 {} mean {mean:.1} (of {} starts)",
            at(0.1),
            at(0.25),
            at(0.5),
            at(0.75),
            at(0.9),
            r.len()
        );
    }
}
