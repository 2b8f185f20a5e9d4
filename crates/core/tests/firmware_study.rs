//! The nic-firmware study's runs on the machine (nic-firmware/duplex-64):
//! a host that costs nothing keeps the send ring full, the NIC measures a
//! window of frames and the run ends with it, the window's profile
//! accounts for every core cycle and instruction once, and task-level
//! firmware runs with handler owners.

use irqsim_core::{Error, Record, Report, parse_override, run_file};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn scenario() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/nic-firmware/duplex-64.toml")
}

fn try_run(sets: &[&str]) -> Result<Report, Error> {
    let mut all = vec!["nic_firmware.window_frames=600", "nic_firmware.warmup_frames=100"];
    all.extend_from_slice(sets);
    let o: Vec<_> = all.iter().map(|s| parse_override(s).unwrap()).collect();
    run_file(&scenario(), &o, Record::default())
}

fn run(sets: &[&str]) -> Report {
    let r = try_run(sets).unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r.check_invariants().unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r
}

fn m(r: &Report, key: &str) -> f64 {
    r.metric(key).unwrap_or_else(|| panic!("no metric {key}"))
}

fn window(r: &Report) -> Value {
    r.to_json()["nic_firmware"].clone()
}

fn fpkc(r: &Report) -> f64 {
    window(r)["frames_per_kcycle"].as_f64().unwrap()
}

/// The run ends with its window; the window's frames are both directions'.
#[test]
fn the_window_ends_the_run() {
    let r = run(&[]);
    let w = window(&r);
    let frames = m(&r, "nic_firmware_window_frames");
    assert!((600.0..610.0).contains(&frames), "{frames}");
    assert_eq!(w["frames"].as_f64(), Some(frames));
    assert_eq!(w["sent"].as_u64().unwrap() + w["received"].as_u64().unwrap(), frames as u64);
    assert!(w["sent"].as_u64().unwrap() > 200 && w["received"].as_u64().unwrap() > 200, "{w}");
    // It ended when the window did, not at run.duration_ms (100 ms, 16.6 M cycles).
    assert_eq!(w["end_cycle"].as_f64(), Some(m(&r, "nic_firmware_cycles")));
    assert!(m(&r, "sim_cycles") < 1e6, "{}", m(&r, "sim_cycles"));
    assert_eq!(m(&r, "nic_firmware_window_cycles"), w["cycles"].as_f64().unwrap());
    // Without a window nothing is measured and the run lasts its duration.
    let r = run(&["nic_firmware.window_frames=0", "nic_firmware.warmup_frames=0", "run.duration_ms=0.5"]);
    assert!(r.to_json().get("nic_firmware").is_none());
    assert_eq!((m(&r, "nic_firmware_window_frames"), m(&r, "sim_cycles")), (0.0, 83_000.0));
}

/// The host keeps the send ring full: every send descriptor given back is
/// posted again, nothing is dropped, and 256 frames are always in flight.
#[test]
fn the_host_keeps_the_send_ring_full() {
    let r = run(&[]);
    let (offered, sent, in_flight) = (m(&r, "tx_offered"), m(&r, "tx_sent"), m(&r, "tx_in_flight"));
    assert!(sent > 200.0 && m(&r, "tx_dropped") == 0.0, "sent {sent}");
    assert_eq!(offered, sent + in_flight);
    assert!(in_flight <= 256.0 && in_flight > 192.0, "{in_flight}");
    // Without the fill the host sends nothing.
    let r = run(&["nic_firmware.fill_send_ring_bytes=0", "nic_firmware.window_frames=300"]);
    assert_eq!((m(&r, "tx_offered"), m(&r, "tx_sent")), (0.0, 0.0));
}

/// The window's profile charges every core cycle and instruction once.
#[test]
fn the_profile_charges_every_core_cycle_and_instruction_of_the_window_once() {
    for cores in [1u64, 3] {
        let r = run(&[&format!("nic_firmware.cores={cores}")]);
        let w = window(&r);
        let (cycles, instructions) = (w["cycles"].as_u64().unwrap() * cores, w["instructions"].as_u64().unwrap());
        let sum = |key: &str| w["handlers"].as_array().unwrap().iter().map(|h| h[key].as_u64().unwrap()).sum::<u64>();
        assert_eq!(sum("cycles"), cycles, "{cores} cores");
        assert_eq!(sum("instructions"), instructions, "{cores} cores");
        let bins: u64 = w["bins"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
        assert_eq!(bins, cycles, "{cores} cores");
        let counts: u64 = w["profile"]["counts"].as_array().unwrap().iter().map(|c| c[1].as_u64().unwrap()).sum();
        assert_eq!(counts, instructions, "{cores} cores");
    }
}

#[test]
fn the_same_window_twice_is_the_same() {
    let (a, b) = (run(&["nic_firmware.cores=4"]), run(&["nic_firmware.cores=4"]));
    assert_eq!(a.to_json(), b.to_json());
}

/// Frame-level throughput grows with cores; task-level firmware (one core
/// per handler type) cannot use six cores as well.
#[test]
fn frame_level_grows_with_cores_and_task_level_stalls() {
    let by_cores: Vec<f64> = [1, 2, 4, 6].iter().map(|c| fpkc(&run(&[&format!("nic_firmware.cores={c}")]))).collect();
    assert!(by_cores.windows(2).all(|w| w[0] < w[1]), "{by_cores:?}");
    // Handlers spread over six cores, two each on the first two.
    let task = run(&["nic_firmware.cores=6", "nic_firmware.organisation=\"task\"", "nic_firmware.owners=[0, 1, 2, 3, 4, 5, 0, 1]"]);
    assert!(fpkc(&task) < by_cores[3], "task {} frame {}", fpkc(&task), by_cores[3]);
    assert_eq!(window(&task)["owners"], serde_json::json!([0, 1, 2, 3, 4, 5, 0, 1]));
}

#[test]
fn bad_owners_and_a_warmup_without_a_window_are_refused_by_name() {
    let refused = |sets: &[&str]| try_run(sets).err().unwrap_or_else(|| panic!("{sets:?} ran")).to_string();
    let task = "nic_firmware.organisation=\"task\"";
    let e = refused(&[task, "nic_firmware.cores=2"]);
    assert!(e.contains("nic_firmware.organisation") && e.contains("needs `owners`"), "{e}");
    let e = refused(&[task, "nic_firmware.cores=2", "nic_firmware.owners=[0, 1, 2, 0, 0, 0, 0, 0]"]);
    assert!(e.contains("nic_firmware.owners") && e.contains("core 2 does not exist"), "{e}");
    let e = refused(&[task, "nic_firmware.cores=2", "nic_firmware.owners=[0, 1]"]);
    assert!(e.contains("nic_firmware.owners") && e.contains("expected 8 entries"), "{e}");
    let e = refused(&["nic_firmware.owners=[0, 0, 0, 0, 0, 0, 0, 0]"]);
    assert!(e.contains("nic_firmware.owners") && e.contains("only used by task-level"), "{e}");
    let e = refused(&[task, "nic_firmware.cores=2", "nic_firmware.owners=[0, 1, 0, 1, 0, 1, 0, 9]"]);
    assert!(e.contains("nic_firmware.owners"), "{e}");
    let e = refused(&["nic_firmware.window_frames=0"]);
    assert!(e.contains("nic_firmware.warmup_frames") && e.contains("window_frames"), "{e}");
}
