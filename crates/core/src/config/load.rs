//! TOML text → [`Scenario`], with overrides and errors that name where the
//! bad value came from: the file and its line, or the override (`--set` on
//! the command line, whatever word the caller chose elsewhere).

use super::patch::Base;
use super::{Scenario, parts};
use crate::error::{Error, Result};
use serde::Deserialize;
use std::cell::RefCell;
use std::sync::Arc;
use toml::{Table, Value};

/// One `key.path=value` override.
#[derive(Debug, Clone)]
pub struct Override {
    pub path: Vec<String>,
    pub value: Value,
    /// What errors about this key name as its source (`--set`, `overrides`).
    pub origin: String,
}

/// Parses `a.b.c=value` given with `--set`; see [`parse_override_as`].
pub fn parse_override(text: &str) -> Result<Override> {
    parse_override_as(text, "--set")
}

/// Parses `a.b.c=value`; the value is read as TOML (`3`, `1.5`, `true`,
/// `"x"`, `[1, 2]`), and as a bare string if it is not valid TOML. Errors
/// about it name `origin`.
pub fn parse_override_as(text: &str, origin: &str) -> Result<Override> {
    let bad = |msg: &str| Error::Config { file: origin.into(), key: text.into(), line: None, msg: msg.into() };
    let (key, raw) = text.split_once('=').ok_or_else(|| bad("expected KEY.PATH=VALUE"))?;
    let path: Vec<String> = key.trim().split('.').map(|s| s.trim().to_string()).collect();
    if path.iter().any(|s| s.is_empty()) {
        return Err(bad("empty key segment"));
    }
    let raw = raw.trim();
    let value = plain_number(raw).unwrap_or_else(|| match format!("v = {raw}").parse::<Table>() {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| Value::String(raw.into())),
        Err(_) => Value::String(raw.into()),
    });
    Ok(Override { path, value, origin: origin.into() })
}

/// `42`, `-7`, `0.001`: a number as TOML reads it, without TOML's parser
/// (half of the instructions of a sweep's loaded run went to parsing its
/// overrides once loads were patched). Anything else (`1e3`, `0x10`,
/// `1_000`, `01`, too large) is left to the parser.
fn plain_number(raw: &str) -> Option<Value> {
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    let (int, frac) = match digits.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (digits, None),
    };
    let decimal = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if !decimal(int) || int.len() > 1 && int.starts_with('0') || frac.is_some_and(|f| !decimal(f)) {
        return None;
    }
    match frac {
        None => raw.parse().ok().map(Value::Integer),
        Some(_) => raw.parse().ok().map(Value::Float),
    }
}

/// The largest scenario text read: TOML is parsed whole, so this bounds the
/// memory any scenario can take (about 35 times the text: 140 MB), some
/// 60,000 `[[workload.events]]` of a script.
pub const MAX_SCENARIO_BYTES: usize = 4 << 20;

impl Scenario {
    /// Loads a scenario from a file.
    pub fn from_file(path: &std::path::Path, overrides: &[Override]) -> Result<Scenario> {
        Self::shared_from_file(path, overrides).map(Arc::unwrap_or_clone)
    }

    /// Loads a scenario from TOML text; `file` names it in errors.
    pub fn from_toml(text: &str, file: &str, overrides: &[Override]) -> Result<Scenario> {
        Self::shared_from_toml(text, file, overrides).map(Arc::unwrap_or_clone)
    }

    /// [`Scenario::from_file`], shared with the loads kept.
    pub fn shared_from_file(path: &std::path::Path, overrides: &[Override]) -> Result<Arc<Scenario>> {
        let text = crate::input::read_regular(path).map_err(|source| Error::Io { path: path.display().to_string(), source })?;
        Self::shared_from_toml(&text, &path.display().to_string(), overrides)
    }

    /// [`Scenario::from_toml`], shared with the loads kept: a repeated load
    /// copies nothing (copying the kept scenario and dropping the copy were
    /// 15 k instructions of a tiny run's 50 k in the core, docs/performance.md).
    pub fn shared_from_toml(text: &str, file: &str, overrides: &[Override]) -> Result<Arc<Scenario>> {
        if let Some(s) = Loaded::find(text, file, overrides) {
            return Ok(s);
        }
        // A sweep's patched loads are not kept: each would evict another.
        if let Some(s) = Base::patch(text, file, overrides) {
            return Ok(Arc::new(s));
        }
        let scenario = Arc::new(Self::load(text, file, overrides)?);
        Loaded::keep(text, file, overrides, &scenario);
        Ok(scenario)
    }

