//! Instruction decoding: a 32-bit MIPS word becomes a compact [`Inst`]
//! once, so the interpreter's hot loop matches on a dense enum instead of
//! re-extracting bit fields. Branch and jump targets are resolved to
//! absolute addresses at decode time (the decoder knows the PC).

/// Operations of the integer MIPS II subset gcc emits for `-march=r4000 -mabi=32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Op {
    // Shifts: rd = rt op sa (imm) or rt op rs.
    Sll,
    Srl,
    Sra,
    Sllv,
    Srlv,
    Srav,
    Sync,
    Mfhi,
    Mthi,
    Mflo,
    Mtlo,
    Mult,
    Multu,
    Div,
    Divu,
    Add,
    Addu,
    Sub,
    Subu,
    And,
    Or,
    Xor,
    Nor,
    Slt,
    Sltu,
    // Conditional traps, register and immediate forms.
    Tge,
    Tgeu,
    Tlt,
    Tltu,
    Teq,
    Tne,
    Tgei,
    Tgeiu,
    Tlti,
    Tltiu,
    Teqi,
    Tnei,
    // Immediate arithmetic: imm already sign- or zero-extended as the op needs.
    Addi,
    Addiu,
    Slti,
    Sltiu,
    Andi,
    Ori,
    Xori,
    Lui,
    // Loads and stores: address = rs + imm (sign-extended).
    Lb,
    Lh,
    Lwl,
    Lw,
    Lbu,
    Lhu,
    Lwr,
    Sb,
    Sh,
    Swl,
    Sw,
    Swr,
    Ll,
    Sc,
    /// Cache maintenance and prefetch: no architectural effect here.
    CacheOp,
    // From here on, the operations that change the flow ([`Op::transfers`]).
    // Jumps through registers.
    Jr,
    Jalr,
    Syscall,
    Break,
    // Branches: imm is the absolute target.
    Bltz,
    Bgez,
    Bltzal,
    Bgezal,
    Beq,
    Bne,
    Blez,
    Bgtz,
    // Branch-likely: the delay slot is annulled when not taken.
    Bltzl,
    Bgezl,
    Bltzall,
    Bgezall,
    Beql,
    Bnel,
    Blezl,
    Bgtzl,
    J,
    Jal,
    /// Anything else: stops the thread with an error naming PC and word.
    Unsupported,
}

/// One decoded instruction (12 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inst {
    pub op: Op,
    pub rs: u8,
    pub rt: u8,
    pub rd: u8,
    /// Immediate (extended), shift amount, or absolute branch/jump target.
    pub imm: u32,
    /// The registers it reads (0 when unused; `$zero` never interlocks),
    /// kept here so the timing model need not match on the operation.
    pub reads: [u8; 2],
    /// What the timing model needs to know: [`Inst::LOAD`], [`Inst::MULT`], [`Inst::DIV`], [`Inst::USES_HILO`];
    /// and [`Inst::STORE`]. Zero for every other instruction (the common case a block runs fastest).
    pub class: u8,
}

impl Op {
    /// True for a jump, branch, `syscall`, `break` or undecodable word:
    /// what ends a run of instructions that go on in order.
    #[inline(always)]
    pub fn transfers(self) -> bool {
        self as u8 >= Op::Jr as u8
    }

    /// True for a jump or branch (it has a delay slot).
    pub fn has_delay_slot(self) -> bool {
        self.transfers() && !matches!(self, Op::Syscall | Op::Break | Op::Unsupported)
    }
}

impl Inst {
    pub const LOAD: u8 = 1;
    pub const MULT: u8 = 2;
    pub const DIV: u8 = 4;
    /// Waits for HI/LO: reads it, or starts a new multiply/divide.
    pub const USES_HILO: u8 = 8;
    /// Writes memory (so may write the text, a device or a cache control).
    pub const STORE: u8 = 16;
    /// Goes to the data bus: may stall, reach a device or write the text.
    pub const MEMORY: u8 = Inst::LOAD | Inst::STORE;
    /// Leaves a result in flight for the scoreboard.
    pub const IN_FLIGHT: u8 = Inst::LOAD | Inst::MULT | Inst::DIV;

