//! The data side of one instruction's execution: memory (with cache
//! timing), `ll`/`sc` links shared by every hardware thread of every core,
//! the built-in device registers and the machine's [`Devices`].

use crate::code::Code;
use crate::device::{Access, DEVICE_BASE, Devices, MMIO_BASE, cache_register, regs};
use crate::error::Fault;
use crate::exec::Bus;
use crate::hierarchy::Hierarchy;
use crate::mem::Memory;

/// How memory accesses are timed: perfect memory or a cache hierarchy.
pub trait Timing {
    /// True if fetches go through an instruction cache (whose counts
    /// [`Timing::fetch_hits`] keeps up to date). If false, a fetch costs
    /// nothing and changes nothing, whenever it is made.
    const CACHED: bool;
    /// Stall cycles to fetch the instruction at `pc`.
    fn fetch(&mut self, core: usize, who: usize, pc: u32) -> u32;
    /// [`Timing::fetch`] with the access left to the caller to count (a miss is counted).
    fn fetch_uncounted(&mut self, core: usize, who: usize, pc: u32) -> u32;
    /// Counts `n` fetches made with [`Timing::fetch_uncounted`] or none at all (see [`DataBus::hits`]).
    fn fetch_hits(&mut self, core: usize, who: usize, n: u64);
    /// [`Timing::fetch_uncounted`] by thread `t` of a pair in a run of cycles ([`Hierarchy::fetch_pair`]).
    fn fetch_pair(&mut self, core: usize, who: usize, pc: u32, t: usize) -> u32;
    /// Stall cycles of a data access.
    fn data(&mut self, core: usize, who: usize, addr: u32, write: bool) -> u32;
    /// The caches, for the pinning controls.
    fn hierarchy(&mut self) -> Option<&mut Hierarchy>;
}

/// Every access takes the pipeline's own cycle and nothing more.
pub struct Perfect;

impl Timing for Perfect {
    const CACHED: bool = false;
    #[inline(always)]
    fn fetch(&mut self, _: usize, _: usize, _: u32) -> u32 {
        0
    }
    #[inline(always)]
    fn fetch_uncounted(&mut self, _: usize, _: usize, _: u32) -> u32 {
        0
    }
    fn fetch_hits(&mut self, _: usize, _: usize, _: u64) {}
    #[inline(always)]
    fn fetch_pair(&mut self, _: usize, _: usize, _: u32, _: usize) -> u32 {
        0
    }
    #[inline(always)]
    fn data(&mut self, _: usize, _: usize, _: u32, _: bool) -> u32 {
        0
    }
    fn hierarchy(&mut self) -> Option<&mut Hierarchy> {
        None
    }
}

impl Timing for Hierarchy {
    const CACHED: bool = true;
    #[inline(always)]
    fn fetch(&mut self, core: usize, who: usize, pc: u32) -> u32 {
        Hierarchy::fetch(self, core, who, pc)
    }
    #[inline(always)]
    fn fetch_uncounted(&mut self, core: usize, who: usize, pc: u32) -> u32 {
        Hierarchy::fetch_uncounted(self, core, who, pc)
    }
    fn fetch_hits(&mut self, core: usize, who: usize, n: u64) {
        self.l1i[core].counts[who].accesses += n;
    }
    #[inline(always)]
    fn fetch_pair(&mut self, core: usize, who: usize, pc: u32, t: usize) -> u32 {
        Hierarchy::fetch_pair(self, core, who, pc, t)
    }
    #[inline(always)]
    fn data(&mut self, core: usize, who: usize, addr: u32, write: bool) -> u32 {
        Hierarchy::data(self, core, who, addr, write)
    }
    fn hierarchy(&mut self) -> Option<&mut Hierarchy> {
        Some(self)
    }
}

const NO_LINK: u32 = u32::MAX;

/// `ll` reservations of every hardware thread (word granularity). A store
/// by any other thread, on any core, to a linked word breaks the link.
pub struct Links {
    addr: Vec<u32>,
    live: usize,
}

impl Links {
    pub fn new(threads: usize) -> Self {
        Links { addr: vec![NO_LINK; threads], live: 0 }
    }

    pub fn clear(&mut self, who: usize) {
        if self.addr[who] != NO_LINK {
            self.addr[who] = NO_LINK;
            self.live -= 1;
        }
    }

