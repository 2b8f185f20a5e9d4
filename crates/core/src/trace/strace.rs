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
        let file = File::open(path).map_err(|source| TraceError::Io {
            path: name.clone(),
            source,
        })?;
        Ok(Self::new(BufReader::new(file), &name))
    }
}

impl<R: BufRead> StraceReader<R> {
    /// Reads a log from `reader`; `source` names it in errors.
    pub fn new(reader: R, source: &str) -> Self {
        StraceReader {
            reader,
            source: escape(source),
            line: Vec::new(),
            line_no: 0,
            clock: None,
            pending: HashMap::new(),
            done: false,
        }
    }

    /// The log's timestamp format, known once a timestamped line has been read.
    pub fn clock(&self) -> Option<StraceClock> {
        self.clock
    }

    fn syntax(&self, what: &'static str, text: &str) -> TraceError {
        TraceError::StraceSyntax {
            path: self.source.clone(),
            line: self.line_no,
            what,
            text: excerpt(text, QUOTE_CHARS),
        }
    }

    fn unpaired(&self, pid: u32, detail: String) -> TraceError {
        TraceError::StraceUnpaired {
            path: self.source.clone(),
            line: self.line_no,
            pid,
            detail,
        }
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
                let detail = format!(
                    "`{}` starts while `{}` from line {} is still unfinished",
                    excerpt(name, QUOTE_CHARS),
                    excerpt(&p.name, QUOTE_CHARS),
                    p.line
                );
                return Err(self.unpaired(pid, detail));
            }
            if self.pending.len() >= MAX_UNFINISHED {
                return Err(TraceError::StraceTooManyUnfinished {
                    path: self.source.clone(),
                    line: self.line_no,
                });
            }
            let pending = Pending {
                line: self.line_no,
                time_ns,
                name: name.to_string(),
                kind,
                msg_len_sum: msg_len_sum(args),
            };
            self.pending.insert(pid, pending);
            return Ok(None);
        }

        let (ret, duration_ns) = parse_result(args).map_err(|what| self.syntax(what, text))?;
        Ok(Some(SyscallRecord {
            time_ns,
            duration_ns,
            pid,
            name: name.to_string(),
            kind,
            bytes: bytes_moved(name, kind, ret, msg_len_sum(args)),
        }))
    }

    /// Completes the unfinished call of `pid` with a `<... name resumed>...` line
    /// (`resumed` is the text after `<...`).
    fn resume(
        &mut self,
        pid: u32,
        resumed: &str,
        text: &str,
    ) -> Result<Option<SyscallRecord>, TraceError> {
        let Some((name, tail)) = resumed.split_once("resumed>") else {
            return Err(self.syntax("cannot parse resumed line", text));
        };
        let name = name.trim();
        let Some(pending) = self.pending.remove(&pid) else {
            let detail = format!(
                "`<... {} resumed>` without an earlier `<unfinished ...>`",
                excerpt(name, QUOTE_CHARS)
            );
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
                Err(source) => Err(TraceError::Io {
                    path: self.source.clone(),
                    source,
                }),
                Ok(0) => {
                    self.done = true;
                    return None;
                }
                Ok(n) if n > MAX_LINE_BYTES => {
                    self.line_no = self.line_no.saturating_add(1);
                    Err(TraceError::StraceLineTooLong {
                        path: self.source.clone(),
                        line: self.line_no,
                    })
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

/// Splits off a `-f` pid prefix (`12345 ` or `[pid 12345] `); pid 0 when there is none.
fn split_pid(text: &str) -> Result<(u32, &str), &'static str> {
    if let Some(rest) = text.strip_prefix("[pid") {
        let (digits, rest) = rest.split_once(']').ok_or("cannot parse pid in")?;
        let pid = digits.trim().parse().map_err(|_| "cannot parse pid in")?;
        return Ok((pid, rest.trim_start()));
    }
    let (first, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    if !first.is_empty() && first.bytes().all(|b| b.is_ascii_digit()) {
        let pid = first.parse().map_err(|_| "cannot parse pid in")?;
        return Ok((pid, rest.trim_start()));
    }
    Ok((0, text))
}

/// Parses `SECONDS.FRACTION` (1 to 9 fraction digits) into ns.
fn parse_seconds(text: &str) -> Option<u64> {
    let (whole, frac) = text.split_once('.')?;
    if whole.is_empty() || frac.is_empty() || frac.len() > 9 {
        return None;
    }
    if !whole
        .bytes()
        .chain(frac.bytes())
        .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let scale = 10u64.checked_pow(9 - u32::try_from(frac.len()).ok()?)?;
    let whole: u64 = whole.parse().ok()?;
    let frac: u64 = frac.parse().ok()?;
    whole
        .checked_mul(1_000_000_000)?
        .checked_add(frac.checked_mul(scale)?)
}

/// Parses a `-ttt` (`1700000000.123456`) or `-tt` (`12:34:56.123456`) timestamp.
fn parse_timestamp(text: &str) -> Result<(StraceClock, u64), &'static str> {
    const BAD: &str = "cannot parse timestamp";
    if !text.contains(':') {
        if !text.contains('.') && !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
            return Err("timestamp has no fraction (use strace -tt or -ttt):");
        }
        return parse_seconds(text)
            .map(|ns| (StraceClock::Epoch, ns))
            .ok_or(BAD);
    }
    let mut parts = text.split(':');
    let (Some(h), Some(m), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(BAD);
    };
    let small = |f: &str, max: u64| -> Option<u64> {
        if f.is_empty() || f.len() > 2 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        f.parse().ok().filter(|&v| v <= max)
    };
    let (Some(h), Some(m)) = (small(h, 23), small(m, 59)) else {
        return Err(BAD);
    };
    if small(s, 60).is_some() {
        return Err("timestamp has no fraction (strace -t is too coarse; use -tt or -ttt):");
    }
    let seconds_ns = parse_seconds(s)
        .filter(|&ns| ns < 61 * 1_000_000_000)
        .ok_or(BAD)?;
    let ns = (h * 3600 + m * 60) * 1_000_000_000 + seconds_ns;
    Ok((StraceClock::TimeOfDay, ns))
}

/// Parses the end of a call, `...) = RESULT [ERRNO (text)] [<DURATION>]`, into the
/// return value (`None` for `?`) and the duration in ns (0 without `-T`).
fn parse_result(tail: &str) -> Result<(Option<i64>, u64), &'static str> {
    let mut rest = tail.trim_end();
    let mut duration_ns = 0;
    if let Some(inner_start) = rest
        .strip_suffix('>')
        .and_then(|r| r.rfind(" <").map(|i| (r, i)))
    {
        let (without_gt, open) = inner_start;
        let inner = &without_gt[open + 2..];
        if inner == "unavailable" {
            rest = without_gt[..open].trim_end();
        } else if !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            duration_ns = parse_seconds(inner).ok_or("cannot parse duration in")?;
            rest = without_gt[..open].trim_end();
        }
    }
    let eq = rfind_unquoted(rest, ") = ").ok_or("no `) = result` in line")?;
    let value = rest[eq + 4..].trim_start();
    if value.starts_with('?') {
        return Ok((None, duration_ns));
    }
    let (negative, digits) = match value.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, value),
    };
    let end = digits
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    if end == 0 {
        return Err("cannot parse return value in");
    }
    // Values beyond i64 (huge unsigned returns) saturate; they only matter for Other calls.
    let magnitude: i64 = digits[..end].parse().unwrap_or(i64::MAX);
    Ok((
        Some(if negative {
            magnitude.saturating_neg()
        } else {
            magnitude
        }),
        duration_ns,
    ))
}

