//! The programmable NIC as a device of the machine (`[nic_firmware]`): the
//! firmware's cores and hardware (irqsim-firmware's [`Nic`]) behind the
//! interface the host driver already uses, the e1000-like NIC's receive
//! queue.
//!
//! - Frames from the machine's wire are given to the NIC ahead of their
//!   arrival, so its cores need not stop for each: each lands in a receive
//!   slot at the start of its NIC cycle (or is dropped by the MAC when the
//!   firmware has freed none), and the host learns which after the NIC
//!   has run past it ([`Firmware::arrives`], [`Firmware::drops`]).
//! - The firmware's DMA writes frames into host memory, then a return
//!   descriptor per frame and the status block's producer index. When the
//!   status block moves, each new descriptor is checked (the frame the MAC
//!   accepted next, whole, in the buffer the host posted) and the frame
//!   joins the host's receive queue ([`crate::device::nic::Nic`], with no
//!   buffer limit and no DMA time of its own: the frame is in memory).
//! - The host driver takes frames from that queue as from any NIC: with the
//!   abstract costs of the mt, Linux or NAPI path, on any controller. For
//!   each frame it takes, it posts a fresh receive buffer (a descriptor in
//!   the receive ring and the receive mailbox), so a slow host starves the
//!   firmware of buffers and the MAC drops, as on real hardware.
//! - To send, the driver writes a descriptor and the frame's header into
//!   host memory and the send mailbox; the firmware fetches them by DMA and
//!   hands the frame to its MAC. Each frame on the wire is checked against
//!   the one posted next; when the status block gives send descriptors
//!   back, the driver has a transmit completion to clean.
//! - An interrupt the firmware asks for is the NIC's interrupt on the
//!   machine ([`Effect::Interrupt`]).
//! - With `[rss]` each frame carries the flow drawn for it at the wire
//!   ([`Frame`]), and the MAC stamps it with the flow's Toeplitz hash. With
//!   one queue (RPS over the one return ring) returned frames join RSS
//!   queue 0's ring with their flows, whose hashes RPS reads. With
//!   `rss.queues` > 1 the firmware must steer (nic_rss.elf, `-DFW_RSS`):
//!   given the indirection table RSS uses on the e1000-like NIC
//!   ([`Firmware::new`]), it returns each frame on the ring of its hash's
//!   entry, each ring with its own producer index in the status block and
//!   its own interrupt vector; the host checks each frame came back on its
//!   flow's ring and puts it in that queue's ring.
//! - With kernel code (`code.program`) the host driver is the code's: the
//!   firmware's DMA reads and writes the code's memory (the machine gives
//!   it to [`Firmware::advance`]), the driver posts buffers and frames and
//!   walks the return ring itself ([`Firmware::drive_by_code`]), and what
//!   its socket delivers is checked ([`check_frame`]): the frames the MAC
//!   accepted, each once, in order, whole.
//! - For the nic-firmware study: the host may keep the send ring full by
//!   itself (`fill_send_ring_bytes`, a post per descriptor given back), a
//!   window of frames is measured with the cores' profile
//!   (`warmup_frames`, `window_frames`; irqsim-firmware's [`Window`]) and
//!   the run ends with it, and task-level firmware runs with the handler
//!   owners it is given (`owners`).
//!
//! Time: the NIC's cores run at their own clock; a host cycle `t` is NIC
//! cycle `floor(t / ratio)`, and NIC cycle `c` starts at host cycle
//! `ceil(c * ratio)` (`ratio` = host clock / NIC clock).

use super::coalesce::{CoalesceConfig, DimMode};
use super::dim::Dim;
use super::nic::Nic as HostQueue;
use super::rss::{Rss, TABLE};
use crate::engine::Time;
use irqsim_firmware::config as fw;
use irqsim_firmware::memory::{BUF, Memory, RECV_BUFS, RECV_RING, RET_RING, RING, SEND_BUFS, SEND_RING, STATUS};
use irqsim_firmware::nic::{Arrival, COPY_BYTES, Mailbox, frame_word};
use irqsim_firmware::profile::HANDLERS;
use irqsim_firmware::{Effect, HostMemory, Measured, Nic, NicConfig, Organisation, Window};
use irqsim_mips::Program;
use irqsim_params::{Param, Range, Type, absent, d};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The longest frame the MAC takes (Ethernet without jumbo frames).
pub(crate) const MAX_FRAME_BYTES: u32 = 1518;

/// `[nic_firmware]`; keys: [`FirmwareConfig::PARAMS`]. The keys stay a
/// table: the device's are checked against irqsim-firmware's own
/// parameters, which turn them into the device's settings
/// ([`NicConfig::from_table`]); the host's (`HOST_KEYS`) are read here.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct FirmwareConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    #[serde(flatten)]
    pub device: toml::Table,
}

