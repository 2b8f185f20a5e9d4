//! Other NICs (`[[nics.others]]`) beside kernel code: each is one of code's
//! NIC register sets (NIC `k` for the `k`-th other), its frames land in the
//! ring the program's driver gave it, its interrupt goes through its own
//! controller input to the program's handler for it (`code.other_isr`, or
//! the NAPI top half of its queue), and the driver (rx_nics: rx_min.c built
//! with -DRX_NICS) delivers its frames to the one socket. Every run checks
//! frames in = dropped + held + taken per NIC and in total.

mod common;

use common::{load, m};
use irqsim_core::cpu::Bin;
use irqsim_core::{Record, Report, Scenario, parse_override, simulate};
use std::path::Path;

const TWO: &str = "code/two-nics";
const NAPI: &str = "irq_path.kind=\"napi\"";
/// The first NIC's first frame after the run: only the others offer frames.
const FIRST_SILENT: &str = "workload.first_ns=1e9";

/// The bundled two-NIC code scenario with `sets`, its invariants checked.
fn run(sets: &[&str]) -> Report {
    common::run(TWO, sets)
}

/// Instructions code ran in `bin` on thread `t`.
fn code(r: &Report, t: usize, bin: Bin) -> u64 {
    r.code_bins[t][bin as usize].instructions
}

/// `nics.others` with a NIC of each item's fields, and the bundled
/// scenario's process, size and link where an item does not set them.
fn others(list: &[&str]) -> String {
    let base = [("process", "\"poisson\""), ("packet_bytes", "256"), ("link_mbps", "1000.0")];
    let items: Vec<String> = list
        .iter()
        .map(|f| {
            let mut fields: Vec<String> = base.iter().filter(|(k, _)| !f.contains(&format!("{k} ="))).map(|(k, v)| format!("{k} = {v}")).collect();
            fields.push(f.to_string());
            format!("{{{}}}", fields.join(", "))
        })
        .collect();
    format!("nics.others=[{}]", items.join(", "))
}

/// The second NIC's frames reach the application through the program's
/// driver: with the first NIC silent, every frame delivered is its, taken
/// off its ring by the driver, and its interrupts ran the program's
/// handler for it (`nic_other_isr`) on CPU 1, through its IO-APIC pin.
#[test]
fn the_other_nics_frames_are_delivered_by_the_programs_driver() {
    let r = run(&[FIRST_SILENT]);
    let (offered, taken) = (m(&r, "nic1_rx_offered"), m(&r, "nic1_rx_taken"));
    assert_eq!(m(&r, "nic0_rx_offered"), 0.0);
    assert!(offered > 200.0, "{offered}");
    assert_eq!(m(&r, "rx_delivered"), taken, "every frame delivered is the second NIC's");
    assert!(taken >= offered - 2.0, "{taken} of {offered}: below the knee at most a frame is lost or held");
    assert_eq!(m(&r, "nic1_interrupts"), m(&r, "source1_serviced"), "its interrupts come through its own pin");
    assert_eq!(m(&r, "nic0_interrupts"), 0.0);
    assert!(code(&r, 1, Bin::Interrupt) > 0 && code(&r, 1, Bin::BottomHalf) > 0, "CPU 1 runs its handler and bottom half");
    assert_eq!(code(&r, 0, Bin::Interrupt), 0, "nothing interrupts CPU 0");
    // The same NIC to CPU 0: CPU 1 runs no code at all.
    let r0 = run(&[FIRST_SILENT, &others(&["intc = \"ioapic\", line = 16, irq_thread = 0, rate_per_s = 15000.0"])]);
    assert!(code(&r0, 0, Bin::Interrupt) > 0);
    assert_eq!(r0.code_bins[1].iter().map(|c| c.instructions).sum::<u64>(), 0);
    assert_eq!(m(&r0, "rx_delivered"), m(&r0, "nic1_rx_taken"));
}

