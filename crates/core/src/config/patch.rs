//! A sweep's load patches the last full load.
//!
//! A sweep's runs load one text with other values for the same overridden
//! keys. When every changed key is a plain one of a part (no array item, no
//! table of sections, no value a rule between keys reads:
//! [`rules::reads_value`]), the table's checks would pass exactly as they
//! did but for that key's own, so the load checks each changed value
//! against its declaration, deserializes only the sections changed into a
//! copy of the last scenario loaded in full and runs the typed checks
//! between keys ([`Scenario::check`]). Anything that fails loads in full
//! instead, so errors are word for word a full load's (docs/performance.md).

use super::load::{Override, same};
use super::{Scenario, parts, rules};
use serde::Deserialize;
use std::cell::RefCell;
use toml::{Table, Value};

/// The last scenario loaded in full in this thread, with its checked table.
pub(super) struct Base {
    text: String,
    file: String,
    overrides: Vec<Override>,
    table: Table,
    scenario: Scenario,
}

impl Base {
    fn with<R>(f: impl FnOnce(&mut Option<Base>) -> R) -> R {
        thread_local! {
            static BASE: RefCell<Option<Base>> = const { RefCell::new(None) };
        }
        BASE.with_borrow_mut(f)
    }

    pub(super) fn keep(text: &str, file: &str, overrides: &[Override], table: Table, scenario: &Scenario) {
        let base = Base { text: text.into(), file: file.into(), overrides: overrides.to_vec(), table, scenario: scenario.clone() };
        Self::with(|b| *b = Some(base));
    }

    pub(super) fn patch(text: &str, file: &str, overrides: &[Override]) -> Option<Scenario> {
        Self::with(|b| {
            let b = b.as_ref().filter(|b| b.text == text && b.file == file && b.overrides.len() == overrides.len())?;
            let kind = b.scenario.workload.kind();
            let mut sections: Vec<(&str, Table)> = Vec::new();
            for (old, new) in b.overrides.iter().zip(overrides) {
                if old.path != new.path || old.origin != new.origin {
                    return None;
                }
                if same(&old.value, &new.value) {
                    continue;
                }
                let [section, leaf] = new.path.as_slice() else { return None };
                let plain_value = match &new.value {
                    Value::Table(_) => false,
                    Value::Array(a) => !a.iter().any(Value::is_table),
                    _ => true,
                };
                if !plain_value || overrides.iter().filter(|o| o.path == new.path).count() > 1 || rules::reads_value(&crate::params::join(section, leaf)) {
                    return None;
                }
                let p = parts::plain_param(section, leaf, kind)?;
                crate::params::check_section(&mut Table::from_iter([(leaf.clone(), new.value.clone())]), section, std::slice::from_ref(p)).ok()?;
                let i = match sections.iter().position(|(s, _)| s == section) {
                    Some(i) => i,
                    None => {
                        sections.push((section, b.table.get(section)?.as_table()?.clone()));
                        sections.len() - 1
                    }
                };
                sections[i].1.insert(leaf.clone(), new.value.clone());
            }
            let mut scenario = b.scenario.clone();
            for (section, t) in sections {
                scenario.set_section(section, t).ok()?;
            }
            scenario.check().ok()?;
            Some(scenario)
        })
    }
}