impl FirmwareConfig {
    /// The section's keys: the program, then the device's own.
    pub const PARAMS: &'static [Param] = &[
        Param::text(
            "program",
            absent("the NIC is the e1000-like one (`[nic]`)"),
            "the NIC firmware's MIPS32 ELF (programs/firmware, bundled as `programs/firmware/nic.elf`; a path relative to the scenario): the NIC becomes the programmable one, its firmware on `cores` cores",
        ),
        fw::CORES,
        fw::ORGANISATION,
        fw::BATCH,
        fw::CLOCK_MHZ,
        fw::LINE_GBPS,
        fw::DMA_GBPS,
        fw::DMA_READ_NS,
        fw::DMA_WRITE_NS,
        fw::SRAM_BANKS,
        Param::of(
            "owners",
            Type::IntList,
            "",
            absent("frame-level: any core runs any handler"),
            Range::Int(0, 7),
            "task-level (`organisation = \"task\"`, required there): the core of each of the firmware's 8 handlers, in the order of crates/firmware's `HANDLERS` (the nic-firmware study assigns them from a 1-core run's handler cycles)",
        ),
        Param::int(
            "fill_send_ring_bytes",
            "bytes",
            d("0"),
            0,
            MAX_FRAME_BYTES as i128,
            "the host keeps the firmware's send ring full of frames of this size: one posted for each descriptor the status block gives back, at the instant the host sees it (no CPU cost); 0: the host sends only what the workload sends",
        ),
        Param::int("warmup_frames", "", d("0"), 0, 100_000_000, "frames done (put on the wire plus returned to the host) before the measured window starts"),
        Param::int(
            "window_frames",
            "",
            d("0"),
            0,
            100_000_000,
            "frames done in the measured window (its NIC cycles, instructions and profile: the `nic_firmware_window_*` metrics and the report's `nic_firmware` part); the run ends when the window does; 0: no window",
        ),
    ];

    /// The section's keys that are the machine's, not the device's.
    const HOST_KEYS: [&'static str; 4] = ["owners", "fill_send_ring_bytes", "warmup_frames", "window_frames"];

    pub fn selected(&self) -> bool {
        self.program.is_some()
    }

    /// The device's settings.
    fn device(&self) -> Result<NicConfig, (String, String)> {
        let mut t = self.device.clone();
        t.retain(|k, _| !Self::HOST_KEYS.contains(&k));
        NicConfig::from_table(&t).map_err(|msg| ("nic_firmware".into(), msg))
    }

    /// An integer key of the machine's (checked by the scenario's loader), or 0.
    fn count(&self, key: &str) -> u64 {
        self.device.get(key).and_then(toml::Value::as_integer).unwrap_or(0) as u64
    }

    /// The handler owners (task-level), checked against the cores.
    fn owners(&self, cfg: &NicConfig) -> Result<Option<Vec<u32>>, (String, String)> {
        let err = |msg: String| ("nic_firmware.owners".to_string(), msg);
        let given: Option<Vec<u32>> =
            self.device.get("owners").and_then(|v| v.as_array()).map(|a| a.iter().filter_map(|x| x.as_integer()).map(|x| x as u32).collect());
        match (cfg.organisation, given) {
            (Organisation::Frame, None) => Ok(None),
            (Organisation::Frame, Some(_)) => Err(err("only used by task-level firmware (`organisation = \"task\"`); remove the key".into())),
            (Organisation::Task, None) => Err((
                "nic_firmware.organisation".into(),
                "task-level firmware needs `owners`: the core of each of its 8 handlers (the nic-firmware study takes them from a 1-core run)".into(),
            )),
            (Organisation::Task, Some(o)) if o.len() != HANDLERS.len() => {
                Err(err(format!("one core per handler: expected {} entries ({}), got {}", HANDLERS.len(), HANDLERS.join(", "), o.len())))
            }
            (Organisation::Task, Some(o)) => match o.iter().find(|&&k| k as usize >= cfg.cores) {
                Some(k) => Err(err(format!("core {k} does not exist (`nic_firmware.cores` is {})", cfg.cores))),
                None => Ok(Some(o)),
            },
        }
    }
}

/// The programmable NIC on the machine, and the host memory its DMA writes.
pub struct Firmware {
    nic: Nic,
    mem: Memory,
    effects: Vec<Effect>,
    /// Host cycles per NIC cycle.
    ratio: f64,
    /// Frames the MAC accepted, not yet returned to the host.
    accepted: VecDeque<Frame>,
    /// Arrivals of frames the MAC dropped that the host has not counted yet.
    pub drops: Vec<Time>,
    /// Return descriptors the host has read (the next one's number), in
    /// all and on each return ring.
    returned: u64,
    ring_returned: Vec<u64>,
    /// Receive buffers posted (the receive mailbox's value).
    posted: u64,
    /// Frames posted to send (the send mailbox's value), the lengths of
    /// those not yet on the wire, and the send consumer index the status
    /// block last gave (descriptors the host may reuse).
    send_posted: u64,
    sending: VecDeque<u32>,
    send_done: u64,
    /// Frames of this size the host keeps the send ring full of (0: none).
    fill: u32,
    /// The measured window (`window_frames`).
    window: Window,
    /// Interrupts the firmware asked for; with coalescing in the firmware
    /// (`coalesce`), those its frame count and its timer raised.
    pub interrupts: u64,
    pub coalesce: Option<(u64, u64)>,
    /// The host's DIM, one per return ring (`coalesce.adaptive_rx`; empty
    /// without), and the coalescing words it wrote that the NIC has not
    /// reached yet (with the host's mask words), in time order.
    pub dim: Vec<Dim>,
    written: VecDeque<(u64, Write)>,
    /// The host's interrupt mask as last written (bit q: ring q's).
    mask: u32,
    /// The device's settings (its clock turns DIM's microseconds into cycles).
    cfg: NicConfig,
    /// The firmware steers over return rings (`fw_rings`): its interrupt's value names the ring.
    steers: bool,
    /// The host driver is kernel code (`code.program`): it posts buffers
    /// and frames, and reads the return ring, in the code's memory.
    code: bool,
    /// Frames the MAC has accepted in all (the next one's number).
    pub numbered: u64,
    /// Something the host must see came since the last [`Firmware::effects`].
    pub due: bool,
}

