//! The machine's device registers as code sees them (the uncached window
//! from [`irqsim_mips::device::DEVICE_BASE`]): each NIC's register file, in
//! the shape of Intel's e1000 (an interrupt cause register cleared by its
//! read, mask set and clear registers, descriptor rings with head and tail),
//! and the kernel services through which code asks the machine to post
//! work, wake the application, count a frame, end an interrupt, or ask the
//! NAPI part to schedule a poll and to complete one (napi_schedule,
//! napi_complete_done, whose answer code reads back). Beside the
//! programmable NIC (`[nic_firmware]`), its host interface ([`fw`]): the
//! two mailboxes and where its rings and status block are in the kernel's
//! memory; NIC 0's cause and mask registers are then its interrupt's.
//!
//! A register access happens inside a run of the instruction-set simulator;
//! what needs the machine becomes an [`Action`] and, when it must happen at
//! once (work to post, an interrupt to raise), stops the run after the
//! instruction so the machine acts at that very cycle.

use super::fold::Folds;
use irqsim_mips::device::{Access, DEVICE_BASE, Devices};
use std::collections::HashMap;

/// NIC `k`'s registers start at `DEVICE_BASE + k * NIC_STRIDE` for the
/// first [`LOW_NICS`]; NICs past them (`[[nics.others]]`) at
/// `DEVICE_BASE + HIGH_NICS + k * NIC_STRIDE`, past the receive queues'
/// blocks ([`nic_base`]).
pub const NIC_STRIDE: u32 = 0x100;
pub const LOW_NICS: usize = 8;
pub const HIGH_NICS: u32 = 0x2000;
/// The kernel services.
pub const SERVICES: u32 = 0xBF01_F000;
/// NICs the window holds at least (receive NIC 0, a second one for
/// forwarding); with `[[nics.others]]`, one more for each past the first.
pub const NICS: usize = 2;

/// Where NIC `k`'s registers start, from `DEVICE_BASE`.
pub const fn nic_base(k: usize) -> u32 {
    if k < LOW_NICS { k as u32 * NIC_STRIDE } else { HIGH_NICS + k as u32 * NIC_STRIDE }
}

/// NIC 0's receive queues' registers (RSS) start at `DEVICE_BASE +
/// RXQ_BASE + q * RXQ_STRIDE`, as ixgbe's RDBAL(n) = 0x01000 + 0x40 n
/// (drivers/net/ethernet/intel/ixgbe/ixgbe_type.h): RDBA, RDLEN, RDH and RDT
/// at 0x00, 0x08, 0x10 and 0x18. Queue 0 is the ring of the registers below.
pub const RXQ_BASE: u32 = 0x1000;
pub const RXQ_STRIDE: u32 = 0x40;
/// The most receive queues a NIC has (`rss.queues`' range, and each
/// other NIC's `queues`).
pub const MAX_QUEUES: usize = 16;
/// Another NIC `k`'s receive queues (its own RSS) have their blocks at
/// `DEVICE_BASE + OTHER_RXQ_BASE + (k - 1) * OTHER_RXQ_STRIDE + q *
/// RXQ_STRIDE`, laid out as NIC 0's; its queue 0 is the ring of its
/// registers RDBA..RDT.
pub const OTHER_RXQ_BASE: u32 = 0x5000;
pub const OTHER_RXQ_STRIDE: u32 = MAX_QUEUES as u32 * RXQ_STRIDE;

/// The programmable NIC's host interface starts at `DEVICE_BASE + FW_BASE`
/// (only with `[nic_firmware]`; programs/firmware/nic.h is the firmware's
/// side of the same protocol).
pub const FW_BASE: u32 = 0x0800;

