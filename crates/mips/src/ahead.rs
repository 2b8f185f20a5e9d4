//! Cores that run ahead of one another through work no other core sees.
//!
//! [`System::run`] interleaves cores in (cycle, index) order, the laggard
//! first until the next core's turn: cores that share memory and run
//! together get slices of one cycle each. [`System::run_ahead`] keeps that
//! order for everything another core could observe and lets a core whose
//! turn has ended go on through what none can:
//! instructions that access no memory outside the core's private range
//! (its stack) but loads of memory no core writes (read-only data the
//! caller names: a store there faults), no device register, and cannot
//! trap or stop. It stops
//! before the first other instruction (which then waits for its turn), or
//! `ahead` cycles past the next core or the limit, whichever is first: what
//! the caller does at the limit (a device's event) reaches the cores
//! through shared memory and device registers only, never a private word,
//! so private work goes on past it (a limit is often a few cycles on, and
//! each core cut there took a turn more). So every memory and
//! device access, and every fault or stop, happens in the order
//! [`System::run`] gives; only instructions invisible to the other cores
//! issue earlier in host time, at their own cycles. A turn and the private
//! stretch after it are one loop on one bus ([`System::run_turn`]), by blocks
//! where they can (`crate::turn`): turns
//! are mostly a cycle or two long, and a slice's set-up per turn cost more
//! than its instructions. A caller that counts instructions by cycle must
//! allow for cores being past its horizon (at most `ahead` cycles' worth),
//! and must not write a core's private range between calls.

use crate::bus::{DataBus, Perfect, Who};
use crate::device::Devices;
use crate::error::Fault;
use crate::exec::Flow;
use crate::system::{Stop, System, step};
use crate::turn::{self, Bounds};
use std::ops::Range;

impl<D: Devices> System<D> {
    /// Runs until every core with work reaches cycle `until`, or a thread
    /// stops, as [`System::run`] does; a core past its turn goes on through
    /// private work (accesses within `private[core]`, and loads within
    /// `read_only`) up to `ahead` cycles past the next core or `until`,
    /// whichever is earlier (see the module's note). A store within
    /// `read_only` stops the run with a fault ([`Fault::ReadOnly`]), as it
    /// issues. With `stop_by`, a device register access that asks to stop
    /// ([`Stop::Device`]) does not end the run: it goes on to
    /// `stop_by(devices)` if that is earlier than `until`, exactly as a
    /// caller that lowered `until` so and ran again (without the new call's
    /// set-up). Only for cores of one thread on perfect memory; anything
    /// else runs as [`System::run`] (and `read_only` is not checked).
    pub fn run_ahead(&mut self, until: u64, private: &[Range<u32>], read_only: &[Range<u32>], ahead: u64, stop_by: Option<fn(&D) -> u64>) -> Stop {
        if self.threads != 1 || self.caches.is_some() || private.len() != self.cores.len() {
            return self.run(until);
        }
        let read_only_end = read_only.iter().map(|r| r.end).max().unwrap_or(0);
        let mut end = until;
        self.interleave(until, |sys, k, turns| {
            if turns.laggard().is_some_and(|(now, _)| now >= end) {
                return Some(Stop::Limit);
            }
            let (turn, limit) = (end.min(turns.next()), end.min(turns.others()).saturating_add(ahead));
            match (sys.run_turn(k, Bounds { turn, limit, range: &private[k], read_only, read_only_end }), stop_by) {
                (Some(Stop::Device { .. }), Some(by)) => {
                    end = end.min(by(&sys.devices));
                    None
                }
                (stop, _) => stop,
            }
        })
    }