impl Scenario {
    /// Sets one section from its checked table, as deserializing the whole
    /// scenario would.
    fn set_section(&mut self, section: &str, t: Table) -> std::result::Result<(), toml::de::Error> {
        let v = Value::Table(t);
        match section {
            "run" => self.run = Deserialize::deserialize(v)?,
            "cpu" => self.cpu = Deserialize::deserialize(v)?,
            "nic" => self.nic = Deserialize::deserialize(v)?,
            "driver" => self.driver = Deserialize::deserialize(v)?,
            "stack" => self.stack = Deserialize::deserialize(v)?,
            "app" => self.app = Deserialize::deserialize(v)?,
            "workload" => self.workload = Deserialize::deserialize(v)?,
            "stats" => self.stats = Deserialize::deserialize(v)?,
            "masking" => self.masking = Deserialize::deserialize(v)?,
            "intc" => self.intc = Deserialize::deserialize(v)?,
            "bus" => self.bus = Deserialize::deserialize(v)?,
            "irq_path" => self.irq_path = Deserialize::deserialize(v)?,
            "sources" => self.sources = Deserialize::deserialize(v)?,
            "nics" => self.nics = Deserialize::deserialize(v)?,
            "code" => self.code = Deserialize::deserialize(v)?,
            "napi" => self.napi = Deserialize::deserialize(v)?,
            "coalesce" => self.coalesce = Deserialize::deserialize(v)?,
            "rss" => self.rss = Deserialize::deserialize(v)?,
            "nic_firmware" => self.nic_firmware = Deserialize::deserialize(v)?,
            other => return Err(serde::de::Error::custom(format!("no section `{other}`"))),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A load that patches the last full one (`Base`) gives what a full load
    /// gives, for every plain key of every part of bundled scenarios of each
    /// model, with values in and out of range; and it is taken for most of
    /// those that load.
    #[test]
    fn a_patched_load_is_a_full_load() {
        use crate::params::{Def, Type, literal};
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios");
        let files = ["bench/rx-overload", "livelock/rss", "msi-latency/soc-idle", "optimistic-spl/luna88k-modelled", "code/rx-napi", "compose/rx-firmware"];
        let (mut patched, mut loaded) = (0, 0);
        for name in files {
            let text = std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap();
            let kind = Scenario::from_toml(&text, name, &[]).unwrap().workload.kind();
            let sections = parts::PARTS.iter().map(|i| (i.section, i.params)).chain([("workload", super::super::workload::variant(kind).unwrap().params)]);
            for (section, params) in sections {
                for p in params.iter().filter(|p| parts::plain_param(section, p.key, kind).is_some()) {
                    let key = format!("{section}.{}", p.key);
                    let values: Vec<Value> = match p.ty {
                        Type::Int | Type::U64 => [0, 3, -1].map(Value::Integer).into(),
                        Type::Float => vec![Value::Float(0.5), Value::Integer(2), Value::Float(-1.0)],
                        Type::Bool => vec![Value::Boolean(true), Value::Boolean(false)],
                        Type::Choice(c) => c.iter().chain(&["nope"]).map(|v| Value::String(v.to_string())).collect(),
                        Type::IntList | Type::FloatList => vec![Value::Array(vec![]), Value::Array(vec![Value::Integer(1)])],
                        _ => vec![Value::String("x".into()), Value::Integer(1)],
                    };
                    let first = match p.default {
                        Def::Value(v) => literal(v),
                        _ => values[0].clone(),
                    };
                    let with = |v: &Value| [Override { path: vec![section.into(), p.key.into()], value: v.clone(), origin: "--set".into() }];
                    // Loads in full, so that it is the base when it loads.
                    let _ = Scenario::load(&text, name, &with(&first));
                    for v in &values {
                        let full = Scenario::load(&text, name, &with(v)).map(|s| format!("{s:?}")).map_err(|e| e.to_string());
                        loaded += usize::from(full.is_ok());
                        let _ = Scenario::load(&text, name, &with(&first));
                        let Some(s) = Base::patch(&text, name, &with(v)) else { continue };
                        patched += 1;
                        assert_eq!(Ok(format!("{s:?}")), full, "{name}: {key} = {v}");
                        assert_eq!(Scenario::from_toml(&text, name, &with(v)).map(|s| format!("{s:?}")).map_err(|e| e.to_string()), full);
                    }
                }
            }
        }
        // What is not patched names a key a rule reads, or a part the scenario does not use.
        assert!(patched * 10 > loaded * 9, "{patched} of {loaded} loads patched");
    }
}