/// A frame from the wire: its arrival, its bytes and its flow (RPS reads
/// the flow's hash on the host; 0 without `[rss]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    pub arrival: Time,
    pub bytes: u32,
    pub flow: u32,
}

/// A broken protocol: what the host found, for an invariant error.
pub type Broken = String;

/// What the host saw in one look ([`Firmware::effects`]).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// The vectors the firmware asked to interrupt, a bit each (with one
    /// return ring, bit 0 whatever the vector).
    pub vectors: u32,
    /// Frames the MAC put on the wire, and their bytes.
    pub sent: u64,
    pub sent_bytes: u64,
    /// The measured window ended: the run ends here.
    pub window_ended: bool,
}

impl Firmware {
    /// Loads the firmware; `host_mhz` is the machine's clock; `rings`
    /// return rings (`rss.queues`), the firmware steering over them when
    /// more than one; `coalesce` (`[coalesce]`, when set) the firmware's
    /// interrupt moderation.
    pub fn new(
        c: &FirmwareConfig,
        base_dir: &std::path::Path,
        host_mhz: f64,
        rings: usize,
        coalesce: Option<&CoalesceConfig>,
    ) -> Result<Self, (String, String)> {
        let given = c.program.as_deref().expect("firmware part selected");
        let path = base_dir.join(given);
        // The loader's errors name the file.
        let program = Program::load(&path).map_err(|e| ("nic_firmware.program".to_string(), e.to_string()))?;
        let cfg = c.device()?;
        let owners = c.owners(&cfg)?;
        if c.count("window_frames") == 0 && c.count("warmup_frames") > 0 {
            return Err((
                "nic_firmware.warmup_frames".into(),
                "the warm-up of a measured window: set `nic_firmware.window_frames` too, or remove the key".into(),
            ));
        }
        let (mut nic, owners) = Nic::new(&program, &cfg, owners.as_deref()).map_err(|e| ("nic_firmware.program".to_string(), e.to_string()))?;
        if rings > 1 {
            // RSS's table (`ethtool -X equal`, as `device/rss.rs` fills the e1000-like NIC's).
            let table: Vec<u8> = (0..TABLE).map(|i| (i % rings) as u8).collect();
            let want = if coalesce.is_some() { "nic_rss_coal.elf (it moderates too)" } else { "nic_rss.elf" };
            nic.steer(&table).map_err(|e| {
                ("nic_firmware.program".to_string(), format!("{e}; `rss.queues` = {rings} needs firmware that steers, programs/firmware/{want}"))
            })?;
        }
        let mut dim = Vec::new();
        if let Some(k) = coalesce {
            if k.adaptive_rx && k.dim_mode == DimMode::Cqe {
                return Err((
                    "coalesce.dim_mode".into(),
                    "the firmware's timer runs from the first frame it counts (EQE); CQE's restart at each frame is not built: set \"eqe\" or remove the key"
                        .into(),
                ));
            }
            // DIM starts from its first profile (`NET_DIM_DEF_PROFILE_EQE`), as on the e1000-like NIC.
            dim = (0..if k.adaptive_rx { rings } else { 0 }).map(|_| Dim::new(false, host_mhz)).collect();
            let (usecs, frames) = dim.first().map_or((k.rx_usecs, k.rx_frames), |d: &Dim| d.profiles[d.ix]);
            let want = if rings > 1 { "nic_rss_coal.elf (it steers too)" } else { "nic_coal.elf" };
            for q in 0..rings as u32 {
                nic.coalesce(q, frames, timer_cycles(&cfg, usecs)).map_err(|e| {
                    ("nic_firmware.program".to_string(), format!("{e}; `[coalesce]` needs firmware that moderates its interrupts, programs/firmware/{want}"))
                })?;
            }
        }
        let mut f = Firmware {
            nic,
            mem: Memory::default(),
            effects: Vec::new(),
            ratio: host_mhz / cfg.clock_mhz,
            accepted: VecDeque::new(),
            drops: Vec::new(),
            returned: 0,
            ring_returned: vec![0; rings],
            posted: 0,
            send_posted: 0,
            sending: VecDeque::new(),
            send_done: 0,
            fill: c.count("fill_send_ring_bytes") as u32,
            window: Window::new(&cfg, owners, c.count("warmup_frames"), c.count("window_frames")),
            interrupts: 0,
            coalesce: coalesce.map(|_| (0, 0)),
            dim,
            written: VecDeque::new(),
            mask: 0,
            cfg,
            steers: program.symbol("fw_rings").is_some(),
            code: false,
            numbered: 0,
            due: false,
        };
        // The host sees the status block when it is written (each frame returned, each send descriptor given back).
        f.nic.watch_host_writes(STATUS..STATUS + 8);
        f.post_buffers(0);
        Ok(f)
    }

    /// The host driver is kernel code: it posts its own receive buffers
    /// (the abstract host's are taken back before the NIC runs) and reads
    /// what the firmware returns in the code's memory; the frames the MAC
    /// accepts are then the machine's to number ([`Firmware::accepted`]).
    pub fn drive_by_code(&mut self) {
        debug_assert_eq!(self.nic.now(), 0, "before the NIC runs");
        self.code = true;
        self.posted = 0;
        self.nic.host_writes_mailbox(Mailbox::Receive, 0);
    }

