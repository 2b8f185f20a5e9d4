//! Streaming reader for strace logs (`strace -f -tt|-ttt -T [-yy] -o FILE`).
//!
//! [`StraceReader`] reads one line at a time and yields a [`SyscallRecord`] per completed
//! system call: start time, duration (`-T`), pid (`-f`), name, [`SyscallKind`] and the
//! bytes a send or receive moved.
//!
//! Line forms understood (each may start with a pid, `12345 ` or `[pid 12345] `):
//!
//! ```text
//! 1700000000.123456 sendto(3<UDP:[...]>, "..."..., 1400, 0, NULL, 0) = 1400 <0.000021>
//! 12:34:56.123456 recvfrom(3, ...) = -1 EAGAIN (Resource temporarily unavailable) <0.000004>
//! 1700000000.123456 recvfrom(3<UDP:[...]>,  <unfinished ...>
//! 1700000000.123999 <... recvfrom resumed>"...", 1500, 0, NULL, NULL) = 1400 <0.000543>
//! 1700000000.124000 --- SIGCHLD {si_signo=SIGCHLD, ...} ---          (skipped)
//! 1700000000.124001 +++ exited with 0 +++                            (skipped)
//! ```
//!
//! Blank lines, `strace: Process N attached|detached` notices and calls cut off by
//! `<detached ...>` are skipped too. Any other line is an error naming `file:line` and
//! quoting the text.
//!
//! An `<unfinished ...>` call and its `<... resumed>` line are merged into one record: the
//! time comes from the first line, the result and duration from the second. The record is
//! yielded when the resumed line is read, so records come out in completion order. Within
//! one pid they are in time order (a thread makes one call at a time); across pids strace
//! interleaves them, and the reader does not sort or check order: sort by `time_ns` if you
//! need a global order. A call still unfinished at the end of the file never returned and
//! yields no record.
//!
//! Timestamps are `-ttt` (seconds since the Unix epoch, [`StraceClock::Epoch`]) or `-tt`
//! (local time of day, [`StraceClock::TimeOfDay`]); a file that mixes them is an error.
//! `-t` (whole seconds) is rejected as too coarse.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::{TraceError, escape, excerpt};

mod fields;
use fields::{bytes_moved, classify, msg_len_sum, parse_result, parse_timestamp, split_pid};

/// Length to which quoted text in error messages is shortened.
const QUOTE_CHARS: usize = 60;

/// Longest line accepted, newline included: 1 MiB. strace shortens strings to `-s`
/// characters (32 by default) and prints a byte as at most 4 (`\xNN` with `-xx`), so even
/// `-s 65536` stays near 256 KiB a line. The bound keeps a file without newlines (or
/// `/dev/zero`) from growing the line buffer without limit.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Most calls `<unfinished ...>` at one time. Each belongs to a different thread; a
/// traced program with more than 65,536 threads inside a system call at once is not one
/// irqsim can model. The bound caps the reader's memory on hostile input.
pub const MAX_UNFINISHED: usize = 1 << 16;

/// Which timestamp format the log uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StraceClock {
    /// `-ttt`: seconds since the Unix epoch; `time_ns` is ns since the epoch.
    Epoch,
    /// `-tt`: local wall-clock time of day; `time_ns` is ns since local midnight.
    TimeOfDay,
}

impl std::fmt::Display for StraceClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StraceClock::Epoch => "-ttt (seconds since the epoch)",
            StraceClock::TimeOfDay => "-tt (time of day)",
        })
    }
}

/// What a system call does with network data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyscallKind {
    /// `send`, `sendto`, `sendmsg`, `sendmmsg`; `write`, `writev`, `pwrite64` on a socket.
    Send,
    /// `recv`, `recvfrom`, `recvmsg`, `recvmmsg`; `read`, `readv`, `pread64` on a socket.
    Recv,
    /// Anything else, including `read`/`write` whose fd is not annotated as a socket
    /// (only `strace -y`/`-yy` tells what an fd is).
    Other,
}

