//! Settings of an execution-driven run as `KEY=VALUE` strings (the CLI's
//! `--set`). Every key is listed in [`KEYS`] with its meaning; an unknown
//! key, a bad value or a key for a part the run does not use (a cache key
//! with perfect memory) is an [`Error::Config`] naming the key.

use crate::core::Policy;
use crate::error::Error;
use crate::hierarchy::{HierarchyConfig, Level};
use crate::system::SystemConfig;

/// `(key, default, meaning)` of every setting; `{cache}` is l1i, l1d or l2.
pub const KEYS: &[(&str, &str, &str)] = &[
    ("core.cores", "1", "cores sharing memory (1-64)"),
    ("core.threads", "1", "SMT hardware threads per core (1-16)"),
    ("core.policy", "round-robin", "SMT issue policy: round-robin or icount"),
    ("core.interrupt_thread", "none", "thread index reserved for interrupts (gets no program thread; issues first)"),
    ("pipeline.load_use_cycles", "2", "cycles a loaded value is not yet usable (R4000 load delay)"),
    ("pipeline.branch_taken_cycles", "2", "extra cycles after a taken branch or jump"),
    ("pipeline.mult_cycles", "10", "mult/multu latency to HI/LO"),
    ("pipeline.div_cycles", "69", "div/divu latency to HI/LO"),
    ("memory.model", "perfect", "perfect or caches"),
    ("memory.latency_cycles", "100", "cycles an L2 miss adds"),
    ("{cache}.size_bytes", "16384 / 16384 / 262144", "capacity"),
    ("{cache}.ways", "2 / 2 / 8", "associativity"),
    ("{cache}.line_bytes", "32 / 32 / 64", "line size"),
    ("{cache}.hit_cycles", "0 / 0 / 10", "cycles a hit here adds beyond the pipeline"),
    ("l2.shared", "true", "one L2 for all cores (false: one per core)"),
    ("{cache}.way_masks", "", "way pinning: THREAD:MASK,... (contiguous masks)"),
    ("{cache}.reserve_sets", "", "set pinning: THREAD:FIRST+COUNT,..."),
    ("{cache}.lock_range", "", "range pinning: ADDR+LEN or SYMBOL,... locked in at start"),
    ("{cache}.trace_threads", "", "trace pinning on from the start for these threads: T,..."),
    ("run.max_cycles", "10000000000", "stop with an error if the program has not exited by then"),
];

const UNKNOWN: &str = "unknown key (known: core.*, pipeline.*, memory.*, l1i.*, l1d.*, l2.*, run.max_cycles; see docs/models/cores.md)";

/// A pinning setting applied before the program starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pin {
    WayMask {
        level: Level,
        thread: usize,
        mask: u64,
    },
    Sets {
        level: Level,
        thread: usize,
        first: u32,
        count: u32,
    },
    /// `len == None`: the symbol's size.
    Range {
        level: Level,
        key: String,
        what: RangeStart,
        len: Option<u32>,
    },
    Trace {
        level: Level,
        thread: usize,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RangeStart {
    Addr(u32),
    Symbol(String),
}

/// Everything `irqsim exec` can set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecConfig {
    pub system: SystemConfig,
    pub pins: Vec<Pin>,
    pub max_cycles: u64,
}