    /// The host's side of the receive queue: no buffer limit, no DMA time.
    pub fn host_queue(cycles_per_us: f64, link_mbps: f64) -> HostQueue {
        HostQueue::new(u64::MAX, 1, f64::INFINITY, cycles_per_us, link_mbps)
    }

    /// The NIC cycle host cycle `t` falls in.
    fn cycle(&self, t: Time) -> u64 {
        (t as f64 / self.ratio) as u64
    }

    /// The host cycle NIC cycle `c` starts at.
    pub fn host_time(&self, c: u64) -> Time {
        (c as f64 * self.ratio).ceil() as Time
    }

    /// The NIC cycle the device is at.
    pub fn now(&self) -> u64 {
        self.nic.now()
    }

    /// Runs the NIC to host cycle `t`, or to the end of the first cycle the
    /// host must act in (an interrupt asked for, a frame sent, the status
    /// block written), and sets `due` if it stopped for one. Its DMA
    /// reaches `host` (the code's memory), or the device's own host memory.
    /// Frames that landed meanwhile join those accepted, or `drops`.
    pub fn advance(&mut self, t: Time, host: Option<&mut dyn HostMemory>) -> Result<(), String> {
        let to = self.cycle(t);
        if to <= self.nic.now() {
            return Ok(());
        }
        let before = self.effects.len();
        let mem: &mut dyn HostMemory = match host {
            Some(h) => h,
            None => &mut self.mem,
        };
        let mut ended = false;
        loop {
            // The host's coalescing writes reach the NIC at the start of their cycle.
            while let Some(&(_, w)) = self.written.front().filter(|w| w.0 <= self.nic.now()) {
                match w {
                    Write::Coalescing { ring, frames, cycles } => self.nic.coalesce(ring, frames, cycles).map_err(|e| e.to_string())?,
                    Write::Mask(word) => self.nic.host_masks(word),
                }
                self.written.pop_front();
            }
            if ended || self.nic.now() >= to {
                break;
            }
            let until = self.written.front().map_or(to, |w| w.0.min(to));
            let n = self.effects.len();
            self.nic.advance(until, mem, &mut self.effects).map_err(|e| e.to_string())?;
            ended = self.nic.now() < until || self.effects[n..].iter().any(ends);
        }
        // The NIC keeps the frames given until they land, and hands them back.
        let (took, lost) = self.nic.landings();
        self.numbered += took.len() as u64;
        self.accepted.extend(took.map(|a| Frame { arrival: a.tag, bytes: a.len, flow: a.flow }));
        self.drops.extend(lost);
        self.due |= self.effects[before..].iter().any(ends);
        // The host reads memory, not the DMA writes' reports: keeping them
        // would grow without bound under firmware that never writes status.
        self.effects.retain(|e| !matches!(e, Effect::DmaWrite { .. }));
        Ok(())
    }

    /// A frame arrives from the wire, no earlier than the device is and in
    /// order: it lands when the device runs to it. `false` if the MAC drops
    /// it at once (longer than Ethernet's frames: a giant).
    /// `hash` is its flow's RSS hash (0 without `[rss]`).
    pub fn arrives(&mut self, frame: Frame, hash: u32) -> bool {
        if frame.bytes > MAX_FRAME_BYTES {
            return false;
        }
        // An arrival is a time of the run, below 2^63: signed conversions, a
        // third of the unsigned ones' instructions, give the same cycle.
        let at = (frame.arrival as i64 as f64 / self.ratio) as i64 as u64;
        self.nic.frame_arrives(Arrival { at, len: frame.bytes, hash, tag: frame.arrival, flow: frame.flow });
        true
    }

    /// Return rings (`rss.queues`; 1 without RSS or with RPS alone).
    pub fn rings(&self) -> usize {
        self.ring_returned.len()
    }

    /// The run ends at host cycle `end`: frames given for later never
    /// arrived. Returns how many.
    pub fn withdraw_after(&mut self, end: Time) -> u64 {
        self.nic.withdraw_after(end) as u64
    }

