//! Parameter declarations: one [`Param`] per key, giving its name, type,
//! unit, default, range and help in one place (gem5's `Param` idea, as data).
//!
//! A part's table drives everything about its keys: [`check_section`] refuses
//! unknown keys, wrong types and values out of range, requires the keys that
//! have no default and fills in the defaults, so serde only ever sees complete
//! sections (the structs carry no defaults of their own); `docs.rs` renders
//! the same tables as docs/config.md.

use toml::{Table, Value};

/// The type of a key's value.
#[derive(Debug, Clone, Copy)]
pub enum Type {
    Int,
    Float,
    Bool,
    Str,
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// An array of integers (the range applies to each).
    IntList,
    /// An array of floats (the range applies to each).
    FloatList,
    /// An array of strings.
    StrList,
    /// An array of tables, each with these keys.
    Items(&'static [Param]),
    /// An unsigned 64-bit integer; beyond TOML's 2^63−1 it is written as a
    /// decimal string.
    U64,
}

/// What a key is when the scenario does not give it.
#[derive(Debug, Clone, Copy)]
pub enum Def {
    /// The key must be given.
    Required,
    /// The key may be left out; the text says what that means.
    Absent(&'static str),
    /// This value, as TOML.
    Value(&'static str),
}

/// Shorthands for table rows: a required key, a default, an optional key.
pub const REQ: Def = Def::Required;
pub const fn d(toml: &'static str) -> Def {
    Def::Value(toml)
}
pub const fn absent(meaning: &'static str) -> Def {
    Def::Absent(meaning)
}

/// The values a number may take.
#[derive(Debug, Clone, Copy)]
pub enum Range {
    None,
    /// Integers in `min..=max`.
    Int(i128, i128),
    /// Floats from `min` to `max`; an open end excludes its bound.
    Float {
        min: f64,
        min_open: bool,
        max: f64,
        max_open: bool,
    },
}

/// A key that only means something when another key has one of some values.
#[derive(Debug, Clone, Copy)]
pub struct When {
    /// Dotted path of the deciding key, from the top of the scenario.
    pub key: &'static str,
    pub is: &'static [&'static str],
}

/// One key of one part.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub key: &'static str,
    pub ty: Type,
    /// Unit of the value as the docs write it (empty for none); the key's
    /// name ends with it spelled out (a test holds them to one spelling).
    pub unit: &'static str,
    pub default: Def,
    pub range: Range,
    pub when: Option<When>,
    pub help: &'static str,
}

/// Largest cost of one step of any software path, in cycles: far from
/// 64-bit overflow however costs are summed.
pub const MAX_CYCLES: i128 = 1_000_000_000;

impl Param {
    /// An integer in `min..=max`.
    pub const fn int(key: &'static str, unit: &'static str, default: Def, min: i128, max: i128, help: &'static str) -> Self {
        Self::of(key, Type::Int, unit, default, Range::Int(min, max), help)
    }
    /// A cost in cycles: an integer in `0..=MAX_CYCLES`.
    pub const fn cycles(key: &'static str, default: Def, help: &'static str) -> Self {
        Self::int(key, "cycles", default, 0, MAX_CYCLES, help)
    }
    /// A float in `[min, max]`, or `(min, max]` when `positive`.
    pub const fn float(key: &'static str, unit: &'static str, default: Def, positive: bool, min: f64, max: f64, help: &'static str) -> Self {
        Self::of(key, Type::Float, unit, default, Range::Float { min, min_open: positive, max, max_open: false }, help)
    }
    pub const fn choice(key: &'static str, values: &'static [&'static str], default: Def, help: &'static str) -> Self {
        Self::of(key, Type::Choice(values), "", default, Range::None, help)
    }
    pub const fn flag(key: &'static str, default: Def, help: &'static str) -> Self {
        Self::of(key, Type::Bool, "", default, Range::None, help)
    }
    pub const fn text(key: &'static str, default: Def, help: &'static str) -> Self {
        Self::of(key, Type::Str, "", default, Range::None, help)
    }
    pub const fn items(key: &'static str, params: &'static [Param], default: Def, help: &'static str) -> Self {
        Self::of(key, Type::Items(params), "", default, Range::None, help)
    }
    /// Any type and range (lists, 64-bit integers).
    pub const fn of(key: &'static str, ty: Type, unit: &'static str, default: Def, range: Range, help: &'static str) -> Self {
        Self { key, ty, unit, default, range, when: None, help }
    }
    /// Excludes the upper bound of a float range.
    pub const fn below(mut self) -> Self {
        if let Range::Float { min, min_open, max, .. } = self.range {
            self.range = Range::Float { min, min_open, max, max_open: true };
        }
        self
    }
    /// Only meaningful when `key` has one of `is`; given otherwise, refused.
    pub const fn when(mut self, key: &'static str, is: &'static [&'static str]) -> Self {
        self.when = Some(When { key, is });
        self
    }
}

/// Looks a key up in a table of parameters.
pub fn find<'p>(params: &'p [Param], key: &str) -> Option<&'p Param> {
    params.iter().find(|p| p.key == key)
}

/// A key that is wrong: `(dotted key, message)`.
pub type Problem = (String, String);

/// Checks the section at `path` against `params` and fills in its defaults.
pub fn check_section(t: &mut Table, path: &str, params: &[Param]) -> Result<(), Problem> {
    for (key, value) in t.iter() {
        let p = find(params, key).ok_or_else(|| (join(path, key), unknown(key, params)))?;
        check_value(value, &join(path, key), p)?;
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
    Ok(())
}

/// A default's TOML text as a value.
pub fn literal(text: &str) -> Value {
    let mut t: Table = format!("v = {text}").parse().expect("a parameter's default is valid TOML");
    t.remove("v").expect("parsed")
}

pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

fn unknown(key: &str, params: &[Param]) -> String {
    let known: Vec<String> = params.iter().map(|p| format!("`{}`", p.key)).collect();
    format!("unknown field `{key}`, expected one of {}", known.join(", "))
}

fn check_value(v: &Value, key: &str, p: &Param) -> Result<(), Problem> {
    let bad = |msg: String| Err((key.to_string(), msg));
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
            a.iter().enumerate().try_for_each(|(i, x)| check_value(x, &format!("{key}[{i}]"), &item))
        }
        (Type::IntList, _) => wrong("an array of integers"),
        (Type::FloatList, _) => wrong("an array of numbers"),
        (Type::StrList, Value::Array(a)) => a.iter().enumerate().try_for_each(|(i, x)| match x {
            Value::String(_) => Ok(()),
            _ => Err((format!("{key}[{i}]"), format!("invalid type: {}, expected a string", describe(x)))),
        }),
        (Type::StrList, _) => wrong("an array of strings"),
        (Type::Items(_), Value::Array(a)) => a.iter().enumerate().try_for_each(|(i, x)| match x {
            Value::Table(_) => Ok(()),
            _ => Err((format!("{key}[{i}]"), format!("invalid type: {}, expected a table", describe(x)))),
        }),
        (Type::Items(_), _) => wrong("an array of tables"),
    }
}