/// One completed system call.
#[derive(Debug, Clone, PartialEq)]
pub struct SyscallRecord {
    /// Start time in ns, per the log's [`StraceClock`].
    pub time_ns: u64,
    /// Time spent in the call (`-T`), 0 if the log has no durations.
    pub duration_ns: u64,
    /// Process id from `strace -f`, 0 if the line has none.
    pub pid: u32,
    /// System-call name.
    pub name: String,
    /// Send, receive or other.
    pub kind: SyscallKind,
    /// Bytes sent or received: the return value of a successful send/receive; for
    /// `sendmmsg`/`recvmmsg` the sum of the `msg_len` fields strace printed (their return
    /// value counts messages; strace abbreviates long vectors, so this is then a lower
    /// bound). 0 for failed calls and for [`SyscallKind::Other`].
    pub bytes: u64,
}

/// A call seen `<unfinished ...>`, waiting for its `<... resumed>` line.
#[derive(Debug)]
struct Pending {
    line: u64,
    time_ns: u64,
    name: String,
    kind: SyscallKind,
    msg_len_sum: u64,
}

/// Streaming reader of an strace log; an iterator of [`SyscallRecord`]s.
///
/// After the first error it yields `None`.
pub struct StraceReader<R: BufRead> {
    reader: R,
    source: String,
    line: Vec<u8>,
    line_no: u64,
    clock: Option<StraceClock>,
    pending: HashMap<u32, Pending>,
    done: bool,
}

impl StraceReader<BufReader<File>> {
    /// Opens the log at `path`.
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let name = escape(&path.display().to_string());
        let file = crate::input::open_regular(path).map_err(|source| TraceError::Io { path: name.clone(), source })?;
        Ok(Self::new(BufReader::new(file), &name))
    }
}

impl<R: BufRead> StraceReader<R> {
    /// Reads a log from `reader`; `source` names it in errors.
    pub fn new(reader: R, source: &str) -> Self {
        StraceReader { reader, source: escape(source), line: Vec::new(), line_no: 0, clock: None, pending: HashMap::new(), done: false }
    }

    /// The log's timestamp format, known once a timestamped line has been read.
    pub fn clock(&self) -> Option<StraceClock> {
        self.clock
    }

    fn syntax(&self, what: &'static str, text: &str) -> TraceError {
        TraceError::StraceSyntax { path: self.source.clone(), line: self.line_no, what, text: excerpt(text, QUOTE_CHARS) }
    }

    fn unpaired(&self, pid: u32, detail: String) -> TraceError {
        TraceError::StraceUnpaired { path: self.source.clone(), line: self.line_no, pid, detail }
    }

    /// Parses one line: a record, nothing (skipped or unfinished line), or an error.
    fn parse_line(&mut self, raw: &str) -> Result<Option<SyscallRecord>, TraceError> {
        let text = raw.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() || text.starts_with("strace: Process ") {
            return Ok(None);
        }
        let (pid, rest) = split_pid(text).map_err(|what| self.syntax(what, text))?;
        let (stamp, body) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let body = body.trim_start();
        let (clock, time_ns) = parse_timestamp(stamp).map_err(|what| {
            if stamp.contains('(') || stamp.starts_with("---") || stamp.starts_with("+++") {
                self.syntax("line has no timestamp (run strace with -tt or -ttt)", text)
            } else {
                self.syntax(what, stamp)
            }
        })?;
        match self.clock {
            None => self.clock = Some(clock),
            Some(first) if first != clock => {
                return Err(TraceError::StraceMixedClock {
                    path: self.source.clone(),
                    line: self.line_no,
                    first,
                    found: clock,
                    text: excerpt(stamp, QUOTE_CHARS),
                });
            }
            Some(_) => {}
        }

        if body.starts_with("---") || body.starts_with("+++") {
            return Ok(None); // signal delivery or process exit
        }
        if let Some(resumed) = body.strip_prefix("<...") {
            return self.resume(pid, resumed, text);
        }

        let Some((name, args)) = body.split_once('(') else {
            return Err(self.syntax("unrecognised line", text));
        };
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(self.syntax("unrecognised line", text));
        }
        let tail = args.trim_end();
        if tail.ends_with("<detached ...>") {
            return Ok(None);
        }
        let kind = classify(name, args);
        if tail.ends_with("<unfinished ...>") {
            if let Some(p) = self.pending.get(&pid) {
                let detail =
                    format!("`{}` starts while `{}` from line {} is still unfinished", excerpt(name, QUOTE_CHARS), excerpt(&p.name, QUOTE_CHARS), p.line);
                return Err(self.unpaired(pid, detail));
            }
            if self.pending.len() >= MAX_UNFINISHED {
                return Err(TraceError::StraceTooManyUnfinished { path: self.source.clone(), line: self.line_no });
            }
            let pending = Pending { line: self.line_no, time_ns, name: name.to_string(), kind, msg_len_sum: msg_len_sum(args) };
            self.pending.insert(pid, pending);
            return Ok(None);
        }

