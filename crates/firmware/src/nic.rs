//! The programmable NIC's hardware as the firmware's cores see it: event
//! sources with counts and acknowledgements (the event flags), two DMA
//! engines with descriptor queues, a MAC at a line rate, receive slots and
//! banked SRAM, the host's mailboxes, a one-shot timer (the Tigon's
//! host-coalescing timer: the firmware arms it, its expiry is an event)
//! and the host interrupt. Registers and layout match
//! programs/firmware/nic.h.
//!
//! Time: the hardware acts at whole core cycles. [`Hardware::retire`]
//! finishes what is due by a cycle before the cores run it (DMA
//! descriptors, frames on the wire); register accesses happen during a
//! cycle and queue new work, which is never due before the next cycle. A
//! register write that queues work asks the cores to stop
//! ([`Devices::take_stop`]) so the device can bring its next event forward
//! (see [`crate::device`]). Frames from the wire are given ahead of their
//! arrival ([`Hardware::frame_arrives`]) and land in a receive slot when
//! anything next looks (a register access in or after their cycle, or
//! [`Hardware::arrive_by`]), as if they had landed at the start of their
//! cycle: the cores need not stop for each one.

use crate::config::NicConfig;
use crate::device::{Effect, HostMemory};
use crate::profile::Recorder;
use irqsim_mips::block::Step;
use irqsim_mips::device::{Access, DEVICE_BASE, Devices};
use std::collections::VecDeque;

/// A frame from the wire: its arrival cycle, its length, the Toeplitz
/// hash of its flow (the MAC's receive logic computes it as an RSS NIC's
/// does), and what its giver knows it by (`tag`, in order of arrival, and
/// `flow`), handed back as it lands ([`Hardware::landings`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub at: u64,
    pub len: u32,
    pub hash: u32,
    pub tag: u64,
    pub flow: u32,
}

/// Event sources, in the order of their count/ack registers.
pub const SOURCES: [&str; 7] = ["dma_read", "dma_write", "mac_rx", "mac_tx", "mailbox_send", "mailbox_recv", "timer"];
const SRAM_OFFSET: u32 = 0x1_0000;
const SRAM_BYTES: u32 = 512 * 1024;
/// Descriptors a DMA engine queues (firmware QN).
pub const DMA_QUEUE: usize = 256;
/// Receive slots and transmit buffers in SRAM (firmware RING).
const RING: u64 = 64;
const RX_STATUS: u32 = 0x0E00;
/// Per receive slot, the RSS hash the MAC computed over the frame's flow
/// (firmware RX_HASH; read only by firmware that steers, `-DFW_RSS`).
const RX_HASH: u32 = 0x1000;
const RX_BUFS: u32 = 0x3_0000;
const BUF: u32 = 2048;
/// Bytes of a transfer that are copied; the rest is timed only (the
/// firmware never reads frame payloads, only descriptors and headers).
pub const COPY_BYTES: u32 = 256;

/// Word `i` of the `k`-th frame the MAC accepts, `len` bytes long, as it
/// lands in SRAM: its number, its length, then a pattern of both, so a
/// host that checks the bytes it delivers sees any one of them changed
/// (the firmware reads only the number; the DMA engines copy the first
/// [`COPY_BYTES`]).
pub fn frame_word(k: u32, len: u32, i: u32) -> u32 {
    match i {
        0 => k,
        1 => len,
        _ => k.wrapping_mul(0x9E37_79B9) ^ i.wrapping_mul(0x85EB_CA6B),
    }
}

/// Banked SRAM: a core's access stalls while another core holds the bank this cycle.
struct Sram {
    words: Vec<u32>,
    free_at: Vec<u64>,
    conflicts: u64,
}

impl Sram {
    fn index(off: u32) -> Result<usize, String> {
        if off < SRAM_BYTES { Ok((off / 4) as usize) } else { Err(format!("SRAM offset 0x{off:x} beyond its {SRAM_BYTES} bytes")) }
    }