    /// What the host sees of the effects since the last call: the frames
    /// the status block now returns (checked, in order) go into `host`, or
    /// with `[rss]` into the ring of `rings` their flow steers to (queue 0
    /// with one return ring; the flow kept for RPS), at `now`; frames the
    /// MAC sent are checked against those posted; send
    /// descriptors the status block gives back leave a transmit completion
    /// for the driver to clean (`host.tx_done_pending`).
    pub fn effects(&mut self, now: Time, host: &mut HostQueue, mut rings: Option<&mut Rss>) -> Result<Seen, Broken> {
        let mut seen = Seen::default();
        for e in std::mem::take(&mut self.effects) {
            match e {
                Effect::Interrupt { vector, .. } => {
                    // Firmware that steers writes the ring (and, coalescing,
                    // the rule in bits 8 up); nic_coal.elf's value is the rule.
                    let (v, rule) = if self.steers { (vector & 0xFF, vector >> 8) } else { (0, vector) };
                    if v as usize >= self.rings() {
                        return Err(format!("the firmware interrupts vector {v}, but the NIC has {} return rings", self.rings()));
                    }
                    seen.vectors |= 1 << v;
                    self.interrupts += 1;
                    // Which rule fired: 2 the timer, else the frame count.
                    if let Some((frames, timer)) = &mut self.coalesce {
                        *if rule == 2 { timer } else { frames } += 1;
                    }
                }
                Effect::Transmit { seq, len, .. } => {
                    let k = self.send_posted - self.sending.len() as u64;
                    let want = self.sending.pop_front().ok_or_else(|| format!("the NIC sent frame {seq} ({len} bytes), but the host posted none to send"))?;
                    if u64::from(seq) != k % (1 << 32) || len != want {
                        return Err(format!("the NIC sent frame {seq} of {len} bytes where frame {k} of {want} bytes was next"));
                    }
                    seen.sent += 1;
                    seen.sent_bytes += u64::from(len);
                }
                Effect::DmaWrite { .. } => {}
            }
        }
        if self.code {
            // The driver reads the status block and the return ring itself.
            return Ok(seen);
        }
        let done = u64::from(self.mem.read(STATUS));
        if done > self.send_done {
            if done > self.send_posted - self.sending.len() as u64 {
                return Err(format!(
                    "the status block gives back {done} send descriptors, but only {} frames were sent",
                    self.send_posted - self.sending.len() as u64
                ));
            }
            self.send_done = done;
            host.tx_done_pending = true;
        }
        let produced = u64::from(self.mem.read(STATUS + 4));
        while self.returned < produced {
            let q = match (&rings, self.accepted.front()) {
                (Some(r), Some(f)) if self.rings() > 1 => r.flow_queue[f.flow as usize] as usize,
                _ => 0,
            };
            let f = self.check_returned(q)?;
            // The host queues have no buffer limit: the frame is in memory.
            match rings.as_deref_mut() {
                Some(r) => {
                    r.rings[q].receive_from(f.arrival, now, f.bytes);
                    if r.keep_flows {
                        r.waiting_flows[q].push_back(f.flow);
                    }
                }
                None => _ = host.receive_from(f.arrival, now, f.bytes),
            }
            self.returned += 1;
            self.ring_returned[q] += 1;
        }
        if self.rings() > 1 {
            self.check_ring_producers()?;
        }
        seen.window_ended = self.window.observe(&mut self.nic, self.returned);
        Ok(seen)
    }

    /// The driver posts a frame of `bytes` to send (its number and length
    /// in the buffer's first words, as the wire's check reads them);
    /// `false` when the send ring is full of descriptors not yet given back.
    pub fn send(&mut self, bytes: u32) -> bool {
        if self.send_posted - self.send_done >= RING {
            return false;
        }
        let i = self.send_posted;
        let (bd, buf) = (SEND_RING + slot(i) * 16, SEND_BUFS + slot(i) * BUF);
        for (k, v) in [buf, bytes, i as u32, 0].into_iter().enumerate() {
            self.mem.write(bd + 4 * k as u32, v);
        }
        self.mem.write(buf, i as u32);
        self.mem.write(buf + 4, bytes);
        self.send_posted += 1;
        self.sending.push_back(bytes);
        self.nic.host_writes_mailbox(Mailbox::Send, self.send_posted);
        true
    }

    /// Kernel code posted a frame of `bytes` to send (its descriptor, its
    /// header and the send mailbox are the driver's): the wire's check
    /// expects it next.
    pub fn code_sends(&mut self, bytes: u32) {
        self.send_posted += 1;
        self.sending.push_back(bytes);
    }

    /// Frames the MAC accepted since the last call, in order, and the
    /// first one's number. Kernel code's frames are the machine's once
    /// accepted.
    pub fn accepted(&mut self) -> (u64, std::collections::vec_deque::Drain<'_, Frame>) {
        debug_assert!(self.code);
        (self.numbered - self.accepted.len() as u64, self.accepted.drain(..))
    }

    /// The mailbox write of a driver that is code, now.
    pub fn mailbox(&mut self, send: bool, value: u32) {
        self.nic.host_writes_mailbox(if send { Mailbox::Send } else { Mailbox::Receive }, u64::from(value));
    }

    /// Host cycles of `n` NIC cycles.
    pub fn host_cycles(&self, n: u64) -> Time {
        (n as f64 * self.ratio).ceil() as Time
    }

    /// Frames posted to send and not yet on the wire.
    pub fn sending(&self) -> u64 {
        self.sending.len() as u64
    }

    /// Frames posted to send in all (the next one's number).
    pub fn send_posted(&self) -> u64 {
        self.send_posted
    }

    /// The next return descriptor of ring `q` (the ring of the frame's
    /// flow) must be the frame the MAC accepted next, whole, in the buffer
    /// posted for it, stamped and headed with its number.
    fn check_returned(&mut self, q: usize) -> Result<Frame, Broken> {
        let k = self.returned;
        let j = self.ring_returned[q];
        let bd = RET_RING + q as u32 * RET_STRIDE + slot(j) * 16;
        let (addr, len, stamp) = (self.mem.read(bd), self.mem.read(bd + 4), u64::from(self.mem.read(bd + 8)));
        let Some(&frame) = self.accepted.front() else {
            return Err(format!("return descriptor {k}: the MAC has accepted no frame that is not already returned"));
        };
        if stamp != k % (1 << 32) {
            let on = if self.rings() > 1 { format!(" (descriptor {j} of ring {q}, its flow's)") } else { String::new() };
            return Err(format!("return descriptor {k}{on} carries frame {stamp} (out of order, lost, duplicated or on another ring)"));
        }
        let expect = RECV_BUFS + slot(k) * BUF;
        if addr != expect || len != frame.bytes || u64::from(self.mem.read(addr)) != k % (1 << 32) {
            let head = self.mem.read(addr);
            let bytes = frame.bytes;
            return Err(format!("frame {k} returned at 0x{addr:08x} with length {len} and header {head} (want 0x{expect:08x}, {bytes} bytes, header {k})"));
        }
        self.accepted.pop_front();
        Ok(frame)
    }

