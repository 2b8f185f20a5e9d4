//! The one error type of the core. Every variant names where the problem is:
//! the file, and the key, line or record in it. The Python layer maps each
//! variant to one exception class (crates/py/src/error.rs). What a message
//! quotes from its input is escaped: no raw control character reaches a
//! terminal.

use crate::trace::{TraceError, escape};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The scenario is not valid TOML.
    #[error("{}: {}", escape(file), escape(msg))]
    Syntax { file: String, msg: String },
    /// A key is unknown, has the wrong type, or is out of range.
    #[error("{}{line}: `{}`: {}", escape(file), escape(key), escape(msg), line = line.map(|l| format!(":{l}")).unwrap_or_default())]
    Config { file: String, key: String, line: Option<usize>, msg: String },
    /// A trace file is malformed.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The run stopped advancing: events keep happening at one instant.
    #[error(
        "{file}: the simulation makes no progress at cycle {at}: {events} events at that instant (a loop of zero-cycle work? give some cost in it a nonzero value)"
    )]
    Stalled { file: String, at: u64, events: u64 },
    /// The run was stopped from outside (Ctrl-C) before its end.
    #[error("{file}: run cancelled at cycle {at}")]
    Cancelled { file: String, at: u64 },
    /// A finished run broke a law every run must keep (a simulator bug):
    /// its results are not to be trusted.
    #[error("{file}: the run broke an invariant, so its results are wrong (please report): {msg}")]
    Invariant { file: String, msg: String },
    /// The scenario's program did something the machine cannot run: an
    /// unsupported instruction or system call, a bad device access.
    #[error("{}: {}", escape(file), escape(msg))]
    Code { file: String, msg: String },
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
}

pub type Result<T> = std::result::Result<T, Error>;
