//! Fuzz entry points for irqsim, shared by the cargo-fuzz targets (`fuzz_targets/`) and
//! by the test that replays the seed and regression corpora in the normal test suite
//! (`crates/core/tests/fuzz_corpus.rs`, which includes this file).
//!
//! Each entry point takes any bytes and panics only when a law is broken:
//!
//! - every error is one line that starts with the name of the input it blames and holds
//!   no control or bidirectional characters (so it is safe to print);
//! - the readers yield records consistent with their own documentation;
//! - a run's report satisfies its conservation laws (`Report::check_invariants`) and the
//!   same scenario run twice gives bit-identical metrics.
//!
//! Scenario inputs are TOML; a line `#set KEY=VALUE` (a TOML comment, so the text stays
//! valid TOML) is also passed as a `--set` override, in order.

use std::io::Cursor;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use irqsim_core::trace::{PcapReader, StraceReader, SyscallKind};
use irqsim_core::{Override, Record, Scenario, parse_override, simulate};

/// Name the inputs are given in errors.
const PCAP: &str = "fuzz.pcap";
const STRACE: &str = "fuzz.strace";
const TOML: &str = "fuzz.toml";
/// Records read from one input at most: reading more finds nothing new, only time.
const MAX_RECORDS: usize = 10_000;
/// Longest run, in cycles, of a fuzzed scenario (its duration is forced down to this).
const BUDGET_CYCLES: f64 = 1e6;
/// Run length forced on every fuzzed scenario before the cycle budget applies.
const SHORT_RUN: &str = "run.duration_ms=0.05";
/// Trace files a fuzzed scenario may name: the committed pair, read from `traces/`.
const TRACE_FILES: [&str; 2] = ["loopback-stream.pcap", "loopback-stream.strace"];

/// What an entry point made of its input (the corpus replay test checks that every
/// seed is [`Outcome::Accepted`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Read or run to the end without an error.
    Accepted,
    /// Refused with an error that obeys the laws.
    Rejected,
    /// Not tried: not UTF-8, or a trace file other than the committed pair.
    Skipped,
}

/// The pcap reader on arbitrary bytes.
pub fn pcap(data: &[u8]) -> Outcome {
    let host = Ipv4Addr::new(127, 0, 0, 1);
    let reader = match PcapReader::new(Cursor::new(data), PCAP, host) {
        Ok(r) => r,
        Err(e) => return check_error(&e.to_string(), &[PCAP]),
    };
    for item in reader.take(MAX_RECORDS) {
        match item {
            Ok(r) => assert!(r.payload_bytes <= r.ip_bytes, "payload larger than its IPv4 packet: {r:?}"),
            Err(e) => return check_error(&e.to_string(), &[PCAP]),
        }
    }
    Outcome::Accepted
}

/// The strace reader on arbitrary bytes.
pub fn strace(data: &[u8]) -> Outcome {
    for item in StraceReader::new(Cursor::new(data), STRACE).take(MAX_RECORDS) {
        match item {
            Ok(r) => assert!(r.kind != SyscallKind::Other || r.bytes == 0, "bytes moved by a call that moves none: {r:?}"),
            Err(e) => return check_error(&e.to_string(), &[STRACE]),
        }
    }
    Outcome::Accepted
}

/// Scenario loading, with `#set` overrides.
pub fn scenario(data: &[u8]) -> Outcome {
    let (text, overrides) = match split(data) {
        Ok(parts) => parts,
        Err(outcome) => return outcome,
    };
    match Scenario::from_toml(text, TOML, &overrides) {
        Ok(_) => Outcome::Accepted,
        Err(e) => check_error(&e.to_string(), &[TOML, "--set"]),
    }
}

