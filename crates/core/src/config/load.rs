//! TOML text → [`Scenario`], with `--set` overrides and errors that name the
//! file, the key and (when the key is in the file) its line.

use super::Scenario;
use crate::error::{Error, Result};
use toml::{Table, Value};

/// One `key.path=value` override.
#[derive(Debug, Clone)]
pub struct Override {
    pub path: Vec<String>,
    pub value: Value,
}

/// Parses `a.b.c=value`; the value is read as TOML (`3`, `1.5`, `true`,
/// `"x"`, `[1, 2]`), and as a bare string if it is not valid TOML.
pub fn parse_override(text: &str) -> Result<Override> {
    let bad = |msg: &str| Error::Config { file: "--set".into(), key: text.into(), line: None, msg: msg.into() };
    let (key, raw) = text.split_once('=').ok_or_else(|| bad("expected KEY.PATH=VALUE"))?;
    let path: Vec<String> = key.trim().split('.').map(|s| s.trim().to_string()).collect();
    if path.iter().any(|s| s.is_empty()) {
        return Err(bad("empty key segment"));
    }
    let raw = raw.trim();
    let value = match format!("v = {raw}").parse::<Table>() {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| Value::String(raw.into())),
        Err(_) => Value::String(raw.into()),
    };
    Ok(Override { path, value })
}

impl Scenario {
    /// Loads a scenario from a file.
    pub fn from_file(path: &std::path::Path, overrides: &[Override]) -> Result<Scenario> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io { path: path.display().to_string(), source })?;
        Self::from_toml(&text, &path.display().to_string(), overrides)
    }

    /// Loads a scenario from TOML text; `file` names it in errors.
    pub fn from_toml(text: &str, file: &str, overrides: &[Override]) -> Result<Scenario> {
        let mut table: Table = text.parse().map_err(|e: toml::de::Error| Error::Syntax { file: file.into(), msg: e.to_string().trim_end().to_string() })?;
        for o in overrides {
            set(&mut table, o).map_err(|msg| Error::Config { file: "--set".into(), key: o.path.join("."), line: None, msg })?;
        }
        let config_error = |key: String, msg: String| {
            // A key set on the command line is reported there, not in the file.
            if overrides.iter().any(|o| o.path.join(".") == key) {
                return Error::Config { file: "--set".into(), key, line: None, msg };
            }
            let line = line_of(text, &key);
            Error::Config { file: file.into(), key, line, msg }
        };
        let scenario: Scenario = serde_path_to_error::deserialize(Value::Table(table)).map_err(|e| {
            let key = e.path().to_string();
            // The TOML deserializer appends "in `table`" lines; the key says that already.
            let msg = e.into_inner().to_string().lines().next().unwrap_or_default().to_string();
            // A variant of `[workload]` reports its bad key inside the message.
            let (key, msg) = match msg.strip_prefix(super::workload::AT_KEY).and_then(|m| m.split_once("`: ")) {
                Some((sub, rest)) => (format!("{key}.{sub}"), rest.to_string()),
                None => (key, msg),
            };
            // Name the unknown key itself, whether or not the path includes it.
            let key = match unknown_field(&msg) {
                Some(field) if key == "." => field.to_string(),
                Some(field) if !key.ends_with(&format!(".{field}")) && key != field => format!("{key}.{field}"),
                _ => key,
            };
            config_error(key, msg)
        })?;
        scenario.check().map_err(|(key, msg)| config_error(key, msg))?;
        Ok(scenario)
    }
}

fn unknown_field(msg: &str) -> Option<&str> {
    let rest = msg.strip_prefix("unknown field `")?;
    rest.split('`').next()
}

fn set(table: &mut Table, o: &Override) -> std::result::Result<(), String> {
    let (last, parents) = o.path.split_last().ok_or("empty key")?;
    let mut t = table;
    for (i, seg) in parents.iter().enumerate() {
        let entry = t.entry(seg.clone()).or_insert_with(|| Value::Table(Table::new()));
        t = entry.as_table_mut().ok_or_else(|| format!("`{}` is not a table", o.path[..=i].join(".")))?;
    }
    t.insert(last.clone(), o.value.clone());
    Ok(())
}

/// The 1-based line where `key` (dotted) is set in `text`, found by tracking
/// `[table]` headers; `None` when the key is not written in the file.
fn line_of(text: &str, key: &str) -> Option<usize> {
    let (table, leaf) = key.rsplit_once('.').unwrap_or(("", key));
    let mut current = String::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if let Some(h) = l.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            current = h.trim().to_string();
            if current == key {
                return Some(i + 1);
            }
            continue;
        }
        if let Some((k, _)) = l.split_once('=') {
            let k = k.trim().trim_matches('"');
            let full = if current.is_empty() { k.to_string() } else { format!("{current}.{k}") };
            if full == key || (current == table && k == leaf) {
                return Some(i + 1);
            }
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
    }

    #[test]
    fn unknown_key_is_named_with_its_line() {
        let e = err(&MIN.replace("clock_mhz = 200.0", "clock_mhz = 200.0\nclok_mhz = 1"), &[]);
        assert!(e.starts_with("s.toml:3: `cpu.clok_mhz`: unknown field `clok_mhz`"), "{e}");
    }

    #[test]
    fn zero_and_negative_clock_are_refused() {
        let e = err(&MIN.replace("200.0", "0.0"), &[]);
        assert!(e.contains("`cpu.clock_mhz`") && e.contains("positive"), "{e}");
        let e = err(MIN, &["cpu.clock_mhz=-5"]);
        assert!(e.starts_with("--set: `cpu.clock_mhz`"), "{e}");
    }

    #[test]
    fn negative_cost_is_refused_by_type() {
        let e = err(MIN, &["cpu.save_restore_cycles=-1"]);
        assert!(e.contains("`cpu.save_restore_cycles`"), "{e}");
    }

    #[test]
    fn overrides_apply_and_are_typed() {
        let o = [parse_override("cpu.context_policy=multithreaded").unwrap(), parse_override("run.seed=7").unwrap()];
        let s = Scenario::from_toml(MIN, "s.toml", &o).unwrap();
        assert_eq!(s.cpu.context_policy, crate::cpu::ContextPolicy::Multithreaded);
        assert_eq!(s.run.seed, 7);
    }

    #[test]
    fn bad_workload_key_is_named_inside_the_workload() {
        let e = err(MIN, &["workload.packet_bytes=\"big\""]);
        assert!(e.starts_with("--set: `workload.packet_bytes`: invalid type"), "{e}");
        let e = err(&MIN.replace("packet_bytes = 1500", "packet_bytes = 1500\npacket_bits = 1"), &[]);
        assert!(e.starts_with("s.toml:8: `workload.packet_bits`: unknown field"), "{e}");
        let e = err(&MIN.replace("\"flood\"", "\"flod\""), &[]);
        assert!(e.contains("`workload`") && e.contains("unknown variant `flod`"), "{e}");
    }

    #[test]
    fn syntax_error_names_file_and_line() {
        let e = err("[cpu\nclock_mhz = 1", &[]);
        assert!(e.starts_with("s.toml: ") && e.contains("line 1"), "{e}");
    }
}
