//! Unit tests of the strace reader: the documented line forms, errors, and a seeded
//! random-input sweep.

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
    let brief: Vec<_> = recs.iter().map(|r| (r.pid, r.name.as_str(), r.kind, r.bytes)).collect();
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
    assert_eq!(recs[0].time_ns, ((12 * 3600 + 34 * 60 + 56) * 1_000_000_000) + 123_456_000);
    assert_eq!((recs[0].kind, recs[0].bytes, recs[0].duration_ns), (SyscallKind::Send, 1, 0));
    assert_eq!(recs[1].pid, 7);
    assert_eq!(recs[1].time_ns, (23 * 3600 + 59 * 60 + 60) * 1_000_000_000 + 999_999_999);
}

/// Bad lines are errors naming file:line and quoting the text.
#[test]
fn errors_name_line_and_text() {
    assert_eq!(err_text("\n\n12:3x:00.1 read(3, \"\", 1) = 0\n"), "t.strace:3: cannot parse timestamp `12:3x:00.1`");
    assert_eq!(
        err_text("1.5 read(3, \"\", 1) = 0\n12:00:00.5 read(3, \"\", 1) = 0\n"),
        "t.strace:2: timestamp `12:00:00.5` is -tt (time of day) but earlier lines are \
         -ttt (seconds since the epoch); a log must use one clock"
    );
    let text = err_text("1.5 this is not strace output at all, it goes on and on and on and on forever\n");
    assert!(text.starts_with("t.strace:1: unrecognised line `1.5 this is not strace"), "{text}");
    assert!(text.ends_with("...`"), "{text}");
    assert!(err_text("read(3, \"\", 1) = 0\n").contains("line has no timestamp"));
    assert!(err_text("12:00:01 read(3, \"\", 1) = 0\n").contains("strace -t is too coarse"));
    assert!(err_text("1.5 read(3, \"\", 1) = x\n").starts_with("t.strace:1: cannot parse return value in"));
    assert!(err_text("1.5 read(3, \"\", 1)\n").starts_with("t.strace:1: no `) = result` in line"));
    assert!(err_text("1.5 read(3, \"\", 1) = 0 <0.0.1>\n").contains("cannot parse duration"));
    assert_eq!(err_text("9 1.5 <... read resumed>\"\", 1) = 0\n"), "t.strace:1: pid 9: `<... read resumed>` without an earlier `<unfinished ...>`");
    assert!(
        err_text("9 1.5 read(3,  <unfinished ...>\n9 1.6 <... write resumed>) = 0\n").contains("`write` resumed but the unfinished call (line 1) is `read`")
    );
    assert!(
        err_text("9 1.5 read(3,  <unfinished ...>\n9 1.6 write(3,  <unfinished ...>\n").contains("`write` starts while `read` from line 1 is still unfinished")
    );
    assert!(err_text("[pid 99999999999] 1.5 read(3, \"\", 1) = 0\n").contains("cannot parse pid"));
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
    const ALPHABET: &[u8] = b"0123456789.:()<>=[]\"\\ -?xpidresumedunfinished...+++---\n\xff\xc3";
    for round in 0..3000 {
        let bytes: Vec<u8> = if round % 2 == 0 {
            let len = (rng.next() % 300) as usize;
            (0..len).map(|_| ALPHABET[(rng.next() as usize) % ALPHABET.len()]).collect()
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
