//! A script's events given in a file (`workload.events_file`) run exactly as
//! the same events inline, and a bad file is one error naming its line.

use irqsim_core::{Record, Scenario, simulate};
use std::path::{Path, PathBuf};

const HEAD: &str = "[run]\nduration_ms = 0.5\n[cpu]\nclock_mhz = 100.0\n[nic]\nrx_buffer_bytes = 9500\n[workload]\nkind = \"script\"\n";

/// A fresh directory for one test's files.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("irqsim-script-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn metrics(text: &str, base: &Path) -> Vec<(String, u64)> {
    let s = Scenario::from_toml(text, "s.toml", &[]).expect("scenario loads");
    let r = simulate(&s, base, Record::default()).expect("run");
    r.check_invariants().expect("invariants");
    r.metrics.iter().map(|(k, v)| (k.to_string(), v.to_bits())).collect()
}

/// Events of every action, two at one cycle, some past the run's end.
const EVENTS: [(u64, &str, u32); 6] =
    [(0, "receive", 1500), (100, "send", 64), (2000, "syscall", 0), (2000, "receive", 60), (30_000, "receive", 9216), (90_000, "send", 100)];

#[test]
fn a_file_runs_as_the_same_events_inline() {
    let d = dir("same");
    let inline: String = EVENTS.iter().map(|(c, a, b)| format!("[[workload.events]]\nat_cycle = {c}\naction = \"{a}\"\nbytes = {b}\n")).collect();
    let lines: String = EVENTS.iter().map(|(c, a, b)| if *a == "syscall" { format!("{c}, {a}\n") } else { format!("{c},{a},{b}\n") }).collect();
    std::fs::write(d.join("ev.csv"), format!("at_cycle,action,bytes\n# a comment\n\n{lines}")).unwrap();
    let from_file = metrics(&format!("{HEAD}events_file = \"ev.csv\"\n"), &d);
    assert_eq!(from_file, metrics(&format!("{HEAD}{inline}"), &d));
    let offered = from_file.iter().find(|(k, _)| k == "rx_offered").map(|(_, v)| f64::from_bits(*v));
    assert_eq!(offered, Some(3.0), "the frame at 90,000 cycles is past the run's end");
}

fn refusal(name: &str, file: &str) -> String {
    let d = dir(name);
    std::fs::write(d.join("ev.csv"), file).unwrap();
    let s = Scenario::from_toml(&format!("{HEAD}events_file = \"ev.csv\"\n"), "s.toml", &[]).expect("scenario loads");
    let e = simulate(&s, &d, Record::default()).err().expect("refused").to_string();
    assert!(!e.contains('\n'), "{e}");
    e.strip_prefix(&format!("{}/", d.display())).unwrap_or(&e).to_string()
}

#[test]
fn a_bad_line_anywhere_is_refused_naming_it() {
    assert_eq!(refusal("order", "10,receive,64\n5,receive,64\n"), "ev.csv:2: `at_cycle`: 5 comes before the previous event's 10");
    assert_eq!(refusal("action", "10,dance,64\n"), "ev.csv:1: `action`: `dance` is not one of `receive`, `send`, `syscall`");
    assert_eq!(refusal("zero", "1,syscall\n10,send\n"), "ev.csv:2: `bytes`: a `send` needs a frame size of 1..=9216 bytes");
    assert_eq!(refusal("size", "10,receive,9217\n"), "ev.csv:1: `bytes`: a `receive` needs a frame size of 1..=9216 bytes");
    assert_eq!(refusal("cycle", "-1,receive,64\n"), "ev.csv:1: `at_cycle`: `-1` is not a cycle count (0..=9223372036854775807)");
    assert_eq!(refusal("fields", "1,receive,64,7\n"), "ev.csv:1: `at_cycle,action,bytes`: `1,receive,64,7`: expected 2 or 3 comma-separated fields");
    assert_eq!(refusal("escape", "1,\x1b[31m\n"), "ev.csv:1: `action`: `\\x1b[31m` is not one of `receive`, `send`, `syscall`");
    let long = format!("1,receive,64\n{}\n", "9".repeat(5000));
    assert_eq!(refusal("long", &long), "ev.csv:2: `at_cycle,action,bytes`: line is longer than 1024 bytes; an event is one short line");
    // Far past the run's end, still found before the run.
    let late: String = (0..100_000).map(|i| format!("{},receive,64\n", i * 1000)).collect::<String>() + "x\n";
    assert!(refusal("late", &late).starts_with("ev.csv:100001: "));
}

#[test]
fn events_come_inline_or_from_a_file() {
    let both = format!("{HEAD}events_file = \"ev.csv\"\n[[workload.events]]\nat_cycle = 0\naction = \"syscall\"\n");
    let e = Scenario::from_toml(&both, "s.toml", &[]).unwrap_err().to_string();
    assert!(e.starts_with("s.toml:9: `workload.events_file`: give the events inline"), "{e}");
    let e = Scenario::from_toml(HEAD, "s.toml", &[]).unwrap_err().to_string();
    assert!(e.starts_with("s.toml:7: `workload.events`: required"), "{e}");
    let s = Scenario::from_toml(&format!("{HEAD}events_file = \"missing.csv\"\n"), "s.toml", &[]).unwrap();
    let e = simulate(&s, Path::new("/nonexistent"), Record::default()).err().unwrap().to_string();
    assert!(e.starts_with("/nonexistent/missing.csv: No such file"), "{e}");
    let s = Scenario::from_toml(&format!("{HEAD}events_file = \"/dev/zero\"\n"), "s.toml", &[]).unwrap();
    let e = simulate(&s, Path::new("."), Record::default()).err().unwrap().to_string();
    assert_eq!(e, "/dev/zero: not a regular file (a character device); give a file");
}
