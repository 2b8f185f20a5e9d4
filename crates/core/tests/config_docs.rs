//! docs/config.md is what the parameter tables generate, and every part's
//! table agrees with its struct.

use irqsim_core::Scenario;
use irqsim_core::config::{KINDS, markdown};

/// Regenerate with `cargo run -p irqsim-core --example gen-config > docs/config.md`.
#[test]
fn docs_config_md_is_generated_from_the_tables() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/config.md");
    let on_disk = std::fs::read_to_string(path).expect("docs/config.md");
    assert!(on_disk == markdown(&[]), "docs/config.md differs from the parameter tables; run `cargo run -p irqsim-core --example gen-config > docs/config.md`");
}

/// Every kind loads from its required keys alone: each table names exactly
/// its struct's fields (serde refuses a key the struct lacks and requires
/// every field, and the structs have no defaults of their own).
#[test]
fn every_table_fills_its_struct() {
    let required = [
        ("flood", "direction = \"rx\"\npacket_bytes = 100"),
        ("arrivals", "rate_per_s = 10.0\npacket_bytes = 100"),
        ("trace", "pcap = \"x.pcap\"\nhost = \"10.0.0.1\""),
        ("script", "[[workload.events]]\nat_cycle = 0\naction = \"syscall\""),
        ("synthetic", ""),
        ("null_rpc", "rpc_path_cycles = 100\nsection_cycles = 10\nsection_level = 1"),
        ("exerciser", "rate_per_s = 10.0\n[[workload.others]]\nrate_per_s = 1.0"),
    ];
    assert_eq!(required.map(|(k, _)| k), KINDS);
    for (kind, keys) in required {
        let clock = if kind == "null_rpc" { 25.0 } else { 200.0 };
        let text = format!("[cpu]\nclock_mhz = {clock}\n[workload]\nkind = \"{kind}\"\n{keys}\n");
        if let Err(e) = Scenario::from_toml(&text, "s.toml", &[]) {
            panic!("{kind}: {e}");
        }
    }
}