    /// Each ring's producer index in the status block covers the frames
    /// the host took off it (written before the total, which the host follows).
    fn check_ring_producers(&mut self) -> Result<(), Broken> {
        for (q, &n) in self.ring_returned.iter().enumerate() {
            let p = u64::from(self.mem.read(STATUS + RING_STATUS + 4 * q as u32));
            if p < n % (1 << 32) {
                return Err(format!("return ring {q}'s producer index is {p}, behind the {n} frames returned on it"));
            }
        }
        Ok(())
    }

    /// The host posts what it has to post before the NIC runs on: a
    /// receive buffer per frame the driver has taken (`taken` in all), and
    /// with `fill_send_ring_bytes` a frame to send per send descriptor
    /// given back; returns the frames it posted to send.
    pub fn post(&mut self, taken: u64) -> u64 {
        if self.code {
            return 0;
        }
        self.post_buffers(taken);
        let before = self.send_posted;
        while self.fill > 0 && self.send(self.fill) {}
        self.send_posted - before
    }

    /// The driver has taken `taken` frames in all: it keeps the receive
    /// ring full behind them (a buffer per frame taken).
    fn post_buffers(&mut self, taken: u64) {
        let want = taken + RING;
        if want == self.posted {
            return;
        }
        while self.posted < want {
            let j = self.posted;
            self.mem.write(RECV_RING + slot(j) * 16, RECV_BUFS + slot(j) * BUF);
            self.mem.write(RECV_RING + slot(j) * 16 + 4, BUF);
            self.posted += 1;
        }
        self.nic.host_writes_mailbox(Mailbox::Receive, self.posted);
    }

    /// Return ring `q`'s DIM takes a sample at host cycle `now` of the
    /// driver's counters (as the e1000-like NIC's at napi_complete_done);
    /// when it moves to another profile the host writes the profile's
    /// frame count and timer into the firmware's coalescing words, which
    /// the NIC sees at the start of `now`'s NIC cycle ([`Firmware::advance`]).
    /// Returns the new profile.
    pub fn dim_sample(&mut self, q: usize, now: Time, events: u64, frames: u64, bytes: u64) -> Option<usize> {
        let d = self.dim.get_mut(q)?;
        let ix = d.sample(now, events, frames, bytes)?;
        let (usecs, n) = d.profiles[ix];
        self.host_writes_coalescing(now, q, n, usecs);
        Some(ix)
    }

    /// The host writes ring `q`'s coalescing words at host cycle `now`;
    /// the NIC sees them from the start of `now`'s NIC cycle.
    fn host_writes_coalescing(&mut self, now: Time, q: usize, frames: u32, usecs: u32) {
        let at = self.cycle(now).max(self.nic.now());
        self.written.push_back((at, Write::Coalescing { ring: q as u32, frames, cycles: timer_cycles(&self.cfg, usecs) }));
    }

    /// The host's interrupt mask at host cycle `now` (bit q: ring q's
    /// interrupt masked); firmware that moderates sees a change from the
    /// start of `now`'s NIC cycle and counts nothing while masked.
    pub fn host_masks(&mut self, now: Time, word: u32) {
        if word == self.mask || self.coalesce.is_none() {
            return;
        }
        self.mask = word;
        let at = self.cycle(now).max(self.nic.now());
        self.written.push_back((at, Write::Mask(word)));
    }

    /// Frames returned to the host in all.
    pub fn returned(&self) -> u64 {
        self.returned
    }

    /// Frames from the wire the host has not yet seen: not landed yet, or
    /// accepted by the MAC and not yet returned.
    pub fn in_flight(&self) -> u64 {
        self.nic.arriving() + self.accepted.len() as u64
    }

    /// Instructions the firmware's cores completed.
    pub fn instructions(&self) -> u64 {
        self.nic.instructions()
    }

    /// The measured window, once it has ended.
    pub fn window(&self) -> Option<&Measured> {
        self.window.measured()
    }
}

/// A host write into the firmware's words, seen from its NIC cycle on.
#[derive(Debug, Clone, Copy)]
enum Write {
    /// DIM's profile for a ring (`fw_coal[ring]`).
    Coalescing { ring: u32, frames: u32, cycles: u32 },
    /// The host's interrupt mask (`fw_masked`).
    Mask(u32),
}

/// The bytes a socket delivered (`got`, the frame's first up to
/// [`COPY_BYTES`], as far as the firmware's DMA wrote them) must be frame
/// `k` of `len` bytes as the MAC received it. Returns the first byte that
/// differs.
pub fn check_frame(k: u32, len: u32, got: &[u8]) -> Result<(), Broken> {
    let n = len.min(COPY_BYTES) as usize;
    let want = (0..n.div_ceil(4) as u32).flat_map(|i| frame_word(k, len, i).to_be_bytes());
    match got.iter().zip(want).take(n).position(|(g, w)| *g != w) {
        None => Ok(()),
        Some(i) => Err(format!(
            "frame {k} ({len} bytes) delivered with byte {i} = {:#04x}, not the {:#04x} the MAC received (corrupted)",
            got[i],
            frame_word(k, len, i as u32 / 4).to_be_bytes()[i % 4]
        )),
    }
}