/// Both NICs at once, each on its own controller and CPU, on the Linux
/// path (the bottom half drains the NICs its CPU was raised for) and the
/// mt path; each NIC's interrupts are its own source's.
#[test]
fn two_nics_on_two_cpus_each_through_its_own_controller() {
    for path in ["irq_path.kind=\"linux\"", "irq_path.kind=\"mt\""] {
        let r = run(&[path]);
        let (first, second) = (m(&r, "nic0_rx_offered"), m(&r, "nic1_rx_offered"));
        assert!(first > 200.0 && second > 200.0, "{path}: {first} {second}");
        assert!(m(&r, "rx_delivered") >= first + second - 4.0, "{path}: {} of {}", m(&r, "rx_delivered"), first + second);
        assert_eq!(m(&r, "source0_serviced"), m(&r, "nic0_interrupts"), "{path}");
        assert_eq!(m(&r, "source1_serviced"), m(&r, "nic1_interrupts"), "{path}");
        assert!(m(&r, "nic1_interrupts") > 100.0, "{path}");
        assert!(code(&r, 0, Bin::Interrupt) > 0 && code(&r, 1, Bin::Interrupt) > 0, "{path}");
    }
}

/// Both NICs on one level-triggered IO-APIC pin of one CPU: the handler
/// chain reads each NIC's status and calls the program's handler for each
/// that asserts it (`nic_isr`, then `nic_other_isr`), on every path.
#[test]
fn two_nics_share_one_pin() {
    let shared = others(&["intc = \"ioapic\", line = 16, irq_thread = 0, rate_per_s = 15000.0"]);
    for path in ["irq_path.kind=\"linux\"", "irq_path.kind=\"mt\"", NAPI] {
        let r = run(&[path, "intc.kind=\"ioapic\"", "cpu.threads=1", &shared]);
        assert!(m(&r, "nic0_interrupts") > 100.0 && m(&r, "nic1_interrupts") > 100.0, "{path}");
        assert_eq!(m(&r, "source1_serviced"), m(&r, "nic1_interrupts"), "{path}");
        assert!(m(&r, "nic1_rx_taken") >= m(&r, "nic1_rx_offered") - 2.0, "{path}");
    }
}

/// On the NAPI path each NIC is a NAPI instance: the program's top half and
/// poll serve the second NIC's queue (numbered after the first NIC's four
/// RSS queues), and threaded NAPI and busy polling serve it too.
#[test]
fn napi_polls_each_nics_ring() {
    let r = run(&[NAPI, FIRST_SILENT]);
    assert!(m(&r, "napi_polls") > 100.0);
    assert_eq!(m(&r, "rx_delivered"), m(&r, "nic1_rx_taken"));
    assert!(m(&r, "nic1_rx_taken") > 200.0);
    assert!(code(&r, 1, Bin::BottomHalf) > 0, "its poll runs on CPU 1");
    let rss = run(&[NAPI, "intc.kind=\"msix\"", "rss.kind=\"toeplitz\"", "rss.queues=4"]);
    assert!((0..4).all(|q| m(&rss, &format!("rss_queue{q}_frames")) > 0.0), "the first NIC's four queues");
    assert!(m(&rss, "nic1_rx_taken") > 200.0, "and the second NIC's, the fifth instance");
    let threaded = run(&[NAPI, "napi.threaded=true", FIRST_SILENT]);
    assert!(m(&threaded, "napi_thread_runs") > 0.0 && m(&threaded, "napi_softirq_runs") == 0.0);
    assert!(m(&threaded, "nic1_rx_taken") > 200.0);
    // The application reads on CPU 0 and busy-polls the queue its last frame came from.
    let busy = run(&[NAPI, "napi.busy_poll_usecs=50", FIRST_SILENT, &others(&["intc = \"ioapic\", line = 16, irq_thread = 0, rate_per_s = 15000.0"])]);
    assert!(m(&busy, "napi_busy_poll_frames") > 0.0, "busy polling takes the second NIC's frames");
    assert_eq!(m(&busy, "rx_delivered"), m(&busy, "nic1_rx_taken"));
}

/// The second NIC's own coalescing holds its interrupts back (a timer of
/// 50 µs alone), and its own DIM decides on the NAPI path. (The first
/// NIC's interrupts may move a little: with code both NICs' frames meet in
/// one socket and one buffer pool.)
#[test]
fn the_other_nic_coalesces_and_tunes_its_own_interrupts() {
    let nic = "intc = \"ioapic\", line = 16, irq_thread = 1, rate_per_s = 15000.0";
    let plain = run(&[]);
    let held = run(&[&others(&[&format!("{nic}, rx_usecs = 50, rx_frames = 0")])]);
    assert!(m(&held, "nic1_interrupts") < 0.7 * m(&plain, "nic1_interrupts"), "{} vs {}", m(&held, "nic1_interrupts"), m(&plain, "nic1_interrupts"));
    assert!(m(&held, "nic1_coalesce_interrupts") > 0.0);
    let dim = run(&[NAPI, "run.duration_ms=60", &others(&[&format!("{nic}, adaptive_rx = true")])]);
    assert!(m(&dim, "nic1_dim_decisions") > 0.0);
}

