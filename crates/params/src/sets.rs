//! The command line's `section.key=value` strings (`irqsim exec --set`,
//! `irqsim firmware`), read into a TOML table typed by each key's
//! declaration; the checks are then the table's ([`check_sections`](crate::check_sections)).

use crate::check::{Problem, find, quoted};
use crate::param::{Def, Param, Section, Type};
use toml::{Table, Value};

/// Parses an unsigned integer: decimal, or hex with `0x`; `_` separators allowed.
pub fn parse_u64(s: &str) -> Option<u64> {
    let s = s.trim().replace('_', "");
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Reads `section.key=value` strings into a table of `sections`, later
/// strings overriding earlier ones. Errors name the key (or the whole string
/// when it has no `=`); values are only typed here, not range-checked.
pub fn parse_sets<S: AsRef<str>>(sets: &[S], sections: &[Section]) -> Result<Table, Problem> {
    let mut out = Table::new();
    for s in sets {
        let (key, raw) = split(s.as_ref())?;
        let (name, leaf) = key.split_once('.').unwrap_or((key, ""));
        let section = sections.iter().find(|x| x.name == name).ok_or_else(|| {
            let known: Vec<&str> = sections.iter().map(|x| x.name).collect();
            (key.to_string(), format!("unknown section `{name}`, expected one of {}", quoted(&known)))
        })?;
        let p = param(section.params, key, leaf)?;
        let t = out.entry(name).or_insert_with(|| Value::Table(Table::new())).as_table_mut().expect("made a table");
        set(t, p, raw);
    }
    Ok(out)
}

/// Reads `key=value` strings into a flat table of `params`.
pub fn parse_keys<S: AsRef<str>>(sets: &[S], params: &[Param]) -> Result<Table, Problem> {
    let mut out = Table::new();
    for s in sets {
        let (key, raw) = split(s.as_ref())?;
        set(&mut out, param(params, key, key)?, raw);
    }
    Ok(out)
}

fn split(text: &str) -> Result<(&str, &str), Problem> {
    let (key, raw) = text.split_once('=').ok_or_else(|| (text.to_string(), "expected KEY=VALUE".to_string()))?;
    Ok((key.trim(), raw.trim()))
}

fn param<'p>(params: &'p [Param], key: &str, leaf: &str) -> Result<&'p Param, Problem> {
    find(params, leaf).ok_or_else(|| {
        let known: Vec<&str> = params.iter().map(|p| p.key).collect();
        (key.to_string(), format!("unknown field `{leaf}`, expected one of {}", quoted(&known)))
    })
}

/// Sets `p` to `raw` read as its type; `none` leaves out a key that may be
/// absent. What does not read as the type stays a string, for the check to
/// refuse with the type it wanted.
fn set(t: &mut Table, p: &Param, raw: &str) {
    if raw == "none" && matches!(p.default, Def::Absent(_)) {
        t.remove(p.key);
        return;
    }
    let text = || Value::String(raw.to_string());
    let value = match p.ty {
        Type::Int | Type::U64 => match raw.strip_prefix('-') {
            Some(neg) => parse_u64(neg).and_then(|n| i64::try_from(n).ok()).map_or_else(text, |n| Value::Integer(-n)),
            None => match parse_u64(raw) {
                Some(n) => i64::try_from(n).map_or_else(|_| Value::String(n.to_string()), Value::Integer),
                None => text(),
            },
        },
        Type::Float => raw.parse::<f64>().map_or_else(|_| text(), Value::Float),
        Type::Bool => raw.parse::<bool>().map_or_else(|_| text(), Value::Boolean),
        Type::Str | Type::Choice(_) => text(),
        Type::IntList | Type::FloatList | Type::StrList | Type::Items(_) | Type::Sections(_) => {
            format!("v = {raw}").parse::<Table>().ok().and_then(|mut v| v.remove("v")).unwrap_or_else(text)
        }
    };
    t.insert(p.key.into(), value);
}