    /// Stall cycles of a core access at `cycle` to word `w`.
    fn touch(&mut self, w: usize, cycle: u64) -> u32 {
        let b = w % self.free_at.len();
        let stall = self.free_at[b].saturating_sub(cycle);
        self.conflicts += (stall > 0) as u64;
        self.free_at[b] = cycle + stall + 1;
        stall as u32
    }
}

struct Desc {
    host: u32,
    local: u32,
    len: u32,
    done_at: u64,
}

/// A DMA engine: descriptors transfer one after another at the engine's
/// bandwidth and complete, in order, a latency after their transfer.
struct Dma {
    latency: u64,
    gbps: f64,
    staged: [u32; 3],
    queue: VecDeque<Desc>,
    /// When the engine's bus is free, in thousandths of a cycle.
    bus_free: u64,
    done: u64,
    bytes: u64,
}

/// A frame handed to the MAC: its header (sequence number) and length, and
/// the cycle its last bit leaves.
struct Sending {
    seq: u32,
    len: u32,
    done_at: u64,
}

/// Which mailbox the host writes: its producer index of send frames or of receive buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mailbox {
    Send,
    Receive,
}

pub struct Hardware {
    clock_mhz: f64,
    sram: Sram,
    rd: Dma,
    wr: Dma,
    acks: [u64; 7],
    tx_staged: [u32; 2],
    tx_queue: VecDeque<Sending>,
    wire_free: u64,
    /// The line rate, for each frame's time on the wire.
    line_gbps: f64,
    /// Frames fully on the wire.
    pub sent: u64,
    pub accepted: u64,
    pub dropped: u64,
    rx_freed: u64,
    /// Frames on their way in, in order.
    arriving: VecDeque<Arrival>,
    /// The first one's arrival (u64::MAX: none): every register access
    /// looks, so it is one comparison there.
    next_arrival: u64,
    /// Frames that landed in a slot since [`Hardware::landings`] last
    /// drained them, and the tags of those the MAC dropped, each in order.
    took: Vec<Arrival>,
    lost: Vec<u64>,
    /// The host's producer indices (send frames, receive buffers).
    mailbox: [u64; 2],
    /// The timer: the cycle it expires at (u64::MAX: not armed), and its expiries.
    timer_at: u64,
    timer_fired: u64,
    /// Host interrupts the cores asked for, not yet handed on: (cycle, vector).
    pub(crate) interrupts: Vec<(u64, u32)>,
    /// Per core, the cycle it last read the event flags (the dispatch
    /// loop does every pass; [`crate::device`]'s watchdog reads these).
    pub(crate) polled: Vec<u64>,
    /// Work queued by a register access since the cores last stopped.
    stop: bool,
    /// Where the cores' instructions and cycles go (on in the measured window).
    pub(crate) recorder: Recorder,
}

impl Hardware {
    pub fn new(cfg: &NicConfig, recorder: Recorder) -> Self {
        let dma = |ns| Dma { latency: cfg.cycles(ns), gbps: cfg.dma_gbps, staged: [0; 3], queue: VecDeque::new(), bus_free: 0, done: 0, bytes: 0 };
        Hardware {
            clock_mhz: cfg.clock_mhz,
            sram: Sram { words: vec![0; (SRAM_BYTES / 4) as usize], free_at: vec![0; cfg.sram_banks as usize], conflicts: 0 },
            rd: dma(cfg.dma_read_ns),
            wr: dma(cfg.dma_write_ns),
            acks: [0; 7],
            tx_staged: [0; 2],
            tx_queue: VecDeque::new(),
            wire_free: 0,
            line_gbps: cfg.line_gbps,
            sent: 0,
            accepted: 0,
            dropped: 0,
            rx_freed: 0,
            arriving: VecDeque::new(),
            next_arrival: u64::MAX,
            took: Vec::new(),
            lost: Vec::new(),
            mailbox: [0; 2],
            timer_at: u64::MAX,
            timer_fired: 0,
            interrupts: Vec::new(),
            polled: vec![0; cfg.cores],
            stop: false,
            recorder,
        }
    }