/// Overloaded on the NAPI path (a poll takes at most its weight, so the
/// ring fills), the second NIC drops at its ring (its driver gives it 15
/// descriptors), counted as its own drops, and stays polled (one
/// interrupt); the first NIC drops at most its frame before the driver's
/// init.
#[test]
fn an_overloaded_other_nic_drops_at_its_own_ring() {
    let r = run(&[NAPI, &others(&["intc = \"ioapic\", line = 16, irq_thread = 1, rate_per_s = 1000000.0, packet_bytes = 64, link_mbps = 10000.0"])]);
    assert!(m(&r, "nic1_rx_dropped") > 1000.0, "{}", m(&r, "nic1_rx_dropped"));
    assert!(m(&r, "nic1_interrupts") < 10.0, "{}", m(&r, "nic1_interrupts"));
    let first_drops = m(&r, "rx_dropped_nic") + m(&r, "rx_dropped_wire") - m(&r, "nic1_rx_dropped");
    assert!(first_drops <= 1.0, "{first_drops}");
}

/// Nine NICs beside the first on two CPUs (NICs 8 and 9 past the receive
/// queues' register blocks), on the Linux and NAPI paths: each one's
/// frames reach the driver.
#[test]
fn nine_other_nics_each_served() {
    let list: Vec<String> = (0..9).map(|k| format!("intc = \"msi\", irq_thread = {}, rate_per_s = 4000.0", k % 2)).collect();
    let list: Vec<&str> = list.iter().map(String::as_str).collect();
    for path in ["irq_path.kind=\"linux\"", NAPI] {
        let r = run(&[path, "intc.kind=\"msi\"", &others(&list)]);
        assert_eq!(m(&r, "nics"), 10.0);
        for k in 1..=9 {
            assert!(m(&r, &format!("nic{k}_rx_taken")) > 40.0, "{path}: NIC {k}: {}", m(&r, &format!("nic{k}_rx_taken")));
        }
    }
}

/// The Linux-shaped kernel serves other NICs too (kernel/host-nics.elf:
/// programs/kernel/nics.c): on the SMT study's netperf receiver a second
/// NIC interrupts the other hardware thread through an MSI; on the Linux
/// and NAPI paths its frames reach the socket beside the first NIC's (only
/// the frames before kernel_init armed the rings are dropped).
#[test]
fn the_kernels_driver_serves_every_nic() {
    for path in ["irq_path.kind=\"linux\"", NAPI] {
        let sets = [
            path,
            "code.program=\"../../programs/kernel/host-nics.elf\"",
            "nics.others=[{intc = \"msi\", irq_thread = 1, rate_per_s = 40000.0, packet_bytes = 1000, link_mbps = 1000.0}]",
        ];
        let r = netperf(&sets);
        assert!(m(&r, "nic1_rx_taken") > 100.0, "{path}: {}", m(&r, "nic1_rx_taken"));
        assert_eq!(m(&r, "rx_dropped_software"), 0.0, "{path}");
        assert_eq!(m(&r, "rx_delivered") + m(&r, "rx_in_flight"), m(&r, "rx_offered") - m(&r, "rx_dropped_nic"), "{path}");
        assert!(m(&r, "nic1_rx_dropped") < 0.1 * m(&r, "nic1_rx_offered"), "{path}: only before its ring was armed");
        assert_eq!(m(&r, "source1_serviced"), m(&r, "nic1_interrupts"), "{path}");
        assert!(code(&r, 1, Bin::Interrupt) > 0, "{path}: its top half runs on thread 1");
    }
}

/// The SMT study's netperf receiver (its Linux-shaped kernel as code) for
/// 3 ms with `sets`, its invariants checked.
fn netperf(sets: &[&str]) -> Report {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/smt-hot-thread");
    let o: Vec<_> = ["run.duration_ms=3"].iter().chain(sets).map(|s| parse_override(s).unwrap()).collect();
    let s = Scenario::from_file(&dir.join("netperf-baseline.toml"), &o).unwrap_or_else(|e| panic!("{e}"));
    let r = simulate(&s, &dir, Record::default()).unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r.check_invariants().unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r
}

