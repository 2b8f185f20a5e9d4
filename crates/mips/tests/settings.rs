//! The settings tables (`config::SECTIONS`) match the builder, the old
//! `KEY=VALUE` keys and the docs.

use irqsim_mips::config::{ExecConfig, MACHINE_SECTIONS, SECTIONS};
use irqsim_mips::hierarchy::HierarchyConfig;
use irqsim_mips::system::SystemConfig;
use irqsim_params::{Def, Range, Type};

/// Every key `irqsim exec --set` took before the settings became tables.
const KEYS_BEFORE_TABLES: &[&str] = &[
    "core.cores",
    "core.threads",
    "core.policy",
    "core.interrupt_thread",
    "pipeline.load_use_cycles",
    "pipeline.branch_taken_cycles",
    "pipeline.mult_cycles",
    "pipeline.div_cycles",
    "memory.model",
    "memory.latency_cycles",
    "l2.shared",
    "run.max_cycles",
];
const CACHE_KEYS_BEFORE_TABLES: &[&str] = &["size_bytes", "ways", "line_bytes", "hit_cycles", "way_masks", "reserve_sets", "lock_range", "trace_threads"];

fn keys() -> impl Iterator<Item = String> {
    SECTIONS.iter().flat_map(|s| s.params.iter().map(move |p| format!("{}.{}", s.name, p.key)))
}

#[test]
fn every_old_key_has_a_param() {
    let all: Vec<String> = keys().collect();
    let caches = ["l1i", "l1d", "l2"].iter().flat_map(|l| CACHE_KEYS_BEFORE_TABLES.iter().map(move |f| format!("{l}.{f}")));
    for key in KEYS_BEFORE_TABLES.iter().map(|k| k.to_string()).chain(caches) {
        assert!(all.contains(&key), "{key} has no Param entry");
    }
}

#[test]
fn defaults_pass_their_own_checks() {
    for s in SECTIONS {
        irqsim_params::check_defaults(s.name, s.params).unwrap();
    }
}

/// The machine's sections are in docs/config.md (generated); the rest, the
/// run's guard of `irqsim exec`, in docs/models/cores.md.
#[test]
fn every_setting_is_documented() {
    let read = |p: &str| std::fs::read_to_string(format!("{}/../../docs/{p}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let (config, cores) = (read("config.md"), read("models/cores.md"));
    for s in SECTIONS {
        if MACHINE_SECTIONS.iter().any(|m| m.name == s.name) {
            assert!(config.contains(&format!("`[code.core.{}]`", s.name)), "[code.core.{}] is not in docs/config.md", s.name);
        } else {
            for p in s.params {
                assert!(cores.contains(&format!("`{}.{}`", s.name, p.key)), "{}.{} is not in docs/models/cores.md", s.name, p.key);
            }
        }
    }
}

#[test]
fn the_defaults_are_the_models_defaults() {
    let c = ExecConfig::from_sets::<&str>(&[]).unwrap();
    assert_eq!(c.system, SystemConfig::default());
    assert_eq!((c.pins.len(), c.max_cycles), (0, 10_000_000_000));
    let c = ExecConfig::from_sets(&["memory.model=caches"]).unwrap();
    assert_eq!(c.system.caches, Some(HierarchyConfig::default()));
}

/// Each number set to another valid value changes the machine: no key is
/// declared but left unread.
#[test]
fn every_key_reaches_the_machine() {
    let base = ["memory.model=caches", "core.threads=2", "core.cores=2"];
    let before = ExecConfig::from_sets(&base).unwrap();
    for s in SECTIONS {
        for p in s.params {
            let key = format!("{}.{}", s.name, p.key);
            let value = match (p.ty, p.default, p.range) {
                (Type::Int, Def::Value(v), Range::Int(_, hi)) => {
                    let v: i128 = v.parse().unwrap();
                    // Twice as large keeps sizes powers of two; a count of 2 is the base's.
                    (if v > 0 && v * 2 <= hi && !["cores", "threads"].contains(&p.key) { v * 2 } else { 1 }).to_string()
                }
                (Type::Int, _, _) => "1".into(),
                // Another value than the default, or than the base sets (memory.model).
                (Type::Choice(values), default, _) => {
                    let unset = |v: &&&str| !base.contains(&format!("{key}={v}").as_str());
                    let other = values.iter().filter(unset).find(|v| !matches!(default, Def::Value(d) if d.trim_matches('"') == **v));
                    other.or(values.iter().find(unset)).unwrap().to_string()
                }
                (Type::Bool, ..) => "false".into(),
                (Type::Str, ..) if p.key == "lock_range" => "0x400000+64".into(),
                (Type::Str, ..) if p.key == "reserve_sets" => "1:0+1".into(),
                (Type::Str, ..) if p.key == "way_masks" => "1:0x1".into(),
                (Type::Str, ..) => "1".into(),
                _ => panic!("{key}: no test value for {:?}", p.ty),
            };
            let after = ExecConfig::from_sets(&[&base[..], &[&format!("{key}={value}")]].concat()).unwrap_or_else(|e| panic!("{key}={value}: {e}"));
            assert_ne!(after, before, "{key}={value} changed nothing");
        }
    }
}

#[test]
fn bad_settings_name_their_key() {
    let e = |sets: &[&str]| ExecConfig::from_sets(sets).unwrap_err().to_string();
    assert_eq!(e(&["l2.ways=4"]), "l2.ways: only used when `memory.model` is `caches` (it is `perfect`); remove the key");
    assert_eq!(e(&["memory.model=caches", "l1d.ways=65"]), "l1d.ways: must be 1..=64, got 65");
    assert!(e(&["core.bogus=1"]).starts_with("core.bogus: unknown field `bogus`"));
    assert!(e(&["l9.ways=1"]).starts_with("l9.ways: unknown section `l9`"));
    assert_eq!(e(&["core.threads=2", "core.interrupt_thread=2"]), "core.interrupt_thread: thread 2 does not exist (core.threads is 2)");
    assert!(e(&["memory.model=caches", "l1d.way_masks=1:x"]).starts_with("l1d.way_masks: \"1:x\": expected THREAD:MASK"));
    let none = ExecConfig::from_sets(&["core.threads=2", "core.interrupt_thread=1", "core.interrupt_thread=none"]).unwrap();
    assert_eq!(none.system.interrupt_thread, None);
}
