//! Two busy threads of a round-robin pair scheduled together. Under
//! round-robin two threads take the issue slot in turns of about one
//! instruction, so the cycle loop ([`crate::interleave`]) picks, fetches and
//! tests the scoreboard for every instruction. Where both threads go on in
//! order through the text, with perfect memory (no fetch or access stalls),
//! the order in which their instructions issue, and every cycle, follows
//! from where the two threads are, when each is ready and which issued
//! last: a [`Schedule`], computed once by the cycle loop's own rules and
//! kept by that [`Key`]. Running it executes the same instructions in the
//! same order at the same cycles, with no pick, fetch or timing per
//! instruction.
//!
//! A schedule runs each thread's instructions from its PC until the first
//! control transfer of either thread (included) or the end of a thread's
//! run, and the other thread's branch or jump too where it issues right
//! after a branch or jump (a pair: half the schedules of two threads in
//! lockstep would otherwise be that branch alone); it is computed as if
//! nothing were in flight when it starts, so it is taken only where what
//! is in flight changes no instruction's ready cycle ([`Schedule::fits`]). Everything a run can meet that a schedule
//! does not foresee (a device's stall or stop, a store into the text, a
//! fault) ends it where the cycle loop would be, which goes on from there.
//! Schedules end at a branch so often (every four or five instructions of
//! the two threads) that the next one is not looked up by its key when it
//! can be known otherwise: after a branch or jump, decided in place, the
//! schedule that followed the last time it went the same way to the same
//! PC follows again ([`Duets::link`], [`Duets::link_pair`]), its thread's
//! ready cycle being then fixed by the branch.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::code::Code;
use crate::core::HwThread;
use crate::decode::Inst;
use crate::exec::{Cond, Simple};
use crate::plain::Plain;
use crate::timing::Pipeline;

/// Most instructions of one thread in a schedule (a thread's run through the text).
const MAX_RUN: usize = 32;
/// Most schedules kept: past it all are dropped (bounds the memory on code that never repeats).
const MAX_KEPT: usize = 1 << 15;
/// Farthest ahead of the core's cycle a thread may be ready for a schedule to start.
pub(crate) const MAX_AHEAD: u64 = 8;

/// Where two threads are: PC and next PC of each (a pending delay slot
/// when the next PC is not the PC's successor), how far ahead of the
/// core's cycle each is ready, and which issued last.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key([u32; 5]);

impl std::hash::Hash for Key {
    #[inline(always)]
    fn hash<H: Hasher>(&self, h: &mut H) {
        let [pa, na, pb, nb, small] = self.0;
        h.write_u64(u64::from(pa) << 32 | u64::from(pb));
        h.write_u64(u64::from(na ^ pa) << 32 | u64::from(nb ^ pb) ^ u64::from(small) << 8);
    }
}

impl Key {
    pub(crate) fn new(a: &HwThread, b: &HwThread, ahead: [u64; 2], last: usize) -> Key {
        let small = (ahead[0] as u32) | (ahead[1] as u32) << 8 | (last as u32) << 16;
        Key([a.ctx.pc, a.ctx.npc, b.ctx.pc, b.ctx.npc, small])
    }

    fn ahead(self, t: usize) -> u32 {
        (self.0[4] >> (8 * t)) & 0xff
    }

    fn last(self) -> usize {
        (self.0[4] >> 16) as usize
    }
}

/// One instruction of a schedule.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    pub inst: Inst,
    pub simple: Simple,
    /// What [`crate::plain`] makes of it (a load or store), kept so that the body need not match on the operation.
    pub plain: Plain,
    /// A transfer as [`crate::exec::cond`] decides it, if it can.
    pub cond: Cond,
    pub pc: u32,
    /// The next PC while it runs (its successor, or a branch's target in a delay slot).
    pub npc: u32,
    /// Its issue cycle after the schedule's start.
    pub off: u32,
    /// The cycle after the start from which it could issue (fetched, its
    /// operands arrived), as the cycle loop keeps it in [`HwThread`]'s `ready`.
    pub ready: u32,
    /// Its thread (0 or 1).
    pub t: u8,
    /// How many of its thread's instructions issue before it in the schedule.
    pub k: u8,
}