/// kernel/host-nics-rss.elf (programs/kernel/nics.c built with -DNICS_RSS)
/// with the first NIC silent and the second NIC's own RSS (`queues`,
/// `flows`, its vectors from CPU `irq_thread` on) on the NAPI path.
fn kernel_own_rss(irq_thread: usize, queues: u32, flows: u32, extra: &[&str]) -> Report {
    let nic = format!(
        "nics.others=[{{intc = \"msix\", irq_thread = {irq_thread}, rate_per_s = 40000.0, packet_bytes = 1000, link_mbps = 1000.0, queues = {queues}, flows = {flows}}}]"
    );
    netperf(&[&[NAPI, "code.program=\"../../programs/kernel/host-nics-rss.elf\"", FIRST_SILENT, &nic], extra].concat())
}

/// The Linux-shaped kernel with other NICs' own RSS queues
/// (host-nics-rss) passes the same checks as rx_nics_rss; frames before
/// its kernel_init armed the rings are dropped (9 of 130), and its timer
/// ticks run 78 instructions at interrupt level on each CPU in 3 ms.
#[test]
fn the_kernels_driver_serves_another_nics_own_rss() {
    spread_by_flow("host-nics-rss", kernel_own_rss, 500, 13.0);
    let bits = |r: &Report| r.metrics.iter().map(|(k, v)| (k.clone(), v.to_bits())).collect::<Vec<_>>();
    assert_eq!(bits(&kernel_own_rss(0, 2, 64, &[])), bits(&kernel_own_rss(0, 2, 64, &[])));
}

/// Same scenario and seed, same numbers bit for bit; another seed moves them.
#[test]
fn runs_are_deterministic() {
    for path in ["irq_path.kind=\"linux\"", NAPI] {
        let bits = |r: &Report| r.metrics.iter().map(|(k, v)| (k.clone(), v.to_bits())).collect::<Vec<_>>();
        let (a, b) = (run(&[path]), run(&[path]));
        assert_eq!(bits(&a), bits(&b), "{path}");
        assert_eq!(a.code_bins, b.code_bins, "{path}");
        let c = run(&[path, "run.seed=7"]);
        assert_ne!(m(&a, "nic1_rx_offered"), m(&c, "nic1_rx_offered"), "{path}");
    }
}