    pub(super) fn load(text: &str, file: &str, overrides: &[Override]) -> Result<Scenario> {
        if text.len() > MAX_SCENARIO_BYTES {
            let msg = format!(
                "{} bytes, more than a scenario may hold ({MAX_SCENARIO_BYTES}); its parsed form takes some 35 times its size (1,000,000 script events took 2.4 GB): give a long script as `workload.events_file`, read as the run advances",
                text.len()
            );
            return Err(Error::Syntax { file: file.into(), msg });
        }
        let config_error = |key: String, msg: String| {
            // A key set by an override is blamed on the override, not the file.
            let bare = parts::strip_indices(&key);
            if let Some(o) = overrides.iter().rev().find(|o| related(&parts::strip_indices(&o.path.join(".")), &bare)) {
                return Error::Config { file: o.origin.clone(), key, line: None, msg };
            }
            let line = line_of(text, &key);
            Error::Config { file: file.into(), key, line, msg }
        };
        let checked = || -> Result<Table> {
            let mut table = parse(text, file)?;
            for o in overrides {
                set(&mut table, o).map_err(|msg| Error::Config { file: o.origin.clone(), key: o.path.join("."), line: None, msg })?;
            }
            parts::check_table(&mut table).map_err(|(key, msg)| config_error(key, msg))?;
            Ok(table)
        };
        // The tables agree with the structs (a test loads every part), so a
        // failure here is a bug; it still names the key, found by doing it
        // again with the path tracked (which costs a fifth of a tiny run).
        let table = checked()?;
        let base = (text.len() <= CACHED_BYTES).then(|| table.clone());
        let mut scenario = match Scenario::deserialize(Value::Table(table)) {
            Ok(s) => s,
            Err(_) => {
                let e = serde_path_to_error::deserialize::<_, Scenario>(Value::Table(checked()?)).expect_err("failed once");
                return Err(config_error(e.path().to_string(), e.into_inner().to_string().lines().next().unwrap_or_default().to_string()));
            }
        };
        scenario.file = file.to_string();
        scenario.check().map_err(|(key, msg)| config_error(key, msg))?;
        if let Some(table) = base {
            Base::keep(text, file, overrides, table, &scenario);
        }
        Ok(scenario)
    }
}

/// The largest text [`parse`] and [`Loaded`] keep: a long script's table would stay in memory.
const CACHED_BYTES: usize = 64 << 10;

/// The scenarios last loaded in this thread, with what they were loaded
/// from: loading is a function of the text, its name and the overrides (it
/// reads no other file), and a loop of runs loads one scenario with the same
/// overrides again and again, which cost nine tenths of a tiny run's
/// instructions (docs/performance.md). A failed load is not kept.
struct Loaded {
    text: String,
    file: String,
    overrides: Vec<Override>,
    scenario: Arc<Scenario>,
}

impl Loaded {
    /// How many are kept, the most recent first.
    const KEPT: usize = 4;

    fn with<R>(f: impl FnOnce(&mut Vec<Loaded>) -> R) -> R {
        thread_local! {
            static KEPT: RefCell<Vec<Loaded>> = const { RefCell::new(Vec::new()) };
        }
        KEPT.with_borrow_mut(f)
    }

    fn find(text: &str, file: &str, overrides: &[Override]) -> Option<Arc<Scenario>> {
        Self::with(|kept| {
            let i = kept.iter().position(|k| k.text == text && k.file == file && same_overrides(&k.overrides, overrides))?;
            kept[..=i].rotate_right(1);
            Some(kept[0].scenario.clone())
        })
    }

    fn keep(text: &str, file: &str, overrides: &[Override], scenario: &Arc<Scenario>) {
        if text.len() > CACHED_BYTES {
            return;
        }
        Self::with(|kept| {
            kept.truncate(Self::KEPT - 1);
            let loaded = Loaded { text: text.into(), file: file.into(), overrides: overrides.to_vec(), scenario: scenario.clone() };
            kept.insert(0, loaded);
        })
    }
}

fn same_overrides(a: &[Override], b: &[Override]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.path == b.path && a.origin == b.origin && same(&a.value, &b.value))
}

