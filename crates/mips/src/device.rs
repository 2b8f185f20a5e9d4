//! Memory-mapped device registers. Loads and stores in the uncached window
//! `0xBF00_0000..0xC000_0000` (kseg1, where MIPS boards put their I/O)
//! never touch caches or memory. The first 64 KiB are this crate's own
//! registers (cycle counter, thread identity, cache pinning controls); the
//! rest goes to a [`Devices`] implementation the machine supplies (NIC, DMA,
//! MAC, interrupt-controller EOI, ...).

use crate::block::Step;
use crate::hierarchy::Level;

pub const MMIO_BASE: u32 = 0xBF00_0000;
/// First address handed to [`Devices`].
pub const DEVICE_BASE: u32 = 0xBF01_0000;

/// Built-in registers (offsets from [`MMIO_BASE`]), all 32-bit.
pub mod regs {
    /// Read: the core's cycle counter, low and high word.
    pub const CYCLE_LO: u32 = 0x00;
    pub const CYCLE_HI: u32 = 0x04;
    /// Read: instructions this hardware thread has completed (low word).
    pub const INSTRET: u32 = 0x08;
    /// Read: `core << 8 | thread`.
    pub const THREAD_ID: u32 = 0x0C;
    /// Read: `cores << 8 | threads per core`.
    pub const TOPOLOGY: u32 = 0x10;
    /// Cache control blocks: L1I at 0x100, L1D at 0x200, L2 at 0x300.
    pub const CACHE_BLOCK: u32 = 0x100;
    /// Within a block: this thread's way mask (read/write).
    pub const WAY_MASK: u32 = 0x00;
    /// First reserved set, then the count: writing the count reserves
    /// `[first, first + count)` for this thread (0 releases).
    pub const SET_FIRST: u32 = 0x04;
    pub const SET_COUNT: u32 = 0x08;
    /// Range base, then length: writing the length locks the range's lines in.
    pub const RANGE_BASE: u32 = 0x0C;
    pub const RANGE_LEN: u32 = 0x10;
    /// Trace pinning for this thread: 1 on, 0 off.
    pub const TRACE: u32 = 0x14;
    /// Any write unlocks every line of the cache.
    pub const UNLOCK: u32 = 0x18;
    /// Read: this thread's misses and accesses in the cache (low words).
    pub const MISSES: u32 = 0x1C;
    pub const ACCESSES: u32 = 0x20;
}

/// The cache a control-block offset refers to, and the register within it.
pub fn cache_register(off: u32) -> Option<(Level, u32)> {
    let level = match off & !0xFF {
        0x100 => Level::L1i,
        0x200 => Level::L1d,
        0x300 => Level::L2,
        _ => return None,
    };
    Some((level, off & 0xFF))
}

/// Who is accessing a device register, and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub core: usize,
    pub thread: usize,
    pub cycle: u64,
}

/// Device registers beyond [`DEVICE_BASE`], implemented by the machine.
/// Each access returns the extra cycles the thread stalls for it (an
/// uncached bus read may be slow); an `Err` stops the thread with a fault
/// naming the address and the message.
pub trait Devices {
    fn read(&mut self, addr: u32, at: Access) -> Result<(u32, u32), String>;
    /// Writes the bytes of `value` selected by `mask` (0xFF per byte lane).
    fn write(&mut self, addr: u32, value: u32, mask: u32, at: Access) -> Result<u32, String>;

    /// True when the last access needs the caller to act at once (an
    /// interrupt to raise, work to post): the run stops after the
    /// instruction with [`crate::Stop::Device`]. The flag clears when read.
    #[inline(always)]
    fn take_stop(&mut self) -> bool {
        false
    }

    /// Whether the last access will ask the caller to act (what
    /// [`Devices::take_stop`] will say, without clearing it). A block of
    /// code leaves after a device access only if so: a device that can tell
    /// lets blocks run on through its registers (the programmable NIC's
    /// SRAM and event flags). By default every access leaves.
    #[inline(always)]
    fn wants_stop(&self) -> bool {
        true
    }

    /// Called as each instruction issues: the hardware thread (global
    /// index, `core * threads + thread`), its PC and its issue cycle. A
    /// profiler's hook (the programmable NIC's); nothing by default.
    #[inline(always)]
    fn issued(&mut self, _thread: usize, _pc: u32, _cycle: u64) {}

    /// Whether a block's instructions (see [`crate::block`]) are reported
    /// together, to [`Devices::issued_block`], rather than one by one.
    const BLOCK_HOOK: bool = false;

    /// With [`Devices::BLOCK_HOOK`]: the instructions of `steps`, in order
    /// from the block's entry at `pc` (`pc`, `pc + 4`, ...: its body, then
    /// its transfer if it ran), issued on hardware thread `thread` at
    /// `t0 + off`, called once where they have run. A delay slot, and
    /// anything run one instruction at a time, still goes to
    /// [`Devices::issued`], all in issue order. By default, one by one.
    #[inline(always)]
    fn issued_block(&mut self, thread: usize, pc: u32, t0: u64, steps: &[Step]) {
        for (j, s) in steps.iter().enumerate() {
            self.issued(thread, pc.wrapping_add(4 * j as u32), t0 + u64::from(s.off));
        }
    }
}

/// A machine with no devices: every access beyond the built-in registers faults.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoDevices;

impl Devices for NoDevices {
    fn read(&mut self, _: u32, _: Access) -> Result<(u32, u32), String> {
        Err("no device mapped here".into())
    }
    fn write(&mut self, _: u32, _: u32, _: u32, _: Access) -> Result<u32, String> {
        Err("no device mapped here".into())
    }
}
