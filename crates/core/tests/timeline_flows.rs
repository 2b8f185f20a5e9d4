//! Timelines say what each span was about and where each interrupt handler
//! came from: span arguments (frame, controller input, interrupt) and flow
//! arrows from the device event to the handler it started.

use irqsim_core::{Record, Report, Scenario, parse_override, simulate};
use std::path::Path;

fn timeline(name: &str, sets: &[&str]) -> Report {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios").join(format!("{name}.toml"));
    let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    let s = Scenario::from_file(&path, &o).unwrap();
    simulate(&s, path.parent().unwrap(), Record { timeline: true }).unwrap()
}

/// Every interrupt taken has one arrow, from no later than its handler
/// starts; the arrows land on slices of the CPU process and start on the
/// device track, with matching ids.
#[test]
fn every_interrupt_has_an_arrow_to_its_handler() {
    for (name, sets, interrupts) in [
        ("compose/rx-direct-single", vec!["run.duration_ms=1"], "interrupts"),
        ("compose/rx-ioapic-single", vec!["run.duration_ms=1"], "interrupts_serviced"),
        ("msi-latency/workstation-loaded", vec!["run.duration_ms=2"], "interrupts_serviced"),
        ("optimistic-spl/luna88k-idealized", vec!["run.duration_ms=5", "workload.interrupt_rate_per_s=20000"], "interrupts_handled"),
    ] {
        let r = timeline(name, &sets);
        let flows = r.timeline.flows();
        assert!(!flows.is_empty(), "{name}");
        assert!(flows.iter().all(|f| f.from <= f.to), "{name}: an arrow runs back in time");
        let taken = r.metric(interrupts).unwrap() as usize;
        // Interrupts still in flight at the end have no handler yet.
        assert!(flows.len() <= taken + 2 && flows.len() + 2 >= taken, "{name}: {} arrows for {taken} interrupts", flows.len());
        let trace = r.chrome_trace();
        let events = trace["traceEvents"].as_array().unwrap();
        let starts = events.iter().filter(|e| e["ph"] == "s" && e["pid"] == 2).count();
        let ends = events.iter().filter(|e| e["ph"] == "f" && e["pid"] == 1 && e["bp"] == "e").count();
        assert_eq!((starts, ends), (flows.len(), flows.len()), "{name}");
    }
}

/// Spans name what they worked on: a protocol span its frame (arrival cycle
/// and size), a handler's status read its controller input.
#[test]
fn spans_carry_their_jobs_arguments() {
    let r = timeline("mt-interrupts/full-stack-single", &["run.duration_ms=50"]);
    let s = r.timeline.spans().iter().find(|s| s.label == "IP receive").expect("a protocol span");
    assert_eq!(s.args[1], Some(("bytes", 1106)));
    assert!(matches!(s.args[0], Some(("frame", _))));
    let r = timeline("compose/rx-ioapic-single", &["run.duration_ms=1"]);
    let s = r.timeline.spans().iter().find(|s| s.label == "ISR status read").expect("a status read");
    assert_eq!(s.args, [Some(("input", 16)), Some(("handler", 0))], "the NIC on IO-APIC pin 16, first handler");
    let trace = r.chrome_trace();
    let read = trace["traceEvents"].as_array().unwrap().iter().find(|e| e["name"] == "ISR status read").unwrap();
    assert_eq!(read["args"]["input"], 16);
}
