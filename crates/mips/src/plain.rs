//! A block's commonest loads and stores (`lw`, `lh`, `lhu`, `lb`, `lbu`,
//! `sw`, `sh`, `sb`) to plain memory, without the general path's bus: no
//! device register, no fault, no page to allocate, no `ll` link taken.
//! Anything else (a device or built-in register, a misaligned address, a
//! store to a page not yet written, a load into `$zero`, the other memory
//! operations) is left untouched to [`crate::exec::access`], which does it
//! in the same order with the same effects. On perfect memory a block's
//! loads and stores go to [`whole`], a function of its own per operation.

use crate::block::Step;
use crate::bus::{DataBus, Timing, is_mmio};
use crate::context::Context;
use crate::core::HwThread;
use crate::decode::{Inst, Op};
use crate::device::Devices;
use crate::timing::Pipeline;

/// This module's loads and stores, as a block's step keeps them: a load
/// into `$zero` is none of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Plain {
    No,
    Lw,
    Lbu,
    Lb,
    Lhu,
    Lh,
    Sw,
    Sb,
    Sh,
}

impl Plain {
    /// What `i` is.
    #[inline(always)]
    pub fn of(i: Inst) -> Plain {
        match i.op {
            _ if i.class & Inst::LOAD != 0 && i.rt == 0 => Plain::No,
            Op::Lw => Plain::Lw,
            Op::Lbu => Plain::Lbu,
            Op::Lb => Plain::Lb,
            Op::Lhu => Plain::Lhu,
            Op::Lh => Plain::Lh,
            Op::Sw => Plain::Sw,
            Op::Sb => Plain::Sb,
            Op::Sh => Plain::Sh,
            _ => Plain::No,
        }
    }
}

/// Runs the load or store `i` if it is one of this module's: its stall
/// cycles, or None with nothing done.
#[inline(always)]
pub fn access<T: Timing, D: Devices>(c: &mut Context, i: &Inst, bus: &mut DataBus<'_, T, D>) -> Option<u32> {
    run(Plain::of(*i), c, i, bus, true)
}

// A block's step that is one of them, on perfect memory, by a function of its own for each
// (`whole`): no pass through the general path's tests, and few registers to save.
macro_rules! wholes {
    ($($k:ident $f:ident),*) => {
        /// Runs a block's step `s`, issued at `at`, if it is the load or store `k` (not
        /// into the text): done whole, a load's result in flight in the scoreboard.
        /// False, with nothing done, for anything else.
        #[inline(always)]
        pub(crate) fn whole<T: Timing, D: Devices>(k: Plain, th: &mut HwThread, s: &Step, at: u64, bus: &mut DataBus<'_, T, D>, p: &Pipeline) -> bool {
            // One indirect call by the kind, no jump to a call.
            k != Plain::No && Wholes::<T, D>::BY_KIND[k as usize](th, s, at, bus, p)
        }

        /// The functions by [`Plain`] kind (for [`Plain::No`], one that does nothing).
        struct Wholes<T, D>(std::marker::PhantomData<(T, D)>);

        impl<T: Timing, D: Devices> Wholes<T, D> {
            const BY_KIND: [for<'x> fn(&mut HwThread, &Step, u64, &mut DataBus<'x, T, D>, &Pipeline) -> bool; 9] = [|_, _, _, _, _| false, $($f,)*];
        }
        $(
            #[inline(never)]
            fn $f<T: Timing, D: Devices>(th: &mut HwThread, s: &Step, at: u64, bus: &mut DataBus<'_, T, D>, p: &Pipeline) -> bool {
                done(Plain::$k, th, s, at, bus, p)
            }
        )*
    };
}
wholes!(Lw lw, Lbu lbu, Lb lb, Lhu lhu, Lh lh, Sw sw, Sb sb, Sh sh);

/// [`whole`] for `k`, not [`Plain::No`].
#[inline(always)]
fn done<T: Timing, D: Devices>(k: Plain, th: &mut HwThread, s: &Step, at: u64, bus: &mut DataBus<'_, T, D>, p: &Pipeline) -> bool {
    let i = &s.inst;
    // A store into the text goes the general way: the blocks leave after it.
    let Some(stall) = run(k, &mut th.ctx, i, bus, false) else { return false };
    if matches!(k, Plain::Sw | Plain::Sb | Plain::Sh) {
        return true;
    }
    th.board.loaded(p, i.rt, at + 1 + u64::from(stall));
    true
}

/// [`access`] for `i`, which is `k`; `text`: a store may write the text.
#[inline(always)]
pub(crate) fn run<T: Timing, D: Devices>(k: Plain, c: &mut Context, i: &Inst, bus: &mut DataBus<'_, T, D>, text: bool) -> Option<u32> {
    let ea = c.r[i.rs as usize].wrapping_add(i.imm);
    // A load of the word holding `ea` into `rt` (not `$zero`), the value taken from it by `$v`.
    macro_rules! load {
        (|$w:ident| $v:expr) => {{
            let word = ea & !3;
            if is_mmio(word) {
                return None;
            }
            let stall = bus.timing.data(bus.who.core, bus.who.id, word, false);
            let $w = bus.mem.read_u32(word);
            c.r[i.rt as usize] = $v;
            Some(stall)
        }};
    }
    // The shifts of a big-endian byte and halfword within their word.
    let (lane, half) = (|| (3 - (ea & 3)) * 8, || (2 - (ea & 2)) * 8);
    // A store's value, read in its own arm: a load does not need it.
    let rt = |c: &Context| c.r[i.rt as usize];
    match k {
        Plain::Lw if ea & 3 == 0 => load!(|w| w),
        Plain::Lbu => load!(|w| (w >> lane()) & 0xFF),
        Plain::Lb => load!(|w| (w >> lane()) as u8 as i8 as u32),
        Plain::Lhu if ea & 1 == 0 => load!(|w| (w >> half()) & 0xFFFF),
        Plain::Lh if ea & 1 == 0 => load!(|w| (w >> half()) as u16 as i16 as u32),
        Plain::Sw if ea & 3 == 0 => store(bus, ea, rt(c), u32::MAX, text),
        Plain::Sb => store(bus, ea & !3, rt(c) << lane(), 0xFF << lane(), text),
        Plain::Sh if ea & 1 == 0 => store(bus, ea & !3, rt(c) << half(), 0xFFFF << half(), text),
        _ => None,
    }
}

/// The bytes of `value` selected by `mask` into the word at `word`, if it
/// is memory already written (and, unless `text`, not in the text).
#[inline(always)]
fn store<T: Timing, D: Devices>(bus: &mut DataBus<'_, T, D>, word: u32, value: u32, mask: u32, text: bool) -> Option<u32> {
    if is_mmio(word) || (!text && bus.code.holds(word)) {
        return None;
    }
    let slot = bus.mem.word_mut(word)?;
    let stall = bus.timing.data(bus.who.core, bus.who.id, word, true);
    bus.links.clobber(bus.who.id, word);
    *slot = (*slot & !mask) | (value & mask);
    if text {
        let v = *slot;
        bus.code.written(word, || v);
    }
    Some(stall)
}