    #[inline(always)]
    pub(crate) fn clobber(&mut self, who: usize, word: u32) {
        if self.live == 0 {
            return;
        }
        for w in 0..self.addr.len() {
            if w != who && self.addr[w] == word {
                self.clear(w);
            }
        }
    }
}

/// Identity of the accessing thread plus the counters its registers expose.
#[derive(Clone, Copy)]
pub struct Who {
    pub core: usize,
    pub thread: usize,
    /// Global hardware-thread index: `core * threads + thread`.
    pub id: usize,
    pub now: u64,
    pub instret: u64,
    pub topology: u32,
}

pub struct DataBus<'a, T, D> {
    pub mem: &'a mut Memory,
    pub code: &'a mut Code,
    pub links: &'a mut Links,
    pub timing: &'a mut T,
    pub devices: &'a mut D,
    pub who: Who,
    /// Stall cycles accumulated by this instruction's accesses.
    pub stall: u32,
    /// Fetches of a block's instructions (those that hit the line of the
    /// fetch before them, which nothing else in between can evict, make no
    /// access at all): counted here, added to the instruction cache's
    /// accesses before code reads a cache counter and when the slice ends
    /// ([`DataBus::settle`]).
    pub hits: u64,
    /// While blocks run one after another: the instruction count from which
    /// their fetches are not yet in [`DataBus::hits`] (one per instruction;
    /// the caller adds them when the run of blocks ends).
    pub chain: Option<u64>,
    /// Set by a built-in register access, or a device access that may ask
    /// the caller to act ([`Devices::wants_stop`]): a block leaves after it
    /// (a range locked into the instruction cache resets its last-line
    /// memo), and only then asks [`Devices::take_stop`].
    pub mmio: bool,
    /// Why the last [`Fault::Device`] happened.
    pub device_error: String,
}

impl<'a, T, D> DataBus<'a, T, D> {
    pub fn new(mem: &'a mut Memory, code: &'a mut Code, links: &'a mut Links, timing: &'a mut T, devices: &'a mut D, who: Who) -> Self {
        DataBus { mem, code, links, timing, devices, who, stall: 0, hits: 0, chain: None, mmio: false, device_error: String::new() }
    }
}

/// Whether `addr` is a device or built-in register rather than memory.
#[inline(always)]
pub(crate) fn is_mmio(addr: u32) -> bool {
    (MMIO_BASE..0xC000_0000).contains(&addr)
}