/// Offsets in the programmable NIC's host interface. The rings and the
/// status block are at fixed addresses of the kernel's memory, which the
/// firmware's DMA engines read and write (irqsim-firmware's `memory.rs`);
/// the driver reads them here rather than hard-coding them.
pub mod fw {
    /// W: the send mailbox: frames posted to send in all (the send producer index).
    pub const MBOX_SEND: u32 = 0x00;
    /// W: the receive mailbox: receive buffers posted in all.
    pub const MBOX_RECV: u32 = 0x04;
    /// R: the send ring, the receive (buffer) ring, the return ring and the
    /// status block (+0 send consumer, +4 receive producer).
    pub const SEND_RING: u32 = 0x08;
    pub const RECV_RING: u32 = 0x0C;
    pub const RET_RING: u32 = 0x10;
    pub const STATUS: u32 = 0x14;
    /// R: descriptors in each ring.
    pub const RING: u32 = 0x18;
}

/// NIC register offsets.
pub mod reg {
    pub const ICR: u32 = 0x00;
    pub const IMS: u32 = 0x04;
    pub const IMC: u32 = 0x08;
    pub const RDBA: u32 = 0x10;
    pub const RDLEN: u32 = 0x14;
    pub const RDH: u32 = 0x18;
    pub const RDT: u32 = 0x1C;
    pub const TDBA: u32 = 0x20;
    pub const TDLEN: u32 = 0x24;
    pub const TDH: u32 = 0x28;
    pub const TDT: u32 = 0x2C;
    pub const RX_MISSED: u32 = 0x30;
    /// Read-only: the NIC's receive queues (NIC 0's `rss.queues`, another
    /// NIC's `queues`; else 1).
    pub const QUEUES: u32 = 0x34;
}

/// Offsets in a receive queue's register block.
pub mod rxq {
    pub const RDBA: u32 = 0x00;
    pub const RDLEN: u32 = 0x08;
    pub const RDH: u32 = 0x10;
    pub const RDT: u32 = 0x18;
}

/// Kernel-service offsets from [`SERVICES`].
pub mod service {
    pub const SOFTIRQ_RAISE: u32 = 0x00;
    pub const WAKE: u32 = 0x04;
    pub const DELIVERED: u32 = 0x08;
    pub const DROPPED: u32 = 0x0C;
    pub const EOI: u32 = 0x10;
    pub const IRQ_SAVE: u32 = 0x14;
    pub const IRQ_RESTORE: u32 = 0x18;
    /// napi_schedule(queue): the top half asks the NAPI part for a poll.
    pub const NAPI_SCHEDULE: u32 = 0x1C;
    /// napi_complete_done(work_done), written from a poll; its read is the
    /// answer: 1 if the driver may enable the interrupt again, 0 if not
    /// (the NAPI part deferred it, or a busy poller owns the instance).
    pub const NAPI_COMPLETE: u32 = 0x20;
    /// get_rps_cpu(tag), written from a poll; its read is the CPU whose
    /// backlog the frame's flow goes to (`u32::MAX`: no RPS, stay here).
    pub const RPS_CPU: u32 = 0x24;
    /// Read-only: the CPUs RPS steers to (`rss.rps_cpus`; 0: off).
    pub const RPS_CPUS: u32 = 0x28;
    /// Beside the programmable NIC, in place of DELIVERED: the address of
    /// the bytes the socket hands the application (the frame as the NIC
    /// wrote it, its first 256 bytes at most); the machine checks they are
    /// the frame next in order, whole.
    pub const FRAME: u32 = 0x2C;
    /// The route cache had no entry to give the frame `tag` (every one
    /// held); the kernel then drops it with DROPPED.
    pub const RT_OVERFLOW: u32 = 0x30;
    /// Read-only: the NICs the machine has (1 + `[[nics.others]]`; NIC 1
    /// forwards without them).
    pub const NICS: u32 = 0x34;
}

/// Interrupt causes (ICR and IMS bits): receive queue 0 and transmit done;
/// receive queue q >= 1 of a NIC has bit 15 + q ([`rx_cause`]), a bit per
/// MSI-X vector as ixgbe's EICR has.
pub const CAUSE_RX: u32 = 1;
pub const CAUSE_TXDW: u32 = 2;

/// The interrupt cause of a NIC's receive queue `q`.
pub const fn rx_cause(q: usize) -> u32 {
    if q == 0 { CAUSE_RX } else { 1 << (15 + q) }
}
/// Descriptor status bits.
pub const DD: u8 = 1;
pub const EOP: u8 = 2;
/// Bytes per descriptor, and the most a ring may have.
pub const DESC_BYTES: u32 = 16;
pub const MAX_RING: u32 = 4096;

