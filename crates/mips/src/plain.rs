//! A block's commonest loads and stores (`lw`, `lh`, `lhu`, `lb`, `lbu`,
//! `sw`, `sh`, `sb`) to plain memory, without the general path's bus: no
//! device register, no fault, no page to allocate, no `ll` link taken.
//! Anything else (a device or built-in register, a misaligned address, a
//! store to a page not yet written, a load into `$zero`, the other memory
//! operations) is left untouched to [`crate::exec::access`], which does it
//! in the same order with the same effects.

use crate::bus::{DataBus, Timing, is_mmio};
use crate::context::Context;
use crate::decode::{Inst, Op};
use crate::device::Devices;

/// Runs the load or store `i` if it is one of this module's: its stall
/// cycles, or None with nothing done.
#[inline(always)]
pub fn access<T: Timing, D: Devices>(c: &mut Context, i: &Inst, bus: &mut DataBus<'_, T, D>) -> Option<u32> {
    use Op::*;
    let ea = c.r[i.rs as usize].wrapping_add(i.imm);
    // A load of the word holding `ea` into `rt` (not `$zero`), the value taken from it by `$v`.
    macro_rules! load {
        (|$w:ident| $v:expr) => {{
            let word = ea & !3;
            if i.rt == 0 || is_mmio(word) {
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
    let rt = c.r[i.rt as usize];
    match i.op {
        Lw if ea & 3 == 0 => load!(|w| w),
        Lbu => load!(|w| (w >> lane()) & 0xFF),
        Lb => load!(|w| (w >> lane()) as u8 as i8 as u32),
        Lhu if ea & 1 == 0 => load!(|w| (w >> half()) & 0xFFFF),
        Lh if ea & 1 == 0 => load!(|w| (w >> half()) as u16 as i16 as u32),
        Sw if ea & 3 == 0 => store(bus, ea, rt, u32::MAX),
        Sb => store(bus, ea & !3, rt << lane(), 0xFF << lane()),
        Sh if ea & 1 == 0 => store(bus, ea & !3, rt << half(), 0xFFFF << half()),
        _ => None,
    }
}

/// The bytes of `value` selected by `mask` into the word at `word`, if it is memory already written.
#[inline(always)]
fn store<T: Timing, D: Devices>(bus: &mut DataBus<'_, T, D>, word: u32, value: u32, mask: u32) -> Option<u32> {
    if is_mmio(word) {
        return None;
    }
    let slot = bus.mem.word_mut(word)?;
    let stall = bus.timing.data(bus.who.core, bus.who.id, word, true);
    bus.links.clobber(bus.who.id, word);
    *slot = (*slot & !mask) | (value & mask);
    let v = *slot;
    bus.code.written(word, || v);
    Some(stall)
}
