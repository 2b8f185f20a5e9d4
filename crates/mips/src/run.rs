//! Runs a freestanding static program to its end, as `irqsim exec` does:
//! every hardware thread (but one reserved for interrupts) starts at the
//! entry point with its own stack; `write` (o32 syscall 4004) to fd 1 or 2
//! goes to a [`Host`] as it happens, `exit` (4001) ends the thread that
//! calls it and `exit_group` (4246) ends them all. The exit code is thread
//! 0's, or the first thread's to exit.
//!
//! Memory stays bounded whatever the program does: output is streamed (the
//! [`Captured`] host keeps at most a cap and counts the rest), and each
//! hardware thread's stack is a bounded segment whose lowest page is a guard
//! (and a larger guard lies below the lowest stack): the first write there
//! is a fault, as a stack overflow is a SIGSEGV under qemu, so no thread's
//! stack grows into another's. The run goes in
//! slices of [`POLL_CYCLES`] so that the host can stop it (Ctrl-C) without
//! a check per instruction.

use crate::config::{ExecConfig, Pin, RangeStart};
use crate::context::{Context, reg};
use crate::device::NoDevices;
use crate::elf::Program;
use crate::error::Error;
use crate::hierarchy::Level;
use crate::mem::PAGE_BYTES;
use crate::system::{Stop, System};
use serde_json::{Value, json};

/// Top of hardware thread 0's stack; thread `g` gets the 1 MiB below thread `g - 1`'s.
pub const STACK_TOP: u32 = 0x7FFF_F000;
const STACK_BYTES: u32 = 0x10_0000;
/// The guard below the lowest stack: a write there is a stack overflow. Each
/// stack's own guard is the lowest whole page of its 1 MiB (a frame larger
/// than a page could step over that one, as over qemu's one-page guard).
const GUARD_BYTES: u32 = 16 << 20;

/// Simulated cycles between two polls of the host: a few milliseconds of
/// wall time, and no cost per instruction.
pub const POLL_CYCLES: u64 = 1 << 20;

/// Output bytes a [`Captured`] host keeps per stream by default.
pub const CAPTURE_BYTES: usize = 1 << 20;

const SYS_EXIT: u32 = 4001;
const SYS_WRITE: u32 = 4004;
const SYS_EXIT_GROUP: u32 = 4246;
const EFAULT: u32 = 14;
const EBADF: u32 = 9;

/// Where a running program's output goes, and who may stop it.
pub trait Host {
    /// How many of the next `len` bytes written to `fd` the host reads; the
    /// rest it only counts, so a host that keeps a cap does work bounded by
    /// it, not by what the program writes (16 MiB a call).
    fn wants(&self, _fd: u32, len: u32) -> u32 {
        len
    }
    /// The program wrote `len` bytes to `fd` (1 or 2), of which `bytes` are
    /// the first [`Host::wants`]; an errno fails the write.
    fn write(&mut self, fd: u32, bytes: &[u8], len: u32) -> Result<(), u32>;
    /// Asked every [`POLL_CYCLES`]; `false` stops the run with [`Error::Cancelled`].
    fn poll(&mut self) -> bool {
        true
    }
}

/// A host that keeps the first `cap` bytes of each stream and counts the rest.
#[derive(Clone, Debug, Default)]
pub struct Captured {
    pub cap: usize,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Bytes written past the cap, per stream (stdout, stderr).
    pub dropped: (u64, u64),
}

impl Captured {
    pub fn new(cap: usize) -> Self {
        Captured { cap, ..Captured::default() }
    }
}

impl Host for Captured {
    fn wants(&self, fd: u32, len: u32) -> u32 {
        let kept = if fd == 1 { self.stdout.len() } else { self.stderr.len() };
        len.min(self.cap.saturating_sub(kept).try_into().unwrap_or(u32::MAX))
    }

    fn write(&mut self, fd: u32, bytes: &[u8], len: u32) -> Result<(), u32> {
        let (buf, dropped) = if fd == 1 { (&mut self.stdout, &mut self.dropped.0) } else { (&mut self.stderr, &mut self.dropped.1) };
        let keep = bytes.len().min(self.cap.saturating_sub(buf.len()));
        buf.extend_from_slice(&bytes[..keep]);
        *dropped += u64::from(len) - keep as u64;
        Ok(())
    }
}

/// The result of a run.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub exit_code: i32,
    /// What a [`Captured`] host kept ([`run_program`]); empty from [`run_with`].
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub system: Summary,
}