/// A descriptor ring's registers: base, length (descriptors), head (the
/// NIC's next) and tail (software's last given).
#[derive(Debug, Clone, Copy, Default)]
pub struct Ring {
    pub base: u32,
    pub len: u32,
    pub head: u32,
    pub tail: u32,
}

impl Ring {
    /// Frames the NIC wrote that software has not taken: from the
    /// descriptor after the tail (software's next) up to the head.
    pub fn waiting(&self) -> u64 {
        if self.len == 0 { 0 } else { u64::from((self.head + 2 * self.len - self.tail - 1) % self.len) }
    }
}

/// One NIC's register file.
#[derive(Debug, Clone, Copy, Default)]
pub struct NicRegs {
    pub icr: u32,
    pub ims: u32,
    /// The receive ring (queue 0 of NIC 0).
    pub rx: Ring,
    pub tdba: u32,
    pub tdlen: u32,
    pub tdh: u32,
    pub tdt: u32,
    pub rx_missed: u32,
}

impl NicRegs {
    /// Whether the NIC asserts its interrupt: an enabled cause is pending.
    pub fn asserted(&self) -> bool {
        self.icr & self.ims != 0
    }
}

/// What a register access asks of the machine. `thread` is the machine's
/// index of the hardware thread that made the access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    SoftIrq {
        thread: usize,
    },
    Wake {
        socket: u32,
    },
    Eoi {
        irq: u32,
    },
    /// The driver enabled receive queue `queue`'s cause again: its poll
    /// completed (napi_complete_done), where DIM takes a sample.
    RxEnabled {
        queue: usize,
    },
    /// NIC `nic` may now assert its interrupt (causes were enabled).
    Unmask {
        nic: usize,
    },
    /// Software queued frames for NIC `nic` to send.
    Transmit {
        nic: usize,
    },
    /// `local_irq_save` (`spin_lock_irqsave`) on machine thread `thread`:
    /// its critical section opens, masking what its controllers deliver.
    IrqSave {
        thread: usize,
    },
    /// `local_irq_restore`: the innermost section of `thread` closes.
    IrqRestore {
        thread: usize,
    },
    /// napi_schedule of receive queue `queue`'s instance from `thread`.
    NapiSchedule {
        thread: usize,
        queue: u32,
    },
    /// napi_complete_done of the instance `thread` polls, after `work` frames.
    NapiComplete {
        thread: usize,
        work: u32,
    },
    /// get_rps_cpu of frame `tag` on `thread`.
    RpsCpu {
        thread: usize,
        tag: u32,
    },
    /// The programmable NIC's send (`send`) or receive mailbox was written.
    Mailbox {
        send: bool,
        value: u32,
    },
    /// The socket delivered the frame whose bytes are at `addr` (service FRAME).
    Frame {
        addr: u32,
    },
}

/// Beside the programmable NIC, whose frames are tagged by their number
/// (+ 1), the other NICs' frames are tagged from here on.
pub const PORT_TAGS: u32 = 0x8000_0000;

/// A frame the machine put on a receive ring and has not seen leave.
#[derive(Debug, Clone, Copy)]
pub struct InFlight {
    pub arrival: u64,
    pub bytes: u32,
    /// The receive queue it came through, and its flow (RSS).
    pub queue: u8,
    pub flow: u32,
}

/// A frame software finished with: delivered to the application or dropped.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    pub frame: InFlight,
    pub at: u64,
    pub delivered: bool,
}

