//! Rules between keys that one key's table cannot state: a key only one
//! variant of a part uses ([`When`](params::When)), refused when that variant
//! is not chosen (unless a second part uses it too, [`ALSO_USED`]), and a
//! key whose effect another key cancels ([`CANCELS`]).
//! The same rules drop such keys from a scenario written back out
//! ([`drop_unused`]), so that what is written loads again.
//!
//! `intc.kind` as a deciding key stands for every controller on the machine
//! (a source's own `intc` included: `bus.*` is used when any controller has
//! a bus), except in a source's own table, where that source's controller
//! decides (its `priority` needs a vectored controller). `irq_path.kind`
//! likewise stands for every NIC's receive path (a NIC's own `irq_path`
//! included: `[napi]` is used when any NIC is on NAPI).

use super::parts::{CODE_PORT, PARTS, abstract_section_key, app_beside_code, beside_code, code_replaces, strip_indices};
use super::workload::{VARIANTS, variant};
use crate::params::{self, Param, Problem, plain};
use toml::{Table, Value};

/// A key whose effect another key's value cancels: `key` (when written, and
/// not 0) changes nothing while `by` is `is`.
struct Cancel {
    key: &'static str,
    by: &'static str,
    is: i64,
    why: &'static str,
}

/// Linux's own semantics make these no-ops (ethtool.h's `struct
/// ethtool_coalesce`; napi.rst, "Software IRQ coalescing" and "Busy
/// polling"); a sweep over the first key alone would silently measure
/// nothing, so each is refused naming both keys.
const CANCELS: &[Cancel] = &[
    Cancel {
        key: "coalesce.rx_usecs",
        by: "coalesce.rx_frames",
        is: 1,
        why: "the first frame interrupts at once, before any rx_usecs timer could expire; set coalesce.rx_frames to 0 (the timer alone) or above 1",
    },
    Cancel {
        key: "napi.gro_flush_timeout_ns",
        by: "napi.defer_hard_irqs",
        is: 0,
        why: "a completing poll enables the interrupt again at once, so no timer polls again (Linux arms it then only to flush GRO, not modelled); set napi.defer_hard_irqs above 0",
    },
    Cancel {
        key: "napi.defer_hard_irqs",
        by: "napi.gro_flush_timeout_ns",
        is: 0,
        why: "without a timeout no timer polls again, so a completing poll enables the interrupt at once; set napi.gro_flush_timeout_ns above 0",
    },
    Cancel { key: "napi.busy_poll_budget", by: "napi.busy_poll_usecs", is: 0, why: "no application busy-polls; set napi.busy_poll_usecs above 0" },
];

pub(super) fn check_cancelled(root: &Table, explicit: &[String]) -> Result<(), Problem> {
    let int = |path: &str| lookup(root, path).and_then(Value::as_integer);
    for c in CANCELS {
        if explicit.iter().any(|k| k == c.key) && int(c.key) != Some(0) && int(c.by) == Some(c.is) {
            return Err((c.key.into(), format!("changes nothing while `{}` is {}: {}; or remove the key", c.by, c.is, c.why)));
        }
    }
    Ok(())
}

/// Whether a rule of [`check_table`](super::parts::check_table) reads
/// `key`'s value, not only whether it is written: the workload's kind (which
/// parts and keys there are), `cpu.threads` (code's cores follow it), every
/// [`When`](params::When)'s deciding key and both keys of each [`Cancel`].
/// A load that changes only other keys' values need not check the table
/// again (`load.rs`); a new rule that reads a value names its key here.
pub(super) fn reads_value(key: &str) -> bool {
    static DECIDING: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
        fn add(params: &'static [Param], out: &mut Vec<&'static str>) {
            for p in params {
                out.extend(p.when.map(|w| w.key));
                match p.ty {
                    params::Type::Items(item) => add(item, out),
                    params::Type::Sections(sections) => sections.iter().for_each(|s| {
                        out.extend(s.when.map(|w| w.key));
                        add(s.params, out);
                    }),
                    _ => {}
                }
            }
        }
        let mut out = vec!["workload.kind", "cpu.threads"];
        out.extend(CANCELS.iter().flat_map(|c| [c.key, c.by]));
        PARTS.iter().map(|i| i.params).chain(VARIANTS.iter().map(|v| v.params)).for_each(|ps| add(ps, &mut out));
        out.sort_unstable();
        out.dedup();
        out
    });
    DECIDING.binary_search(&key).is_ok()
}

