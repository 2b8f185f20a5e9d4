//! Parts of different studies combined on one machine: the NIC through each
//! interrupt controller, the Linux interrupt path for the NIC, routing to
//! another hardware thread, and the exerciser on multithreaded contexts.

use irqsim_core::cpu::Bin;
use irqsim_core::{Record, Report, Scenario, parse_override, simulate};
use std::path::Path;

fn run(name: &str, sets: &[&str]) -> Report {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios").join(format!("{name}.toml"));
    let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    let s = Scenario::from_file(&path, &o).unwrap_or_else(|e| panic!("{name}: {e}"));
    let r = simulate(&s, path.parent().unwrap(), Record::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    r.check_invariants().unwrap_or_else(|e| panic!("{name} {sets:?}: {e}"));
    r
}

fn mbps(r: &Report) -> f64 {
    r.metric("rx_throughput_mbps").unwrap()
}

/// Receive throughput falls as the delivery path gets longer (an EOI write
/// for MSI; a status read, a clear and an EOI broadcast on the IO-APIC;
/// INTA and port I/O on the 8259), and multithreaded contexts never lose.
#[test]
fn throughput_falls_with_each_longer_delivery_path() {
    for policy in ["single", "multithreaded"] {
        let got: Vec<f64> = ["direct", "msi", "ioapic", "xtpic"].iter().map(|k| mbps(&run(&format!("compose/rx-{k}-{policy}"), &[]))).collect();
        assert!(got.windows(2).all(|w| w[0] > w[1]), "{policy}: direct, msi, ioapic, xtpic gave {got:?}");
    }
    for k in ["direct", "msi", "ioapic", "xtpic"] {
        let (single, multi) = (mbps(&run(&format!("compose/rx-{k}-single"), &[])), mbps(&run(&format!("compose/rx-{k}-multithreaded"), &[])));
        assert!(multi >= single, "{k}: multithreaded {multi} < single {single}");
    }
}

/// The direct wire with the mt path is the mt-interrupts study itself.
#[test]
fn direct_wire_is_the_study_model() {
    let study = run("mt-interrupts/driver-rx-single", &["run.duration_ms=200"]);
    let direct = run("compose/rx-direct-single", &[]);
    assert_eq!(study.metrics, direct.metrics);
    assert_eq!(study.bins, direct.bins);
}

/// On the Linux path the driver's per-frame work moves from the interrupt
/// to the bottom half; frames are conserved on every controller.
#[test]
fn linux_path_moves_the_drain_to_the_bottom_half() {
    for k in ["direct", "msi", "ioapic", "xtpic"] {
        let mt = run(&format!("compose/rx-{k}-single"), &[]);
        let linux = run(&format!("compose/rx-{k}-single"), &["irq_path.kind=linux"]);
        let (b_mt, b_linux) = (mt.bins[0], linux.bins[0]);
        assert_eq!(b_mt.get(Bin::BottomHalf), 0, "{k}");
        // Every frame's Driver ISR receive work (2,228 cycles) ran in the bottom half.
        let frames = linux.metric("rx_delivered").unwrap() as u64;
        assert!(frames > 1000, "{k}: the Linux path delivers");
        assert!(b_linux.get(Bin::BottomHalf) >= 2228 * frames, "{k}: {b_linux:?}");
        assert!(b_linux.get(Bin::Interrupt) < b_mt.get(Bin::Interrupt), "{k}: {b_linux:?} vs {b_mt:?}");
    }
}

/// The NIC's interrupt goes where the controller routes it: every
/// interrupt and driver cycle lands on hardware thread 1.
#[test]
fn interrupt_is_routed_to_the_chosen_thread() {
    for k in ["direct", "msi", "ioapic"] {
        let r = run(&format!("compose/rx-{k}-single"), &["cpu.threads=2", "nic.irq_thread=1"]);
        assert_eq!(r.bins[0].get(Bin::Interrupt), 0, "{k}: thread 0 {:?}", r.bins[0]);
        assert!(r.bins[1].get(Bin::Interrupt) > 0, "{k}: thread 1 {:?}", r.bins[1]);
        assert!(mbps(&r) > 100.0, "{k}");
    }
}

/// The exerciser on a multithreaded-context CPU: an interrupt that preempts
/// the busy user task pays no register save/restore, so its ISR latency is
/// lower than on a single context that must save.
#[test]
fn multithreaded_contexts_shorten_the_exerciser_latency() {
    let sets = |p: &'static str| ["cpu.save_restore_cycles=2000", "run.duration_ms=50"].into_iter().chain([p]).collect::<Vec<_>>();
    let single = run("msi-latency/workstation-loaded", &sets("cpu.context_policy=single"));
    let multi = run("msi-latency/workstation-loaded", &sets("cpu.context_policy=multithreaded"));
    let p50 = |r: &Report| r.metric("isr_latency_p50_us").unwrap();
    assert!(p50(&multi) < p50(&single), "multithreaded {} µs, single {} µs", p50(&multi), p50(&single));
}

/// Critical sections in the Driver ISR and the socket layer: optimistic
/// protection spends fewer masking cycles per frame than conventional (the
/// Luna88k's 51-cycle fast path against its 96-cycle hardware pair), the
/// NIC's interrupt is held by the hardware mask under one and deferred under
/// the other, and frames and interrupts are conserved.
#[test]
fn optimistic_sections_in_the_nic_path_save_cycles_per_frame() {
    let conventional = run("compose/rx-sections", &["masking.scheme=conventional"]);
    let optimistic = run("compose/rx-sections", &["masking.scheme=optimistic"]);
    let per_frame = |r: &Report| r.metric("masking_cycles_per_frame").unwrap();
    // Two sections per frame, each a full raise + lower pair.
    assert_eq!(per_frame(&conventional), 192.0);
    assert!(per_frame(&optimistic) < per_frame(&conventional), "{} vs {}", per_frame(&optimistic), per_frame(&conventional));
    assert!(conventional.metric("nic_interrupts_held").unwrap() > 0.0);
    assert_eq!(conventional.metric("nic_interrupts_deferred"), Some(0.0));
    assert!(optimistic.metric("nic_interrupts_deferred").unwrap() > 0.0);
    assert_eq!(optimistic.metric("nic_interrupts_held"), Some(0.0));
    assert_eq!(conventional.metric("rx_delivered"), optimistic.metric("rx_delivered"));
}

/// Without sections the masking part changes nothing: its keys are refused,
/// and so are the bare wire's priority levels behind a controller.
#[test]
fn masking_keys_need_sections() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios");
    let load = |name: &str, sets: &[&str]| {
        let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
        Scenario::from_file(&path.join(format!("{name}.toml")), &o).err().map(|e| e.to_string()).unwrap_or_default()
    };
    assert!(load("compose/rx-direct-single", &["masking.scheme=optimistic"]).contains("has no critical section to mask"));
    assert!(load("compose/rx-sections", &["intc.kind=ioapic", "masking.section_level=2"]).contains("leaves the NIC's priority 5 unmasked"));
    assert!(load("compose/rx-sections", &["irq_path.kind=napi", "masking.section_level=4"]).contains("masks every interrupt on its CPU"));
    assert_eq!(load("compose/rx-sections", &["masking.section_level=2"]), "");
    assert_eq!(load("compose/rx-sections", &["intc.kind=ioapic", "cpu.threads=2"]), "");
    assert!(load("compose/rx-sections", &["masking.nic_priority=9"]).contains("does not exist on the Luna88k"));
}