/// Parses an unsigned integer: decimal, or hex with `0x`; `_` separators allowed.
pub fn parse_u64(s: &str) -> Option<u64> {
    let s = s.trim().replace('_', "");
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

impl ExecConfig {
    /// Applies `KEY=VALUE` settings over the defaults.
    pub fn from_sets<S: AsRef<str>>(sets: &[S]) -> Result<ExecConfig, Error> {
        let mut c = ExecConfig { system: SystemConfig::default(), pins: Vec::new(), max_cycles: 10_000_000_000 };
        let mut h = HierarchyConfig::default();
        let mut cache_key = None;
        for s in sets {
            let s = s.as_ref();
            let (key, value) = s.split_once('=').ok_or_else(|| Error::config(s, "expected KEY=VALUE"))?;
            let (key, value) = (key.trim(), value.trim());
            let bad = |msg: &str| Error::config(key, format!("{msg} (got {value:?})"));
            let num = |lo: u64, hi: u64| parse_u64(value).filter(|v| (lo..=hi).contains(v)).ok_or_else(|| bad(&format!("expected an integer in {lo}..={hi}")));
            let (part, field) = key.split_once('.').unwrap_or((key, ""));
            let level = Level::ALL.into_iter().find(|l| l.name() == part);
            if level.is_some() || key == "memory.latency_cycles" {
                cache_key.get_or_insert(key.to_string());
            }
            match (part, field, level) {
                ("core", "cores", _) => c.system.cores = num(1, 64)? as usize,
                ("core", "threads", _) => c.system.threads = num(1, 16)? as usize,
                ("core", "policy", _) => c.system.policy = Policy::parse(value).ok_or_else(|| bad("expected round-robin or icount"))?,
                ("core", "interrupt_thread", _) => c.system.interrupt_thread = if value == "none" { None } else { Some(num(0, 15)? as usize) },
                ("pipeline", "load_use_cycles", _) => c.system.pipeline.load_use_cycles = num(0, 1000)? as u32,
                ("pipeline", "branch_taken_cycles", _) => c.system.pipeline.branch_taken_cycles = num(0, 1000)? as u32,
                ("pipeline", "mult_cycles", _) => c.system.pipeline.mult_cycles = num(1, 10_000)? as u32,
                ("pipeline", "div_cycles", _) => c.system.pipeline.div_cycles = num(1, 10_000)? as u32,
                ("memory", "model", _) => {
                    c.system.caches = match value {
                        "perfect" => None,
                        "caches" => Some(h),
                        _ => return Err(bad("expected perfect or caches")),
                    }
                }
                ("memory", "latency_cycles", _) => h.memory_cycles = num(0, 1_000_000)? as u32,
                ("l2", "shared", _) => h.l2_shared = value.parse().map_err(|_| bad("expected true or false"))?,
                (_, field, Some(level)) => {
                    let g = match level {
                        Level::L1i => &mut h.l1i,
                        Level::L1d => &mut h.l1d,
                        Level::L2 => &mut h.l2,
                    };
                    match field {
                        "size_bytes" => g.size_bytes = num(4, 1 << 30)? as u32,
                        "ways" => g.ways = num(1, 64)? as u32,
                        "line_bytes" => g.line_bytes = num(4, 4096)? as u32,
                        "hit_cycles" => g.hit_cycles = num(0, 10_000)? as u32,
                        _ => parse_pins(&mut c.pins, key, level, field, value)?,
                    }
                }
                ("run", "max_cycles", _) => c.max_cycles = num(1, u64::MAX >> 1)?,
                _ => {
                    return Err(Error::config(key, UNKNOWN));
                }
            }
        }
        if let Some(caches) = &mut c.system.caches {
            *caches = h;
        } else if let Some(key) = cache_key {
            return Err(Error::config(&key, "sets a cache but memory.model is perfect (add --set memory.model=caches)"));
        }
        c.check()?;
        Ok(c)
    }

    fn check(&self) -> Result<(), Error> {
        let s = &self.system;
        if let Some(t) = s.interrupt_thread.filter(|&t| t >= s.threads) {
            return Err(Error::config("core.interrupt_thread", format!("thread {t} does not exist (core.threads is {})", s.threads)));
        }
        if let Some(h) = &s.caches {
            for (level, g) in [(Level::L1i, h.l1i), (Level::L1d, h.l1d), (Level::L2, h.l2)] {
                g.check().map_err(|m| Error::config(level.name(), m))?;
            }
        }
        let n = s.cores * s.threads;
        for p in &self.pins {
            let (level, thread) = match p {
                Pin::WayMask { level, thread, .. } | Pin::Sets { level, thread, .. } | Pin::Trace { level, thread } => (*level, *thread),
                Pin::Range { .. } => continue,
            };
            if thread >= n {
                return Err(Error::config(level.name(), format!("pinning names thread {thread}, but there are {n} hardware threads")));
            }
        }
        Ok(())
    }
}

fn parse_pins(pins: &mut Vec<Pin>, key: &str, level: Level, field: &str, value: &str) -> Result<(), Error> {
    let bad = |item: &str, want: &str| Error::config(key, format!("{item:?}: expected {want}"));
    for item in value.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let thread_and = |want: &str| -> Result<(usize, &str), Error> {
            let (t, rest) = item.split_once(':').ok_or_else(|| bad(item, want))?;
            Ok((parse_u64(t).ok_or_else(|| bad(item, want))? as usize, rest))
        };
        let pin = match field {
            "way_masks" => {
                let (thread, m) = thread_and("THREAD:MASK")?;
                Pin::WayMask { level, thread, mask: parse_u64(m).ok_or_else(|| bad(item, "THREAD:MASK"))? }
            }
            "reserve_sets" => {
                let (thread, r) = thread_and("THREAD:FIRST+COUNT")?;
                let (f, n) = r.split_once('+').ok_or_else(|| bad(item, "THREAD:FIRST+COUNT"))?;
                let v = |s: &str| parse_u64(s).and_then(|v| u32::try_from(v).ok()).ok_or_else(|| bad(item, "THREAD:FIRST+COUNT"));
                Pin::Sets { level, thread, first: v(f)?, count: v(n)? }
            }
            "lock_range" => {
                let (start, len) = match item.split_once('+') {
                    Some((a, l)) => (a, Some(parse_u64(l).and_then(|v| u32::try_from(v).ok()).ok_or_else(|| bad(item, "ADDR+LEN or SYMBOL"))?)),
                    None => (item, None),
                };
                let what = match parse_u64(start) {
                    Some(a) => RangeStart::Addr(u32::try_from(a).map_err(|_| bad(item, "a 32-bit address"))?),
                    None => RangeStart::Symbol(start.to_string()),
                };
                if matches!(what, RangeStart::Addr(_)) && len.is_none() {
                    return Err(bad(item, "ADDR+LEN (an address needs a length)"));
                }
                Pin::Range { level, key: key.to_string(), what, len }
            }
            "trace_threads" => Pin::Trace { level, thread: parse_u64(item).ok_or_else(|| bad(item, "a thread index"))? as usize },
            _ => {
                return Err(Error::config(key, UNKNOWN));
            }
        };
        pins.push(pin);
    }
    Ok(())
}