/// Counters of a finished system, for reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary(pub Value);

/// Loads `program` into a system shaped by `config` and runs it to the end,
/// keeping the first [`CAPTURE_BYTES`] of each output stream.
pub fn run_program(program: Program, config: &ExecConfig) -> Result<Outcome, Error> {
    let mut host = Captured::new(CAPTURE_BYTES);
    let out = run_with(program, config, &mut host)?;
    Ok(Outcome { stdout: host.stdout, stderr: host.stderr, ..out })
}

/// Loads `program` into a system shaped by `config` and runs it to the end,
/// its output going to `host`.
pub fn run_with(program: Program, config: &ExecConfig, host: &mut dyn Host) -> Result<Outcome, Error> {
    let mut sys = System::new(program, &config.system, NoDevices);
    apply_pins(&mut sys, &config.pins)?;
    let entry = sys.program.entry;
    let (cores, threads) = (config.system.cores, config.system.threads);
    let stacks = (cores * threads) as u32 * STACK_BYTES;
    let bottom = STACK_TOP - stacks;
    sys.mem.guard(bottom.saturating_sub(GUARD_BYTES), bottom);
    for lo in (bottom..STACK_TOP).step_by(STACK_BYTES as usize) {
        sys.mem.guard(lo, lo.next_multiple_of(PAGE_BYTES) + PAGE_BYTES);
    }
    for k in 0..cores {
        for t in (0..threads).filter(|&t| Some(t) != config.system.interrupt_thread) {
            let sp = STACK_TOP - (k * threads + t) as u32 * STACK_BYTES;
            sys.start(k, t, Context::at(entry, sp), 0);
        }
    }
    let mut exit_code = None::<(usize, i32)>;
    let mut until = 0u64;
    loop {
        until = until.saturating_add(POLL_CYCLES).min(config.max_cycles);
        match sys.run(until) {
            Stop::Idle => break,
            Stop::Limit if until < config.max_cycles => {
                if !host.poll() {
                    return Err(Error::Cancelled { program: sys.program.name.clone() });
                }
            }
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
                        // As Linux does, at most 16 MiB a call (the rest is a short write).
                        let len = a[2].min(1 << 24);
                        if !readable(&sys, a[1], len) {
                            Err(EFAULT)
                        } else {
                            host.write(a[0], &sys.mem.read_bytes(a[1], host.wants(a[0], len)), len).map(|()| len)
                        }
                    }
                    SYS_WRITE => Err(EBADF),
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
    Ok(Outcome { exit_code, stdout: Vec::new(), stderr: Vec::new(), system: summarize(&sys) })
}

/// Whether `len` bytes from `addr` are the program's to read, as the kernel
/// checks a `write` buffer: inside a loaded segment, the stacks, or memory
/// the program has written; not wrapping the address space. Otherwise the
/// call fails with EFAULT, as under qemu.
fn readable<D: crate::device::Devices>(sys: &System<D>, addr: u32, len: u32) -> bool {
    let Some(end) = addr.checked_add(len) else { return false };
    if len == 0 {
        return true;
    }
    let stacks = sys.cores.len() as u32 * sys.cores.first().map_or(1, |c| c.threads.len()) as u32 * STACK_BYTES;
    let in_segment = |a: u32| sys.program.segments.iter().any(|s| a >= s.vaddr && a - s.vaddr < s.memsz);
    let in_stacks = |a: u32| a < STACK_TOP && a >= STACK_TOP - stacks;
    // Page by page: a buffer may span a segment and pages the program wrote.
    let mut a = addr;
    loop {
        if !(in_segment(a) || (in_stacks(a) && !sys.mem.guarded(a)) || sys.mem.allocated(a)) {
            return false;
        }
        let next = (a | (PAGE_BYTES - 1)).saturating_add(1);
        if next >= end {
            return true;
        }
        a = next;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A capped host reads no more of a write than it keeps: past the cap a
    /// 16 MiB write costs it a count, not a copy (fuzz finding F8).
    #[test]
    fn a_capped_host_reads_only_what_it_keeps() {
        let mut host = Captured::new(4);
        assert_eq!(host.wants(1, 10), 4);
        host.write(1, b"abcd", 10).unwrap();
        assert_eq!((host.wants(1, 1 << 24), host.wants(2, 3)), (0, 3));
        host.write(1, b"", 1 << 24).unwrap();
        assert_eq!((host.stdout.as_slice(), host.dropped), (&b"abcd"[..], ((1 << 24) + 6, 0)));
    }
}