/// Keys that a second part uses besides the variant their
/// [`When`](params::When) names: `(key, workload kinds that use it too)`.
/// `irq_path.mmio_write_cycles` is a shared line's status clear and,
/// whatever the controller, the exerciser's signature writes.
const ALSO_USED: &[(&str, &[&str])] = &[("irq_path.mmio_write_cycles", &["exerciser"])];

fn also_used(key: &str, kind: &str) -> bool {
    ALSO_USED.iter().any(|&(k, kinds)| k == key && kinds.contains(&kind))
}

/// Refuses an explicit key whose [`When`](params::When) does not hold.
pub(super) fn check_when(root: &Table, key: &str, kind: &str) -> Result<(), Problem> {
    let Some(p) = param_of(key, kind) else { return Ok(()) };
    let Some(w) = p.when else { return Ok(()) };
    if also_used(key, kind) {
        return Ok(());
    }
    let value = lookup(root, w.key).map(plain).unwrap_or_else(|| implied(w.key, kind).to_string());
    let Some((field, what)) = PER_DEVICE.iter().find(|d| d.0 == w.key).map(|d| (d.1, d.2)) else {
        return when_holds(key, &w, vec![value], "");
    };
    let item = item_of(root, key).map(|t| t.get(field).map(plain));
    let values = deciding(value, item, || ["sources", "workload", "nics"].iter().flat_map(|s| own(root.get(*s), field)).map(plain).collect());
    when_holds(key, &w, values, what)
}

/// Deciding keys a device may set for itself in its own table (`intc`, a
/// NIC's `irq_path`): `(machine's key, the item's field, what they are)`.
const PER_DEVICE: &[(&str, &str, &str)] = &[("intc.kind", "intc", "controllers"), ("irq_path.kind", "irq_path", "receive paths")];

/// Refuses `key` unless one of its deciding key's `values` is one its
/// `When` asks for.
fn when_holds(key: &str, w: &params::When, values: Vec<String>, what: &str) -> Result<(), Problem> {
    if values.iter().any(|v| w.is.contains(&v.as_str())) {
        return Ok(());
    }
    let is = if values.len() == 1 {
        format!("it is `{}`", values[0])
    } else {
        format!("the machine's {what} are {}", params::quoted(&values.iter().map(String::as_str).collect::<Vec<_>>()))
    };
    let also = ALSO_USED.iter().find(|a| a.0 == key).map(|a| format!(" or `workload.kind` is {}", params::quoted(a.1))).unwrap_or_default();
    Err((key.into(), format!("only used when `{}` is {} ({is}){also}; remove the key", w.key, params::quoted(w.is))))
}

/// The values a per-device deciding key (whose own value is `value`) takes
/// for a key: the device's own setting in a device's table (`item`:
/// `Some(its own)`), else the machine's and every device's own (`own`).
fn deciding(value: String, item: Option<Option<String>>, own: impl FnOnce() -> Vec<String>) -> Vec<String> {
    match item {
        Some(own) => vec![own.unwrap_or(value)],
        None => {
            let mut all = vec![value];
            for k in own() {
                if !all.contains(&k) {
                    all.push(k);
                }
            }
            all
        }
    }
}

/// Each device's own `field` (its `intc`, a NIC's `irq_path`) in a
/// section's `others` list (`[sources]`, the exerciser's `[workload]`,
/// `[nics]`).
fn own<'t>(section: Option<&'t Value>, field: &'t str) -> impl Iterator<Item = &'t Value> {
    let items = section.and_then(|s| s.get("others")).and_then(Value::as_array);
    items.into_iter().flatten().filter_map(move |x| x.get(field))
}

