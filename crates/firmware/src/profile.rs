//! Where the firmware's cycles go, by program counter: per-instruction
//! execution counts (the basic-block weights of the VLIW study) and
//! cycles, and their roll-up by function and by handler. A core's cycle is
//! charged to the instruction it is issuing or stalled on.

use irqsim_mips::Program;

/// The firmware's top-level handlers, in the order of `enum handler` in
/// programs/firmware/fw.c (the index is what `fw_cfg.owner` is indexed by).
pub const HANDLERS: [&str; 8] =
    ["mailbox", "fetch_send_bds", "fetch_recv_bds", "dma_read_complete", "fetch_frame_data", "receive", "dma_write_complete", "send_complete"];
/// Index of "in the dispatch loop, in no handler".
pub const DISPATCH: usize = HANDLERS.len();

/// What kind of time a function's own cycles are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Spinning on or taking a lock (lock_acquire, try_lock).
    Lock,
    /// Keeping frames in order (deliver_in_order).
    Ordering,
    /// Waiting for room in a DMA queue (dma_wait_space).
    DmaWait,
    Work,
}

/// Functions of a program, and which one each text word belongs to.
pub struct Functions {
    pub base: u32,
    pub names: Vec<String>,
    pub kinds: Vec<Kind>,
    /// Handler index of each function (None: not a top-level handler).
    pub handler: Vec<Option<usize>>,
    pub entry: Vec<u32>,
    of_word: Vec<u16>,
    pub dispatch: Option<u16>,
}

pub const NO_FUNCTION: u16 = u16::MAX;

impl Functions {
    pub fn new(p: &Program) -> Self {
        let exec = p.segments.iter().filter(|s| s.executable);
        let base = exec.clone().map(|s| s.vaddr & !3).min().unwrap_or(0);
        let end = exec.map(|s| s.vaddr + s.memsz).max().unwrap_or(0);
        let mut f = Functions {
            base,
            names: vec![],
            kinds: vec![],
            handler: vec![],
            entry: vec![],
            of_word: vec![NO_FUNCTION; ((end - base) / 4) as usize],
            dispatch: None,
        };
        let mut syms: Vec<_> = p.symbols.iter().filter(|s| s.size > 0 && s.addr >= base && s.addr < end).collect();
        syms.sort_by_key(|s| (s.addr, s.name.clone()));
        syms.dedup_by_key(|s| s.addr);
        for s in syms {
            let id = f.names.len() as u16;
            let kind = match s.name.as_str() {
                "lock_acquire" | "try_lock" => Kind::Lock,
                "deliver_in_order" => Kind::Ordering,
                "dma_wait_space" => Kind::DmaWait,
                _ => Kind::Work,
            };
            if s.name == "fw_main" {
                f.dispatch = Some(id);
            }
            f.names.push(s.name.clone());
            f.kinds.push(kind);
            f.handler.push(HANDLERS.iter().position(|h| *h == s.name));
            f.entry.push(s.addr);
            let lo = ((s.addr - base) / 4) as usize;
            let hi = (((s.addr + s.size).min(end) - base) / 4) as usize;
            f.of_word[lo..hi].fill(id);
        }
        f
    }

    /// Index of the text word at `pc`, if in the text.
    #[inline]
    pub fn word(&self, pc: u32) -> Option<usize> {
        let i = (pc.wrapping_sub(self.base) / 4) as usize;
        (pc >= self.base && i < self.of_word.len()).then_some(i)
    }

    #[inline]
    pub fn of(&self, word: usize) -> u16 {
        self.of_word[word]
    }

    pub fn words(&self) -> usize {
        self.of_word.len()
    }
}

/// Counts gathered while measuring.
pub struct Profile {
    /// Per text word: times executed, and cycles charged to it.
    pub executed: Vec<u64>,
    pub cycles: Vec<u64>,
    /// Per handler (and [`DISPATCH`]): cycles and instructions including
    /// everything it calls, and invocations.
    pub handler_cycles: [u64; DISPATCH + 1],
    pub handler_instructions: [u64; DISPATCH + 1],
    pub invocations: [u64; DISPATCH + 1],
    /// Cycles by kind of time, split by whether a handler was running.
    pub lock: u64,
    pub ordering: u64,
    pub dma_wait: u64,
    pub handler_work: u64,
    pub dispatch_work: u64,
}

impl Profile {
    pub fn new(words: usize) -> Self {
        Profile {
            executed: vec![0; words],
            cycles: vec![0; words],
            handler_cycles: [0; DISPATCH + 1],
            handler_instructions: [0; DISPATCH + 1],
            invocations: [0; DISPATCH + 1],
            lock: 0,
            ordering: 0,
            dma_wait: 0,
            handler_work: 0,
            dispatch_work: 0,
        }
    }

    /// Charges one core's cycle at `pc` (`executed`: the instruction issued);
    /// `current` is that core's running handler, updated here.
    #[inline]
    pub fn charge(&mut self, f: &Functions, pc: u32, executed: bool, current: &mut usize) {
        let Some(w) = f.word(pc) else {
            return;
        };
        let id = f.of(w);
        if id != NO_FUNCTION {
            if let Some(h) = f.handler[id as usize] {
                if executed && pc == f.entry[id as usize] {
                    self.invocations[h] += 1;
                }
                *current = h;
            } else if Some(id) == f.dispatch {
                *current = DISPATCH;
            }
        }
        self.executed[w] += executed as u64;
        self.cycles[w] += 1;
        self.handler_cycles[*current] += 1;
        self.handler_instructions[*current] += executed as u64;
        let kind = if id == NO_FUNCTION { Kind::Work } else { f.kinds[id as usize] };
        match kind {
            Kind::Lock => self.lock += 1,
            Kind::Ordering => self.ordering += 1,
            Kind::DmaWait => self.dma_wait += 1,
            Kind::Work if *current == DISPATCH => self.dispatch_work += 1,
            Kind::Work => self.handler_work += 1,
        }
    }

    /// Executed-instruction counts by text address, nonzero only.
    pub fn counts(&self, f: &Functions) -> Vec<(u32, u64)> {
        self.executed.iter().enumerate().filter(|e| *e.1 > 0).map(|(w, &n)| (f.base + 4 * w as u32, n)).collect()
    }
}