/// Whether two values are the same TOML, float bits and all (`==` takes
/// `-0.0` for `0.0`, which a key such as a rate would tell apart).
pub(super) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Table(x), Value::Table(y)) => x.len() == y.len() && x.iter().zip(y).all(|((kx, x), (ky, y))| kx == ky && same(x, y)),
        _ => a == b,
    }
}

/// `text` as a TOML table, from a one-entry cache per thread: a sweep or a
/// loop loads one scenario many times with other overrides, and parsing it
/// took a seventh of a tiny run's instructions (docs/performance.md).
fn parse(text: &str, file: &str) -> Result<Table> {
    thread_local! {
        static LAST: RefCell<Option<(String, Table)>> = const { RefCell::new(None) };
    }
    LAST.with_borrow_mut(|last| {
        if let Some((_, table)) = last.as_ref().filter(|(t, _)| t == text) {
            return Ok(table.clone());
        }
        let table: Table = text.parse().map_err(|e: toml::de::Error| syntax(text, file, &e))?;
        if text.len() <= CACHED_BYTES {
            *last = Some((text.to_string(), table.clone()));
        }
        Ok(table)
    })
}

/// One line: the file, the line and column, and what the parser expected.
fn syntax(text: &str, file: &str, e: &toml::de::Error) -> Error {
    let msg = e.message().lines().next().unwrap_or("invalid TOML").trim_end();
    let msg = match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().unwrap_or_default().chars().count() + 1;
            format!("line {line}, column {column}: {msg}")
        }
        None => msg.to_string(),
    };
    Error::Syntax { file: file.into(), msg }
}

/// Whether dotted keys `a` and `b` are one key or one contains the other.
fn related(a: &str, b: &str) -> bool {
    a == b || a.strip_prefix(b).is_some_and(|r| r.starts_with('.')) || b.strip_prefix(a).is_some_and(|r| r.starts_with('.'))
}

/// Sets an override's key in the scenario's table. A segment `name[i]`
/// is the `i`th item of the list `name` the scenario already has
/// (`nics.others[0].irq_path`: one key of one `[[nics.others]]` table).
fn set(table: &mut Table, o: &Override) -> std::result::Result<(), String> {
    let (last, parents) = o.path.split_last().ok_or("empty key")?;
    let mut t = table;
    for (i, seg) in parents.iter().enumerate() {
        let here = || o.path[..=i].join(".");
        let entry = match indexed(seg)? {
            Some((name, k)) => item(t, name, k)?,
            None => t.entry(seg.clone()).or_insert_with(|| Value::Table(Table::new())),
        };
        t = entry.as_table_mut().ok_or_else(|| format!("`{}` is not a table", here()))?;
    }
    match indexed(last)? {
        Some((name, k)) => *item(t, name, k)? = o.value.clone(),
        None => _ = t.insert(last.clone(), o.value.clone()),
    }
    Ok(())
}

/// `name[i]` as `(name, i)`; `None` for a plain segment.
fn indexed(seg: &str) -> std::result::Result<Option<(&str, usize)>, String> {
    let Some((name, rest)) = seg.split_once('[') else { return Ok(None) };
    let index = rest.strip_suffix(']').and_then(|i| i.parse().ok()).filter(|_| !name.is_empty());
    index.map(|i| Some((name, i))).ok_or_else(|| format!("`{seg}`: a list item is written `name[index]`, the index a whole number from 0"))
}

/// Item `k` of the list `name` in `t`, which must have it.
fn item<'t>(t: &'t mut Table, name: &str, k: usize) -> std::result::Result<&'t mut Value, String> {
    let list = t.get_mut(name).and_then(Value::as_array_mut).ok_or_else(|| format!("the scenario has no list `{name}` to index; set the whole list"))?;
    let n = list.len();
    list.get_mut(k).ok_or_else(|| format!("`{name}` has {n} item(s), numbered from 0; set the whole list to add one"))
}

/// The 1-based line where `key` is set in `text`: dotted, with `[i]` for
/// the i-th `[[array]]` table (`workload.events[3].bytes`). A key the file
/// does not write is placed at its nearest written parent (a missing key at
/// its section's header); `None` when nothing of it is written.
fn line_of(text: &str, key: &str) -> Option<usize> {
    let mut key = key.to_string();
    loop {
        if let Some(line) = exact_line(text, &key) {
            return Some(line);
        }
        key = match key.rsplit_once('.') {
            _ if key.ends_with(']') => key[..key.rfind('[')?].to_string(),
            Some((parent, _)) => parent.to_string(),
            None => return None,
        };
    }
}