/// Bytes of a frame the firmware's DMA puts in host memory (the rest is timed only).
pub fn copied(len: u32) -> u32 {
    len.min(COPY_BYTES)
}

/// Several return rings (nic_rss.elf, programs/firmware/nic.h): ring `q` at
/// `RET_RING + q * RET_STRIDE`, its producer index at `STATUS + RING_STATUS + 4q`.
const RET_STRIDE: u32 = RING as u32 * 16;
const RING_STATUS: u32 = 0x10;

/// Whether the host must act on an effect: all but DMA writes outside the status block.
fn ends(e: &Effect) -> bool {
    !matches!(e, Effect::DmaWrite { addr, .. } if !(STATUS..STATUS + 8).contains(addr))
}

/// `usecs` as the firmware's timer cycles.
fn timer_cycles(cfg: &NicConfig, usecs: u32) -> u32 {
    u32::try_from(cfg.cycles(f64::from(usecs) * 1000.0)).unwrap_or(u32::MAX)
}

fn slot(i: u64) -> u32 {
    (i % RING) as u32
}

/// Keys the programmable NIC replaces, and parts it does not combine with
/// (yet, or by nature), as `(prefix, why)`; RSS's keys are checked with
/// their values (`config/checks/firmware.rs`).
const REPLACED: &[(&str, &str)] = &[
    ("nic.rx_buffer_bytes", "the firmware's receive slots in SRAM hold arriving frames"),
    ("nic.dma_bytes_per_cycle", "the firmware's DMA engines move frames (`nic_firmware.dma_gbps`)"),
    ("nic.rx_ring_frames", "the host ring is the firmware's (256 receive buffers)"),
    ("nic.tx_queue_packets", "the firmware's send ring (256 descriptors) holds frames to send"),
    ("bus.link_mbps", "the firmware's DMA engines have their own bandwidth (`nic_firmware.dma_gbps`)"),
];

/// The abstract host's keys, refused when the host driver is kernel code.
const ABSTRACT_HOST: &[(&str, &str)] = &[
    ("nic_firmware.fill_send_ring_bytes", "the driver (`code.program`) sends what the workload sends, through its own send entry"),
    ("nic_firmware.warmup_frames", "the measured window counts frames the abstract host returns; with kernel code as the driver there is none"),
    ("nic_firmware.window_frames", "the measured window counts frames the abstract host returns; with kernel code as the driver there is none"),
];

/// The keys a scenario sets that the programmable NIC refuses, or any of
/// its keys without `program`.
pub(crate) fn excludes(explicit: &[String]) -> Result<(), (String, String)> {
    let ours = |k: &&String| k.starts_with("nic_firmware.");
    if !explicit.iter().any(|k| k == "nic_firmware.program") {
        return match explicit.iter().find(ours) {
            Some(k) => Err((k.clone(), "only used when `nic_firmware.program` is set; set it or remove the key".into())),
            None => Ok(()),
        };
    }
    for k in explicit {
        if let Some((_, why)) = REPLACED.iter().find(|(p, _)| k.starts_with(p)) {
            return Err((k.clone(), format!("the NIC is the programmable one (`nic_firmware.program`): {why}; remove the key")));
        }
    }
    if explicit.iter().any(|k| k == "code.program")
        && let Some((k, why)) = ABSTRACT_HOST.iter().find(|(p, _)| explicit.iter().any(|k| k == p))
    {
        return Err((k.to_string(), format!("the host driver is kernel code: {why}; remove the key")));
    }
    Ok(())
}