        let (ret, duration_ns) = parse_result(args).map_err(|what| self.syntax(what, text))?;
        Ok(Some(SyscallRecord { time_ns, duration_ns, pid, name: name.to_string(), kind, bytes: bytes_moved(name, kind, ret, msg_len_sum(args)) }))
    }

    /// Completes the unfinished call of `pid` with a `<... name resumed>...` line
    /// (`resumed` is the text after `<...`).
    fn resume(&mut self, pid: u32, resumed: &str, text: &str) -> Result<Option<SyscallRecord>, TraceError> {
        let Some((name, tail)) = resumed.split_once("resumed>") else {
            return Err(self.syntax("cannot parse resumed line", text));
        };
        let name = name.trim();
        let Some(pending) = self.pending.remove(&pid) else {
            let detail = format!("`<... {} resumed>` without an earlier `<unfinished ...>`", excerpt(name, QUOTE_CHARS));
            return Err(self.unpaired(pid, detail));
        };
        if !name.is_empty() && name != pending.name {
            let detail = format!(
                "`{}` resumed but the unfinished call (line {}) is `{}`",
                excerpt(name, QUOTE_CHARS),
                pending.line,
                excerpt(&pending.name, QUOTE_CHARS)
            );
            return Err(self.unpaired(pid, detail));
        }
        if tail.trim_end().ends_with("<detached ...>") {
            return Ok(None);
        }
        let (ret, duration_ns) = parse_result(tail).map_err(|what| self.syntax(what, text))?;
        let msg_len = pending.msg_len_sum.saturating_add(msg_len_sum(tail));
        Ok(Some(SyscallRecord {
            time_ns: pending.time_ns,
            duration_ns,
            pid,
            bytes: bytes_moved(&pending.name, pending.kind, ret, msg_len),
            name: pending.name,
            kind: pending.kind,
        }))
    }
}

impl<R: BufRead> Iterator for StraceReader<R> {
    type Item = Result<SyscallRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let mut buf = std::mem::take(&mut self.line);
            buf.clear();
            // One byte past the limit tells a line of exactly the limit from a longer one.
            let limit = MAX_LINE_BYTES as u64 + 1;
            let read = (&mut self.reader).take(limit).read_until(b'\n', &mut buf);
            let result = match read {
                Err(source) => Err(TraceError::Io { path: self.source.clone(), source }),
                Ok(0) => {
                    self.done = true;
                    return None;
                }
                Ok(n) if n > MAX_LINE_BYTES => {
                    self.line_no = self.line_no.saturating_add(1);
                    Err(TraceError::StraceLineTooLong { path: self.source.clone(), line: self.line_no })
                }
                Ok(_) => {
                    self.line_no = self.line_no.saturating_add(1);
                    let text = String::from_utf8_lossy(&buf);
                    self.parse_line(&text)
                }
            };
            self.line = buf;
            match result {
                Ok(None) => continue,
                Ok(Some(record)) => return Some(Ok(record)),
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}

#[cfg(test)]
pub(crate) mod tests;
