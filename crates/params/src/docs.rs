//! The tables as documentation: Markdown for docs/config.md ([`table`],
//! [`sections`]) and JSON for `irqsim parts` ([`param_json`]).

use crate::check::{quoted, range_text};
use crate::param::{Def, Param, Range, Section, Type};
use serde_json::{Value, json};
use std::fmt::Write;

/// A Markdown table of `params`, one row per key.
pub fn table(out: &mut String, params: &[Param]) {
    out.push_str("| key | type | unit | default | range | meaning |\n|---|---|---|---|---|---|\n");
    for p in params {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {}{} |",
            p.key,
            type_text(p.ty).replace('|', "\\|"),
            p.unit,
            default_text(p.default),
            range_text(p.range),
            p.help,
            when_text(p.when)
        );
    }
}

/// Each section of a [`Type::Sections`] key at `path` (`code.core`): a
/// heading `[path.name]` at `depth` (`###`), its help and its table.
pub fn sections(out: &mut String, depth: usize, path: &str, sections: &[Section]) {
    for s in sections {
        let name = if path.is_empty() { s.name.to_string() } else { format!("{path}.{}", s.name) };
        let _ = write!(out, "\n{} `[{name}]`\n\n{}{}.\n\n", "#".repeat(depth), capital(s.help), when_text(s.when));
        table(out, s.params);
    }
}

fn when_text(w: Option<crate::When>) -> String {
    w.map(|w| format!("; only when `{}` is {}", w.key, quoted(w.is).replace(", ", " or "))).unwrap_or_default()
}

pub fn type_text(t: Type) -> String {
    match t {
        Type::Int | Type::U64 => "integer".into(),
        Type::Float => "float".into(),
        Type::Bool => "bool".into(),
        Type::Str => "string".into(),
        Type::Choice(values) => values.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(" | "),
        Type::IntList => "list of integers".into(),
        Type::StrList => "list of strings".into(),
        Type::FloatList => "list of floats".into(),
        Type::Items(_) => "array of tables".into(),
        Type::Sections(_) => "table of sections".into(),
    }
}

pub fn default_text(d: Def) -> String {
    match d {
        Def::Required => "*required*".into(),
        Def::Absent(meaning) => meaning.into(),
        Def::Value(v) => format!("`{v}`"),
    }
}

/// `s` with its first letter upper-case.
pub fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// One key as JSON: `{key, type, unit, default, range, help}`, with `when`,
/// `items` (an array of tables' keys) and `sections` where they apply.
pub fn param_json(p: &Param) -> Value {
    let mut v = json!({
        "key": p.key, "type": type_text(p.ty), "unit": p.unit, "default": default_text(p.default).trim_matches('`'),
        "range": range_text(p.range), "help": p.help,
    });
    if let Some(w) = p.when {
        v["when"] = json!({"key": w.key, "is": w.is});
    }
    if let Type::Items(item) = p.ty {
        v["items"] = item.iter().map(param_json).collect();
    }
    if let Type::Sections(sections) = p.ty {
        v["sections"] = sections.iter().map(section_json).collect();
    }
    if matches!(p.range, Range::None) {
        v.as_object_mut().expect("object").remove("range");
    }
    v
}

/// A section as JSON: `{name, help, params}`, with `when` where it applies.
pub fn section_json(s: &Section) -> Value {
    let mut v = json!({"name": s.name, "help": s.help, "params": s.params.iter().map(param_json).collect::<Vec<_>>()});
    if let Some(w) = s.when {
        v["when"] = json!({"key": w.key, "is": w.is});
    }
    v
}