/// The registers behind the window, and what accesses asked for.
pub struct Ports {
    /// Each NIC's registers: NIC 0, then NIC 1 (forwarding, or the first of
    /// `[[nics.others]]`), then the other NICs.
    pub nics: Vec<NicRegs>,
    /// The other NICs (`[[nics.others]]`): NIC `k >= 1` is the machine's
    /// port `k - 1`.
    pub others: usize,
    /// Each receiving NIC's (NIC 0's, then the other NICs') first receive
    /// queue, numbered as the machine numbers their NAPI instances.
    first: Vec<usize>,
    /// Each receiving NIC's receive queues past its first (RSS).
    more: Vec<Vec<Ring>>,
    /// Receive queue `q`'s NIC and its queue there.
    owner: Vec<(u8, u8)>,
    /// Frames in flight by tag.
    pub frames: HashMap<u32, InFlight>,
    pub actions: Vec<Action>,
    pub outcomes: Vec<Outcome>,
    /// Frames the route cache had no entry for (RT_OVERFLOW).
    pub rt_overflow: u64,
    /// Cycles a register read stalls the thread.
    pub read_cycles: u32,
    /// Hardware threads per core of the simulated cores (to name a thread).
    pub threads_per_core: usize,
    /// Report each enabling of NIC 0's receive cause (DIM samples there).
    pub report_rx_enable: bool,
    /// Cycles the mask's raise and lower stall the thread (`[masking]`'s
    /// profile and scheme; 0 without it: the store is the cost).
    pub mask_cycles: [u32; 2],
    /// Per machine thread, the answer of the last service it asked (the
    /// service's offset and the value), until it reads it.
    pub answers: Vec<Option<(u32, u32)>>,
    /// `rss.rps_cpus` (0: no RPS).
    pub rps_cpus: u32,
    /// The NIC is the programmable one: its host interface is there.
    pub firmware: bool,
    /// Stops that need not be made (`fold.rs`).
    pub fold: Folds,
    stop: bool,
}

impl Ports {
    pub fn new(read_cycles: u32, threads_per_core: usize) -> Self {
        Ports {
            nics: vec![NicRegs::default(); NICS],
            others: 0,
            first: vec![0],
            more: vec![Vec::new()],
            owner: vec![(0, 0)],
            frames: HashMap::new(),
            actions: Vec::new(),
            outcomes: Vec::new(),
            rt_overflow: 0,
            read_cycles,
            threads_per_core,
            report_rx_enable: false,
            mask_cycles: [0, 0],
            answers: Vec::new(),
            rps_cpus: 0,
            firmware: false,
            fold: Folds::default(),
            stop: false,
        }
    }

    /// The receiving NICs' queues: NIC 0's `nic0`, then each other NIC's
    /// (`[[nics.others]]`), numbered one after another from NIC 0's.
    pub fn set_queues(&mut self, nic0: usize, others: &[usize]) {
        let counts: Vec<usize> = std::iter::once(nic0).chain(others.iter().copied()).collect();
        self.others = others.len();
        self.nics.resize(NICS.max(counts.len()), NicRegs::default());
        self.first = counts.iter().scan(0, |next, &n| Some(std::mem::replace(next, *next + n))).collect();
        self.more = counts.iter().map(|&n| vec![Ring::default(); n - 1]).collect();
        self.owner = counts.iter().enumerate().flat_map(|(k, &n)| (0..n).map(move |i| (k as u8, i as u8))).collect();
    }

    /// NIC 0's receive queues.
    pub fn queues(&self) -> usize {
        self.nic_queues(0)
    }

    /// Whether NIC `k` is another NIC (`[[nics.others]]`).
    pub fn is_other(&self, k: usize) -> bool {
        k >= 1 && k <= self.others
    }

    /// NIC `k`'s receive queues (none for a NIC that only sends).
    pub fn nic_queues(&self, k: usize) -> usize {
        self.more.get(k).map_or(0, |m| 1 + m.len())
    }

    /// The receive queues of NIC `k`, as numbers.
    pub fn rx_queues_of(&self, k: usize) -> std::ops::Range<usize> {
        let first = self.first.get(k).copied().unwrap_or(0);
        first..first + self.nic_queues(k)
    }

    /// Receive queue `q`'s NIC and its queue there.
    pub fn rx_owner(&self, q: usize) -> (usize, usize) {
        let (k, i) = self.owner[q];
        (usize::from(k), usize::from(i))
    }

    /// Receive queue `q`'s ring.
    pub fn rx_ring(&mut self, q: usize) -> &mut Ring {
        match self.rx_owner(q) {
            (k, 0) => &mut self.nics[k].rx,
            (k, i) => &mut self.more[k][i - 1],
        }
    }