/// The two threads' instructions in issue order, with their cycles.
pub(crate) struct Schedule {
    /// Per thread, how many of its instructions it issues.
    pub count: [u64; 2],
    /// Every instruction that issues; the last goes through the cycle loop's
    /// own turn (a transfer, or a run's end: what comes next is fetched).
    pub entries: Box<[Entry]>,
    /// The last of them (kept apart: read at each schedule's end).
    pub last: Entry,
    /// Those that run in the body ([`Schedule::body`]): a copy of the first
    /// of them, so that the chain reaches the body with no bounds check.
    body: Box<[Entry]>,
    /// Per thread, its first instruction (issued or not).
    pub first: [Entry; 2],
    /// The instruction the thread that did not issue the last entry has
    /// fetched after the schedule ([`Schedule::after`]); in a pair, that
    /// thread's transfer, the entry before the last (kept apart as `last`).
    pub other: Entry,
    /// Whether the last entry is a branch or jump (a delay slot follows), decided in place.
    pub branches: bool,
    /// Whether the entry before the last is the other thread's branch or
    /// jump, decided in place too ([`Schedule::build`]); no instruction is
    /// fetched after the schedule then ([`Schedule::after`]), and `branches` holds.
    pub pair: bool,
    /// After its transfer was taken, not taken or annulled: the next PC it
    /// went to and the schedule that followed, if the thread's next
    /// instruction was ready as the transfer left it (so that the next PC
    /// decides where the next schedule starts). In the schedule, not beside
    /// it, so that the chain reads it without a second lookup.
    links: [(u32, u32); 3],
    /// Per thread, the instruction it has fetched before the last entry
    /// issues, if it issued one before ([`Schedule::next_of`] the one before the last).
    pub before_last: [Option<Entry>; 2],
    /// With [`Schedule::pair`], as `links` by how both transfers went
    /// (`3 * first + last`): the next PCs they went to and the schedule.
    pair_links: [(u32, u32, u32); 9],
}

impl Schedule {
    /// Whether it runs as computed for threads `a` and `b` at cycle `now`:
    /// each has fetched the instruction the schedule starts with, and no
    /// result in flight delays an instruction past its computed ready cycle.
    #[inline(always)]
    pub(crate) fn fits(&self, a: &HwThread, b: &HwThread, now: u64) -> bool {
        a.next == Some(self.first[0].inst) && b.next == Some(self.first[1].inst) && self.arrive(a, 0, now) && self.arrive(b, 1, now)
    }

    /// Whether no result in flight for `th`, thread `t`, delays one of its
    /// instructions past its computed ready cycle (from `now`).
    #[inline(always)]
    pub(crate) fn arrive(&self, th: &HwThread, t: usize, now: u64) -> bool {
        let drained = th.board.drained();
        drained <= th.ready || self.arrive_late(th, t, now, drained)
    }

    /// [`Schedule::arrive`] where some result arrives after the thread may
    /// next issue: each instruction that may issue before it is checked.
    fn arrive_late(&self, th: &HwThread, t: usize, now: u64, drained: u64) -> bool {
        let mine = self.entries.iter().filter(|e| usize::from(e.t) == t).chain(self.after(t));
        mine.map(|e| (e, now + u64::from(e.ready))).take_while(|&(_, at)| at < drained).all(|(e, at)| th.board.ready(e.inst) <= at)
    }

    /// Thread `t`'s instruction fetched after entry `i` has issued (the
    /// first of its entries after `i`, or the one after the schedule), if
    /// it issued an entry before; None if it has not issued.
    pub(crate) fn next_of(&self, t: usize, i: usize) -> Option<&Entry> {
        let issued = self.entries[..=i].iter().any(|e| usize::from(e.t) == t);
        if !issued {
            return None;
        }
        self.entries[i + 1..].iter().find(|e| usize::from(e.t) == t).or(self.after(t))
    }

    /// The index of `e`, one of its body's entries ([`Schedule::body`], the
    /// same in `entries`; the body's loop counts none: only its cold paths need it).
    #[cold]
    pub(crate) fn position(&self, e: &Entry) -> usize {
        self.body.iter().position(|x| std::ptr::eq(x, e)).expect("an entry of the schedule's body")
    }

    /// Thread `t`'s instruction fetched after the schedule, if it did not
    /// issue the last entry (nor, in a pair, the one before).
    pub(crate) fn after(&self, t: usize) -> Option<&Entry> {
        (!self.pair && t != usize::from(self.last.t)).then_some(&self.other)
    }

    /// The entries that run in the body (all but the transfers decided in place or by the cycle loop's turn).
    #[inline(always)]
    pub(crate) fn body(&self) -> &[Entry] {
        &self.body
    }