    /// Core `k`'s turn and what follows it, on one bus: every instruction
    /// that issues before `bounds.turn` (as [`System::run`]'s turn would
    /// issue it), then those private to it (see [`Bounds`]) that issue
    /// before `bounds.limit`. Fetches are free; a failed fetch is reported in turn.
    fn run_turn(&mut self, k: usize, bounds: Bounds) -> Option<Stop> {
        let turn = bounds.turn;
        let topology = ((self.cores.len() as u32) << 8) | 1;
        let pipeline = self.pipeline;
        let core = &mut self.cores[k];
        let th = &mut core.threads[0];
        if !th.active {
            return None;
        }
        let who = Who { core: k, thread: 0, id: k, now: core.now, instret: 0, topology };
        let mut perfect = Perfect;
        let mut bus = DataBus::new(&mut self.mem, &mut self.code, &mut self.links, &mut perfect, &mut self.devices, who);
        let blocks = &mut self.blocks;
        let (mut now, first) = (core.now, th.instructions);
        // The fetched instruction is kept in a local (an `Inst` stored per instruction cost more than the test).
        let mut next = th.next.take();
        let end = loop {
            // Blocks while they may run (no delay slot pending), up to an instruction they leave to the general step.
            if next.is_none() && th.ctx.npc == th.ctx.pc.wrapping_add(4) {
                (now, next) = turn::run(th, blocks, &mut bus, &pipeline, k, now, &bounds);
            }
            let inst = match next {
                Some(i) => i,
                None => {
                    let Some(i) = bus.code.get(th.ctx.pc) else { break Turn::Unfetched };
                    th.ready = th.ready.max(now).max(th.board.ready(i));
                    i
                }
            };
            let at = th.ready.max(now);
            let mine = at < turn;
            if bounds.past(at, inst, &th.ctx) {
                // It cannot issue before `at`: its next turn starts there.
                (now, th.next) = (at, Some(inst));
                break Turn::Over;
            }
            let pc = th.ctx.pc;
            if let Some(addr) = bounds.store_into_read_only(inst, &th.ctx) {
                break Turn::Fault(pc, Fault::ReadOnly { addr }, String::new());
            }
            (bus.who.now, bus.who.instret, bus.stall, bus.mmio) = (at, th.instructions, 0, false);
            next = None;
            #[cfg(feature = "store-log")]
            let probe = store_log::probe(&inst, &th.ctx, &bounds);
            let flow = match step(th, inst, &mut bus, &pipeline) {
                Ok((flow, ready)) => {
                    th.ready = ready;
                    flow
                }
                Err(f) => break Turn::Fault(pc, f, std::mem::take(&mut bus.device_error)),
            };
            #[cfg(feature = "store-log")]
            store_log::log(probe, k, at, th.instructions, &th.ctx, inst.rt, bus.mem);
            th.instructions += 1;
            now = at + 1;
            if flow == Flow::Syscall {
                break Turn::Stop(Stop::Syscall { core: k, thread: 0 });
            }
            if mine && bus.mmio && bus.devices.take_stop() {
                break Turn::Stop(Stop::Device { core: k, thread: 0 });
            }
        };
        let issued = th.instructions - first;
        core.issued_alone(0, issued);
        core.now = now;
        match end {
            Turn::Over => None,
            Turn::Stop(s) => Some(s),
            Turn::Fault(pc, f, msg) => Some(self.fault(k, 0, pc, f, &msg)),
            // The fetch of a return or a bad PC is reported in turn, as `System::run` reports it.
            Turn::Unfetched if now < turn => self.prepare(k, 0, &mut Perfect),
            Turn::Unfetched => None,
        }
    }
}

/// Why [`System::run_turn`] ended.
enum Turn {
    /// The turn is over and the next instruction is not private (or not before the limit).
    Over,
    Stop(Stop),
    Fault(u32, Fault, String),
    /// The next instruction could not be fetched (a return, or a bad PC).
    Unfetched,
}

/// The store log (feature `store-log`, a measurement, never in a default
/// build): every access a core in [`System::run_ahead`] makes outside its
/// private range and the read-only ranges, in the order it makes them, one
/// line each to the file named by `IRQSIM_STORE_LOG`: `core cycle
/// instructions kind word value`, the kind `L` a load (an `ll`, a failed
/// `sc`), `S` a store (a successful `sc`), `R` and `W` a device's read and
/// write (value 0), the value the word's after the access. What optimistic
/// execution would risk is counted from it offline (irqsim-firmware's
/// `rollback` example).
#[cfg(feature = "store-log")]
pub(crate) mod store_log {
    use crate::bus::is_mmio;
    use crate::context::Context;
    use crate::decode::{Inst, Op};
    use crate::mem::Memory;
    use crate::turn::Bounds;
    use std::cell::RefCell;
    use std::fs::File;
    use std::io::{LineWriter, Write};

    thread_local! {
        static LOG: RefCell<Option<LineWriter<File>>> =
            RefCell::new(std::env::var_os("IRQSIM_STORE_LOG").map(|p| LineWriter::new(File::create(p).expect("IRQSIM_STORE_LOG: a file to write"))));
    }

    /// A shared access about to be made: its kind and word.
    pub(crate) struct Probe(u8, u32);

    /// The access `i` makes in context `ctx` (before it runs), if shared.
    pub(crate) fn probe(i: &Inst, ctx: &Context, b: &Bounds) -> Option<Probe> {
        if i.class & Inst::MEMORY == 0 {
            return None;
        }
        let ea = ctx.r[i.rs as usize & 31].wrapping_add(i.imm);
        if b.range.contains(&(ea & !3)) || b.read_only(ea) {
            return None;
        }
        let kind = match i.op {
            _ if is_mmio(ea) && i.class & Inst::STORE != 0 => b'W',
            _ if is_mmio(ea) => b'R',
            Op::Sc => b'C',
            _ if i.class & Inst::STORE != 0 => b'S',
            _ => b'L',
        };
        Some(Probe(kind, ea & !3))
    }

    /// Logs the access `p` once made by core `k` at cycle `at`, its
    /// `instret`-th instruction, its target register `rt` now in `ctx`.
    pub(crate) fn log(p: Option<Probe>, k: usize, at: u64, instret: u64, ctx: &Context, rt: u8, mem: &Memory) {
        let Some(Probe(kind, word)) = p else { return };
        let kind = match kind {
            b'C' if ctx.r[rt as usize & 31] == 0 => 'L',
            b'C' => 'S',
            k => k as char,
        };
        let value = if is_mmio(word) { 0 } else { mem.read_u32(word) };
        LOG.with(|l| {
            if let Some(w) = l.borrow_mut().as_mut() {
                writeln!(w, "{k} {at} {instret} {kind} {word:08x} {value:08x}").expect("IRQSIM_STORE_LOG: written");
            }
        });
    }
}