/// Calls `at` with every byte offset outside double-quoted strings (strace
/// escapes quotes inside strings as `\"`); returns whether the quotes balance.
fn each_unquoted(text: &str, mut at: impl FnMut(usize)) -> bool {
    let bytes = text.as_bytes();
    let mut in_quote = false;
    let mut i = 0;
    while i < bytes.len() {
        match (in_quote, bytes[i]) {
            (true, b'\\') => i += 1,
            (true, b'"') => in_quote = false,
            (true, _) => {}
            (false, b'"') => in_quote = true,
            (false, _) => at(i),
        }
        i += 1;
    }
    !in_quote
}

/// Byte offset of the last `needle` outside double-quoted strings. Falls back
/// to the last occurrence anywhere if the quotes do not balance.
fn rfind_unquoted(text: &str, needle: &str) -> Option<usize> {
    let mut found = None;
    let balanced = each_unquoted(text, |i| {
        if text.as_bytes()[i..].starts_with(needle.as_bytes()) {
            found = Some(i);
        }
    });
    if balanced { found } else { text.rfind(needle) }
}

/// Sum of `msg_len=N` fields outside quoted strings (printed by strace for `*mmsg`).
fn msg_len_sum(text: &str) -> u64 {
    const KEY: &str = "msg_len=";
    let mut sum = 0u64;
    each_unquoted(text, |i| {
        if text.as_bytes()[i..].starts_with(KEY.as_bytes()) {
            let digits = &text[i + KEY.len()..];
            let end = digits
                .bytes()
                .position(|b| !b.is_ascii_digit())
                .unwrap_or(digits.len());
            sum = sum.saturating_add(digits[..end].parse().unwrap_or(0));
        }
    });
    sum
}