    /// The schedule of two threads at `key`, each running the text of
    /// `code` from its PC; None if either thread's PC is outside the text.
    /// `entries` is scratch space.
    fn build(key: Key, code: &Code, p: &Pipeline, entries: &mut Vec<Entry>) -> Option<Schedule> {
        let mut th = [0, 1].map(|t| Thread::new(key.0[2 * t], key.0[2 * t + 1], key.ahead(t), code));
        if th.iter().any(|x| x.next.is_none()) {
            return None;
        }
        let first = [0, 1].map(|t| th[t].entry(t));
        entries.clear();
        let (mut c, mut last, mut pair) = (0u32, key.last(), false);
        loop {
            // The pick of `crate::interleave::Pair`: the thread that did not issue last, if ready.
            let f = last ^ 1;
            let t = if th[f].ready <= c {
                f
            } else if th[last].ready <= c {
                last
            } else {
                c = th[0].ready.min(th[1].ready);
                continue;
            };
            let x = &mut th[t];
            let e = Entry { off: c, ..x.entry(t) };
            entries.push(e);
            last = t;
            // A thread's run ends at its first control transfer, MAX_RUN or the text's end.
            if e.inst.op.transfers() {
                x.i += 1;
                // The other thread's branch or jump issuing next, whichever way this one goes
                // (it is asked first and ready), ends the schedule with it: a pair. Only where
                // this thread's next instruction is in the text either way, so that its fetch,
                // which comes first in the cycle loop, cannot end the run there.
                let u = t ^ 1;
                let fetched = code.get(e.npc).is_some() && code.get(e.npc.wrapping_add(4)).is_some();
                if let Some((_, _, next)) = th[u].next
                    && e.inst.op.has_delay_slot()
                    && next.op.has_delay_slot()
                    && th[u].ready <= c + 1
                    && fetched
                {
                    entries.push(Entry { off: c + 1, ..th[u].entry(u) });
                    th[u].i += 1;
                    (last, pair) = (u, true);
                }
                break;
            }
            if !x.advance(code) {
                break;
            }
            x.issued(e.inst, c, p);
            c += 1;
        }
        let other = if pair { entries[entries.len() - 2] } else { th[last ^ 1].entry(last ^ 1) };
        let count = [0, 1].map(|t| th[t].i as u64);
        let last = *entries.last().expect("a schedule issues");
        let branches = last.inst.op.has_delay_slot();
        let (entries, links): (Box<[Entry]>, _) = (entries[..].into(), [(0, NONE); 3]);
        let pair_links = [(0, 0, NONE); 9];
        let n = entries.len();
        let body = entries[..n - 1 - usize::from(pair)].into();
        let mut s = Schedule { count, last, entries, body, first, other, branches, pair, links, before_last: [None; 2], pair_links };
        if n > 1 {
            s.before_last = [0, 1].map(|t| s.next_of(t, n - 2).copied());
        }
        Some(s)
    }
}

/// One thread's run through the text while a schedule is computed: a
/// relative scoreboard as [`crate::timing::Scoreboard`] keeps it, with
/// nothing in flight at the start and no memory stall.
struct Thread {
    /// The next to issue (PC, next PC, instruction), from the thread's PC
    /// in order through the text; None past its end.
    next: Option<(u32, u32, Inst)>,
    /// How many issued before it.
    i: usize,
    /// When it may issue.
    ready: u32,
    reg: [u32; 32],
    hilo: u32,
}

impl Thread {
    fn new(pc: u32, npc: u32, ahead: u32, code: &Code) -> Thread {
        Thread { next: code.get(pc).map(|inst| (pc, npc, inst)), i: 0, ready: ahead, reg: [0; 32], hilo: 0 }
    }

    /// The next to issue, as thread `t`'s entry.
    fn entry(&self, t: usize) -> Entry {
        let (pc, npc, inst) = self.next.expect("a thread's run goes on");
        Entry { inst, simple: Simple::of(inst), plain: Plain::of(inst), cond: Cond::of(inst), pc, npc, off: 0, ready: self.ready, t: t as u8, k: self.i as u8 }
    }

    /// The next issued (not a transfer): on to the one after it, if the run goes on.
    fn advance(&mut self, code: &Code) -> bool {
        let (_, npc, _) = self.next.expect("a thread's run goes on");
        self.i += 1;
        self.next = code.get(npc).map(|inst| (npc, npc.wrapping_add(4), inst));
        self.i < MAX_RUN && self.next.is_some()
    }

