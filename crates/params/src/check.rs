//! Checking a TOML table against its declarations: names, types, ranges,
//! required keys, defaults, and [`When`] rules inside a table of sections.
//! Messages use serde's words, so they read alike whoever checks.

use crate::param::{Def, Param, Range, Section, Type, When};
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use toml::{Table, Value};

/// A key that is wrong: `(dotted key, message)`.
pub type Problem = (String, String);

/// Looks a key up in a table of parameters.
pub fn find<'p>(params: &'p [Param], key: &str) -> Option<&'p Param> {
    params.iter().find(|p| p.key == key)
}

/// Checks the section at `path` against `params` and fills in its defaults
/// (sub-tables of a [`Type::Sections`] key too).
pub fn check_section(t: &mut Table, path: &str, params: &[Param]) -> Result<(), Problem> {
    if t.is_empty() {
        *t = defaults(path, params)?;
        return Ok(());
    }
    check_written(t, path, params)
}

/// An empty section filled with its defaults, made once per thread for each
/// table of parameters (by its address) and cloned after: most of a
/// scenario's sections are not written, and filling them key by key was a
/// fifth of a load. Only a section that has no required key is kept: the
/// error of one that has names its path.
fn defaults(path: &str, params: &[Param]) -> Result<Table, Problem> {
    thread_local! {
        static FILLED: RefCell<HashMap<(usize, usize), Table, BuildHasherDefault<ByAddress>>> = RefCell::new(HashMap::default());
    }
    let key = (params.as_ptr() as usize, params.len());
    if let Some(t) = FILLED.with_borrow(|filled| filled.get(&key).cloned()) {
        return Ok(t);
    }
    let mut t = Table::new();
    check_written(&mut t, path, params)?;
    FILLED.with_borrow_mut(|filled| filled.insert(key, t.clone()));
    Ok(t)
}

fn check_written(t: &mut Table, path: &str, params: &[Param]) -> Result<(), Problem> {
    for (key, value) in t.iter() {
        let p = find(params, key).ok_or_else(|| (join(path, key), unknown("field", key, params.iter().map(|p| p.key))))?;
        check_value(value, &|| join(path, key), p)?;
    }
    for p in params {
        if t.contains_key(p.key) {
            continue;
        }
        match p.default {
            Def::Required => return Err((join(path, p.key), "required key missing".into())),
            Def::Absent(_) => {}
            Def::Value(v) => {
                t.insert(p.key.into(), literal(v));
            }
        }
    }
    for p in params {
        // The type first: a lookup of every key was a tenth of a load.
        let Type::Sections(sections) = p.ty else { continue };
        let Some(v) = t.get_mut(p.key) else { continue };
        let at = join(path, p.key);
        if let Value::Array(items) = v {
            *v = Value::Table(from_list(items, &at, sections)?);
        }
        check_sections(v.as_table_mut().expect("checked as a table"), &at, sections)?;
    }
    Ok(())
}

/// The list form of a [`Type::Sections`] key: `["l1d.size_bytes=8192", ...]`.
fn from_list(items: &[Value], at: &str, sections: &[Section]) -> Result<Table, Problem> {
    let mut sets = Vec::with_capacity(items.len());
    for (i, x) in items.iter().enumerate() {
        let s = x.as_str().ok_or_else(|| (format!("{at}[{i}]"), format!("invalid type: {}, expected a string", describe(x))))?;
        sets.push(s);
    }
    crate::parse_sets(&sets, sections).map_err(|(key, msg)| (at.to_string(), format!("`{key}`: {msg}")))
}

/// Checks a table of named sections (`[code.core.memory]`, `[code.core.l1d]`)
/// at `path`: each against its keys, defaults filled in, and a section or key
/// whose [`When`] does not hold refused when given and left out when not.
pub fn check_sections(t: &mut Table, path: &str, sections: &[Section]) -> Result<(), Problem> {
    for (name, v) in t.iter() {
        if !sections.iter().any(|s| s.name == name) {
            return Err((join(path, name), unknown("section", name, sections.iter().map(|s| s.name))));
        }
        if !v.is_table() {
            return Err((join(path, name), format!("must be a table (`[{}]`), got {}", join(path, name), v.type_str())));
        }
    }
    for s in sections {
        let at = join(path, s.name);
        if let Some(w) = s.when.filter(|w| !holds(t, sections, w)) {
            let given = t.get(s.name).and_then(|v| v.as_table()?.keys().next().cloned());
            if let Some(key) = given {
                return Err((join(&at, &key), not_used(t, sections, path, &w)));
            }
            t.remove(s.name);
            continue;
        }
        let unmet: Vec<&Param> = s.params.iter().filter(|p| p.when.is_some_and(|w| !holds(t, sections, &w))).collect();
        let sub = t.entry(s.name).or_insert_with(|| Value::Table(Table::new())).as_table_mut().expect("checked as a table");
        let given = unmet.iter().find(|p| sub.contains_key(p.key)).map(|p| (p.key, p.when.expect("has a rule")));
        if let Some((key, w)) = given {
            return Err((join(&at, key), not_used(t, sections, path, &w)));
        }
        check_section(sub, &at, s.params)?;
        for p in unmet {
            sub.remove(p.key);
        }
    }
    Ok(())
}