fn exact_line(text: &str, key: &str) -> Option<usize> {
    let mut current = String::new();
    let mut counts: Vec<(String, usize)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.split(" #").next().unwrap_or_default().trim();
        if let Some(h) = l.strip_prefix("[[").and_then(|h| h.strip_suffix("]]")) {
            let h = h.trim().to_string();
            let n = match counts.iter_mut().find(|(k, _)| *k == h) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    counts.push((h.clone(), 0));
                    0
                }
            };
            current = format!("{h}[{n}]");
        } else if let Some(h) = l.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            current = h.trim().to_string();
        } else if let Some((k, _)) = l.split_once('=') {
            let k: String = k.split('.').map(|s| s.trim().trim_matches('"')).collect::<Vec<_>>().join(".");
            if crate::params::join(&current, &k) == key {
                return Some(i + 1);
            }
            continue;
        } else {
            continue;
        }
        if current == key {
            return Some(i + 1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: &str = "[cpu]\nclock_mhz = 200.0\n\n[workload]\nkind = \"flood\"\ndirection = \"rx\"\npacket_bytes = 1500\n";

    fn err(text: &str, overrides: &[&str]) -> String {
        let o: Vec<Override> = overrides.iter().map(|s| parse_override(s).unwrap()).collect();
        Scenario::from_toml(text, "s.toml", &o).unwrap_err().to_string()
    }

    #[test]
    fn minimal_scenario_loads_with_defaults() {
        let s = Scenario::from_toml(MIN, "s.toml", &[]).unwrap();
        assert_eq!(s.cpu.save_restore_cycles, 186);
        assert_eq!(s.duration_cycles(), 200_000_000);
        assert_eq!(s.file, "s.toml");
    }

    #[test]
    fn unknown_key_is_named_with_its_line() {
        let e = err(&MIN.replace("clock_mhz = 200.0", "clock_mhz = 200.0\nclok_mhz = 1"), &[]);
        assert!(e.starts_with("s.toml:3: `cpu.clok_mhz`: unknown field `clok_mhz`"), "{e}");
    }

    #[test]
    fn zero_and_negative_clock_are_refused() {
        let e = err(&MIN.replace("200.0", "0.0"), &[]);
        assert!(e.starts_with("s.toml:2: `cpu.clock_mhz`: must be in (0, 100_000]"), "{e}");
        let e = err(MIN, &["cpu.clock_mhz=-5"]);
        assert!(e.starts_with("--set: `cpu.clock_mhz`"), "{e}");
    }

    #[test]
    fn negative_cost_is_refused_by_range() {
        let e = err(MIN, &["cpu.save_restore_cycles=-1"]);
        assert!(e.starts_with("--set: `cpu.save_restore_cycles`: must be 0..=1_000_000_000, got -1"), "{e}");
    }

    #[test]
    fn overrides_apply_and_are_typed() {
        let o = [parse_override("cpu.context_policy=multithreaded").unwrap(), parse_override("run.seed=7").unwrap()];
        let s = Scenario::from_toml(MIN, "s.toml", &o).unwrap();
        assert_eq!(s.cpu.context_policy, crate::cpu::ContextPolicy::Multithreaded);
        assert_eq!(s.run.seed, 7);
    }

    #[test]
    fn a_cached_text_loads_as_parsed_anew() {
        let o = [parse_override("cpu.save_restore_cycles=5").unwrap()];
        assert_eq!(Scenario::from_toml(MIN, "s.toml", &o).unwrap().cpu.save_restore_cycles, 5);
        // The override went into a copy: the cached table is the text's.
        assert_eq!(Scenario::from_toml(MIN, "s.toml", &[]).unwrap().cpu.save_restore_cycles, 186);
        let e = err(&MIN.replace("[workload]", "[workload"), &[]);
        assert!(e.starts_with("s.toml: line 4, column"), "{e}");
        assert_eq!(Scenario::from_toml(MIN, "s.toml", &[]).unwrap().cpu.save_restore_cycles, 186);
    }

    #[test]
    fn a_kept_scenario_is_the_one_its_text_name_and_overrides_load() {
        let with = |set: &str| [parse_override(set).unwrap()];
        let load = |file: &str, o: &[Override]| Scenario::from_toml(MIN, file, o).unwrap();
        assert_eq!(load("a.toml", &with("cpu.save_restore_cycles=5")).cpu.save_restore_cycles, 5);
        assert_eq!(load("a.toml", &with("cpu.save_restore_cycles=5")).cpu.save_restore_cycles, 5);
        // A repeated load is the kept scenario itself, not a copy.
        let shared = || Scenario::shared_from_toml(MIN, "a.toml", &with("cpu.save_restore_cycles=5")).unwrap();
        assert!(Arc::ptr_eq(&shared(), &shared()));
        assert_eq!(load("a.toml", &with("cpu.save_restore_cycles=6")).cpu.save_restore_cycles, 6);
        assert_eq!(load("b.toml", &with("cpu.save_restore_cycles=5")).file, "b.toml");
        assert_eq!(load("a.toml", &[]).cpu.save_restore_cycles, 186);
        // Float bits, not `==`: -0.0 is another override than 0.0.
        assert!(!same(&Value::Float(0.0), &Value::Float(-0.0)));
        assert!(same(&Value::Array(vec![Value::Float(0.5)]), &Value::Array(vec![Value::Float(0.5)])));
        // A failed load is not kept: the same bad override fails again.
        for _ in 0..2 {
            assert!(err(MIN, &["cpu.save_restore_cycles=-1"]).starts_with("--set: `cpu.save_restore_cycles`"));
        }
        // Another origin names the override differently.
        let o = [parse_override_as("cpu.clock_mhz=-5", "overrides").unwrap()];
        assert!(Scenario::from_toml(MIN, "a.toml", &o).unwrap_err().to_string().starts_with("overrides: `cpu.clock_mhz`"));
    }

    #[test]
    fn plain_numbers_read_as_toml_reads_them() {
        let by_toml = |raw: &str| format!("v = {raw}").parse::<Table>().ok().and_then(|mut t| t.remove("v"));
        let numbers = ["0", "-0", "7", "-12", "9223372036854775807", "-9223372036854775808", "0.0", "-0.0", "0.001", "1.5", "20000.25", "3.141592653589793238"];
        for raw in numbers {
            let fast = plain_number(raw).unwrap_or_else(|| panic!("{raw} is plain"));
            assert!(same(&fast, &by_toml(raw).unwrap()), "{raw}");
        }
        for raw in ["9223372036854775808", "01", "1.", ".5", "1e3", "1_000", "+1", "0x10", "inf", "1.5.2", "-", ""] {
            assert!(plain_number(raw).is_none(), "{raw}");
        }
    }

    #[test]
    fn bad_workload_key_is_named_inside_the_workload() {
        let e = err(MIN, &["workload.packet_bytes=\"big\""]);
        assert!(e.starts_with("--set: `workload.packet_bytes`: invalid type"), "{e}");
        let e = err(&MIN.replace("packet_bytes = 1500", "packet_bytes = 1500\npacket_bits = 1"), &[]);
        assert!(e.starts_with("s.toml:8: `workload.packet_bits`: unknown field"), "{e}");
        let e = err(&MIN.replace("\"flood\"", "\"flod\""), &[]);
        assert!(e.starts_with("s.toml:5: `workload.kind`: unknown variant `flod`"), "{e}");
    }

    #[test]
    fn sections_must_be_tables() {
        let e = err("workload = \"flood\"\n[cpu]\nclock_mhz = 1.0\n", &[]);
        assert!(e.starts_with("s.toml:1: `workload`: must be a table (`[workload]`), got string"), "{e}");
        let e = err(&format!("cpu = 5\n{}", &MIN[MIN.find("[workload]").unwrap()..]), &[]);
        assert!(e.starts_with("s.toml:1: `cpu`: must be a table (`[cpu]`), got integer"), "{e}");
    }

    #[test]
    fn a_key_of_another_kind_names_the_kinds_that_take_it() {
        let e = err(MIN, &["workload.rate_per_s=5.0"]);
        assert!(e.starts_with("--set: `workload.rate_per_s`: a key of workload kind `arrivals`, `exerciser`, not of `flood`"), "{e}");
    }
}