    fn class_of(op: Op) -> u8 {
        use Op::*;
        match op {
            Lb | Lh | Lwl | Lw | Lbu | Lhu | Lwr | Ll => Inst::LOAD,
            Mult | Multu => Inst::MULT | Inst::USES_HILO,
            Div | Divu => Inst::DIV | Inst::USES_HILO,
            Mfhi | Mflo => Inst::USES_HILO,
            Sb | Sh | Swl | Sw | Swr | Sc => Inst::STORE,
            _ => 0,
        }
    }

    /// Registers this instruction reads.
    #[inline(always)]
    pub fn sources(self) -> (u8, u8) {
        (self.reads[0], self.reads[1])
    }

    fn reads_of(op: Op, rs: u8, rt: u8) -> [u8; 2] {
        use Op::*;
        match op {
            Sll | Srl | Sra => [rt, 0],
            Lui | J | Jal | Syscall | Break | Sync | Mfhi | Mflo | CacheOp | Unsupported => [0, 0],
            Jr | Jalr | Mthi | Mtlo | Bltz | Bgez | Bltzal | Bgezal | Blez | Bgtz | Bltzl | Bgezl | Bltzall | Bgezall | Blezl | Bgtzl | Addi | Addiu | Slti
            | Sltiu | Andi | Ori | Xori | Lb | Lh | Lw | Lbu | Lhu | Ll | Tgei | Tgeiu | Tlti | Tltiu | Teqi | Tnei => [rs, 0],
            // Everything else reads rs and rt (lwl/lwr merge into rt; stores store rt).
            _ => [rs, rt],
        }
    }

    pub fn is_load(self) -> bool {
        self.class & Inst::LOAD != 0
    }
}

#[inline]
fn sext16(w: u32) -> u32 {
    w as u16 as i16 as i32 as u32
}

