//! Errors, each one line naming what is wrong and where: the ELF file, the
//! configuration key, or the program and PC at which execution stopped.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// The file is not a loadable big-endian MIPS32 executable.
    #[error("{file}: {msg}")]
    Elf { file: String, msg: String },
    /// A configuration key or value is invalid.
    #[error("{key}: {msg}")]
    Config { key: String, msg: String },
    /// Execution stopped: the program did something this model does not run.
    #[error("{program}: {what} at pc 0x{pc:08x} (instruction 0x{word:08x})")]
    Fault { program: String, pc: u32, word: u32, what: String },
    /// The host stopped the run (Ctrl-C).
    #[error("{program}: interrupted")]
    Cancelled { program: String },
}

impl Error {
    pub fn config(key: &str, msg: impl Into<String>) -> Self {
        Error::Config { key: key.into(), msg: msg.into() }
    }
}

/// Why a thread stopped at an instruction, before the program name and
/// instruction word are known (the core adds them).
/// Small and `Copy` so the interpreter returns it in registers; a device's
/// message waits in the bus ([`crate::bus::DataBus::device_error`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Unsupported,
    Unaligned {
        addr: u32,
    },
    Overflow,
    Trap {
        code: u32,
    },
    Break {
        code: u32,
    },
    /// A memory-mapped device refused an access.
    Device {
        addr: u32,
    },
    /// A store into the guard below the stacks.
    StackOverflow {
        addr: u32,
    },
    /// A store into memory the caller of `System::run_ahead` said no core writes.
    ReadOnly {
        addr: u32,
    },
}

impl Fault {
    /// One phrase; `device` is the refusing device's message, if any.
    pub fn describe(&self, device: &str) -> String {
        match self {
            Fault::Unsupported => "unsupported instruction (no FPU, coprocessor or 64-bit operations)".into(),
            Fault::Unaligned { addr } => format!("unaligned access to 0x{addr:08x}"),
            Fault::Overflow => "integer overflow trap".into(),
            Fault::Trap { code: 7 } => "trap 7 (integer division by zero)".into(),
            Fault::Trap { code } => format!("trap {code}"),
            Fault::Break { code } => format!("break {code}"),
            Fault::Device { addr } => format!("device register 0x{addr:08x}: {device}"),
            Fault::StackOverflow { addr } => format!("stack overflow (segmentation fault: write to 0x{addr:08x}, below the stack's limit)"),
            Fault::ReadOnly { addr } => format!("write to read-only data at 0x{addr:08x}"),
        }
    }
}
