//! A kernel per core (`code.cpus`): the program runs on the CPUs it names,
//! the abstract-cost kernel on the others, each driving the NICs whose
//! interrupts go to its CPUs. The bundled `code/kernel-per-core` has the
//! first NIC on CPU 0 (rx_nics, MIPS code) and a second NIC on CPU 1
//! (abstract NAPI costs). Every run checks the report's invariants (frames
//! in = delivered + dropped + in flight, per NIC and in total; bins sum to
//! the elapsed cycles on every thread).

use irqsim_core::cpu::Bin;
use irqsim_core::{Record, Report, Scenario, parse_override, simulate};
use std::path::{Path, PathBuf};

const SCENARIO: &str = "code/kernel-per-core";
const SHORT: &str = "run.duration_ms=5";

fn load(sets: &[&str]) -> Result<(Scenario, PathBuf), String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios").join(format!("{SCENARIO}.toml"));
    let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    Scenario::from_file(&path, &o).map(|s| (s, path)).map_err(|e| e.to_string())
}

fn run_with(sets: &[&str], record: Record) -> Report {
    let (s, path) = load(sets).unwrap_or_else(|e| panic!("{e}"));
    let r = simulate(&s, path.parent().unwrap(), record).unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r.check_invariants().unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r
}

fn run(sets: &[&str]) -> Report {
    run_with(sets, Record::default())
}

fn m(r: &Report, k: &str) -> f64 {
    r.metric(k).unwrap_or_else(|| panic!("no metric {k}"))
}

/// Instructions the program ran on thread `t`, all bins.
fn code(r: &Report, t: usize) -> u64 {
    r.code_bins[t].iter().map(|c| c.instructions).sum()
}

/// The second NIC (CPU 1's) at `rate` frames/s of `bytes`, with `fields`.
fn second(rate: f64, bytes: u32, fields: &str) -> String {
    format!("nics.others=[{{process = \"poisson\", rate_per_s = {rate:?}, packet_bytes = {bytes}, link_mbps = 1000.0, irq_thread = 1, {fields}}}]")
}

/// Frames in = delivered + dropped + in flight, counted by hand from the
/// metrics (the report's own law checks it too).
fn conserved(r: &Report) {
    let out = ["rx_delivered", "rx_dropped_nic", "rx_dropped_wire", "rx_dropped_software", "rx_dropped_backlog", "rx_in_flight"];
    assert_eq!(m(r, "rx_offered"), out.iter().map(|k| m(r, k)).sum::<f64>());
}

/// CPU 0's work is code (its bins count the program's instructions), CPU
/// 1's the abstract kernel's (no instruction, its cycles in the bin of the
/// path its NIC takes); every frame of the second NIC is taken by the
/// abstract driver, and the first NIC's are the program's.
#[test]
fn each_cpu_runs_its_own_kernel_and_bins_its_cycles() {
    for (path, bin) in [("", Bin::BottomHalf), ("irq_path = \"linux\"", Bin::BottomHalf), ("irq_path = \"mt\"", Bin::Interrupt)] {
        let r = run(&[SHORT, &second(20000.0, 512, path)]);
        conserved(&r);
        assert_eq!((m(&r, "cpu0_runs_code"), m(&r, "cpu1_runs_code")), (1.0, 0.0));
        assert!(r.code_bins[0][Bin::Interrupt as usize].instructions > 0 && r.code_bins[0][Bin::BottomHalf as usize].instructions > 0, "{path}");
        assert_eq!(code(&r, 1), 0, "{path}: CPU 1 runs no code");
        let (offered, taken) = (m(&r, "nic1_rx_offered"), m(&r, "nic1_rx_taken"));
        assert!(offered > 80.0 && taken >= offered - 1.0, "{path}: {taken} of {offered}");
        // The abstract driver's cost per frame lands in CPU 1's bin of its path.
        assert!(r.bins[1].get(bin) >= taken as u64 * 2228, "{path}: {} cycles for {taken} frames", r.bins[1].get(bin));
        assert_eq!(r.bins[1].get(Bin::User) + r.bins[1].get(Bin::Kernel), 0, "{path}: the application is code's, on CPU 0");
        // The first NIC's frames reach the program's socket on CPU 0.
        assert!(m(&r, "rx_delivered") >= taken + m(&r, "nic0_rx_offered") - 2.0, "{path}");
    }
}