    /// The NIC of receive queue `q`, and its receive cause there.
    pub fn rx_nic(&self, q: usize) -> (usize, u32) {
        let (k, i) = self.rx_owner(q);
        (k, rx_cause(i))
    }

    /// Whether receive queue `q`'s interrupt (its vector) is asserted.
    pub fn rx_asserted(&self, q: usize) -> bool {
        let (k, cause) = self.rx_nic(q);
        let n = &self.nics[k];
        n.icr & n.ims & cause != 0
    }

    fn act(&mut self, a: Action) {
        self.actions.push(a);
        self.stop = true;
    }

    fn finish(&mut self, tag: u32, at: u64, delivered: bool) -> Result<(), String> {
        let frame = self.frames.remove(&tag).ok_or_else(|| format!("frame tag {tag} is not in flight (never received, or already counted)"))?;
        self.outcomes.push(Outcome { frame, at, delivered });
        Ok(())
    }

    fn nic_write(&mut self, k: usize, off: u32, v: u32) -> Result<(), String> {
        let n = &mut self.nics[k];
        match off {
            reg::IMS => {
                n.ims |= v;
                let asserted = n.asserted();
                if self.report_rx_enable && (k == 0 || self.is_other(k)) {
                    let first = self.first[k];
                    for queue in self.rx_queues_of(k).filter(|&q| v & rx_cause(q - first) != 0) {
                        self.act(Action::RxEnabled { queue });
                    }
                }
                if asserted {
                    self.act(Action::Unmask { nic: k });
                }
            }
            reg::IMC => n.ims &= !v,
            reg::RDBA | reg::RDLEN | reg::RDT => ring_write(&mut n.rx, off - reg::RDBA, v)?,
            reg::TDBA => n.tdba = aligned(v)?,
            reg::TDLEN => (n.tdlen, n.tdh, n.tdt) = (ring_len(v)?, 0, 0),
            reg::TDT => {
                n.tdt = index(v, n.tdlen)?;
                self.act(Action::Transmit { nic: k });
            }
            reg::ICR | reg::RDH | reg::TDH | reg::RX_MISSED | reg::QUEUES => return Err("read-only register".into()),
            _ => return Err("no such NIC register".into()),
        }
        Ok(())
    }

    /// A kernel service; returns the cycles it stalls the thread.
    fn service(&mut self, off: u32, v: u32, at: Access) -> Result<u32, String> {
        let thread = at.core * self.threads_per_core + at.thread;
        match off {
            // Its action reads no time; a frame may wait to be counted (`fold.rs`).
            service::IRQ_SAVE if self.fold.may(at.cycle, !self.outcomes.is_empty()) => {
                self.actions.push(Action::IrqSave { thread });
                self.fold.folded(at.cycle);
                return Ok(self.mask_cycles[0]);
            }
            service::IRQ_SAVE => {
                self.act(Action::IrqSave { thread });
                return Ok(self.mask_cycles[0]);
            }
            // The closing of a section opened since the last stop, on a quiet thread (`fold.rs`).
            service::IRQ_RESTORE
                if self.fold.may(at.cycle, !self.outcomes.is_empty())
                    && self.fold.quiet(thread)
                    && self.actions.last() == Some(&Action::IrqSave { thread }) =>
            {
                self.actions.push(Action::IrqRestore { thread });
                self.fold.folded(at.cycle);
                return Ok(self.mask_cycles[1]);
            }
            service::IRQ_RESTORE => {
                self.act(Action::IrqRestore { thread });
                return Ok(self.mask_cycles[1]);
            }
            service::SOFTIRQ_RAISE if v == 0 => self.act(Action::SoftIrq { thread }),
            service::SOFTIRQ_RAISE => return Err(format!("softirq {v}: only NET_RX (0) exists")),
            service::WAKE => self.act(Action::Wake { socket: v }),
            service::DELIVERED if self.firmware && v < PORT_TAGS => {
                return Err("the programmable NIC's frames are delivered by FRAME (the bytes' address, which the machine checks), not by tag".into());
            }
            service::DELIVERED => self.finish(v, at.cycle, true)?,
            service::DROPPED => self.finish(v, at.cycle, false)?,
            service::RT_OVERFLOW if self.frames.contains_key(&v) => self.rt_overflow += 1,
            service::RT_OVERFLOW => return Err(format!("route overflow of frame tag {v}, which is not in flight")),
            // While the NIC asserts nothing, its action finds nothing to raise (`fold.rs`).
            service::EOI if (v as usize) < self.nics.len() && !self.nics[v as usize].asserted() && self.fold.may(at.cycle, !self.outcomes.is_empty()) => {
                self.actions.push(Action::Eoi { irq: v });
                self.fold.folded(at.cycle);
            }
            service::EOI if (v as usize) < self.nics.len() => self.act(Action::Eoi { irq: v }),
            service::EOI => return Err(format!("EOI of irq {v}: only NIC interrupts 0..{} exist", self.nics.len())),
            service::NAPI_SCHEDULE => self.act(Action::NapiSchedule { thread, queue: v }),
            service::NAPI_COMPLETE => self.act(Action::NapiComplete { thread, work: v }),
            service::RPS_CPU => self.act(Action::RpsCpu { thread, tag: v }),
            service::FRAME if self.firmware => self.act(Action::Frame { addr: v }),
            service::FRAME => return Err("FRAME is the programmable NIC's (`nic_firmware.program`); this NIC's frames are DELIVERED by tag".into()),
            _ => return Err("no such kernel service".into()),
        }
        Ok(0)
    }
}