/// The table of an array item a key is in (`sources.others[1].line`).
fn item_of<'t>(root: &'t Table, key: &str) -> Option<&'t Table> {
    let (list, rest) = key.split_once('[')?;
    let index: usize = rest.split_once(']')?.0.parse().ok()?;
    lookup(root, list)?.as_array()?.get(index)?.as_table()
}

/// The declaration of a dotted key (`stack.ip_cycles`, `workload.others[0].priority`).
fn param_of(key: &str, kind: &str) -> Option<&'static Param> {
    let bare = strip_indices(key);
    let mut segs = bare.split('.');
    let (first, leaf) = (segs.next()?, segs.next()?);
    let params = if first == "workload" { variant(kind)?.params } else { PARTS.iter().find(|i| i.section == first)?.params };
    descend(params::find(params, leaf)?, segs)
}

fn descend<'a>(mut p: &'static Param, segs: impl Iterator<Item = &'a str>) -> Option<&'static Param> {
    for s in segs {
        let params::Type::Items(item) = p.ty else { return None };
        p = params::find(item, s)?;
    }
    Some(p)
}

/// Removes from a scenario's JSON (`Scenario::to_json`) every key that
/// another key's value leaves unused, so that what is printed loads back.
pub fn drop_unused(doc: &mut serde_json::Value, kind: &str) {
    let value_of = |doc: &serde_json::Value, path: &str| {
        let v = path.split('.').try_fold(doc, |v, seg| v.get(seg));
        v.filter(|v| !v.is_null()).map(json_plain).unwrap_or_else(|| implied(path, kind).to_string())
    };
    let own = |doc: &serde_json::Value, field: &str| -> Vec<String> {
        ["sources", "workload", "nics"]
            .iter()
            .filter_map(|s| doc.get(s)?.get("others")?.as_array())
            .flatten()
            .filter_map(|x| x.get(field).filter(|v| !v.is_null()).map(json_plain))
            .collect()
    };
    let unused = |doc: &serde_json::Value, section: &str, params: &[Param], item: Option<&serde_json::Value>| -> Vec<&'static str> {
        let used = |w: params::When| {
            let value = value_of(doc, w.key);
            let values = match PER_DEVICE.iter().find(|d| d.0 == w.key) {
                Some(&(_, field, _)) => deciding(value, item.map(|x| x.get(field).filter(|v| !v.is_null()).map(json_plain)), || own(doc, field)),
                None => vec![value],
            };
            values.iter().any(|v| w.is.contains(&v.as_str()))
        };
        let also = |p: &Param| item.is_none() && also_used(&format!("{section}.{}", p.key), kind);
        params.iter().filter(|p| p.when.is_some_and(|w| !used(w)) && !also(p)).map(|p| p.key).collect()
    };
    let sections = PARTS.iter().map(|i| (i.section, i.params)).chain(variant(kind).map(|v| ("workload", v.params)));
    for (section, params) in sections {
        let drop = unused(doc, section, params, None);
        // And within each table of an array of tables (`[[sources.others]]`).
        let mut in_items = Vec::new();
        for p in params {
            let (params::Type::Items(item_params), Some(items)) = (p.ty, doc.get(section).and_then(|t| t.get(p.key)).and_then(|v| v.as_array())) else {
                continue;
            };
            for (i, x) in items.iter().enumerate() {
                in_items.push((p.key, i, unused(doc, section, item_params, Some(x))));
            }
        }
        let Some(t) = doc.get_mut(section).and_then(|t| t.as_object_mut()) else { continue };
        for key in drop {
            t.remove(key);
        }
        for (list, i, keys) in in_items {
            if let Some(x) = t.get_mut(list).and_then(|v| v.get_mut(i)).and_then(|x| x.as_object_mut()) {
                for key in keys {
                    x.remove(key);
                }
            }
        }
    }
    // A key another cancels, at its default (any other value is refused).
    for c in CANCELS {
        let (section, key) = c.key.split_once('.').expect("a dotted key");
        if value_of(doc, c.by) == c.is.to_string()
            && value_of(doc, c.key) != "0"
            && let Some(t) = doc.get_mut(section).and_then(|t| t.as_object_mut())
        {
            t.remove(key);
        }
    }
    // Kernel code's sections are its own: the abstract kernel's section
    // lengths and priority levels are refused with it, and the abstract
    // receive path's keys it replaces (`code_excludes`).
    // Kept for the abstract kernel beside code (`parts::abstract_nic`).
    let cpus = doc.get("code").and_then(|c| c.get("cpus")).and_then(|c| c.as_array());
    let others = doc.get("nics").and_then(|n| n.get("others")).and_then(|o| o.as_array());
    let beside = cpus.zip(others).is_some_and(|(cpus, o)| o.iter().any(|n| !cpus.contains(n.get("irq_thread").unwrap_or(&0.into()))));
    // The abstract application beside code runs only when asked.
    let app = cpus.is_some() && doc.get("app").and_then(|a| a.get("background")).and_then(|b| b.as_bool()) == Some(true);
    if doc.get("code").and_then(|c| c.get("program")).is_some_and(|p| !p.is_null())
        && let Some(sections) = doc.as_object_mut()
    {
        for (name, t) in sections.iter_mut().filter_map(|(n, t)| Some((n.clone(), t.as_object_mut()?))) {
            t.retain(|k, _| {
                let key = format!("{name}.{k}");
                !(code_replaces(&key) && !(beside && beside_code(&key)) && !(app && app_beside_code(&key)) || name == "masking" && abstract_section_key(k))
            });
        }
    }
    // Nor another NIC's buffer and DMA keys where code drives it.
    if doc.get("code").and_then(|c| c.get("program")).is_some_and(|p| !p.is_null()) {
        let cpus: Option<Vec<i64>> =
            doc.get("code").and_then(|c| c.get("cpus")).and_then(|c| c.as_array()).map(|a| a.iter().filter_map(|c| c.as_i64()).collect());
        for nic in doc.get_mut("nics").and_then(|n| n.get_mut("others")).and_then(|o| o.as_array_mut()).into_iter().flatten().filter_map(|n| n.as_object_mut())
        {
            let at = nic.get("irq_thread").and_then(|t| t.as_i64()).unwrap_or(0);
            if cpus.as_ref().is_none_or(|c| c.contains(&at)) {
                nic.retain(|k, _| !CODE_PORT.contains(&k.as_str()));
            }
        }
    }
    // A send flood is the application: a CPU-bound one is refused beside it.
    if kind == "flood"
        && doc.get("workload").and_then(|w| w.get("direction")).and_then(|d| d.as_str()) == Some("tx")
        && let Some(app) = doc.get_mut("app").and_then(|a| a.as_object_mut())
    {
        app.remove("background");
    }
    // The NIC takes one vector per RSS queue and the loader refuses the key
    // (`check_table`), so a written scenario must not carry it.
    if let Some(intc) = doc.get_mut("intc").and_then(|t| t.as_object_mut()).filter(|_| kind != "exerciser") {
        intc.remove("vectors");
    }
}

/// A JSON value as [`plain`] shows a TOML one.
fn json_plain(v: &serde_json::Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// The value an optional deciding key takes when it is not written: the
/// interrupt path is the exerciser's Linux path, and the mt path for the NIC.
fn implied(key: &str, kind: &str) -> &'static str {
    match (key, kind) {
        ("irq_path.kind", "exerciser") => "linux",
        ("irq_path.kind", _) => "mt",
        _ => "",
    }
}

/// The value at a dotted path.
fn lookup<'t>(root: &'t Table, path: &str) -> Option<&'t Value> {
    let mut segs = path.split('.');
    let mut v = root.get(segs.next()?)?;
    for s in segs {
        v = v.as_table()?.get(s)?;
    }
    Some(v)
}