fn in_range(key: &str, f: f64, int: Option<i128>, range: Range) -> Result<(), Problem> {
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
        Err((key.to_string(), format!("must be {within}{}, got {}", range_text(range), int.map_or(f.to_string(), |i| i.to_string()))))
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
fn describe(v: &Value) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    const P: &[Param] = &[
        Param::int("n", "", Def::Value("3"), 1, 10, "a count"),
        Param::float("f", "", Def::Required, true, 0.0, 1.0, "a share").below(),
        Param::choice("c", &["a", "b"], Def::Value("\"a\""), "a choice"),
    ];

    fn check(text: &str) -> Result<Table, Problem> {
        let mut t: Table = text.parse().unwrap();
        check_section(&mut t, "s", P).map(|_| t)
    }

    #[test]
    fn defaults_fill_and_required_keys_are_required() {
        let t = check("f = 0.5").unwrap();
        assert_eq!(t["n"].as_integer(), Some(3));
        assert_eq!(t["c"].as_str(), Some("a"));
        assert_eq!(check("n = 2").unwrap_err(), ("s.f".into(), "required key missing".into()));
    }

    #[test]
    fn types_ranges_and_names_are_checked() {
        assert_eq!(check("f = 0.5\nn = 11").unwrap_err().1, "must be 1..=10, got 11");
        assert_eq!(check("f = 1.0").unwrap_err().1, "must be in (0, 1), got 1");
        assert!(check("f = nan").is_err());
        assert!(check("f = 0.5\nn = 1.5").unwrap_err().1.starts_with("invalid type: floating point `1.5`, expected an integer"));
        assert!(check("f = 0.5\nc = \"z\"").unwrap_err().1.starts_with("unknown variant `z`"));
        assert!(check("f = 0.5\nm = 1").unwrap_err().1.starts_with("unknown field `m`"));
    }

    #[test]
    fn ranges_read_like_rust() {
        assert_eq!(range_text(Range::Int(0, 1_000_000_000)), "0..=1_000_000_000");
        assert_eq!(range_text(Range::Float { min: 0.0, min_open: true, max: 1e5, max_open: false }), "(0, 100_000]");
    }
}
