//! docs/metrics.md is what the metric table generates, and every metric a
//! run reports is declared in it (`irqsim_core::metrics`).

use irqsim_core::metrics::{find, markdown};
use irqsim_core::{Record, parse_override, run_file};
use std::path::{Path, PathBuf};

/// Regenerate with `cargo run -p irqsim-core --example gen-metrics > docs/metrics.md`.
#[test]
fn docs_metrics_md_is_generated_from_the_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/metrics.md");
    let on_disk = std::fs::read_to_string(path).expect("docs/metrics.md");
    assert!(on_disk == markdown(), "docs/metrics.md differs from the metric table; run `cargo run -p irqsim-core --example gen-metrics > docs/metrics.md`");
}

fn scenarios(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            scenarios(&p, out);
        } else if p.extension().is_some_and(|e| e == "toml") {
            out.push(p);
        }
    }
}

/// Every bundled scenario, and the coalescing, DIM and RSS variants no
/// bundled scenario turns on (DIM and busy polling per RSS queue too),
/// reports only declared metrics.
#[test]
fn every_emitted_metric_is_declared() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios");
    let mut runs: Vec<(PathBuf, Vec<&str>)> = Vec::new();
    let mut all = Vec::new();
    scenarios(&root, &mut all);
    all.sort();
    runs.extend(all.into_iter().map(|p| (p, vec![])));
    let forward = root.join("livelock/e1000-forward.toml");
    runs.push((forward.clone(), vec!["coalesce.rx_usecs=50", "coalesce.rx_frames=0"]));
    runs.push((forward, vec!["coalesce.adaptive_rx=true"]));
    let rss = root.join("livelock/rss.toml");
    runs.push((rss.clone(), vec!["coalesce.adaptive_rx=true"]));
    runs.push((rss, vec!["napi.busy_poll_usecs=50", "app.background=false", "rss.queues=4"]));
    let mut undeclared = Vec::new();
    for (path, sets) in &runs {
        let mut o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
        o.push(parse_override("run.duration_ms=0.5").unwrap());
        let r = run_file(path, &o, Record::default()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (name, _) in &r.metrics {
            if find(name).is_none() {
                undeclared.push(format!("{name} ({})", path.display()));
            }
        }
    }
    assert!(undeclared.is_empty(), "metrics missing from crates/core/src/metrics.rs: {undeclared:?}");
}