/// A program whose driver serves NIC 0 only, one that gives other NICs one
/// ring each (their own RSS, RPS for their frames), and a key the
/// program's ring replaces, are refused in one line naming the key.
#[test]
fn what_the_program_cannot_serve_is_refused() {
    let refused = |sets: &[&str], key: &str| {
        let (s, path) = load(TWO, sets).unwrap_or_else(|e| panic!("{e}"));
        let e = match simulate(&s, path.parent().unwrap(), Record::default()) {
            Ok(_) => panic!("{sets:?} ran"),
            Err(e) => e.to_string(),
        };
        assert!(!e.contains('\n') && e.contains(key), "{sets:?}: {e}");
    };
    refused(&["code.program=\"../../programs/system/rx_min.elf\""], "`nics.others`: ../../programs/system/rx_min.elf has no `nic_other_isr`");
    refused(&[NAPI, "code.program=\"../../programs/kernel/host.elf\""], "`nics.others`");
    let at_load = |sets: &[&str], key: &str| {
        let e = load(TWO, sets).expect_err("refused at load");
        assert!(!e.contains('\n') && e.contains(key), "{sets:?}: {e}");
    };
    at_load(&[&others(&["intc = \"ioapic\", line = 16, irq_thread = 1, rate_per_s = 1000.0, rx_ring_frames = 8"])], "nics.others[0].rx_ring_frames");
    // rx_nics gives each other NIC one ring and steers only NIC 0's frames.
    let two_queues = others(&["intc = \"msix\", irq_thread = 1, rate_per_s = 1000.0, queues = 2"]);
    refused(
        &[NAPI, &two_queues],
        "`nics.others[0].queues`: ../../programs/system/rx_nics.elf's driver gives another NIC 1 receive queue(s) (it has no nic_other_queues)",
    );
    refused(&[NAPI, "code.program=\"../../programs/kernel/host-nics.elf\"", &two_queues], "`nics.others[0].queues`");
    refused(
        &[NAPI, "rss.kind=\"toeplitz\"", "rss.queues=1", "rss.rps_cpus=2"],
        "`rss.rps_cpus`: ../../programs/system/rx_nics.elf's driver steers only the first NIC's frames",
    );
    at_load(&[&others(&["intc = \"ioapic\", line = 16, irq_thread = 1, rate_per_s = 1000.0, irq_path = \"mt\""])], "nics.others[0].irq_path");
    // The kernel's driver gives the first NIC one ring, and host-nics keeps
    // no RPS backlog: its total of instances (one per NIC) hid both, so the
    // run stopped in a register error, or ran without RPS.
    for (sets, key) in [
        (
            &["rss.kind=\"toeplitz\"", "rss.queues=2"][..],
            "`rss.queues`: ../../programs/kernel/host-nics.elf's driver gives the first NIC 1 receive ring(s) (its nic_first_queues), not 2",
        ),
        (&["rss.kind=\"toeplitz\"", "rss.queues=1", "rss.rps_cpus=2"][..], "`rss.rps_cpus`: ../../programs/kernel/host-nics.elf's driver keeps no RPS backlog"),
    ] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/smt-hot-thread");
        let all: Vec<_> = [NAPI, "code.program=\"../../programs/kernel/host-nics.elf\""].iter().chain(sets).map(|s| parse_override(s).unwrap()).collect();
        let s = Scenario::from_file(&dir.join("netperf-baseline.toml"), &all).unwrap_or_else(|e| panic!("{e}"));
        let e = simulate(&s, &dir, Record::default()).err().unwrap_or_else(|| panic!("{sets:?} ran")).to_string();
        assert!(!e.contains('\n') && e.contains(key), "{sets:?}: {e}");
    }
}

/// rx_nics_rss: rx_min.c built with -DRX_NICS_RSS, whose driver serves
/// other NICs' own RSS queues and RPS for their frames.
const RSS_DRIVER: &str = "code.program=\"../../programs/system/rx_nics_rss.elf\"";

/// The second NIC alone (the first silent) on the NAPI path with its own
/// RSS: `queues` and `flows`, its vectors from CPU `irq_thread` on.
fn own_rss(irq_thread: usize, queues: u32, flows: u32, extra: &[&str]) -> Report {
    let nic = others(&[&format!("intc = \"msix\", irq_thread = {irq_thread}, rate_per_s = 15000.0, queues = {queues}, flows = {flows}")]);
    run(&[&[NAPI, RSS_DRIVER, FIRST_SILENT, &nic], extra].concat())
}

/// Interrupt-level instructions of code on each CPU.
fn top_halves(r: &Report) -> [u64; 2] {
    [code(r, 0, Bin::Interrupt), code(r, 1, Bin::Interrupt)]
}

/// Another NIC's own RSS with kernel code: its frames spread over its two
/// queues by flow (64 flows about evenly, one flow all to one queue), each
/// queue's vector runs the program's top half on its own CPU
/// ((irq_thread + q) mod 2: one flow's queue interrupts one CPU, and moving
/// irq_thread moves it to the other), its DIM decides per queue, and every frame is
/// taken by the driver and delivered (its conservation law, frames in =
/// dropped + held + taken, checked in every run).
#[test]
fn another_nics_own_rss_with_code() {
    spread_by_flow("rx_nics_rss", own_rss, 0, 2.0);
    // Its DIM samples each queue where the driver enables its cause again.
    let nic = others(&["intc = \"msix\", irq_thread = 0, rate_per_s = 15000.0, queues = 2, adaptive_rx = true"]);
    let dim = run(&[NAPI, RSS_DRIVER, "run.duration_ms=60", &nic]);
    assert!(m(&dim, "nic1_dim_decisions") > 0.0 && m(&dim, "nic1_coalesce_interrupts") > 0.0);
    // Both NICs at once, each with RSS (the first's four queues on CPUs 0..3 of four).
    let both = run(&[
        NAPI,
        RSS_DRIVER,
        "cpu.threads=4",
        "intc.kind=\"msix\"",
        "rss.kind=\"toeplitz\"",
        "rss.queues=4",
        &others(&["intc = \"msix\", irq_thread = 2, rate_per_s = 15000.0, queues = 2"]),
    ]);
    assert!((0..4).all(|q| m(&both, &format!("rss_queue{q}_frames")) > 0.0));
    let offered = m(&both, "rx_offered");
    assert!(m(&both, "rx_delivered") >= offered - 4.0, "{} of {offered}", m(&both, "rx_delivered"));
    assert!(m(&both, "nic1_rx_taken") >= m(&both, "nic1_rx_offered") - 2.0);
}

