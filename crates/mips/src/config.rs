//! Settings of an execution-driven run: the cores, their pipeline, the
//! memory hierarchy, cache pinning and the run's guard, declared as
//! [`SECTIONS`] of irqsim's parameter language (irqsim-params). They are set
//! as a TOML table (a scenario's `[code.core]`, `[code.core.l1d]`, ...) or as
//! `section.key=value` strings (`irqsim exec --set l1d.size_bytes=8192`);
//! both are checked against the same tables, so an unknown key, a bad value
//! or a key of a part the run does not use (a cache key with perfect memory)
//! is an [`Error::Config`] naming the key.

use crate::core::Policy;
use crate::error::Error;
use crate::hierarchy::{HierarchyConfig, Level};
use crate::system::SystemConfig;
pub use irqsim_params::parse_u64;
use irqsim_params::{Param, Section, absent, d};
use toml::{Table, Value};

const CACHES: &[&str] = &["caches"];

/// Every section of the settings of `irqsim exec`, in the docs' order.
pub const SECTIONS: &[Section] = &[CORES, PIPELINE_S, MEMORY_S, L1I_S, L1D_S, L2_S, Section::new("run", "the guard of one run", RUN)];

/// The sections a machine's cores take (a scenario's `[code.core]`): all but
/// `run`, whose guard is the machine's own (`run.duration_ms`).
pub const MACHINE_SECTIONS: &[Section] = &[CORES, PIPELINE_S, MEMORY_S, L1I_S, L1D_S, L2_S];

const CORES: Section = Section::new("core", "the cores and their SMT hardware threads", CORE);
const PIPELINE_S: Section = Section::new("pipeline", "latencies of the R4000-class in-order pipeline", PIPELINE);
const MEMORY_S: Section = Section::new("memory", "the memory behind the cores: perfect (every access within the pipeline's cycle) or caches", MEMORY);
const L1I_S: Section =
    Section::new("l1i", "the level 1 instruction cache of each core, and its pinning (docs/models/cores.md)", L1).when("memory.model", CACHES);
const L1D_S: Section = Section::new("l1d", "the level 1 data cache of each core, and its pinning", L1).when("memory.model", CACHES);
const L2_S: Section = Section::new("l2", "the level 2 cache, shared by the cores or one per core, and its pinning", L2).when("memory.model", CACHES);

const CORE: &[Param] = &[
    Param::int("cores", "", d("1"), 1, 64, "cores sharing memory"),
    Param::int("threads", "", d("1"), 1, 16, "SMT hardware threads per core"),
    Param::choice(
        "policy",
        &["round-robin", "icount"],
        d("\"round-robin\""),
        "SMT issue policy: take turns, or the thread with the fewest instructions in flight (ICOUNT)",
    ),
    Param::int(
        "interrupt_thread",
        "",
        absent("none (`--set core.interrupt_thread=none`)"),
        0,
        15,
        "thread index reserved for interrupts: it gets no program thread and issues first",
    ),
];

const PIPELINE: &[Param] = &[
    Param::int("load_use_cycles", "cycles", d("2"), 0, 1000, "cycles a loaded value is not yet usable (R4000 load delay)"),
    Param::int("branch_taken_cycles", "cycles", d("2"), 0, 1000, "extra cycles after a taken branch or jump"),
    Param::int("mult_cycles", "cycles", d("10"), 1, 10_000, "mult/multu latency to HI/LO"),
    Param::int("div_cycles", "cycles", d("69"), 1, 10_000, "div/divu latency to HI/LO"),
];

const MEMORY: &[Param] = &[
    Param::choice("model", &["perfect", "caches"], d("\"perfect\""), "perfect memory, or the cache hierarchy of `[l1i]`, `[l1d]` and `[l2]`"),
    Param::int("latency_cycles", "cycles", d("100"), 0, 1_000_000, "cycles an L2 miss adds").when("memory.model", CACHES),
];

/// A cache's keys with its geometry's defaults.
const fn cache(size: &'static str, ways: &'static str, line: &'static str, hit: &'static str) -> [Param; 8] {
    [
        Param::int("size_bytes", "bytes", d(size), 4, 1 << 30, "capacity"),
        Param::int("ways", "", d(ways), 1, 64, "associativity"),
        Param::int("line_bytes", "bytes", d(line), 4, 4096, "line size"),
        Param::int("hit_cycles", "cycles", d(hit), 0, 10_000, "cycles a hit here adds beyond the pipeline"),
        Param::text("way_masks", absent("no way pinning"), "way pinning: `THREAD:MASK,...`, the ways each thread may fill (contiguous masks)"),
        Param::text("reserve_sets", absent("no set pinning"), "set pinning: `THREAD:FIRST+COUNT,...`, sets only that thread fills"),
        Param::text("lock_range", absent("nothing locked"), "range pinning: `ADDR+LEN` or `SYMBOL`, comma-separated, locked in at start"),
        Param::text("trace_threads", absent("no trace pinning"), "trace pinning on from the start for these threads: `T,...`"),
    ]
}