/// Code on the Linux path beside an abstract NIC on NAPI (the NAPI part
/// then built for that NIC alone): the program's top half raises its own
/// bottom half, NAPI polls only the second NIC (once a panic: code's top
/// half took the NAPI part's presence for its own path).
#[test]
fn code_on_the_linux_path_beside_an_abstract_napi_nic() {
    let r = run(&[SHORT, "irq_path.kind=\"linux\"", &second(20000.0, 512, "irq_path = \"napi\"")]);
    conserved(&r);
    let (offered, taken) = (m(&r, "nic1_rx_offered"), m(&r, "nic1_rx_taken"));
    assert!(offered > 80.0 && taken >= offered - 1.0, "{taken} of {offered}");
    assert_eq!(m(&r, "napi_schedules"), m(&r, "nic1_interrupts"), "NAPI serves the second NIC only");
    assert!(m(&r, "nic0_interrupts") > 50.0 && r.code_bins[0][Bin::BottomHalf as usize].instructions > 0);
    assert_eq!(code(&r, 1), 0);
}

/// The two kernels do not reach into each other: the abstract driver's
/// cost moves CPU 1's cycles only; CPU 0's code and bins stay bit for bit.
#[test]
fn the_abstract_kernels_costs_move_only_its_cpu() {
    let a = run(&[SHORT]);
    let b = run(&[SHORT, "driver.isr_rx_done_cycles=6000"]);
    assert_eq!(a.code_bins, b.code_bins);
    assert_eq!(a.bins[0], b.bins[0]);
    assert!(b.bins[1].get(Bin::BottomHalf) > a.bins[1].get(Bin::BottomHalf) + 100 * 3000);
    // The scenario as written (`irqsim run -o`'s config.toml) keeps them.
    let (s, _) = load(&[SHORT, "driver.isr_rx_done_cycles=6000"]).unwrap();
    assert!(s.to_json().contains(r#""isr_rx_done_cycles":6000"#));
    let (s, _) = load(&[SHORT, "code.cpus=[0, 1]"]).unwrap();
    assert!(!s.to_json().contains(r#""driver":"#), "no NIC left to the abstract driver");
}

/// With its stack on, the abstract kernel's frames go up its own IP, UDP
/// and socket layers on its CPU: CPU 1 works each frame's layers more
/// (at least their fixed costs), CPU 0's code and bins do not move, and
/// the abstract NIC's frames reach their socket later.
#[test]
fn the_abstract_kernels_stack_runs_on_its_cpu() {
    // A load CPU 1 keeps up with, layers and all.
    let light = second(4000.0, 512, "queues = 1");
    let a = run(&[SHORT, &light]);
    let b = run(&[SHORT, &light, "stack.enabled=true"]);
    assert_eq!(a.code_bins, b.code_bins);
    assert_eq!(a.bins[0], b.bins[0]);
    let busy = |r: &Report| r.bins[1].get(Bin::BottomHalf) + r.bins[1].get(Bin::Kernel);
    // IP, UDP and socket 3,090 each and the wakeup 5,139 (the defaults), per frame.
    let layers = (3 * 3090 + 5139) as f64 * m(&b, "nic1_rx_taken");
    assert!((busy(&b) - busy(&a)) as f64 >= layers, "{} more cycles for {} frames", busy(&b) - busy(&a), m(&b, "nic1_rx_taken"));
    assert!(m(&b, "latency_max_us") > m(&a, "latency_max_us"));
    conserved(&b);
}

/// The abstract kernel's application (`app.background` on `app.thread`)
/// fills CPU 1's idle cycles at user level and its NIC's interrupts
/// preempt it (a save and restore each, `context_policy = "single"`);
/// CPU 0's code and bins do not move, and no frame is lost to it.
#[test]
fn the_abstract_kernels_application_runs_on_its_cpu() {
    let a = run(&[SHORT]);
    let b = run(&[SHORT, "app.background=true", "app.thread=1"]);
    assert_eq!(a.code_bins, b.code_bins);
    assert_eq!(a.bins[0], b.bins[0]);
    assert_eq!((a.bins[1].get(Bin::User), b.bins[1].get(Bin::Idle)), (0, 0), "CPU 1 had no application, then no idle cycle");
    assert!(a.bins[1].get(Bin::Idle) > 500_000, "{:?}", a.bins[1]);
    assert!(b.bins[1].get(Bin::User) > 500_000, "{:?}", b.bins[1]);
    // Each preemption of the application costs a save and a restore (186 cycles).
    let preempted = (b.bins[1].get(Bin::Overhead) - a.bins[1].get(Bin::Overhead)) as f64 / 186.0;
    assert!(preempted >= 0.9 * m(&b, "nic1_interrupts"), "{preempted} of {} interrupts", m(&b, "nic1_interrupts"));
    assert_eq!(m(&a, "nic1_rx_taken"), m(&b, "nic1_rx_taken"));
    conserved(&b);
}

/// Overload on the abstract kernel's NIC: it drops at its ring, every
/// frame is counted exactly once, and the code CPU still serves its NIC.
#[test]
fn frames_are_counted_once_when_the_abstract_nic_is_overloaded() {
    let r = run(&[SHORT, &second(300000.0, 64, "rx_ring_frames = 64")]);
    conserved(&r);
    let (offered, dropped, taken) = (m(&r, "nic1_rx_offered"), m(&r, "nic1_rx_dropped"), m(&r, "nic1_rx_taken"));
    assert!(dropped > 100.0, "{dropped}");
    assert!(offered - dropped - taken <= 64.0, "at most its ring in flight: {offered} {dropped} {taken}");
    assert!(m(&r, "nic0_rx_offered") > 80.0 && r.code_bins[0][Bin::BottomHalf as usize].instructions > 0);
}

/// The program's interrupt-level activities on CPU 0 are exactly the
/// first NIC's interrupts (its top half on NAPI, its handler on mt and
/// Linux), counted from the timeline's slices.
#[test]
fn the_code_cpus_handler_runs_once_per_interrupt() {
    for (path, label) in
        [("irq_path.kind=\"napi\"", "NIC queue top half (code)"), ("irq_path.kind=\"linux\"", "NIC ISR (code)"), ("irq_path.kind=\"mt\"", "NIC ISR (code)")]
    {
        let r = run_with(&[SHORT, path], Record { timeline: true });
        let trace = r.chrome_trace();
        let events = trace.as_array().or_else(|| trace["traceEvents"].as_array()).expect("trace events");
        let starts = events.iter().filter(|e| e["name"] == label && e["tid"] == 0 && e["ph"] != "E").count();
        assert!(starts > 50, "{path}: {starts}");
        assert_eq!(starts as f64, m(&r, "nic0_interrupts"), "{path}");
        assert!(!events.iter().any(|e| e["name"] == label && e["tid"] != 0), "{path}: no code handler runs on CPU 1");
    }
}

#[test]
fn runs_are_deterministic() {
    let sets = [SHORT, "code.core.memory.model=\"caches\""];
    assert_eq!(run(&sets).to_json(), run(&sets).to_json());
}

/// `code.cpus` naming every CPU is the machine without the key, bit for
/// bit, but for the per-CPU kernel metrics.
#[test]
fn every_cpu_named_is_the_key_absent() {
    let others = "nics.others=[{process = \"poisson\", rate_per_s = 20000.0, packet_bytes = 512, link_mbps = 1000.0, irq_thread = 1}]";
    let named = run(&[SHORT, others, "code.cpus=[0, 1]"]).to_json();
    let (s, path) = load(&[SHORT, others]).unwrap();
    let mut s = s;
    s.code.cpus = None;
    let absent = simulate(&s, path.parent().unwrap(), Record::default()).unwrap().to_json();
    let mut named = named;
    let metrics = named["metrics"].as_object_mut().unwrap();
    assert_eq!((metrics.remove("cpu0_runs_code"), metrics.remove("cpu1_runs_code")), (Some(1.0.into()), Some(1.0.into())));
    assert_eq!(named, absent);
}

/// What cannot be: each refused with one line naming the key.
#[test]
fn refusals_name_the_key() {
    let smt = ["cpu.threads=4", "code.core.core.cores=2", "code.core.core.threads=2"];
    let cases: &[(&[&str], &str)] = &[
        (&["code.cpus=[]"], "`code.cpus`: no CPU runs the program"),
        (&["code.cpus=[0, 0]"], "`code.cpus`: CPU 0 is named twice"),
        (&["code.cpus=[2]"], "`code.cpus`: CPU 2 does not exist"),
        (&[smt[0], smt[1], smt[2]], "`code.cpus`: core 0's hardware threads 0..=1 would run two kernels"),
        (&["code.cpus=[1]"], "`code.app_thread`: the application"),
        (&["code.cpus=[1]", "code.app_thread=1"], "`nic.irq_thread`: the first NIC's interrupt"),
        (&["code.tx_irq_thread=1"], "`code.tx_irq_thread`"),
        (
            &["cpu.threads=3", "rss.kind=\"toeplitz\"", "rss.queues=2"],
            "`rss.queues`: the first NIC's interrupt (its rings and registers are the program's memory) runs on CPU 1",
        ),
        (&["cpu.threads=3", "rss.kind=\"toeplitz\"", "rss.queues=1", "rss.rps_cpus=2", "nics.others=[]"], "`rss.rps_cpus`: an RPS backlog's poll"),
        (
            &["cpu.threads=3", "nics.others=[{process=\"poisson\", rate_per_s=1000.0, packet_bytes=256, irq_thread=2, queues=2}]"],
            "`nics.others[0].irq_thread`: its queues' interrupts go to CPUs [2, 0]",
        ),
        (
            &["nics.others=[{process=\"poisson\", rate_per_s=1000.0, packet_bytes=256, irq_thread=0, irq_path=\"mt\"}]"],
            "`nics.others[0].irq_path`: its interrupts go to a CPU that runs kernel code",
        ),
        (
            &["rss.kind=\"toeplitz\"", "rss.queues=1", "rss.rps_cpus=1"],
            "`rss.rps_cpus`: the RPS backlogs are the program's, and nics.others[0]'s driver is the abstract kernel's",
        ),
        (&["app.background=true"], "`app.thread`: the abstract kernel's application (`app.background`) runs on CPU 0, which runs the program"),
        (&["app.thread=1"], "`app.thread`: beside kernel code the abstract kernel's application runs only with `app.background = true`"),
        (&["app.thread=1", "app.background=false"], "`app.thread`: beside kernel code"),
    ];
    for (sets, want) in cases {
        let sets: Vec<&str> = [SHORT].iter().chain(sets.iter()).copied().collect();
        match load(&sets) {
            Ok(_) => panic!("{sets:?} loaded; expected {want}"),
            Err(e) => assert!(e.contains(want) && !e.contains('\n'), "{sets:?}: {e}"),
        }
    }
    // A code NIC's own RSS needs a driver that serves it (rx_nics gives one ring).
    let (s, path) =
        load(&[SHORT, "code.cpus=[0, 1]", "nics.others=[{process=\"poisson\", rate_per_s=1000.0, packet_bytes=256, irq_thread=1, queues=2}]"]).unwrap();
    let e = simulate(&s, path.parent().unwrap(), Record::default()).err().expect("refused").to_string();
    assert!(e.contains("`nics.others[0].queues`: ../../programs/system/rx_nics.elf's driver gives another NIC 1 receive queue(s)") && !e.contains('\n'), "{e}");
    // Without `code.cpus` the abstract driver's keys mean nothing beside code.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/code/two-nics.toml");
    let e = Scenario::from_file(&path, &[parse_override("driver.isr_rx_done_cycles=5000").unwrap()]).unwrap_err().to_string();
    assert!(e.contains("`driver.isr_rx_done_cycles`: the kernel's software is code"), "{e}");
    let e = Scenario::from_file(&path, &[parse_override("app.background=true").unwrap()]).unwrap_err().to_string();
    assert!(e.contains("`app.background`: the kernel's software is code (`code.program`) on every CPU, and its application is the program's"), "{e}");
    // With `code.cpus` but no NIC on an abstract CPU they would change nothing.
    let e = load(&[SHORT, "nics.others=[]", "driver.isr_rx_done_cycles=5000"]).unwrap_err();
    assert!(e.contains("`driver.isr_rx_done_cycles`: the kernel's software is code (`code.program`) on every CPU a NIC interrupts"), "{e}");
}

/// Each kernel with its own NIC's RSS: on three CPUs the abstract kernel
/// drives a NIC of two queues on CPUs 1 and 2 and the program (rx_nics_rss,
/// which numbers every NIC's queues as the machine does) a third NIC after
/// it on CPU 0. Each NIC's frames reach its own driver: the third NIC's
/// are all taken by the program (none lost to a misnumbered ring), the
/// second's spread over its two queues and CPUs. rx_nics, which numbers one
/// queue per NIC, is refused naming the NIC whose queues would shift it.
#[test]
fn each_kernel_with_its_own_nics_rss() {
    let nics = "nics.others=[{process=\"poisson\", rate_per_s=20000.0, packet_bytes=512, link_mbps=1000.0, irq_thread=1, queues=2}, {process=\"poisson\", rate_per_s=15000.0, packet_bytes=256, link_mbps=1000.0, irq_thread=0}]";
    let r = run(&[SHORT, "cpu.threads=3", nics, "code.program=\"../../programs/system/rx_nics_rss.elf\""]);
    assert!(m(&r, "nic2_rx_taken") >= m(&r, "nic2_rx_offered") - 2.0, "{} of {}", m(&r, "nic2_rx_taken"), m(&r, "nic2_rx_offered"));
    assert!(m(&r, "nic1_rx_taken") >= m(&r, "nic1_rx_offered") - 2.0);
    assert!(m(&r, "nic1_rss_busiest_queue_share") < 0.7);
    assert_eq!((code(&r, 1), code(&r, 2)), (0, 0), "CPUs 1 and 2 run the abstract kernel");
    for t in [1, 2] {
        assert!(r.bins[t].get(Bin::BottomHalf) > 0, "CPU {t} polls a queue of the second NIC");
    }
    let (s, path) = load(&[SHORT, "cpu.threads=3", nics]).unwrap();
    let e = simulate(&s, path.parent().unwrap(), Record::default()).err().expect("refused").to_string();
    assert!(e.contains("`nics.others[0].queues`") && e.contains("a NIC it drives comes after this one") && !e.contains('\n'), "{e}");
}