/// Decodes `word` found at address `pc`.
pub fn decode(word: u32, pc: u32) -> Inst {
    let rs = ((word >> 21) & 31) as u8;
    let rt = ((word >> 16) & 31) as u8;
    let rd = ((word >> 11) & 31) as u8;
    let sa = (word >> 6) & 31;
    let branch = pc.wrapping_add(4).wrapping_add(sext16(word) << 2);
    let (op, imm) = match word >> 26 {
        0 => {
            let op = match word & 63 {
                0 => Op::Sll,
                2 => Op::Srl,
                3 => Op::Sra,
                4 => Op::Sllv,
                6 => Op::Srlv,
                7 => Op::Srav,
                8 => Op::Jr,
                9 => Op::Jalr,
                12 => Op::Syscall,
                13 => Op::Break,
                15 => Op::Sync,
                16 => Op::Mfhi,
                17 => Op::Mthi,
                18 => Op::Mflo,
                19 => Op::Mtlo,
                24 => Op::Mult,
                25 => Op::Multu,
                26 => Op::Div,
                27 => Op::Divu,
                32 => Op::Add,
                33 => Op::Addu,
                34 => Op::Sub,
                35 => Op::Subu,
                36 => Op::And,
                37 => Op::Or,
                38 => Op::Xor,
                39 => Op::Nor,
                42 => Op::Slt,
                43 => Op::Sltu,
                48 => Op::Tge,
                49 => Op::Tgeu,
                50 => Op::Tlt,
                51 => Op::Tltu,
                52 => Op::Teq,
                54 => Op::Tne,
                _ => Op::Unsupported,
            };
            // Trap and break codes travel in imm for the error message.
            let imm = match op {
                Op::Syscall | Op::Break => (word >> 6) & 0xF_FFFF,
                Op::Tge | Op::Tgeu | Op::Tlt | Op::Tltu | Op::Teq | Op::Tne => (word >> 6) & 0x3FF,
                _ => sa,
            };
            (op, imm)
        }
        1 => {
            let op = match rt {
                0 => Op::Bltz,
                1 => Op::Bgez,
                2 => Op::Bltzl,
                3 => Op::Bgezl,
                8 => Op::Tgei,
                9 => Op::Tgeiu,
                10 => Op::Tlti,
                11 => Op::Tltiu,
                12 => Op::Teqi,
                14 => Op::Tnei,
                16 => Op::Bltzal,
                17 => Op::Bgezal,
                18 => Op::Bltzall,
                19 => Op::Bgezall,
                _ => Op::Unsupported,
            };
            let imm = if (8..=14).contains(&rt) { sext16(word) } else { branch };
            (op, imm)
        }
        2 => (Op::J, (pc.wrapping_add(4) & 0xF000_0000) | ((word & 0x03FF_FFFF) << 2)),
        3 => (Op::Jal, (pc.wrapping_add(4) & 0xF000_0000) | ((word & 0x03FF_FFFF) << 2)),
        4 => (Op::Beq, branch),
        5 => (Op::Bne, branch),
        6 => (Op::Blez, branch),
        7 => (Op::Bgtz, branch),
        8 => (Op::Addi, sext16(word)),
        9 => (Op::Addiu, sext16(word)),
        10 => (Op::Slti, sext16(word)),
        11 => (Op::Sltiu, sext16(word)),
        12 => (Op::Andi, word & 0xFFFF),
        13 => (Op::Ori, word & 0xFFFF),
        14 => (Op::Xori, word & 0xFFFF),
        15 => (Op::Lui, word << 16),
        20 => (Op::Beql, branch),
        21 => (Op::Bnel, branch),
        22 => (Op::Blezl, branch),
        23 => (Op::Bgtzl, branch),
        32 => (Op::Lb, sext16(word)),
        33 => (Op::Lh, sext16(word)),
        34 => (Op::Lwl, sext16(word)),
        35 => (Op::Lw, sext16(word)),
        36 => (Op::Lbu, sext16(word)),
        37 => (Op::Lhu, sext16(word)),
        38 => (Op::Lwr, sext16(word)),
        40 => (Op::Sb, sext16(word)),
        41 => (Op::Sh, sext16(word)),
        42 => (Op::Swl, sext16(word)),
        43 => (Op::Sw, sext16(word)),
        46 => (Op::Swr, sext16(word)),
        47 => (Op::CacheOp, 0),
        48 => (Op::Ll, sext16(word)),
        56 => (Op::Sc, sext16(word)),
        _ => (Op::Unsupported, 0),
    };
    // Branches with a fixed rt field (blez, bgtz and their likely forms) must have rt = 0.
    let op = match op {
        Op::Blez | Op::Bgtz | Op::Blezl | Op::Bgtzl if rt != 0 => Op::Unsupported,
        op => op,
    };
    Inst { op, rs, rt, rd, imm, reads: Inst::reads_of(op, rs, rt), class: Inst::class_of(op) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inst_is_twelve_bytes() {
        assert_eq!(std::mem::size_of::<Inst>(), 12);
    }

    #[test]
    fn branch_targets_are_absolute() {
        // beq $4,$5,-1 at 0x400010: target = 0x400014 - 4.
        let i = decode(0x1085_FFFF, 0x40_0010);
        assert_eq!((i.op, i.rs, i.rt, i.imm), (Op::Beq, 4, 5, 0x40_0010));
        // j 0x400100 from 0x400000.
        assert_eq!(decode(0x0810_0040, 0x40_0000).imm, 0x40_0100);
    }

    #[test]
    fn fpu_and_cop0_are_unsupported() {
        assert_eq!(decode(0x4600_0000, 0).op, Op::Unsupported); // add.s
        assert_eq!(decode(0x4200_0018, 0).op, Op::Unsupported); // eret
    }
}