fn ring_len(v: u32) -> Result<u32, String> {
    if v.is_power_of_two() && v <= MAX_RING { Ok(v) } else { Err(format!("ring length {v}: expected a power of two up to {MAX_RING}")) }
}

fn index(v: u32, len: u32) -> Result<u32, String> {
    if v < len { Ok(v) } else { Err(format!("tail {v} beyond the ring of {len} descriptors")) }
}

fn aligned(v: u32) -> Result<u32, String> {
    if v.is_multiple_of(DESC_BYTES) { Ok(v) } else { Err(format!("ring base {v:#x} is not {DESC_BYTES}-byte aligned")) }
}

/// A write to a receive ring's register, `off` in the queue block's
/// spacing halved (base 0, length 4, tail 0xC: the legacy registers').
fn ring_write(r: &mut Ring, off: u32, v: u32) -> Result<(), String> {
    match off {
        0x0 => r.base = aligned(v)?,
        0x4 => (r.len, r.head, r.tail) = (ring_len(v)?, 0, 0),
        0xC => r.tail = index(v, r.len)?,
        _ => return Err("read-only register".into()),
    }
    Ok(())
}

/// The register of the programmable NIC's host interface an address is, if any.
fn fw_of(addr: u32) -> Option<u32> {
    let off = (addr - DEVICE_BASE).checked_sub(FW_BASE)?;
    (off <= fw::RING).then_some(off)
}

/// A read of the programmable NIC's host interface.
fn fw_read(off: u32) -> Result<u32, String> {
    use irqsim_firmware::memory as host;
    Ok(match off {
        fw::SEND_RING => host::SEND_RING,
        fw::RECV_RING => host::RECV_RING,
        fw::RET_RING => host::RET_RING,
        fw::STATUS => host::STATUS,
        fw::RING => host::RING as u32,
        _ => return Err("write-only register (a mailbox)".into()),
    })
}

/// Which of `nics` NICs and register an address is, if any.
fn nic_of(addr: u32, nics: usize) -> Option<(usize, u32)> {
    let off = addr - DEVICE_BASE;
    let k = match off.checked_sub(HIGH_NICS) {
        Some(high) => (high / NIC_STRIDE) as usize,
        None => (off / NIC_STRIDE) as usize,
    };
    (k < nics && off.checked_sub(nic_base(k)).is_some_and(|d| d < NIC_STRIDE)).then_some((k, off % NIC_STRIDE))
}