/// Several devices on one machine: the NIC and a periodic timer (1,000 a
/// second, a 3,000-cycle ISR) share the CPU through each controller. No
/// timer interrupt is lost, frames and interrupts are conserved, and the
/// timer's cycles come out of the receive throughput.
#[test]
fn a_timer_beside_the_nic() {
    for k in ["direct", "msi", "ioapic", "xtpic"] {
        let alone = run(&format!("compose/rx-{k}-single"), &[]);
        let timer = run(&format!("compose/rx-{k}-single"), &["sources.others=[{process = \"periodic\", rate_per_s = 1000.0, isr_cycles = 3000}]"]);
        // Every 1 ms from 1 ms on: 199 or 200 in 200 ms, none lost.
        let raised = timer.metric("interrupts_raised").unwrap() - timer.metric("interrupts").unwrap();
        assert!((199.0..=200.0).contains(&raised), "{k}: {raised} timer interrupts in 200 ms");
        assert_eq!(timer.metric("interrupts_lost"), Some(0.0), "{k}");
        assert!(mbps(&timer) < mbps(&alone), "{k}: {} with the timer, {} without", mbps(&timer), mbps(&alone));
    }
}

/// A PCIe exerciser beside the NIC: its interrupts (DMA first, then an MSI
/// or a line) reach the CPU through the NIC's controller, its ISR and
/// tasklet signatures are timed, and its latency grows with the controller's
/// path as on the exerciser's own machine; the NIC still delivers every frame.
#[test]
fn an_exerciser_beside_the_nic() {
    let exerciser = "sources.others=[{kind = \"exerciser\", process = \"poisson\", rate_per_s = 10000.0, dma_bytes = 4096, isr_cycles = 500}]";
    let at = |intc: &str| run("compose/rx-sections", &[&format!("intc.kind=\"{intc}\""), exerciser]);
    let alone = run("compose/rx-sections", &["intc.kind=\"msi\""]);
    let (msi, ioapic) = (at("msi"), at("ioapic"));
    for r in [&msi, &ioapic] {
        assert!(r.metric("exerciser_serviced").unwrap() > 1000.0);
        assert_eq!(r.metric("stale_data_reads"), Some(0.0));
        assert_eq!(r.metric("rx_delivered"), alone.metric("rx_delivered"));
    }
    let p50 = |r: &Report| r.metric("isr_latency_p50_us").unwrap();
    assert!(p50(&msi) < p50(&ioapic), "MSI {} µs, IO-APIC {} µs", p50(&msi), p50(&ioapic));
    assert!(alone.metric("isr_latency_p50_us").is_none(), "no exerciser, no exerciser metrics");
    // Only an exerciser DMA-writes.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/compose/rx-msi-single.toml");
    let o = [parse_override("sources.others=[{rate_per_s = 10.0, dma_bytes = 64}]").unwrap()];
    let e = Scenario::from_file(&path, &o).expect_err("refused").to_string();
    assert!(e.contains("sources.others[0].dma_bytes") && e.contains("only an exerciser"), "{e}");
}