/// The checks of a driver of another NIC's own RSS (`own_rss` runs it):
/// 64 flows spread over two queues and both vectors fire (more than
/// `tick` interrupt-level instructions on each CPU), every frame but the
/// `lost` before the rings were armed is taken and delivered, one flow
/// goes to one queue on one CPU, and irq_thread + 1 moves it.
fn spread_by_flow(driver: &str, own_rss: fn(usize, u32, u32, &[&str]) -> Report, tick: u64, lost: f64) {
    let fired = |r: &Report| top_halves(r).map(|i| i > tick);
    let spread = own_rss(0, 2, 64, &[]);
    assert_eq!(m(&spread, "nic1_rss_queues"), 2.0, "{driver}");
    let share = m(&spread, "nic1_rss_busiest_queue_share");
    assert!(share < 0.65, "{driver}: 64 flows over two queues: {share}");
    assert_eq!(fired(&spread), [true, true], "{driver}: both vectors fire: {:?}", top_halves(&spread));
    assert!(m(&spread, "nic1_rx_taken") >= m(&spread, "nic1_rx_offered") - lost, "{driver}");
    assert_eq!(m(&spread, "rx_delivered"), m(&spread, "nic1_rx_taken"), "{driver}");
    assert_eq!(m(&spread, "nic1_interrupts"), m(&spread, "source1_serviced"), "{driver}: every vector is its source's");
    let one = own_rss(0, 2, 1, &[]);
    assert_eq!(m(&one, "nic1_rss_busiest_queue_share"), 1.0, "{driver}: one flow, one queue");
    let moved = own_rss(1, 2, 1, &[]);
    let (a, b) = (fired(&one), fired(&moved));
    assert!(a[0] != a[1], "{driver}: one queue's vector, one CPU: {:?}", top_halves(&one));
    assert_eq!(b, [a[1], a[0]], "{driver}: irq_thread + 1 moves it to the other CPU: {:?} then {:?}", top_halves(&one), top_halves(&moved));
    assert_eq!(m(&moved, "rx_delivered"), m(&moved, "nic1_rx_taken"), "{driver}");
}

/// RPS over another NIC's frames with kernel code: the poll asks
/// get_rps_cpu of each frame, which hashes the NIC's own flow; with 64
/// flows over two CPUs some go to the other CPU's backlog, whose poll
/// (the program's process_backlog) delivers them; with one flow all go to
/// one CPU. Both drivers that serve other NICs' queues: rx_nics_rss, and
/// the Linux-shaped kernel's host-nics-rss (its backlog's poll hands the
/// skb to IP). The rx_nics driver, which steers only the first NIC's
/// frames, is refused (`what_the_program_cannot_serve_is_refused`).
#[test]
fn rps_steers_another_nics_frames_with_code() {
    let rps = ["rss.kind=\"toeplitz\"", "rss.queues=1", "rss.rps_cpus=2"];
    type Run = fn(usize, u32, u32, &[&str]) -> Report;
    let drivers: [(&str, Run); 2] = [("rx_nics_rss", own_rss), ("host-nics-rss", kernel_own_rss)];
    for (driver, own_rss) in drivers {
        let r = own_rss(0, 1, 64, &rps);
        let (remote, taken) = (m(&r, "rps_remote_frames"), m(&r, "nic1_rx_taken"));
        assert!(remote > 0.2 * taken && remote < 0.8 * taken, "{driver}: {remote} of {taken}");
        assert!(code(&r, 1, Bin::BottomHalf) > 0, "{driver}: CPU 1 polls its backlog");
        assert_eq!(m(&r, "rx_delivered"), taken, "{driver}");
        let one = own_rss(0, 1, 1, &rps);
        let remote = m(&one, "rps_remote_frames");
        assert!(remote == 0.0 || remote == m(&one, "nic1_rx_taken"), "{driver}: one flow, one CPU: {remote}");
    }
}
