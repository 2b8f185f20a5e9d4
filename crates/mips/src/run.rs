//! Runs a freestanding static program to its end, as `irqsim exec` does:
//! every hardware thread (but one reserved for interrupts) starts at the
//! entry point with its own stack; `write` (o32 syscall 4004) to fd 1 or 2
//! is collected, `exit` (4001) ends the thread that calls it and
//! `exit_group` (4246) ends them all. The exit code is thread 0's, or the
//! first thread's to exit.

use crate::config::{ExecConfig, Pin, RangeStart};
use crate::context::{Context, reg};
use crate::device::NoDevices;
use crate::elf::Program;
use crate::error::Error;
use crate::hierarchy::Level;
use crate::system::{Stop, System};
use serde_json::{Value, json};

/// Top of hardware thread 0's stack; thread `g` gets the 1 MiB below thread `g - 1`'s.
pub const STACK_TOP: u32 = 0x7FFF_F000;
const STACK_BYTES: u32 = 0x10_0000;

const SYS_EXIT: u32 = 4001;
const SYS_WRITE: u32 = 4004;
const SYS_EXIT_GROUP: u32 = 4246;

/// The result of a run.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub exit_code: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub system: Summary,
}

/// Counters of a finished system, for reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary(pub Value);

/// Loads `program` into a system shaped by `config` and runs it to the end.
pub fn run_program(program: Program, config: &ExecConfig) -> Result<Outcome, Error> {
    let mut sys = System::new(program, &config.system, NoDevices);
    apply_pins(&mut sys, &config.pins)?;
    let entry = sys.program.entry;
    let (cores, threads) = (config.system.cores, config.system.threads);
    for k in 0..cores {
        for t in (0..threads).filter(|&t| Some(t) != config.system.interrupt_thread) {
            let sp = STACK_TOP - (k * threads + t) as u32 * STACK_BYTES;
            sys.start(k, t, Context::at(entry, sp), 0);
        }
    }
    let (mut stdout, mut stderr, mut exit_code) = (Vec::new(), Vec::new(), None::<(usize, i32)>);
    loop {
        match sys.run(config.max_cycles) {
            Stop::Idle => break,
            Stop::Limit => {
                return Err(Error::config("run.max_cycles", format!("{}: still running after {} cycles", sys.program.name, config.max_cycles)));
            }
            Stop::Fault { error, .. } => return Err(error),
            // No devices of the machine here: nothing asks to stop.
            Stop::Device { .. } => {}
            Stop::Returned { core, thread } => {
                let name = sys.program.name.clone();
                return Err(Error::Fault {
                    program: name,
                    pc: 0,
                    word: 0,
                    what: format!("thread {core}.{thread} returned from its entry point instead of calling exit"),
                });
            }
            Stop::Syscall { core, thread } => {
                let id = sys.thread_id(core, thread);
                let ctx = &sys.cores[core].threads[thread].ctx;
                let (n, a) = (ctx.r[reg::V0], [ctx.r[reg::A0], ctx.r[reg::A0 + 1], ctx.r[reg::A0 + 2]]);
                let result = match n {
                    SYS_WRITE if a[0] == 1 || a[0] == 2 => {
                        let bytes = sys.mem.read_bytes(a[1], a[2].min(1 << 24));
                        if a[0] == 1 { &mut stdout } else { &mut stderr }.extend_from_slice(&bytes);
                        Ok(bytes.len() as u32)
                    }
                    SYS_WRITE => Err(9), // EBADF
                    SYS_EXIT | SYS_EXIT_GROUP => {
                        if exit_code.is_none_or(|(who, _)| who != 0 && id == 0) {
                            exit_code = Some((id, a[0] as i32));
                        }
                        if n == SYS_EXIT_GROUP {
                            for k in 0..cores {
                                for t in 0..threads {
                                    sys.stop(k, t);
                                }
                            }
                        } else {
                            sys.stop(core, thread);
                        }
                        continue;
                    }
                    _ => {
                        let pc = ctx.pc.wrapping_sub(4);
                        let word = sys.mem.read_u32(pc);
                        return Err(Error::Fault { program: sys.program.name.clone(), pc, word, what: format!("unsupported system call {n}") });
                    }
                };
                let ctx = &mut sys.cores[core].threads[thread].ctx;
                match result {
                    Ok(v) => (ctx.r[reg::V0], ctx.r[reg::A3]) = (v, 0),
                    Err(errno) => (ctx.r[reg::V0], ctx.r[reg::A3]) = (errno, 1),
                }
            }
        }
    }
    let exit_code = exit_code.map_or(0, |(_, c)| c);
    Ok(Outcome { exit_code, stdout, stderr, system: summarize(&sys) })
}