    pub fn sram_conflicts(&self) -> u64 {
        self.sram.conflicts
    }

    /// Bytes each DMA engine has moved (read, write).
    pub fn dma_bytes(&self) -> (u64, u64) {
        (self.rd.bytes, self.wr.bytes)
    }

    fn count(&self, src: usize) -> u64 {
        match src {
            0 => self.rd.done,
            1 => self.wr.done,
            2 => self.accepted,
            3 => self.sent,
            4 => self.mailbox[0],
            5 => self.mailbox[1],
            _ => self.timer_fired,
        }
    }

    /// The timer expires when anything looks at or after its cycle (as
    /// frames land): the cores need not stop for it.
    #[inline(always)]
    fn timer_by(&mut self, now: u64) {
        if self.timer_at <= now {
            self.timer_at = u64::MAX;
            self.timer_fired += 1;
        }
    }

    /// The first cycle at which queued work is due (u64::MAX: none).
    pub fn next_event(&self) -> u64 {
        let dma = |e: &Dma| e.queue.front().map_or(u64::MAX, |d| d.done_at);
        dma(&self.rd).min(dma(&self.wr)).min(self.tx_queue.front().map_or(u64::MAX, |s| s.done_at))
    }

    /// Where a run must end once a register access asked to stop
    /// ([`Devices::take_stop`]): the first cycle queued work is due, or the
    /// cycle after the first interrupt asked for, whichever is earlier
    /// (u64::MAX: neither). Only falls as the cores run (work and interrupts
    /// are queued, never taken, between [`Hardware::retire`]s).
    pub fn stop_by(&self) -> u64 {
        self.interrupts.first().map_or(u64::MAX, |&(at, _)| at + 1).min(self.next_event())
    }

    /// Retires everything due by the start of cycle `now`: DMA reads copy
    /// host memory into SRAM, DMA writes copy SRAM into host memory, frames
    /// leave the wire. Each retirement is an [`Effect`].
    pub fn retire(&mut self, now: u64, host: &mut dyn HostMemory, effects: &mut Vec<Effect>) {
        for to_host in [false, true] {
            let e = if to_host { &mut self.wr } else { &mut self.rd };
            while e.queue.front().is_some_and(|d| d.done_at <= now) {
                let d = e.queue.pop_front().expect("front exists");
                e.done += 1;
                // The SRAM words, in at most two pieces (its end wraps to its start), a piece at a time.
                let (n, size) = (d.len.min(COPY_BYTES).div_ceil(4) as usize, self.sram.words.len());
                let s = (d.local / 4) as usize % size;
                let first = n.min(size - s);
                for (s, len, h) in [(s, first, d.host), (0, n - first, d.host.wrapping_add(4 * first as u32))] {
                    let words = &mut self.sram.words[s..s + len];
                    if to_host {
                        host.write_words(h, words);
                    } else {
                        host.read_words(h, words);
                    }
                }
                if to_host {
                    effects.push(Effect::DmaWrite { at: now, addr: d.host, len: d.len });
                }
            }
        }
        while self.tx_queue.front().is_some_and(|s| s.done_at <= now) {
            let s = self.tx_queue.pop_front().expect("front exists");
            self.sent += 1;
            effects.push(Effect::Transmit { at: now, seq: s.seq, len: s.len });
        }
    }

    /// Frame `a` arrives from the wire at the start of its cycle (no
    /// earlier than any given before it, nor than the cycle the device is at).
    pub fn frame_arrives(&mut self, a: Arrival) {
        self.next_arrival = self.next_arrival.min(a.at);
        self.arriving.push_back(a);
    }