/// fd annotation kinds (`3<UDP:[...]>`, `3<socket:[123]>`) that `strace -y/-yy` prints
/// for sockets.
const SOCKET_FD_KINDS: &[&str] = &[
    "TCP",
    "TCPv6",
    "UDP",
    "UDPv6",
    "UDPLITE",
    "UDPLITEv6",
    "RAW",
    "RAWv6",
    "SCTP",
    "SCTPv6",
    "DCCP",
    "DCCPv6",
    "UNIX",
    "UNIX-STREAM",
    "UNIX-DGRAM",
    "UNIX-SEQPACKET",
    "NETLINK",
    "PACKET",
    "socket",
];

/// Whether the first argument is an fd that strace annotated as a socket.
fn first_fd_is_socket(args: &str) -> bool {
    let args = args.trim_start();
    let digits = args.bytes().take_while(u8::is_ascii_digit).count();
    let Some(annotation) = args.get(digits..).and_then(|a| a.strip_prefix('<')) else {
        return false;
    };
    if digits == 0 {
        return false;
    }
    let end = annotation.find([':', '>']).unwrap_or(annotation.len());
    SOCKET_FD_KINDS.contains(&&annotation[..end])
}

fn classify(name: &str, args: &str) -> SyscallKind {
    match name {
        "send" | "sendto" | "sendmsg" | "sendmmsg" => SyscallKind::Send,
        "recv" | "recvfrom" | "recvmsg" | "recvmmsg" => SyscallKind::Recv,
        "write" | "writev" | "pwrite64" if first_fd_is_socket(args) => SyscallKind::Send,
        "read" | "readv" | "pread64" if first_fd_is_socket(args) => SyscallKind::Recv,
        _ => SyscallKind::Other,
    }
}

