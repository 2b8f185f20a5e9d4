//! docs/config.md, generated from the parameter tables ([`markdown`]), and
//! the same tables as JSON for `irqsim parts` ([`parts_json`]).

use super::parts::{Info, PARTS, Part, TOP};
use super::workload::VARIANTS;
use crate::params::docs::{capital, param_json, sections, table};
use crate::params::{Param, Section, Type, quoted};
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
A key of one table of a list is indexed from 0 (`--set
'nics.others[0].irq_path=\"linux\"'`, or a whole item, `nics.others[1]={...}`);
a list is lengthened by setting it whole (`--set 'nics.others=[{...}, {...}]'`).
`irqsim parts` lists the parts and their keys; `irqsim validate` prints a
scenario with every default filled in, only the parts it uses.

Simulated time is counted in cycles of `cpu.clock_mhz`; times given in other
units (µs in traces, ns on buses, Mb/s on links) are converted once, at load.
Rates are events per second and end in `_per_s`.
";

/// docs/config.md, with `more`: the tables of parts set outside scenarios
/// (the programmable NIC's, which this crate cannot name) at its end.
pub fn markdown(more: &[Section]) -> String {
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
        for p in info.params {
            match p.ty {
                Type::Sections(s) => sections(&mut out, 3, &format!("{}.{}", info.section, p.key), s),
                Type::Items(item) => {
                    let _ = write!(out, "\nEach `[[{}.{}]]` table:\n\n", info.section, p.key);
                    table(&mut out, item);
                }
                _ => {}
            }
        }
    }
    for s in more {
        let _ = write!(out, "\n## `{}`: outside scenarios\n\n{}.\n\n", s.name, capital(s.help));
        table(&mut out, s.params);
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

/// Every part with its keys, as JSON: `[{section, title, help, used_by, notes, params: [...]}]`,
/// and then `more` (as [`markdown`]) as `{section, help, params}`.
pub fn parts_json(more: &[Section]) -> Value {
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
    for s in more {
        parts.push(
            json!({"section": s.name, "title": "set as key=value outside scenarios", "help": s.help, "used_by": [], "notes": "", "params": params(s.params)}),
        );
    }
    Value::Array(parts)
}