/// Whether a [`When`] holds in a table of sections: the deciding key's value
/// as given, or else its default.
fn holds(t: &Table, sections: &[Section], w: &When) -> bool {
    w.is.contains(&value_of(t, sections, w.key).as_str())
}

fn value_of(t: &Table, sections: &[Section], key: &str) -> String {
    let (section, leaf) = key.split_once('.').unwrap_or(("", key));
    if let Some(v) = t.get(section).and_then(|s| s.get(leaf)) {
        return plain(v);
    }
    let p = sections.iter().find(|s| s.name == section).and_then(|s| find(s.params, leaf));
    match p.map(|p| p.default) {
        Some(Def::Value(v)) => plain(&literal(v)),
        _ => String::new(),
    }
}

fn not_used(t: &Table, sections: &[Section], path: &str, w: &When) -> String {
    let value = value_of(t, sections, w.key);
    format!("only used when `{}` is {} (it is `{value}`); remove the key", join(path, w.key), quoted(w.is))
}

/// A default's TOML text as a value. Parsed once per thread, cloned after:
/// every load fills in some hundreds of defaults, and parsing each anew was
/// 41% of a tiny run's instructions (docs/performance.md, "Python overhead").
pub fn literal(text: &'static str) -> Value {
    thread_local! {
        static PARSED: RefCell<HashMap<(usize, usize), Value, BuildHasherDefault<ByAddress>>> = RefCell::new(HashMap::default());
    }
    PARSED.with_borrow_mut(|parsed| {
        parsed
            .entry((text.as_ptr() as usize, text.len()))
            .or_insert_with(|| {
                let mut t: Table = format!("v = {text}").parse().expect("a parameter's default is valid TOML");
                t.remove("v").expect("parsed")
            })
            .clone()
    })
}

/// Hashes the keys of [`literal`] and [`defaults`], a `'static` text's or
/// table's address and length, by a multiply: the address names it, and
/// hashing a text with the standard SipHash was half of each lookup.
#[derive(Default)]
struct ByAddress(u64);

impl Hasher for ByAddress {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|&b| self.write_usize(b.into()));
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0.rotate_left(29) ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

fn unknown<'a>(what: &str, key: &str, known: impl Iterator<Item = &'a str>) -> String {
    let known: Vec<String> = known.map(|k| format!("`{k}`")).collect();
    format!("unknown {what} `{key}`, expected one of {}", known.join(", "))
}