    /// `inst` issued at `c`: what it leaves in flight, and when the next
    /// (fetched as the next cycle begins) may issue.
    fn issued(&mut self, inst: Inst, c: u32, p: &Pipeline) {
        if inst.class & Inst::MULT != 0 {
            self.hilo = c + p.mult_cycles;
        } else if inst.class & Inst::DIV != 0 {
            self.hilo = c + p.div_cycles;
        } else if inst.class & Inst::LOAD != 0 && inst.rt != 0 {
            self.reg[inst.rt as usize & 31] = c + 1 + p.load_use_cycles;
        }
        let (_, _, next) = self.next.expect("a thread's run goes on");
        let (a, b) = next.sources();
        let t = (c + 1).max(self.reg[a as usize & 31]).max(self.reg[b as usize & 31]);
        self.ready = if next.class & Inst::USES_HILO != 0 { t.max(self.hilo) } else { t };
    }
}

/// No schedule (in [`Duets`]' index and links).
const NONE: u32 = u32::MAX;

/// The schedules computed so far, for one text and pipeline, by key; and
/// in each, by how its last instruction (a transfer) went, the one that
/// followed last time (most often the one that follows).
#[derive(Default)]
pub(crate) struct Duets {
    index: HashMap<Key, u32, BuildHasherDefault<Mix>>,
    kept: Vec<Schedule>,
    /// Scratch space for [`Schedule::build`].
    entries: Vec<Entry>,
    generation: u32,
    pipeline: Option<Pipeline>,
}

impl Duets {
    #[inline(always)]
    pub(crate) fn at(&self, s: u32) -> &Schedule {
        &self.kept[s as usize]
    }

    /// The schedule that followed `s` last time its transfer went `how`,
    /// to `next`, its thread ready as the transfer left it.
    #[inline(always)]
    pub(crate) fn link(&self, s: &Schedule, how: usize, next: u32) -> Option<(u32, &Schedule)> {
        let (to, j) = s.links[how];
        // (No link is NONE, past every index: one bounds check tests both.)
        if to == next { self.kept.get(j as usize).map(|s| (j, s)) } else { None }
    }

    /// [`Duets::link`] for a [`Schedule::pair`], its transfers having gone
    /// `how` (`3 * first + last`) to `next`.
    #[inline(always)]
    pub(crate) fn link_pair(&self, s: &Schedule, how: usize, next: [u32; 2]) -> Option<(u32, &Schedule)> {
        let (x, y, j) = s.pair_links[how];
        if [x, y] == next { self.kept.get(j as usize).map(|s| (j, s)) } else { None }
    }

    /// The schedule at `key` (computed if need be); None where there is none.
    #[inline(always)]
    pub(crate) fn find(&mut self, key: Key, code: &Code, p: &Pipeline) -> Option<u32> {
        if self.generation != code.generation() || self.pipeline != Some(*p) || self.kept.len() >= MAX_KEPT {
            self.renew(code, p);
        }
        let s = *self.index.entry(key).or_insert_with(|| match Schedule::build(key, code, p, &mut self.entries) {
            Some(s) => {
                self.kept.push(s);
                (self.kept.len() - 1) as u32
            }
            None => NONE,
        });
        (s != NONE).then_some(s)
    }

    /// The schedule at `key`, which follows schedule `from` whose transfer
    /// went `how` to `next` (both transfers of a pair: `how` is `3 * first
    /// + last`), its threads ready as the transfers left them.
    pub(crate) fn follow(&mut self, (from, how, next): (u32, usize, [u32; 2]), key: Key, code: &Code, p: &Pipeline) -> Option<u32> {
        let s = self.find(key, code, p)?;
        // (Unless every schedule was dropped meanwhile.)
        if let Some(f) = self.kept.get_mut(from as usize) {
            if f.pair {
                f.pair_links[how] = (next[0], next[1], s);
            } else {
                f.links[how] = (next[0], s);
            }
        }
        Some(s)
    }

    #[cold]
    fn renew(&mut self, code: &Code, p: &Pipeline) {
        self.index.clear();
        self.kept.clear();
        (self.generation, self.pipeline) = (code.generation(), Some(*p));
    }
}

/// A hasher for [`Key`]: each word multiplied in (the keys are addresses and small numbers).
#[derive(Default)]
struct Mix(u64);

/// An odd constant with bits spread across the word (the one rustc's own hasher uses).
const MIX: u64 = 0x517c_c1b7_2722_0a95;

impl Hasher for Mix {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u32(u32::from(b));
        }
    }

    #[inline(always)]
    fn write_u32(&mut self, w: u32) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(w)).wrapping_mul(MIX);
    }

    #[inline(always)]
    fn write_u64(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(MIX);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}
