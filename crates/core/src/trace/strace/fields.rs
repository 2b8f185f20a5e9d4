//! Field parsers for strace lines: pid prefix, timestamps, results and durations,
//! quoted strings, socket fds, and what a call does with network data.

use super::{StraceClock, SyscallKind};

/// Splits off a `-f` pid prefix (`12345 ` or `[pid 12345] `); pid 0 when there is none.
pub(super) fn split_pid(text: &str) -> Result<(u32, &str), &'static str> {
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
    if !whole.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let scale = 10u64.checked_pow(9 - u32::try_from(frac.len()).ok()?)?;
    let whole: u64 = whole.parse().ok()?;
    let frac: u64 = frac.parse().ok()?;
    whole.checked_mul(1_000_000_000)?.checked_add(frac.checked_mul(scale)?)
}

/// Parses a `-ttt` (`1700000000.123456`) or `-tt` (`12:34:56.123456`) timestamp.
pub(super) fn parse_timestamp(text: &str) -> Result<(StraceClock, u64), &'static str> {
    const BAD: &str = "cannot parse timestamp";
    if !text.contains(':') {
        if !text.contains('.') && !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
            return Err("timestamp has no fraction (use strace -tt or -ttt):");
        }
        return parse_seconds(text).map(|ns| (StraceClock::Epoch, ns)).ok_or(BAD);
    }
    let mut parts = text.split(':');
    let (Some(h), Some(m), Some(s), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
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
    let seconds_ns = parse_seconds(s).filter(|&ns| ns < 61 * 1_000_000_000).ok_or(BAD)?;
    let ns = (h * 3600 + m * 60) * 1_000_000_000 + seconds_ns;
    Ok((StraceClock::TimeOfDay, ns))
}

/// Parses the end of a call, `...) = RESULT [ERRNO (text)] [<DURATION>]`, into the
/// return value (`None` for `?`) and the duration in ns (0 without `-T`).
pub(super) fn parse_result(tail: &str) -> Result<(Option<i64>, u64), &'static str> {
    let mut rest = tail.trim_end();
    let mut duration_ns = 0;
    if let Some(inner_start) = rest.strip_suffix('>').and_then(|r| r.rfind(" <").map(|i| (r, i))) {
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
    let end = digits.bytes().position(|b| !b.is_ascii_digit()).unwrap_or(digits.len());
    if end == 0 {
        return Err("cannot parse return value in");
    }
    // Values beyond i64 (huge unsigned returns) saturate; they only matter for Other calls.
    let magnitude: i64 = digits[..end].parse().unwrap_or(i64::MAX);
    Ok((Some(if negative { magnitude.saturating_neg() } else { magnitude }), duration_ns))
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
pub(super) fn msg_len_sum(text: &str) -> u64 {
    const KEY: &str = "msg_len=";
    let mut sum = 0u64;
    each_unquoted(text, |i| {
        if text.as_bytes()[i..].starts_with(KEY.as_bytes()) {
            let digits = &text[i + KEY.len()..];
            let end = digits.bytes().position(|b| !b.is_ascii_digit()).unwrap_or(digits.len());
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

pub(super) fn classify(name: &str, args: &str) -> SyscallKind {
    match name {
        "send" | "sendto" | "sendmsg" | "sendmmsg" => SyscallKind::Send,
        "recv" | "recvfrom" | "recvmsg" | "recvmmsg" => SyscallKind::Recv,
        "write" | "writev" | "pwrite64" if first_fd_is_socket(args) => SyscallKind::Send,
        "read" | "readv" | "pread64" if first_fd_is_socket(args) => SyscallKind::Recv,
        _ => SyscallKind::Other,
    }
}

pub(super) fn bytes_moved(name: &str, kind: SyscallKind, ret: Option<i64>, msg_len_sum: u64) -> u64 {
    match (kind, ret) {
        (SyscallKind::Other, _) | (_, None) => 0,
        (_, Some(r)) if r < 0 => 0,
        _ if name.ends_with("mmsg") => msg_len_sum,
        (_, Some(r)) => u64::try_from(r).unwrap_or(0),
    }
}