/// `key` makes the dotted key for an error: formatting it for every key
/// checked cost more than the checks.
fn check_value(v: &Value, key: &dyn Fn() -> String, p: &Param) -> Result<(), Problem> {
    let bad = |msg: String| Err((key(), msg));
    let wrong = |want: &str| bad(format!("invalid type: {}, expected {want}", describe(v)));
    match (p.ty, v) {
        (Type::Int, Value::Integer(i)) => in_range(key, *i as f64, Some(*i as i128), p.range),
        (Type::Int, _) => wrong("an integer"),
        (Type::U64, Value::Integer(i)) => in_range(key, *i as f64, Some(*i as i128), p.range),
        (Type::U64, Value::String(s)) => match s.parse::<u64>() {
            Ok(n) => in_range(key, n as f64, Some(n as i128), p.range),
            Err(_) => bad(format!("`{s}` is not an integer in 0..=18446744073709551615")),
        },
        (Type::U64, _) => wrong("an integer (or a decimal string above 2^63-1)"),
        (Type::Float, Value::Float(f)) => in_range(key, *f, None, p.range),
        (Type::Float, Value::Integer(i)) => in_range(key, *i as f64, None, p.range),
        (Type::Float, _) => wrong("a number"),
        (Type::Bool, Value::Boolean(_)) => Ok(()),
        (Type::Bool, _) => wrong("true or false"),
        (Type::Str, Value::String(_)) => Ok(()),
        (Type::Str, _) => wrong("a string"),
        (Type::Choice(values), Value::String(s)) if values.contains(&s.as_str()) => Ok(()),
        (Type::Choice(values), Value::String(s)) => bad(format!("unknown variant `{s}`, expected one of {}", quoted(values))),
        (Type::Choice(values), _) => wrong(&format!("one of {}", quoted(values))),
        (Type::IntList | Type::FloatList, Value::Array(a)) => {
            let int = matches!(p.ty, Type::IntList);
            let item = Param { ty: if int { Type::Int } else { Type::Float }, ..*p };
            a.iter().enumerate().try_for_each(|(i, x)| check_value(x, &|| format!("{}[{i}]", key()), &item))
        }
        (Type::IntList, _) => wrong("an array of integers"),
        (Type::FloatList, _) => wrong("an array of numbers"),
        (Type::StrList, Value::Array(a)) => a.iter().enumerate().try_for_each(|(i, x)| match x {
            Value::String(_) => Ok(()),
            _ => Err((format!("{}[{i}]", key()), format!("invalid type: {}, expected a string", describe(x)))),
        }),
        (Type::StrList, _) => wrong("an array of strings"),
        (Type::Items(_), Value::Array(a)) => a.iter().enumerate().try_for_each(|(i, x)| match x {
            Value::Table(_) => Ok(()),
            _ => Err((format!("{}[{i}]", key()), format!("invalid type: {}, expected a table", describe(x)))),
        }),
        (Type::Items(_), _) => wrong("an array of tables"),
        (Type::Sections(_), Value::Table(_) | Value::Array(_)) => Ok(()),
        (Type::Sections(_), _) => wrong("a table (or a list of \"section.key=value\" strings)"),
    }
}

fn in_range(key: &dyn Fn() -> String, f: f64, int: Option<i128>, range: Range) -> Result<(), Problem> {
    let ok = match (range, int) {
        (Range::None, _) => true,
        (Range::Int(lo, hi), Some(i)) => (lo..=hi).contains(&i),
        (Range::Int(lo, hi), None) => f >= lo as f64 && f <= hi as f64,
        (Range::Float { min, min_open, max, max_open }, _) => (if min_open { f > min } else { f >= min }) && (if max_open { f < max } else { f <= max }),
    };
    if ok {
        Ok(())
    } else {
        let within = if matches!(range, Range::Float { .. }) { "in " } else { "" };
        Err((key(), format!("must be {within}{}, got {}", range_text(range), int.map_or(f.to_string(), |i| i.to_string()))))
    }
}

/// `1..=64`, `(0, 100000]`: how docs and errors write a range.
pub fn range_text(r: Range) -> String {
    match r {
        Range::None => String::new(),
        Range::Int(lo, hi) => format!("{}..={}", grouped(lo), grouped(hi)),
        Range::Float { min, min_open, max, max_open } => {
            format!("{}{}, {}{}", if min_open { "(" } else { "[" }, number(min), number(max), if max_open { ")" } else { "]" })
        }
    }
}

/// An integer with `_` between thousands, as Rust and TOML write them.
fn grouped(n: i128) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if digits.len() > 4 && i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('_');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

fn number(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 { grouped(f as i128) } else { f.to_string() }
}

pub fn quoted(values: &[&str]) -> String {
    values.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
}

/// Serde's words for a value, so messages read alike whoever checks.
pub fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("string {s:?}"),
        Value::Integer(i) => format!("integer `{i}`"),
        Value::Float(f) => format!("floating point `{f}`"),
        Value::Boolean(b) => format!("boolean `{b}`"),
        Value::Datetime(d) => format!("datetime `{d}`"),
        Value::Array(_) => "array".into(),
        Value::Table(_) => "table".into(),
    }
}

/// A value as `When` compares it: strings bare, others as TOML writes them.
pub fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Checks every default of `params` (sections' and array items' too)
/// against its own key: a table must not declare a value it then refuses.
pub fn check_defaults(path: &str, params: &[Param]) -> Result<(), Problem> {
    for p in params {
        if let Def::Value(v) = p.default {
            let mut t = Table::from_iter([(p.key.to_string(), literal(v))]);
            check_section(&mut t, path, std::slice::from_ref(p))?;
        }
        match p.ty {
            Type::Items(item) => check_defaults(&join(path, p.key), item)?,
            Type::Sections(sections) => {
                for s in sections {
                    check_defaults(&join(&join(path, p.key), s.name), s.params)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}