/// Applies the pinning settings of an [`ExecConfig`] to a fresh system.
pub fn apply_pins<D: crate::device::Devices>(sys: &mut System<D>, pins: &[Pin]) -> Result<(), Error> {
    if pins.is_empty() {
        return Ok(());
    }
    let Some(h) = sys.caches.as_mut() else {
        return Ok(());
    };
    for p in pins {
        match p {
            Pin::WayMask { level, thread, mask } => {
                for c in h.all(*level) {
                    c.pin.set_way_mask(*thread, *mask).map_err(|m| Error::config(&format!("{}.way_masks", level.name()), m))?;
                }
            }
            Pin::Sets { level, thread, first, count } => {
                for c in h.all(*level) {
                    let sets = c.geometry.sets();
                    c.pin.reserve_sets(*thread, *first, *count, sets).map_err(|m| Error::config(&format!("{}.reserve_sets", level.name()), m))?;
                }
            }
            Pin::Trace { level, thread } => h.all(*level).iter_mut().for_each(|c| c.pin.set_trace(*thread, true)),
            Pin::Range { level, key, what, len } => {
                let (addr, size) = match what {
                    RangeStart::Addr(a) => (*a, 0),
                    RangeStart::Symbol(s) => {
                        let sym = sys.program.symbols.iter().find(|x| &x.name == s);
                        let sym = sym.ok_or_else(|| Error::config(key, format!("no symbol {s:?} in {}", sys.program.name)))?;
                        (sym.addr, sym.size)
                    }
                };
                for c in h.all(*level) {
                    c.lock_range(addr, len.unwrap_or(size), 0).map_err(|m| Error::config(key, m))?;
                }
            }
        }
    }
    Ok(())
}

fn summarize<D: crate::device::Devices>(sys: &System<D>) -> Summary {
    let cycles = sys.cores.iter().map(|c| c.now).max().unwrap_or(0);
    let threads: Vec<Value> = sys
        .cores
        .iter()
        .flat_map(|c| c.threads.iter().enumerate().map(move |(t, th)| json!({"core": c.id, "thread": t, "instructions": th.instructions})))
        .collect();
    let instructions: u64 = sys.cores.iter().flat_map(|c| &c.threads).map(|t| t.instructions).sum();
    let mut v = json!({
        "instructions": instructions,
        "cycles": cycles,
        "threads": threads,
        "cores": sys.cores.iter().map(|c| json!({"core": c.id, "cycles": c.now, "busy_cycles": c.busy_cycles})).collect::<Vec<_>>(),
    });
    if let Some(h) = &sys.caches {
        let mut caches = serde_json::Map::new();
        for level in Level::ALL {
            let list = h.level(level);
            let per_thread = |t: usize| list.iter().fold((0, 0), |(a, m), c| (a + c.counts[t].accesses, m + c.counts[t].misses));
            let n = list[0].counts.len();
            let (acc, miss) = (0..n).map(per_thread).fold((0, 0), |(a, m), (x, y)| (a + x, m + y));
            caches.insert(
                level.name().into(),
                json!({
                    "accesses": acc,
                    "misses": miss,
                    "locked_lines": list.iter().map(|c| c.locked_lines()).sum::<usize>(),
                    "per_thread": (0..n).map(|t| { let (a, m) = per_thread(t); json!({"accesses": a, "misses": m}) }).collect::<Vec<_>>(),
                }),
            );
        }
        v["caches"] = Value::Object(caches);
    }
    Summary(v)
}
