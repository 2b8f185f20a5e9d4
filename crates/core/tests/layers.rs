//! The crate's modules form layers: the machine names every part and the
//! scenario type, the parts name neither, and no chain of imports leads back
//! to where it started. Read from the source (every `crate::` path outside
//! comments and test modules), so a new import that breaks a layer fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The parts: each owns its keys, state and events, and is built by the
/// machine from its own sections.
const PARTS: &[&str] = &["code", "cpu", "device", "intc", "kernel", "masking", "workload"];

/// Top-level module → the top-level modules its files name.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap();
            let top = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
            if top == "lib" || path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // Test modules sit at a file's end; comments may name anything.
            let text = text.split("#[cfg(test)]\nmod tests").next().unwrap();
            let named = graph.entry(top.clone()).or_default();
            for line in text.lines().map(|l| l.split("//").next().unwrap()) {
                for (i, _) in line.match_indices("crate::") {
                    let name: String = line[i + 7..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
                    if !name.is_empty() && name != top {
                        named.insert(name);
                    }
                }
            }
        }
    }
    graph
}

#[test]
fn parts_name_neither_the_machine_nor_the_scenario() {
    let graph = imports();
    for part in PARTS {
        let named = &graph[*part];
        for layer in ["machine", "config", "report"] {
            assert!(!named.contains(layer), "crates/core/src/{part} imports crate::{layer}: the machine builds parts from their own sections");
        }
    }
}

#[test]
fn no_chain_of_imports_comes_back() {
    let graph = imports();
    // Depth-first search with the path on the stack: an edge back into it is a circle.
    fn visit<'a>(g: &'a BTreeMap<String, BTreeSet<String>>, m: &'a str, path: &mut Vec<&'a str>, done: &mut BTreeSet<&'a str>) {
        if let Some(i) = path.iter().position(|p| *p == m) {
            panic!("import circle: {} -> {m}", path[i..].join(" -> "));
        }
        if !done.insert(m) {
            return;
        }
        path.push(m);
        for next in g.get(m).into_iter().flatten() {
            visit(g, next, path, done);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(&graph, m, &mut Vec::new(), &mut done);
    }
}

#[test]
fn the_reader_finds_the_machine_naming_every_part() {
    // The test above would pass on a reader that finds nothing.
    let graph = imports();
    for part in PARTS {
        assert!(graph["machine"].contains(*part), "machine should name {part}");
    }
}