/// A whole short run of a fuzzed scenario: its duration forced to 0.05 ms and at most
/// [`BUDGET_CYCLES`]; trace workloads may only name the committed trace files, and a
/// script's `events_file` is not read.
pub fn short_run(data: &[u8]) -> Outcome {
    let (text, mut overrides) = match split(data) {
        Ok(parts) => parts,
        Err(outcome) => return outcome,
    };
    overrides.push(parse_override(SHORT_RUN).expect("a valid override"));
    let s = match Scenario::from_toml(text, TOML, &overrides) {
        Ok(s) => s,
        Err(e) => return check_error(&e.to_string(), &[TOML, "--set"]),
    };
    let s = if s.duration_cycles() as f64 > BUDGET_CYCLES {
        let ms = BUDGET_CYCLES / (s.cpu.clock_mhz * 1e3);
        overrides.push(parse_override(&format!("run.duration_ms={ms:e}")).expect("a valid override"));
        match Scenario::from_toml(text, TOML, &overrides) {
            Ok(s) => s,
            Err(e) => return check_error(&e.to_string(), &[TOML, "--set"]),
        }
    } else {
        s
    };
    match &s.workload {
        irqsim_core::config::WorkloadConfig::Trace(t) => {
            let named = std::iter::once(&t.pcap).chain(&t.strace);
            if !named.into_iter().all(|f| TRACE_FILES.contains(&f.as_str())) {
                return Outcome::Skipped;
            }
        }
        // The events file's reader has its tests (`crates/core/tests/script_file.rs`);
        // a fuzzed name could be any file on the machine.
        irqsim_core::config::WorkloadConfig::Script(w) if w.events_file.is_some() => return Outcome::Skipped,
        _ => {}
    }
    let record = Record { timeline: data.len().is_multiple_of(2) };
    let base = traces_dir();
    let first = match simulate(&s, &base, record) {
        Ok(r) => r,
        Err(e) => {
            let (name, dir) = (if s.name.is_empty() { TOML } else { s.name.as_str() }, base.display().to_string());
            return check_error(&e.to_string(), &[name, TOML, "scenario", &dir]);
        }
    };
    if let Err(law) = first.check_invariants() {
        panic!("{law}");
    }
    let again = simulate(&s, &base, record).expect("the same run succeeded once");
    assert_eq!(bits(&first.metrics), bits(&again.metrics), "a rerun differs");
    Outcome::Accepted
}

/// A whole run of the trace workload on a fuzzed pcap (host 127.0.0.1, 1 ms at 200 MHz,
/// default NIC): the reader, the pass before the run and the replay together.
pub fn trace_run(data: &[u8]) -> Outcome {
    // One file per process: libFuzzer runs inputs one at a time.
    let dir = std::env::temp_dir();
    let name = format!("irqsim-fuzz-{}.pcap", std::process::id());
    std::fs::write(dir.join(&name), data).expect("the temporary directory is writable");
    // The scenario is the same for every input: loaded once (it took a third of the time).
    static SCENARIO: std::sync::OnceLock<Scenario> = std::sync::OnceLock::new();
    let s = SCENARIO.get_or_init(|| {
        let text = format!(
            "name = \"trace\"\n[run]\nduration_ms = 1.0\n[cpu]\nclock_mhz = 200.0\n[stack]\nenabled = true\n\
             [workload]\nkind = \"trace\"\npcap = \"{name}\"\nhost = \"127.0.0.1\"\n"
        );
        Scenario::from_toml(&text, TOML, &[]).expect("a valid scenario")
    });
    let outcome = match simulate(s, &dir, Record::default()) {
        Ok(r) => {
            if let Err(law) = r.check_invariants() {
                panic!("{law}");
            }
            Outcome::Accepted
        }
        Err(e) => check_error(&e.to_string(), &[&dir.join(&name).display().to_string()]),
    };
    let _ = std::fs::remove_file(dir.join(&name));
    outcome
}

/// Splits a scenario input into its TOML text and its `#set` overrides; the outcome
/// instead when the input is not UTF-8 (TOML must be) or an override does not parse.
fn split(data: &[u8]) -> Result<(&str, Vec<Override>), Outcome> {
    let text = std::str::from_utf8(data).map_err(|_| Outcome::Skipped)?;
    let mut overrides = Vec::new();
    for line in text.lines() {
        if let Some(set) = line.strip_prefix("#set ") {
            let o = parse_override(set).map_err(|e| check_error(&e.to_string(), &["--set"]))?;
            overrides.push(o);
        }
    }
    Ok((text, overrides))
}

/// The laws every error message obeys: one line, naming one of `inputs` first, and safe
/// to print (the characters `irqsim_core::trace` escapes). Returns [`Outcome::Rejected`].
fn check_error(msg: &str, inputs: &[&str]) -> Outcome {
    assert!(!msg.is_empty(), "empty error message");
    assert!(inputs.iter().any(|i| msg.starts_with(i)), "error message names none of {inputs:?} first: {msg:?}");
    assert!(!msg.contains('\n'), "error message over several lines: {msg:?}");
    let unsafe_char =
        |c: char| c.is_control() || matches!(c, '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}');
    assert!(!msg.chars().any(unsafe_char), "raw control character in error message: {msg:?}");
    Outcome::Rejected
}

fn bits(metrics: &[(irqsim_core::report::Name, f64)]) -> Vec<(&str, u64)> {
    metrics.iter().map(|(k, v)| (k.as_ref(), v.to_bits())).collect()
}

/// The repository's `traces/`, from this crate (`fuzz/`) or from `crates/core`, whose
/// tests include this file.
fn traces_dir() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fuzz = here.join("../traces");
    if fuzz.is_dir() { fuzz } else { here.join("../../traces") }
}
