//! The settings table (`config::KEYS`) matches the parser and the docs.

use irqsim_mips::config::{ExecConfig, KEYS};

#[test]
fn every_setting_is_documented() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/models/cores.md")).unwrap();
    for (key, _, _) in KEYS {
        let field = key.trim_start_matches("{cache}.");
        assert!(doc.contains(&format!("`{key}`")) || doc.contains(&format!("`{field}`")), "{key} is not in docs/models/cores.md");
    }
}

#[test]
fn every_plain_default_is_accepted() {
    for (key, default, _) in KEYS.iter().filter(|(k, d, _)| !k.starts_with('{') && !d.is_empty()) {
        let mut sets = vec![format!("{key}={default}")];
        if key.starts_with("l2.") || key.starts_with("memory.latency") {
            sets.insert(0, "memory.model=caches".into());
        }
        ExecConfig::from_sets(&sets).unwrap_or_else(|e| panic!("{key}={default}: {e}"));
    }
    for level in ["l1i", "l1d", "l2"] {
        for (field, value) in [("size_bytes", "8192"), ("ways", "4"), ("line_bytes", "64"), ("hit_cycles", "1"), ("trace_threads", "0")] {
            ExecConfig::from_sets(&["memory.model=caches".to_string(), format!("{level}.{field}={value}")]).unwrap();
        }
    }
}