    /// Frames given that have not landed, tagged after `tag`, never arrive
    /// (the run ends before them); returns how many.
    pub fn withdraw_after(&mut self, tag: u64) -> usize {
        let keep = self.arriving.partition_point(|a| a.tag <= tag);
        let gone = self.arriving.len() - keep;
        self.arriving.truncate(keep);
        self.next_arrival = self.arriving.front().map_or(u64::MAX, |a| a.at);
        gone
    }

    /// Frames that arrived by the start of cycle `now` land: each in the
    /// next receive slot, stamped with its number, or dropped when the
    /// firmware has freed none.
    #[inline(always)]
    pub fn arrive_by(&mut self, now: u64) {
        if self.next_arrival <= now {
            self.land_by(now);
        }
    }

    fn land_by(&mut self, now: u64) {
        while let Some(&a) = self.arriving.front() {
            if a.at > now {
                self.next_arrival = a.at;
                return;
            }
            self.arriving.pop_front();
            self.land(a);
        }
        self.next_arrival = u64::MAX;
    }

    /// The frames that landed in a slot since the last call, and the tags
    /// of those the MAC dropped, each in order of arrival.
    pub fn landings(&mut self) -> (std::vec::Drain<'_, Arrival>, std::vec::Drain<'_, u64>) {
        (self.took.drain(..), self.lost.drain(..))
    }

    /// Frames given that have not landed yet.
    pub fn arriving(&self) -> usize {
        self.arriving.len()
    }

    fn land(&mut self, a: Arrival) {
        if self.accepted - self.rx_freed >= RING {
            self.lost.push(a.tag);
            self.dropped += 1;
            return;
        }
        self.took.push(a);
        let (len, hash) = (a.len, a.hash);
        let (k, s) = (self.accepted as u32, (self.accepted % RING) as u32);
        let w = |off: u32| (off / 4) as usize;
        self.sram.words[w(RX_STATUS + 8 * s)] = len;
        self.sram.words[w(RX_STATUS + 8 * s + 4)] = k;
        self.sram.words[w(RX_HASH + 4 * s)] = hash;
        let base = w(RX_BUFS + s * BUF);
        for (i, word) in self.sram.words[base..base + len.min(COPY_BYTES).div_ceil(4) as usize].iter_mut().enumerate() {
            *word = frame_word(k, len, i as u32);
        }
        self.accepted += 1;
    }

    /// The host writes its producer index to a mailbox (the count of its event source).
    pub fn host_writes_mailbox(&mut self, mailbox: Mailbox, value: u64) {
        self.mailbox[mailbox as usize] = value;
    }

    fn dma_go(&mut self, to_host: bool, now: u64) -> Result<(), String> {
        let e = if to_host { &mut self.wr } else { &mut self.rd };
        if e.queue.len() >= DMA_QUEUE {
            return Err(format!("DMA queue full ({DMA_QUEUE} descriptors)"));
        }
        let [host, local, len] = e.staged;
        Sram::index(local)?;
        let start = e.bus_free.max(now * 1000);
        e.bus_free = start + (len as f64 * 8.0 / e.gbps * self.clock_mhz).round() as u64;
        e.bytes += len as u64;
        // Never due in the cycle that queued it: the hardware acts before the cores in a cycle.
        let done_at = (e.bus_free.div_ceil(1000) + e.latency).max(now + 1);
        e.queue.push_back(Desc { host, local, len, done_at });
        self.stop = true;
        Ok(())
    }

    /// Hands a frame to the MAC: it goes on the wire after those before it.
    fn mac_go(&mut self, now: u64) -> Result<(), String> {
        let [local, len] = self.tx_staged;
        let seq = self.sram.words[Sram::index(local)?];
        let start = self.wire_free.max(now * 1000);
        // Preamble, start delimiter and inter-frame gap besides the frame (IEEE 802.3).
        self.wire_free = start + (f64::from(len + 20) * 8.0 / self.line_gbps * self.clock_mhz).round() as u64;
        self.tx_queue.push_back(Sending { seq, len, done_at: self.wire_free.div_ceil(1000) });
        self.stop = true;
        Ok(())
    }
}

