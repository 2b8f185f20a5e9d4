//! Machine profiles: what changing the interrupt mask costs on each machine
//! of the study (Stodolsky, Chen and Bershad 1993), and the costs it derives.
//!
//! A [`Profile`] holds the paper's idealized figures as they stand: Table 1
//! (a conventional raise/lower pair) and Table 2 (the optimistic fast path,
//! given for three machines only), plus the few hardware facts the modelled
//! effects need, each with its source in docs/models/masking.md.
//! [`Costs`] turns a profile and the scenario's effect parameters into the
//! cycles of every masking step. The modelled effects are the ones the paper
//! names as missing from its tables (cache and TLB misses, write-buffer
//! stalls, off-chip mask-register accesses): they are inputs, never fitted to
//! Table 3.

use serde::{Deserialize, Serialize};

/// The machines of Tables 1 and 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub enum Machine {
    #[serde(rename = "luna88k")]
    Luna88k,
    #[serde(rename = "flamingo")]
    Flamingo,
    #[serde(rename = "decstation_5000_120")]
    Decstation5000_120,
    #[serde(rename = "decstation_5000_200")]
    Decstation5000_200,
    #[serde(rename = "pc386")]
    Pc386,
    #[serde(rename = "gateway_66v")]
    Gateway66v,
}

impl Machine {
    pub const ALL: [Machine; 6] =
        [Machine::Luna88k, Machine::Flamingo, Machine::Decstation5000_120, Machine::Decstation5000_200, Machine::Pc386, Machine::Gateway66v];

    /// The key used in scenario files.
    pub fn key(self) -> &'static str {
        match self {
            Machine::Luna88k => "luna88k",
            Machine::Flamingo => "flamingo",
            Machine::Decstation5000_120 => "decstation_5000_120",
            Machine::Decstation5000_200 => "decstation_5000_200",
            Machine::Pc386 => "pc386",
            Machine::Gateway66v => "gateway_66v",
        }
    }

    pub fn profile(self) -> &'static Profile {
        match self {
            Machine::Luna88k => &LUNA88K,
            Machine::Flamingo => &FLAMINGO,
            Machine::Decstation5000_120 => &DS5000_120,
            Machine::Decstation5000_200 => &DS5000_200,
            Machine::Pc386 => &PC386,
            Machine::Gateway66v => &GATEWAY_66V,
        }
    }
}

/// An instruction sequence as the paper counts it: instructions, and cycles
/// estimated assuming no cache misses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sequence {
    pub instructions: u64,
    pub cycles: u64,
}

#[derive(Debug, Clone, Copy)]
pub struct Profile {
    pub machine: &'static str,
    pub processor: &'static str,
    /// Processor clock (Table 1; Table 3's cycle times for the DECstations and the Luna).
    pub clock_mhz: f64,
    /// Table 1: a conventional interrupt-mask raise/lower pair.
    pub conventional: Sequence,
    /// Table 2: the optimistic (virtual mask) raise/lower pair; `None` where
    /// the paper gives no figure.
    pub optimistic: Option<Sequence>,
    /// Hardware interrupt priority levels a critical section may name (1..=n).
    pub interrupt_levels: u8,
    /// Off-chip mask-register accesses in a conventional raise/lower pair
    /// (the paper's three-step process writes the off-chip register once per
    /// raise and once per lower).
    pub off_chip_accesses: u64,
    /// Integer registers an interrupt continuation saves (the paper: "the
    /// register state at the time of the trap and a few additional words").
    pub registers: u64,
}

pub static LUNA88K: Profile = Profile {
    machine: "Luna88k",
    processor: "Motorola 88100 (25 MHz)",
    clock_mhz: 25.0,
    conventional: Sequence { instructions: 68, cycles: 96 },
    optimistic: Some(Sequence { instructions: 51, cycles: 51 }),
    interrupt_levels: 7,
    off_chip_accesses: 2,
    registers: 32,
};

pub static FLAMINGO: Profile = Profile {
    machine: "Flamingo",
    processor: "Alpha 21064 (150 MHz)",
    clock_mhz: 150.0,
    conventional: Sequence { instructions: 25, cycles: 21 },
    optimistic: None,
    interrupt_levels: 7,
    off_chip_accesses: 2,
    registers: 32,
};

pub static DS5000_120: Profile = Profile {
    machine: "DECstation 5000/120",
    processor: "R3000 (20 MHz)",
    clock_mhz: 20.0,
    conventional: Sequence { instructions: 65, cycles: 80 },
    optimistic: Some(Sequence { instructions: 31, cycles: 31 }),
    interrupt_levels: 6,
    off_chip_accesses: 2,
    registers: 32,
};