/// Takes the keys the programmable NIC replaces out of a scenario written
/// back (`Scenario::to_json`), and with kernel code as its host driver
/// (`code`) the abstract host's, so that it loads again.
pub(crate) fn drop_replaced(doc: &mut serde_json::Value, code: bool) {
    let host = if code { ABSTRACT_HOST } else { &[] };
    for (key, _) in REPLACED.iter().chain(host) {
        let Some((section, leaf)) = key.split_once('.') else { continue };
        if let Some(t) = doc.get_mut(section).and_then(|t| t.as_object_mut()) {
            t.remove(leaf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn firmware_of(elf: &str, rings: usize) -> Firmware {
        let elf = format!("{}/../../python/irqsim/programs/firmware/{elf}", env!("CARGO_MANIFEST_DIR"));
        let c = FirmwareConfig { program: Some(elf), device: toml::Table::new() };
        Firmware::new(&c, std::path::Path::new("/"), 1000.0, rings, None).unwrap()
    }

    fn firmware() -> Firmware {
        firmware_of("nic.elf", 1)
    }

    /// Frame `k` of `bytes` returned as the firmware returns it, as
    /// descriptor `j` of return ring `q`.
    fn plant_on(f: &mut Firmware, (q, j): (u32, u32), k: u32, bytes: u32, stamp: u32, head: u32, addr: u32) {
        let bd = RET_RING + q * RET_STRIDE + (j % RING as u32) * 16;
        for (i, w) in [addr, bytes, stamp, q].into_iter().enumerate() {
            f.mem.write(bd + 4 * i as u32, w);
        }
        f.mem.write(addr, head);
        f.mem.write(STATUS + RING_STATUS + 4 * q, j + 1);
        f.mem.write(STATUS + 4, k + 1);
    }

    fn plant(f: &mut Firmware, k: u32, bytes: u32, stamp: u32, head: u32, addr: u32) {
        plant_on(f, (0, k), k, bytes, stamp, head, addr);
    }

    fn host() -> HostQueue {
        Firmware::host_queue(1000.0, 10_000.0)
    }

    #[test]
    fn the_host_takes_a_returned_frame_with_its_arrival() {
        let mut f = firmware();
        f.accepted.push_back(Frame { arrival: 77, bytes: 64, flow: 0 });
        plant(&mut f, 0, 64, 0, 0, RECV_BUFS);
        let mut q = host();
        assert_eq!(f.effects(100, &mut q, None), Ok(Seen::default()));
        let (frame, in_memory) = q.take_rx(100).unwrap();
        assert_eq!((frame.arrival, frame.bytes, in_memory), (77, 64, 100));
        assert_eq!((f.returned(), f.in_flight()), (1, 0));
    }

    /// Each check catches its own planted fault.
    #[test]
    fn each_check_catches_a_wrong_frame() {
        let cases = [
            ("accepted no frame", (64, 0, 0, RECV_BUFS), false),
            ("carries frame 1", (64, 1, 0, RECV_BUFS), true),
            ("with length 60", (60, 0, 0, RECV_BUFS), true),
            ("header 5", (64, 0, 5, RECV_BUFS), true),
            ("returned at 0x30000800", (64, 0, 0, RECV_BUFS + BUF), true),
        ];
        for (want, (bytes, stamp, head, addr), accepted) in cases {
            let mut f = firmware();
            if accepted {
                f.accepted.push_back(Frame { arrival: 0, bytes: 64, flow: 0 });
            }
            plant(&mut f, 0, bytes, stamp, head, addr);
            let e = f.effects(0, &mut host(), None).unwrap_err();
            assert!(e.contains(want), "{want}: {e}");
        }
    }

    /// With several return rings a frame must come back on its flow's ring
    /// (RSS's table over its hash), where the host takes it into that
    /// queue; one on another ring is caught. One-ring firmware is refused.
    #[test]
    fn a_frame_on_another_ring_is_caught() {
        let c = crate::device::rss::RssConfig { kind: crate::device::rss::RssKind::Toeplitz, queues: 2, flows: 64, flow_skew: 0.0, rps_cpus: 0 };
        let flow = |q: u8, r: &Rss| r.flow_queue.iter().position(|&x| x == q).unwrap() as u32;
        for (ring, ok) in [(1, true), (0, false)] {
            let mut r = Rss::new(&c, 1, host);
            let mut f = firmware_of("nic_rss.elf", 2);
            // Frame 3 (an empty descriptor reads as frame 0).
            f.returned = 3;
            f.accepted.push_back(Frame { arrival: 5, bytes: 64, flow: flow(1, &r) });
            plant_on(&mut f, (ring, 0), 3, 64, 3, 3, RECV_BUFS + 3 * BUF);
            match f.effects(9, &mut host(), Some(&mut r)) {
                Ok(_) => assert!(ok && r.rings[1].rx_waiting() == 1 && f.ring_returned == [0, 1]),
                Err(e) => assert!(!ok && e.contains("descriptor 0 of ring 1") && e.contains("another ring"), "{e}"),
            }
        }
        let c = FirmwareConfig {
            program: Some(format!("{}/../../python/irqsim/programs/firmware/nic.elf", env!("CARGO_MANIFEST_DIR"))),
            device: toml::Table::new(),
        };
        let e = Firmware::new(&c, std::path::Path::new("/"), 1000.0, 2, None).err().unwrap();
        assert!(e.0 == "nic_firmware.program" && e.1.contains("one ring"), "{e:?}");
    }

    /// A coalescing write the host makes at a host cycle reaches the
    /// firmware when the NIC reaches that cycle's NIC cycle, not before,
    /// though the NIC lags (as behind kernel code).
    #[test]
    fn the_hosts_coalescing_write_lands_at_its_cycle() {
        let elf = format!("{}/../../python/irqsim/programs/firmware/nic_coal.elf", env!("CARGO_MANIFEST_DIR"));
        let c = FirmwareConfig { program: Some(elf), device: toml::Table::new() };
        let k = CoalesceConfig { rx_usecs: 20, rx_frames: 8, adaptive_rx: false, dim_mode: DimMode::Eqe };
        // Host at 1000 MHz, the NIC at 166: host cycle 6000 is NIC cycle 996.
        let mut f = Firmware::new(&c, std::path::Path::new("/"), 1000.0, 1, Some(&k)).unwrap();
        assert_eq!(f.nic.coalescing(0), Some((8, 3320)));
        f.host_writes_coalescing(6000, 0, 64, 128);
        f.advance(5990, None).unwrap();
        assert_eq!((f.now(), f.nic.coalescing(0)), (994, Some((8, 3320))));
        f.advance(6000, None).unwrap();
        assert_eq!((f.now(), f.nic.coalescing(0)), (996, Some((64, 21248))));
    }

    /// A frame on the wire that is not the one posted next is caught.
    #[test]
    fn the_wire_check_catches_a_wrong_frame_sent() {
        let mut f = firmware();
        assert!(f.send(100) && f.send(200));
        f.effects.push(Effect::Transmit { at: 1, seq: 1, len: 200 });
        let e = f.effects(0, &mut host(), None).unwrap_err();
        assert!(e.contains("frame 1 of 200 bytes where frame 0 of 100 bytes"), "{e}");
        let mut f = firmware();
        f.effects.push(Effect::Transmit { at: 1, seq: 0, len: 64 });
        assert!(f.effects(0, &mut host(), None).unwrap_err().contains("posted none"));
    }
}
