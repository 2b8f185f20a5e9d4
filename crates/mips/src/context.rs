//! A hardware register context: the architectural state of one thread of
//! code (32 general registers, HI/LO and the PC pair that makes delay slots
//! restartable). A core's hardware thread runs one context at a time; a
//! machine with multithreaded contexts keeps several and switches between
//! them by swapping which one a thread runs, with no save or restore.

/// Register numbers of the o32 ABI used by the loader and call helpers.
pub mod reg {
    pub const V0: usize = 2;
    pub const A0: usize = 4;
    pub const A3: usize = 7;
    pub const SP: usize = 29;
    pub const RA: usize = 31;
}

/// Where a called activity returns to: a `jr $ra` to this address ends the
/// activity instead of fetching (the address is in unmapped kseg3 and never
/// holds code).
pub const RETURN_ADDRESS: u32 = 0xFFFF_FFF0;

/// Slots in the register file: the 32 registers, then one per other value
/// of a `u8` register number, never written (always 0). An instruction's
/// register fields (`u8`) then index it with no mask and no bounds check.
pub const REG_SLOTS: usize = 256;

/// The architectural state of one thread of code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Context {
    /// The general registers, `r[0]` to `r[31]` (see [`REG_SLOTS`]).
    pub r: [u32; REG_SLOTS],
    pub hi: u32,
    pub lo: u32,
    /// The next instruction to execute.
    pub pc: u32,
    /// The one after it: differs from `pc + 4` while a delay slot is pending,
    /// so a thread preempted between a branch and its slot resumes exactly.
    pub npc: u32,
}

impl Default for Context {
    fn default() -> Self {
        Context { r: [0; REG_SLOTS], hi: 0, lo: 0, pc: 0, npc: 0 }
    }
}

impl Context {
    /// A context about to run the program entry `pc` with stack `sp`.
    pub fn at(pc: u32, sp: u32) -> Self {
        let mut c = Context { pc, npc: pc.wrapping_add(4), ..Default::default() };
        c.r[reg::SP] = sp;
        c
    }

    /// A context about to call `entry(args...)` as an o32 function on the
    /// stack `sp` (16 bytes of argument save area are reserved, as the ABI
    /// requires); it returns to [`RETURN_ADDRESS`].
    pub fn call(entry: u32, sp: u32, args: &[u32]) -> Self {
        let mut c = Context::at(entry, (sp & !7).wrapping_sub(16));
        for (k, &a) in args.iter().take(4).enumerate() {
            c.r[reg::A0 + k] = a;
        }
        c.r[reg::RA] = RETURN_ADDRESS;
        c
    }

    /// True once a called activity has returned.
    pub fn returned(&self) -> bool {
        self.pc == RETURN_ADDRESS
    }
}
