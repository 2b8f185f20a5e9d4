//! docs/config.md, generated from the parameter tables ([`markdown`]), and
//! the same tables as JSON for `irqsim parts` ([`parts_json`]).

use super::params::{Def, Param, Range, Type, quoted, range_text};
use super::parts::{Info, PARTS, Part, TOP};
use super::workload::VARIANTS;
use serde_json::{Value, json};
use std::fmt::Write;

const INTRO: &str = "\
# Configuration reference

<!-- Generated from the parameter tables in crates/core/src: do not edit. Regenerate with
`cargo run -p irqsim-core --example gen-config > docs/config.md` (or `irqsim parts --markdown`);
a test fails when this file differs from what the code generates. -->

Scenarios are TOML files made of parts, one section each. The workload's
`kind` selects the parts a run uses; a section or key of a part it does not
use is refused with an error naming the key and the part, and so is a key
that only another variant of its part uses (`stack.ip_cycles` when
`stack.enabled = false`). An unknown key, a value of the wrong type or one
out of range is refused with an error naming the file, the line and the key
(`scenario.toml:3: `cpu.clok_mhz`: unknown field ...`). Any key can be
overridden on the command line with `--set section.key=value` (or
`irqsim.run(path, {\"section.key\": value})`); the value is read as TOML.
`irqsim parts` lists the parts and their keys; `irqsim validate` prints a
scenario with every default filled in, only the parts it uses.

Simulated time is counted in cycles of `cpu.clock_mhz`; times given in other
units (µs in traces, ns on buses, Mb/s on links) are converted once, at load.
Rates are events per second and end in `_per_s`.
";

/// docs/config.md.
pub fn markdown() -> String {
    let mut out = String::from(INTRO);
    out.push_str("\n## Top level\n\n");
    table(&mut out, TOP);
    for info in PARTS {
        let _ = write!(out, "\n## `[{}]`: {}\n\n{}. {}\n", info.section, info.title, capital(info.help), used_by(info));
        if info.part == Part::Workload {
            workload(&mut out, info);
            continue;
        }
        out.push('\n');
        table(&mut out, info.params);
        if !info.notes.is_empty() {
            let _ = writeln!(out, "\n{}", info.notes);
        }
    }
    out
}

fn workload(out: &mut String, info: &Info) {
    out.push('\n');
    table(out, info.params);
    for v in VARIANTS {
        let _ = write!(out, "\n### `kind = \"{}\"`\n\n{}.\n\n", v.kind, capital(v.help));
        table(out, v.params);
        if !v.notes.is_empty() {
            let _ = writeln!(out, "\n{}", v.notes);
        }
        for p in v.params {
            if let Type::Items(item) = p.ty {
                let _ = write!(out, "\nEach `[[workload.{}]]` table:\n\n", p.key);
                table(out, item);
            }
        }
    }
}

fn used_by(info: &Info) -> String {
    let kinds = info.used_by();
    if kinds.len() == VARIANTS.len() { "Used by every workload kind.".into() } else { format!("Used by workload kinds {}.", quoted(&kinds)) }
}

fn table(out: &mut String, params: &[Param]) {
    out.push_str("| key | type | unit | default | range | meaning |\n|---|---|---|---|---|---|\n");
    for p in params {
        let when = p.when.map(|w| format!("; only when `{}` is {}", w.key, quoted(w.is).replace(", ", " or "))).unwrap_or_default();
        let unit = if p.unit.is_empty() { String::new() } else { p.unit.to_string() };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {}{} |",
            p.key,
            type_text(p.ty).replace('|', "\\|"),
            unit,
            default_text(p.default),
            range_text(p.range),
            p.help,
            when
        );
    }
}

fn type_text(t: Type) -> String {
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
    }
}

fn default_text(d: Def) -> String {
    match d {
        Def::Required => "*required*".into(),
        Def::Absent(meaning) => meaning.into(),
        Def::Value(v) => format!("`{v}`"),
    }
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// Every part with its keys, as JSON: `[{section, title, help, used_by, notes, params: [...]}]`.
pub fn parts_json() -> Value {
    let params = |ps: &[Param]| -> Value { ps.iter().map(param_json).collect() };
    let mut parts: Vec<Value> = vec![json!({"section": "", "title": "top level", "help": "", "used_by": [], "notes": "", "params": params(TOP)})];
    for info in PARTS {
        let mut p = json!({
            "section": info.section, "title": info.title, "help": info.help,
            "used_by": info.used_by(), "notes": info.notes, "params": params(info.params),
        });
        if info.part == Part::Workload {
            p["kinds"] = VARIANTS.iter().map(|v| json!({"kind": v.kind, "help": v.help, "notes": v.notes, "params": params(v.params)})).collect();
        }
        parts.push(p);
    }
    Value::Array(parts)
}

fn param_json(p: &Param) -> Value {
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
    if matches!(p.range, Range::None) {
        v.as_object_mut().expect("object").remove("range");
    }
    v
}