const L1: &[Param] = &cache("16384", "2", "32", "0");
const L2_CACHE: [Param; 8] = cache("262144", "8", "64", "10");
const L2: &[Param] = &[
    L2_CACHE[0],
    L2_CACHE[1],
    L2_CACHE[2],
    L2_CACHE[3],
    Param::flag("shared", d("true"), "one L2 for all cores (false: one per core)"),
    L2_CACHE[4],
    L2_CACHE[5],
    L2_CACHE[6],
    L2_CACHE[7],
];

const RUN: &[Param] =
    &[Param::int("max_cycles", "cycles", d("10000000000"), 1, (u64::MAX >> 1) as i128, "stop with an error if the program has not exited by then")];

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

impl ExecConfig {
    /// Applies `section.key=value` settings (`irqsim exec --set`) over the defaults.
    pub fn from_sets<S: AsRef<str>>(sets: &[S]) -> Result<ExecConfig, Error> {
        let t = irqsim_params::parse_sets(sets, SECTIONS).map_err(|(key, msg)| Error::config(&key, msg))?;
        Self::from_table(&t)
    }

    /// The settings of a table of [`SECTIONS`] (`[code.core]`), defaults
    /// filled in; error keys are relative to the table (`l1d.size_bytes`).
    pub fn from_table(t: &Table) -> Result<ExecConfig, Error> {
        let mut t = t.clone();
        irqsim_params::check_sections(&mut t, "", SECTIONS).map_err(|(key, msg)| Error::config(&key, msg))?;
        let get = |section: &str, key: &str| t.get(section).and_then(|s| s.get(key));
        // Checked: present (a default) and in range.
        let int = |section: &str, key: &str| get(section, key).and_then(Value::as_integer).expect("checked") as u64;
        let geometry = |level: &str| crate::cache::Geometry {
            size_bytes: int(level, "size_bytes") as u32,
            ways: int(level, "ways") as u32,
            line_bytes: int(level, "line_bytes") as u32,
            hit_cycles: int(level, "hit_cycles") as u32,
        };
        let caches = (get("memory", "model").and_then(Value::as_str) == Some("caches")).then(|| HierarchyConfig {
            l1i: geometry("l1i"),
            l1d: geometry("l1d"),
            l2: geometry("l2"),
            l2_shared: get("l2", "shared").and_then(Value::as_bool).expect("checked"),
            memory_cycles: int("memory", "latency_cycles") as u32,
        });
        let system = SystemConfig {
            cores: int("core", "cores") as usize,
            threads: int("core", "threads") as usize,
            policy: Policy::parse(get("core", "policy").and_then(Value::as_str).expect("checked")).expect("a checked choice"),
            interrupt_thread: get("core", "interrupt_thread").and_then(Value::as_integer).map(|t| t as usize),
            pipeline: crate::timing::Pipeline {
                load_use_cycles: int("pipeline", "load_use_cycles") as u32,
                branch_taken_cycles: int("pipeline", "branch_taken_cycles") as u32,
                mult_cycles: int("pipeline", "mult_cycles") as u32,
                div_cycles: int("pipeline", "div_cycles") as u32,
            },
            caches,
        };
        // One order whatever the order of the keys: masks and reserved sets
        // before ranges are locked in.
        let mut pins = Vec::new();
        if system.caches.is_some() {
            for level in Level::ALL {
                for field in ["way_masks", "reserve_sets", "trace_threads", "lock_range"] {
                    if let Some(value) = get(level.name(), field).and_then(Value::as_str) {
                        parse_pins(&mut pins, &format!("{}.{field}", level.name()), level, field, value)?;
                    }
                }
            }
        }
        let c = ExecConfig { system, pins, max_cycles: int("run", "max_cycles") };
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
            // trace_threads, the last of the table's pinning keys
            _ => Pin::Trace { level, thread: parse_u64(item).ok_or_else(|| bad(item, "a thread index"))? as usize },
        };
        pins.push(pin);
    }
    Ok(())
}