/// Critical sections in system calls too: the masking cost of the busiest
/// second grows by a raise and lower pair per system call, and every call
/// is accounted for.
#[test]
fn sections_in_system_calls() {
    let sets = |scheme: &'static str| vec!["masking.syscall_section_cycles=100", scheme];
    let conventional = run("mt-interrupts/full-stack-single", &sets("masking.scheme=conventional"));
    let optimistic = run("mt-interrupts/full-stack-single", &sets("masking.scheme=optimistic"));
    let (calls, frames) = (conventional.metric("syscalls").unwrap(), conventional.metric("rx_delivered").unwrap());
    assert!(calls > 1500.0);
    // The Luna88k's conventional pair is 96 cycles, its optimistic one 51.
    let per_frame = |r: &Report| r.metric("masking_cycles_per_frame").unwrap() * frames;
    assert!((per_frame(&conventional) - 96.0 * calls).abs() < 96.0 * 5.0, "{} for {calls} calls", per_frame(&conventional));
    assert!(per_frame(&optimistic) < per_frame(&conventional));
}

/// The null RPC on multithreaded contexts (the mt-interrupts study's what-if
/// for the Mach machines, which had one): handlers run in a context of their
/// own, so an interrupt that preempts the RPC switches context for free
/// instead of saving and restoring its registers. The same interrupts run
/// the same handler cycles, the overhead falls and more RPCs complete;
/// under conventional protection only save/restores (64 cycles each) leave
/// the overhead (optimistic protection also defers a different number of
/// interrupts as the timing shifts). Handlers preempting handlers share the
/// interrupt context and still pay.
#[test]
fn the_null_rpc_on_multithreaded_contexts() {
    for scheme in ["conventional", "optimistic"] {
        let at = |policy: &str| {
            let sets = [&format!("cpu.context_policy=\"{policy}\"")[..], &format!("masking.scheme=\"{scheme}\""), "workload.interrupt_rate_per_s=20000"];
            run("optimistic-spl/luna88k-idealized", &sets)
        };
        let (single, multi) = (at("single"), at("multithreaded"));
        let m = |r: &Report, k: &str| r.metric(k).unwrap();
        assert_eq!(m(&single, "interrupts"), m(&multi, "interrupts"), "{scheme}");
        assert_eq!(single.bins[0].get(Bin::Interrupt), multi.bins[0].get(Bin::Interrupt), "{scheme}");
        let saved = single.bins[0].get(Bin::Overhead) - multi.bins[0].get(Bin::Overhead);
        assert!(saved > 0 && (scheme == "optimistic" || saved % 64 == 0), "{scheme}: {saved} overhead cycles saved");
        assert!(saved / 64 < m(&single, "interrupts") as u64, "{scheme}: at most one save/restore saved per interrupt");
        assert!(m(&multi, "rpcs") > m(&single, "rpcs"), "{scheme}");
    }
}