fn bytes_moved(name: &str, kind: SyscallKind, ret: Option<i64>, msg_len_sum: u64) -> u64 {
    match (kind, ret) {
        (SyscallKind::Other, _) | (_, None) => 0,
        (_, Some(r)) if r < 0 => 0,
        _ if name.ends_with("mmsg") => msg_len_sum,
        (_, Some(r)) => u64::try_from(r).unwrap_or(0),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Cursor;

    /// A tiny deterministic PRNG for the fuzz-style tests.
    pub(crate) struct XorShift(pub u64);

    impl XorShift {
        pub(crate) fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }
    }

    fn read_all(text: &str) -> Result<Vec<SyscallRecord>, TraceError> {
        StraceReader::new(Cursor::new(text), "t.strace").collect()
    }

    fn err_text(text: &str) -> String {
        match read_all(text) {
            Ok(v) => panic!("expected an error, got {v:?}"),
            Err(e) => e.to_string(),
        }
    }

    const SAMPLE: &str = "\
4242  1700000000.000100 socket(AF_INET, SOCK_DGRAM|SOCK_CLOEXEC, IPPROTO_IP) = 3<UDP:[7407]> <0.000026>
4242  1700000000.000200 sendto(3<UDP:[127.0.0.1:40000->127.0.0.2:5004]>, \"PLAY) = 99\", 4, 0, NULL, 0) = 4 <0.000021>
4242  1700000000.000300 recvfrom(3<UDP:[127.0.0.1:40000->127.0.0.2:5004]>,  <unfinished ...>
4243  1700000000.000350 write(1</dev/pts/0>, \"hello\\n\", 6) = 6 <0.000005>
4243  1700000000.000360 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED} ---
4242  1700000000.000900 <... recvfrom resumed>\"\\0\\0\\0\\1\"..., 2048, 0, NULL, NULL) = 1372 <0.000600>
[pid  4243] 1700000000.001000 recvfrom(3<UDP:[1]>, 0x7f, 2048, MSG_DONTWAIT, NULL, NULL) = -1 EAGAIN (Resource temporarily unavailable) <0.000004>
4242  1700000000.001100 read(3<UDP:[127.0.0.1:40000->127.0.0.2:5004]>, \"x\", 2048) = 1000 <0.000010>
4242  1700000000.001200 read(5</usr/lib/python3.11/os.py>, \"\", 2048) = 0 <0.000010>
4242  1700000000.001300 read(5, \"abc\", 3) = 3 <0.000010>
1700000000.001400 recvmmsg(3<UDP:[1]>, [{msg_hdr={msg_iov=[{iov_base=\"msg_len=999\", iov_len=9}], msg_iovlen=1}, msg_len=700}, {msg_hdr={}, msg_len=800}], 8, 0, NULL) = 2 <0.000020>
4242  1700000000.001500 exit_group(0) = ?
4242  1700000000.001600 +++ exited with 0 +++
";

    /// The documented line forms parse to the expected records.
    #[test]
    fn parses_sample() {
        let mut reader = StraceReader::new(Cursor::new(SAMPLE), "t.strace");
        assert_eq!(reader.clock(), None);
        let recs: Vec<_> = reader.by_ref().collect::<Result<_, _>>().unwrap();
        assert_eq!(reader.clock(), Some(StraceClock::Epoch));
        let brief: Vec<_> = recs
            .iter()
            .map(|r| (r.pid, r.name.as_str(), r.kind, r.bytes))
            .collect();
        use SyscallKind::*;
        assert_eq!(
            brief,
            vec![
                (4242, "socket", Other, 0),
                (4242, "sendto", Send, 4),
                (4243, "write", Other, 0),
                (4242, "recvfrom", Recv, 1372),
                (4243, "recvfrom", Recv, 0),
                (4242, "read", Recv, 1000),
                (4242, "read", Other, 0),
                (4242, "read", Other, 0),
                (0, "recvmmsg", Recv, 1500),
                (4242, "exit_group", Other, 0),
            ]
        );
        assert_eq!(recs[0].time_ns, 1_700_000_000_000_100_000);
        assert_eq!(recs[0].duration_ns, 26_000);
        // Merged unfinished/resumed: time from the start, duration from the end.
        assert_eq!(recs[3].time_ns, 1_700_000_000_000_300_000);
        assert_eq!(recs[3].duration_ns, 600_000);
        assert_eq!(recs[9].duration_ns, 0);
    }

    /// `-tt` gives ns since midnight; ns-precision fractions and no `-T` also work.
    #[test]
    fn time_of_day_clock() {
        let text = "12:34:56.123456 write(3<TCP:[1]>, \"a\", 1) = 1\n\
                    [pid 7] 23:59:60.999999999 sendmsg(4, {}, 0) = 1400 <0.000010>\n";
        let mut reader = StraceReader::new(Cursor::new(text), "t.strace");
        let recs: Vec<_> = reader.by_ref().collect::<Result<_, _>>().unwrap();
        assert_eq!(reader.clock(), Some(StraceClock::TimeOfDay));
        assert_eq!(
            recs[0].time_ns,
            ((12 * 3600 + 34 * 60 + 56) * 1_000_000_000) + 123_456_000
        );
        assert_eq!(
            (recs[0].kind, recs[0].bytes, recs[0].duration_ns),
            (SyscallKind::Send, 1, 0)
        );
        assert_eq!(recs[1].pid, 7);
        assert_eq!(
            recs[1].time_ns,
            (23 * 3600 + 59 * 60 + 60) * 1_000_000_000 + 999_999_999
        );
    }

    /// Bad lines are errors naming file:line and quoting the text.
    #[test]
    fn errors_name_line_and_text() {
        assert_eq!(
            err_text("\n\n12:3x:00.1 read(3, \"\", 1) = 0\n"),
            "t.strace:3: cannot parse timestamp `12:3x:00.1`"
        );
        assert_eq!(
            err_text("1.5 read(3, \"\", 1) = 0\n12:00:00.5 read(3, \"\", 1) = 0\n"),
            "t.strace:2: timestamp `12:00:00.5` is -tt (time of day) but earlier lines are \
             -ttt (seconds since the epoch); a log must use one clock"
        );
        let text = err_text(
            "1.5 this is not strace output at all, it goes on and on and on and on forever\n",
        );
        assert!(
            text.starts_with("t.strace:1: unrecognised line `1.5 this is not strace"),
            "{text}"
        );
        assert!(text.ends_with("...`"), "{text}");
        assert!(err_text("read(3, \"\", 1) = 0\n").contains("line has no timestamp"));
        assert!(err_text("12:00:01 read(3, \"\", 1) = 0\n").contains("strace -t is too coarse"));
        assert!(
            err_text("1.5 read(3, \"\", 1) = x\n")
                .starts_with("t.strace:1: cannot parse return value in")
        );
        assert!(
            err_text("1.5 read(3, \"\", 1)\n").starts_with("t.strace:1: no `) = result` in line")
        );
        assert!(err_text("1.5 read(3, \"\", 1) = 0 <0.0.1>\n").contains("cannot parse duration"));
        assert_eq!(
            err_text("9 1.5 <... read resumed>\"\", 1) = 0\n"),
            "t.strace:1: pid 9: `<... read resumed>` without an earlier `<unfinished ...>`"
        );
        assert!(
            err_text("9 1.5 read(3,  <unfinished ...>\n9 1.6 <... write resumed>) = 0\n")
                .contains("`write` resumed but the unfinished call (line 1) is `read`")
        );
        assert!(
            err_text("9 1.5 read(3,  <unfinished ...>\n9 1.6 write(3,  <unfinished ...>\n")
                .contains("`write` starts while `read` from line 1 is still unfinished")
        );
        assert!(
            err_text("[pid 99999999999] 1.5 read(3, \"\", 1) = 0\n").contains("cannot parse pid")
        );
    }

    /// Skipped forms produce no records and no errors; an unfinished call at EOF is dropped.
    #[test]
    fn skipped_forms() {
        let text = "strace: Process 12 attached\n\
                    12 1.000001 --- SIGALRM {si_signo=SIGALRM} ---\n\
                    12 1.000002 +++ killed by SIGKILL +++\n\
                    \n\
                    12 1.000003 recvfrom(3,  <detached ...>\n\
                    13 1.000004 recvfrom(3<UDP:[1]>,  <unfinished ...>\n\
                    12 1.000005 <... resumed>) = ? <unavailable>\n";
        // pid 12's `<... resumed>` has nothing pending: the detached call left no state.
        assert!(read_all(text).is_err());
        let text = text.lines().take(6).collect::<Vec<_>>().join("\n");
        assert_eq!(read_all(&text).unwrap(), vec![]);
    }

    /// After an error the iterator ends even if later lines are valid.
    #[test]
    fn fused_after_error() {
        let mut r = StraceReader::new(Cursor::new("garbage\n1.5 read(3, \"\", 1) = 0\n"), "t");
        assert!(r.next().unwrap().is_err());
        assert!(r.next().is_none());
    }

    /// Random text, every truncation and random corruption of a valid log: no panic.
    #[test]
    fn fuzz_no_panic() {
        let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
        let drain = |bytes: &[u8]| {
            for item in StraceReader::new(Cursor::new(bytes), "f").take(1000) {
                let _ = item;
            }
        };
        let sample = SAMPLE.as_bytes();
        for len in 0..=sample.len() {
            drain(&sample[..len]);
        }
        const ALPHABET: &[u8] =
            b"0123456789.:()<>=[]\"\\ -?xpidresumedunfinished...+++---\n\xff\xc3";
        for round in 0..3000 {
            let bytes: Vec<u8> = if round % 2 == 0 {
                let len = (rng.next() % 300) as usize;
                (0..len)
                    .map(|_| ALPHABET[(rng.next() as usize) % ALPHABET.len()])
                    .collect()
            } else {
                let mut b = sample.to_vec();
                for _ in 0..1 + rng.next() % 6 {
                    let at = (rng.next() as usize) % b.len();
                    b[at] = ALPHABET[(rng.next() as usize) % ALPHABET.len()];
                }
                b
            };
            drain(&bytes);
        }
        for piece in [
            "1.5",
            "1.5 ",
            "1.5 <...",
            "1.5 <... resumed>",
            "1.5 x(",
            "1.5 x() = ",
            "1.5 x() = -",
            "1.5 x() = 1 <",
            "1.5 x() = 1 <>",
            "1.5 x() = 1 <.>",
            "[pid",
            "[pid ]",
            "1.5 x(\"",
            "00:00:00.",
            "99999999999999999999.9 x() = 1",
            "1.9999999999 x() = 1",
            "1.5 x(msg_len=99999999999999999999999) = 1",
        ] {
            drain(piece.as_bytes());
        }
    }
}