impl<T: Timing, D: Devices> DataBus<'_, T, D> {
    /// Adds the fetches counted in [`DataBus::hits`] to the instruction cache's
    /// counts, with those of the blocks run so far up to the current
    /// instruction, or the current thread's in a pair's run of cycles
    /// ([`crate::hierarchy::Lines`]).
    pub fn settle(&mut self) {
        if let Some(from) = self.chain.as_mut() {
            let to = self.who.instret + 1;
            self.hits += to - std::mem::replace(from, to);
        }
        if let Some(from) = self.timing.hierarchy().and_then(|h| h.lines.from.as_mut()) {
            // Each instruction the thread issued in the run fetched the next: up to this one's.
            let to = self.who.instret;
            self.hits += to - std::mem::replace(&mut from[self.who.thread & 1], to);
        }
        if self.hits != 0 {
            self.timing.fetch_hits(self.who.core, self.who.id, std::mem::take(&mut self.hits));
        }
    }

    /// Ends a run of blocks at instruction count `instret`: their fetches go into [`DataBus::hits`].
    #[inline(always)]
    pub fn fetched(&mut self, instret: u64) {
        if !T::CACHED {
            return;
        }
        if let Some(from) = self.chain.take() {
            self.hits += instret - from;
        }
    }

    fn at(&self) -> Access {
        Access { core: self.who.core, thread: self.who.thread, cycle: self.who.now }
    }

    /// Keeps a device's message beside the small fault that carries its address.
    fn refused<V>(&mut self, r: Result<V, (Fault, String)>) -> Result<V, Fault> {
        r.map_err(|(f, msg)| {
            self.device_error = msg;
            f
        })
    }

    fn mmio_read(&mut self, addr: u32) -> Result<u32, Fault> {
        let r = self.mmio_read_inner(addr);
        self.mmio |= addr < DEVICE_BASE || self.devices.wants_stop();
        self.refused(r)
    }

    fn mmio_write(&mut self, addr: u32, value: u32, mask: u32) -> Result<(), Fault> {
        let r = self.mmio_write_inner(addr, value, mask);
        self.mmio |= addr < DEVICE_BASE || self.devices.wants_stop();
        self.refused(r)
    }

    fn mmio_read_inner(&mut self, addr: u32) -> Result<u32, (Fault, String)> {
        let dev = |msg: String| (Fault::Device { addr }, msg);
        if addr >= DEVICE_BASE {
            let (v, cycles) = self.devices.read(addr, self.at()).map_err(dev)?;
            self.stall += cycles;
            return Ok(v);
        }
        let w = self.who;
        let off = addr - MMIO_BASE;
        Ok(match off {
            regs::CYCLE_LO => w.now as u32,
            regs::CYCLE_HI => (w.now >> 32) as u32,
            regs::INSTRET => w.instret as u32,
            regs::THREAD_ID => ((w.core as u32) << 8) | w.thread as u32,
            regs::TOPOLOGY => w.topology,
            _ => {
                let (level, r) = cache_register(off).ok_or_else(|| dev("no such register".into()))?;
                self.settle();
                let Some(h) = self.timing.hierarchy() else {
                    return Ok(0);
                };
                let c = h.cache(w.core, level);
                match r {
                    regs::WAY_MASK => c.pin.way_mask(w.id) as u32,
                    regs::MISSES => c.counts[w.id].misses as u32,
                    regs::ACCESSES => c.counts[w.id].accesses as u32,
                    _ => return Err(dev("write-only or no such cache register".into())),
                }
            }
        })
    }

    fn mmio_write_inner(&mut self, addr: u32, value: u32, mask: u32) -> Result<(), (Fault, String)> {
        let dev = |msg: String| (Fault::Device { addr }, msg);
        if addr >= DEVICE_BASE {
            let at = self.at();
            self.stall += self.devices.write(addr, value, mask, at).map_err(dev)?;
            return Ok(());
        }
        let w = self.who;
        let (level, r) = cache_register(addr - MMIO_BASE).ok_or_else(|| dev("read-only or no such register".into()))?;
        // With perfect memory there is no cache to pin: controls are accepted and have no effect.
        let Some(h) = self.timing.hierarchy() else {
            return Ok(());
        };
        let memory_cycles = h.config.memory_cycles;
        let c = h.cache(w.core, level);
        let sets = c.geometry.sets();
        match r {
            regs::WAY_MASK => c.pin.set_way_mask(w.id, value as u64).map_err(dev)?,
            regs::SET_FIRST => c.pin.stage(w.id).0 = value,
            regs::SET_COUNT => {
                let first = c.pin.stage(w.id).0;
                c.pin.reserve_sets(w.id, first, value, sets).map_err(dev)?
            }
            regs::RANGE_BASE => c.pin.stage(w.id).1 = value,
            regs::RANGE_LEN => {
                let base = c.pin.stage(w.id).1;
                self.stall += c.lock_range(base, value, w.id).map_err(dev)? * memory_cycles;
                // The lines locked in are their sets' newest no more.
                h.lines.forget();
            }
            regs::TRACE => c.pin.set_trace(w.id, value != 0),
            regs::UNLOCK => c.unlock_all(),
            _ => return Err(dev("read-only or no such cache register".into())),
        }
        Ok(())
    }
}

impl<T: Timing, D: Devices> Bus for DataBus<'_, T, D> {
    #[inline(always)]
    fn load(&mut self, addr: u32) -> Result<u32, Fault> {
        if is_mmio(addr) {
            return self.mmio_read(addr);
        }
        self.stall += self.timing.data(self.who.core, self.who.id, addr, false);
        Ok(self.mem.read_u32(addr))
    }

    #[inline(always)]
    fn store(&mut self, addr: u32, value: u32, mask: u32) -> Result<(), Fault> {
        if is_mmio(addr) {
            return self.mmio_write(addr, value, mask);
        }
        self.stall += self.timing.data(self.who.core, self.who.id, addr, true);
        self.links.clobber(self.who.id, addr);
        if !self.mem.write_masked(addr, value, mask) {
            return Err(Fault::StackOverflow { addr });
        }
        let mem = &*self.mem;
        self.code.written(addr, || mem.read_u32(addr));
        Ok(())
    }

    fn link(&mut self, addr: u32) {
        let id = self.who.id;
        if self.links.addr[id] == NO_LINK {
            self.links.live += 1;
        }
        self.links.addr[id] = addr;
    }

    fn take_link(&mut self, addr: u32) -> bool {
        let ok = self.links.addr[self.who.id] == addr;
        self.links.clear(self.who.id);
        ok
    }
}