impl Ports {
    /// Which receive queue (of NIC 0, or of another NIC past
    /// [`OTHER_RXQ_BASE`]) and register an address is, if any (the offset
    /// halved to the legacy registers' spacing).
    fn rxq_of(&self, addr: u32) -> Option<(usize, u32)> {
        let off = addr - DEVICE_BASE;
        let (k, off) = match off.checked_sub(OTHER_RXQ_BASE) {
            Some(o) => (1 + (o / OTHER_RXQ_STRIDE) as usize, o % OTHER_RXQ_STRIDE),
            None => (0, off.checked_sub(RXQ_BASE).filter(|&o| o < OTHER_RXQ_STRIDE)?),
        };
        let i = (off / RXQ_STRIDE) as usize;
        let reg = off % RXQ_STRIDE;
        (i < self.nic_queues(k) && reg <= rxq::RDT && reg.is_multiple_of(8)).then(|| (self.first[k] + i, reg / 2))
    }
}

impl Devices for Ports {
    fn read(&mut self, addr: u32, at: Access) -> Result<(u32, u32), String> {
        if let Some(off) = addr.checked_sub(SERVICES) {
            let thread = at.core * self.threads_per_core + at.thread;
            return match off {
                service::RPS_CPUS => Ok((self.rps_cpus, 0)),
                service::NICS => Ok((1 + self.others as u32, 0)),
                service::NAPI_COMPLETE | service::RPS_CPU => match self.answers.get_mut(thread).and_then(Option::take) {
                    Some((asked, v)) if asked == off => Ok((v, 0)),
                    _ => Err("a service's answer read before the service was asked (write its argument first)".into()),
                },
                _ => Err("no readable kernel service here".into()),
            };
        }
        if let Some(off) = fw_of(addr).filter(|_| self.firmware) {
            return Ok((fw_read(off)?, self.read_cycles));
        }
        if let Some((q, off)) = self.rxq_of(addr) {
            let r = *self.rx_ring(q);
            return Ok(([r.base, r.len, r.head, r.tail][off as usize / 4], self.read_cycles));
        }
        let Some((k, off)) = nic_of(addr, self.nics.len()) else {
            return Err("no readable device register here".into());
        };
        let queues = self.nic_queues(k).max(1) as u32;
        let n = &mut self.nics[k];
        let v = match off {
            reg::ICR => std::mem::take(&mut n.icr),
            reg::IMS => n.ims,
            reg::RDBA => n.rx.base,
            reg::RDLEN => n.rx.len,
            reg::RDH => n.rx.head,
            reg::RDT => n.rx.tail,
            reg::QUEUES => queues,
            reg::TDBA => n.tdba,
            reg::TDLEN => n.tdlen,
            reg::TDH => n.tdh,
            reg::TDT => n.tdt,
            reg::RX_MISSED => n.rx_missed,
            _ => return Err("no such NIC register".into()),
        };
        Ok((v, self.read_cycles))
    }

    fn write(&mut self, addr: u32, value: u32, mask: u32, at: Access) -> Result<u32, String> {
        if mask != u32::MAX {
            return Err("device registers take aligned 32-bit stores only".into());
        }
        if addr >= SERVICES {
            return self.service(addr - SERVICES, value, at);
        }
        if let Some(off) = fw_of(addr).filter(|_| self.firmware) {
            match off {
                fw::MBOX_SEND | fw::MBOX_RECV => self.act(Action::Mailbox { send: off == fw::MBOX_SEND, value }),
                _ => return Err("read-only register".into()),
            }
            return Ok(0);
        }
        if let Some((q, off)) = self.rxq_of(addr) {
            ring_write(self.rx_ring(q), off, value)?;
            return Ok(0);
        }
        let Some((k, off)) = nic_of(addr, self.nics.len()) else {
            return Err("no device register here".into());
        };
        self.nic_write(k, off, value)?;
        Ok(0)
    }

    /// Only an access that stops the run leaves a block of code.
    #[inline(always)]
    fn wants_stop(&self) -> bool {
        self.stop
    }

    #[inline(always)]
    fn take_stop(&mut self) -> bool {
        std::mem::take(&mut self.stop)
    }
}