pub static DS5000_200: Profile = Profile {
    machine: "DECstation 5000/200",
    processor: "R3000 (25 MHz)",
    clock_mhz: 25.0,
    conventional: Sequence { instructions: 14, cycles: 14 },
    optimistic: Some(Sequence { instructions: 31, cycles: 31 }),
    interrupt_levels: 6,
    off_chip_accesses: 0,
    registers: 32,
};

pub static PC386: Profile = Profile {
    machine: "386 PC",
    processor: "Intel 386DX-25 (25 MHz)",
    clock_mhz: 25.0,
    conventional: Sequence { instructions: 51, cycles: 179 },
    optimistic: None,
    interrupt_levels: 15,
    off_chip_accesses: 2,
    registers: 8,
};

pub static GATEWAY_66V: Profile = Profile {
    machine: "Gateway 66V",
    processor: "Intel 486DX2-66 (66 MHz)",
    clock_mhz: 66.0,
    conventional: Sequence { instructions: 51, cycles: 279 },
    optimistic: None,
    interrupt_levels: 15,
    off_chip_accesses: 2,
    registers: 8,
};

/// The interrupt prologue's software-mask test (load the mask, compare and
/// branch) that every interrupt pays under optimistic protection.
pub const PROLOGUE_CHECK_INSTRUCTIONS: u64 = 2;
/// "A few additional words" beyond the registers in a continuation.
pub const CONTINUATION_EXTRA_WORDS: u64 = 4;

/// Effects the paper's tables leave out, as scenario inputs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Effects {
    /// Memory-system stall cycles per instruction executed (cache and TLB
    /// misses of kernel code); 0 is the tables' idealization.
    pub stall_cycles_per_instruction: f64,
    /// Stall cycles per off-chip mask-register access (write-buffer drain
    /// and bus round trip) beyond the tables' estimate.
    pub off_chip_stall_cycles: f64,
}

/// Cycles of each masking step for one machine, protection scheme inputs
/// and effects. Raise and lower split a pair's cost in halves (the odd
/// cycle goes to the raise), so raise + lower is the pair exactly.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Costs {
    pub conventional_raise: u64,
    pub conventional_lower: u64,
    /// Optimistic enter and leave; `None` where the machine has no Table 2 figure.
    pub optimistic_enter: Option<u64>,
    pub optimistic_leave: Option<u64>,
    /// Every interrupt's software-mask test in the optimistic prologue.
    pub prologue_check: u64,
    /// Building an interrupt continuation (registers + a few words, stored).
    pub continuation: u64,
}

impl Costs {
    /// Costs of `p` under `effects`; a Table 2 figure given in the scenario
    /// (`optimistic_override`) replaces the profile's.
    pub fn new(p: &Profile, effects: Effects, optimistic_override: Option<Sequence>) -> Self {
        let stall =
            |instructions: u64, off_chip: u64| instructions as f64 * effects.stall_cycles_per_instruction + off_chip as f64 * effects.off_chip_stall_cycles;
        let cost = |s: Sequence, off_chip: u64| (s.cycles as f64 + stall(s.instructions, off_chip)).round() as u64;
        let conv = cost(p.conventional, p.off_chip_accesses);
        // The optimistic fast path touches memory variables only: no off-chip access.
        let opt = optimistic_override.or(p.optimistic).map(|s| cost(s, 0));
        let continuation = p.registers + CONTINUATION_EXTRA_WORDS;
        Costs {
            conventional_raise: conv - conv / 2,
            conventional_lower: conv / 2,
            optimistic_enter: opt.map(|c| c - c / 2),
            optimistic_leave: opt.map(|c| c / 2),
            prologue_check: cost(Sequence { instructions: PROLOGUE_CHECK_INSTRUCTIONS, cycles: PROLOGUE_CHECK_INSTRUCTIONS }, 0),
            continuation: cost(Sequence { instructions: continuation, cycles: continuation }, 0),
        }
    }

    /// A conventional raise/lower pair.
    pub fn conventional_pair(&self) -> u64 {
        self.conventional_raise + self.conventional_lower
    }

    /// An optimistic enter/leave pair (the fast path).
    pub fn optimistic_pair(&self) -> Option<u64> {
        Some(self.optimistic_enter? + self.optimistic_leave?)
    }
}