impl Devices for Hardware {
    fn read(&mut self, addr: u32, at: Access) -> Result<(u32, u32), String> {
        self.arrive_by(at.cycle);
        self.timer_by(at.cycle);
        let off = addr - DEVICE_BASE;
        if off >= SRAM_OFFSET {
            let w = Sram::index(off - SRAM_OFFSET)?;
            return Ok((self.sram.words[w], self.sram.touch(w, at.cycle)));
        }
        let v = match off {
            0x000 => {
                if let Some(p) = self.polled.get_mut(at.core) {
                    *p = at.cycle;
                }
                (0..SOURCES.len()).filter(|&k| self.count(k) > self.acks[k]).fold(0, |m, k| m | 1 << k)
            }
            0x020..0x058 if off.is_multiple_of(8) => self.count(((off - 0x20) / 8) as usize) as u32,
            _ => return Err("no such NIC register (or write-only)".into()),
        };
        Ok((v, 0))
    }

    fn write(&mut self, addr: u32, value: u32, mask: u32, at: Access) -> Result<u32, String> {
        self.arrive_by(at.cycle);
        let off = addr - DEVICE_BASE;
        if off >= SRAM_OFFSET {
            let w = Sram::index(off - SRAM_OFFSET)?;
            let old = self.sram.words[w];
            self.sram.words[w] = (old & !mask) | (value & mask);
            return Ok(self.sram.touch(w, at.cycle));
        }
        if mask != u32::MAX {
            return Err("NIC registers take whole-word stores".into());
        }
        match off {
            0x024..0x05C if off % 8 == 4 => {
                let k = ((off - 0x24) / 8) as usize;
                // Acks only advance: cores that claimed out of order may write them out of order.
                self.acks[k] = self.acks[k].max(value as u64);
            }
            0x100..0x10C => self.rd.staged[((off - 0x100) / 4) as usize] = value,
            0x10C => self.dma_go(false, at.cycle)?,
            0x200..0x20C => self.wr.staged[((off - 0x200) / 4) as usize] = value,
            0x20C => self.dma_go(true, at.cycle)?,
            0x300 | 0x304 => self.tx_staged[((off - 0x300) / 4) as usize] = value,
            0x308 => self.mac_go(at.cycle)?,
            0x30C => {
                if value as u64 > self.accepted {
                    return Err(format!("frees receive slots up to frame {value}, but only {} arrived", self.accepted));
                }
                self.rx_freed = self.rx_freed.max(value as u64);
            }
            0x400 => {
                self.interrupts.push((at.cycle, value));
                self.stop = true;
            }
            // Arms the timer `value` cycles on (re-arming moves it; 0 disarms).
            0x404 => self.timer_at = if value == 0 { u64::MAX } else { at.cycle + u64::from(value) },
            _ => return Err("no such NIC register (or read-only)".into()),
        }
        Ok(0)
    }

    #[inline(always)]
    fn take_stop(&mut self) -> bool {
        std::mem::take(&mut self.stop)
    }

    /// Only accesses that queue work stop the cores: blocks of firmware
    /// code run on through SRAM and the event flags.
    #[inline(always)]
    fn wants_stop(&self) -> bool {
        self.stop
    }

    #[inline(always)]
    fn issued(&mut self, thread: usize, pc: u32, cycle: u64) {
        self.recorder.issued(thread, pc, cycle);
    }

    const BLOCK_HOOK: bool = true;

    #[inline(always)]
    fn issued_block(&mut self, thread: usize, pc: u32, t0: u64, steps: &[Step]) {
        self.recorder.issued_block(thread, pc, t0, steps);
    }
}
