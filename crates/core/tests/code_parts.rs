//! Parts beside kernel code (`[code]`): the receiving NIC's interrupt
//! coalescing, several CPUs, other devices on their own controllers. Each
//! test asserts the mechanism's effect on the code's run.

use irqsim_core::cpu::Bin;
use irqsim_core::{Record, Report, Scenario, parse_override, simulate};
use std::path::Path;

fn run(sets: &[&str]) -> Report {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios");
    let mut all = vec!["run.duration_ms=20"];
    all.extend_from_slice(sets);
    let o: Vec<_> = all.iter().map(|s| parse_override(s).unwrap()).collect();
    let s = Scenario::from_file(&dir.join("code/rx-min.toml"), &o).unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    let r = simulate(&s, &dir.join("code"), Record::default()).unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r.check_invariants().unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    r
}

fn m(r: &Report, key: &str) -> f64 {
    r.metric(key).unwrap_or_else(|| panic!("no metric {key}"))
}

/// rx-frames: one interrupt per 8 frames (the rest wait for the count);
/// rx-usecs alone: every interrupt is the timer's, and the first frame of
/// each batch waits the whole 100 µs.
#[test]
fn the_nic_of_kernel_code_coalesces() {
    let plain = run(&[]);
    let frames = run(&["coalesce.rx_frames=8", "coalesce.rx_usecs=1000"]);
    let timer = run(&["coalesce.rx_frames=0", "coalesce.rx_usecs=100"]);
    assert!(m(&plain, "interrupts") > 0.9 * m(&plain, "rx_offered"), "one interrupt per frame without coalescing");
    assert!(m(&frames, "coalesce_frame_interrupts") >= m(&frames, "rx_offered") / 8.0 - 2.0);
    assert!(m(&frames, "interrupts") <= m(&frames, "rx_offered") / 8.0 + 2.0, "{}", m(&frames, "interrupts"));
    assert_eq!(m(&timer, "interrupts"), m(&timer, "coalesce_timer_interrupts"));
    assert!(m(&timer, "latency_max_us") >= 100.0 && m(&plain, "latency_max_us") < 100.0);
    assert!(m(&timer, "interrupts") < m(&timer, "rx_offered") / 1.5);
    // Fewer interrupts, fewer interrupt-level instructions.
    assert!(m(&frames, "code_interrupt_instructions") < m(&plain, "code_interrupt_instructions") / 2.0);
}

/// Two CPUs: code's cores follow `cpu.threads` (one single-threaded core
/// each) when `[code.core.core]` does not say otherwise; the NIC's handler
/// runs on thread 1, the application on thread 0.
#[test]
fn kernel_code_on_two_cpus() {
    let r = run(&["cpu.threads=2", "nic.irq_thread=1"]);
    assert!(r.bins[1].get(Bin::Interrupt) > 0 && r.bins[0].get(Bin::Interrupt) == 0);
    assert!(r.bins[0].get(Bin::User) > 0);
    assert!(m(&r, "rx_delivered") > 0.9 * m(&r, "rx_offered"));
}

/// The code's NIC on MSI-X, a disk on the IO-APIC: both serviced, the
/// disk's handler an abstract one beside the code's.
#[test]
fn kernel_code_beside_a_device_on_another_controller() {
    let r = run(&["intc.kind=\"msix\"", "sources.others=[{rate_per_s = 2000.0, isr_cycles = 3000, intc = \"ioapic\"}]"]);
    assert_eq!(m(&r, "source0_serviced"), m(&r, "interrupts"));
    assert!(m(&r, "source1_serviced") > 20.0);
}

/// DIM with kernel code: it samples where code's driver enables its
/// receive cause again (rx_min's net_rx_action, its napi_complete_done),
/// and moves the coalescing profile as the load asks.
#[test]
fn dim_moves_the_code_nics_profile() {
    let r = run(&["coalesce.adaptive_rx=true", "run.duration_ms=50"]);
    assert!(m(&r, "dim_decisions") > 0.0 && m(&r, "dim_profile_changes") > 0.0);
    assert!(m(&r, "interrupts") < 0.6 * m(&r, "rx_offered"), "DIM's profiles coalesce: {}", m(&r, "interrupts"));
}

/// Code's own critical sections (rx_min's spin_lock_irqsave around its
/// buffer pool and socket queue, four per frame): with the masking part
/// (`masking.code_sections`), the Luna88k's costs (Table 1: a 96-cycle
/// pair) under conventional protection, less under optimistic; an
/// interrupt inside a section is held (conventional) or deferred
/// (optimistic), and every frame still arrives.
#[test]
fn kernel_code_sections_under_either_scheme() {
    let load = "workload.rate_per_s=60000";
    let conv = run(&[load, "masking.code_sections=true"]);
    let opt = run(&[load, "masking.code_sections=true", "masking.scheme=\"optimistic\""]);
    let per = |r: &Report| m(r, "masking_cycles_per_frame");
    assert!(per(&conv) >= 4.0 * 96.0, "four sections a frame at 96 cycles a pair: {}", per(&conv));
    assert!(per(&opt) < per(&conv) / 1.5, "optimistic {} vs conventional {}", per(&opt), per(&conv));
    assert!(m(&conv, "interrupts_held") > 0.0 && m(&conv, "interrupts_deferred") == 0.0);
    assert!(m(&opt, "interrupts_deferred") > 0.0 && m(&opt, "interrupts_held") == 0.0);
    for r in [&conv, &opt] {
        assert_eq!(m(r, "rx_delivered") + m(r, "rx_dropped_nic") + m(r, "rx_dropped_software") + m(r, "rx_in_flight"), m(r, "rx_offered"));
    }
}

/// Code's sections take the masking part's scheme under every workload
/// that drives code, not only open arrivals (they were refused with a
/// flood, a trace, a script or a synthetic load).
#[test]
fn kernel_code_sections_under_every_workload() {
    let flood = "kind = \"flood\"\ndirection = \"rx\"\npacket_bytes = 512";
    let synthetic = "kind = \"synthetic\"\nrx_mbps = 8.6\npacket_interrupts_per_s = 1080\nsyscalls_per_s = 5000\ntx_share = 0.0";
    for (name, w) in [("flood", flood), ("synthetic", synthetic)] {
        let path = with_workload(&format!("sections-{name}"), &format!("{w}\n[masking]\ncode_sections = true"));
        let r = run_file(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(m(&r, "masking_cycles_per_frame") >= 4.0 * 96.0, "{name}: {}", m(&r, "masking_cycles_per_frame"));
        assert!(m(&r, "rx_delivered") > 10.0, "{name}");
    }
}

/// Without the masking part the sections still mask (at the cost of their
/// own instructions): on the bare wire the NIC's interrupt waits for the
/// section's end.
#[test]
fn kernel_code_sections_mask_on_the_bare_wire() {
    let r = run(&["workload.rate_per_s=60000"]);
    assert!(m(&r, "interrupts_held") > 0.0);
    assert_eq!(m(&r, "masking_cycles"), 0.0);
}

const NAPI: &str = "irq_path.kind=\"napi\"";
/// An overload for rx_min's 200 MHz core (a frame every 10 µs).
const FLOOD: &str = "workload.rate_per_s=100000";

fn conserved(r: &Report) {
    let out = m(r, "rx_delivered") + m(r, "rx_dropped_nic") + m(r, "rx_dropped_software") + m(r, "rx_in_flight") + m(r, "rx_dropped_wire");
    assert_eq!(out, m(r, "rx_offered"));
}

/// NAPI with code: the program's top half asks for a poll (one schedule
/// per interrupt), and the NAPI part calls the program's poll with the
/// weight as its budget and counts what it returns. A poll that used its
/// whole budget stays scheduled (`napi_not_done`), one that took less
/// completed; under overload an interrupt serves several frames.
#[test]
fn napi_budgets_the_programs_polls() {
    let napi = run(&[NAPI, FLOOD, "napi.weight=4"]);
    assert_eq!(m(&napi, "napi_max_poll_frames"), 4.0, "a poll takes at most the weight");
    assert!(m(&napi, "napi_not_done") > 100.0 && m(&napi, "napi_completes") > 0.0);
    assert_eq!(m(&napi, "napi_polls"), m(&napi, "napi_not_done") + m(&napi, "napi_completes"));
    assert_eq!(m(&napi, "napi_schedules"), m(&napi, "interrupts"));
    let taken = m(&napi, "rx_delivered") + m(&napi, "rx_dropped_software");
    assert!(taken > 1.5 * m(&napi, "interrupts"), "{taken} frames, {} interrupts", m(&napi, "interrupts"));
    assert!(m(&napi, "code_bottom_half_instructions") > 0.0 && m(&napi, "code_interrupt_instructions") > 0.0);
    conserved(&napi);
}

/// Threaded NAPI with code: the thread polls until its list is empty, with
/// no netdev budget, so where NET_RX with a budget of 2 frames squeezes its
/// runs, the thread never does.
#[test]
fn threaded_napi_runs_the_programs_polls_without_squeezes() {
    let softirq = run(&[NAPI, FLOOD, "napi.weight=2", "napi.budget=2"]);
    let threaded = run(&[NAPI, FLOOD, "napi.weight=2", "napi.budget=2", "napi.threaded=true"]);
    assert!(m(&softirq, "napi_time_squeezes") > 100.0);
    assert_eq!(m(&threaded, "napi_time_squeezes"), 0.0);
    assert!(m(&threaded, "napi_max_run_frames") > 2.0);
    conserved(&threaded);
}

/// napi_complete_done is the NAPI part's: with `defer_hard_irqs`, the
/// program's completion answers 0 and the program leaves its interrupt
/// masked, and the timer polls again, so fewer interrupts come.
#[test]
fn deferred_completions_keep_the_programs_interrupt_masked() {
    let plain = run(&[NAPI]);
    let defer = run(&[NAPI, "napi.defer_hard_irqs=2", "napi.gro_flush_timeout_ns=20000"]);
    assert!(m(&defer, "napi_deferred") > 100.0 && m(&plain, "napi_deferred") == 0.0);
    assert!(m(&defer, "interrupts") < 0.7 * m(&plain, "interrupts"), "{} vs {}", m(&defer, "interrupts"), m(&plain, "interrupts"));
    assert!(m(&defer, "napi_schedules") > m(&defer, "interrupts"), "the timer schedules polls too");
    conserved(&defer);
}

/// Busy polling with code: a recv that finds the socket empty polls the
/// queue with the program's own poll before it sleeps; preferring busy
/// polling (with deferrals) the interrupt stays masked and the receiver
/// takes most frames itself.
#[test]
fn the_programs_recv_busy_polls() {
    let busy = run(&[NAPI, "napi.busy_poll_usecs=50"]);
    let prefer = run(&[NAPI, "napi.busy_poll_usecs=50", "napi.prefer_busy_poll=true", "napi.defer_hard_irqs=2", "napi.gro_flush_timeout_ns=200000"]);
    assert!(m(&busy, "napi_busy_poll_frames") > 20.0 && m(&busy, "napi_busy_poll_sleeps") > 0.0);
    assert!(m(&prefer, "interrupts") < 0.05 * m(&busy, "interrupts"), "{} vs {}", m(&prefer, "interrupts"), m(&busy, "interrupts"));
    assert!(m(&prefer, "napi_busy_poll_frames") > 0.5 * m(&prefer, "rx_delivered"));
    // The busy polls are kernel work on the application's thread.
    assert!(m(&busy, "code_kernel_instructions") > m(&run(&[NAPI]), "code_kernel_instructions"));
    for r in [&busy, &prefer] {
        conserved(r);
    }
}

/// DIM on the NAPI path with code: it samples where the program's poll,
/// told by napi_complete_done, enables its queue's interrupt again.
#[test]
fn dim_samples_the_programs_completions() {
    let r = run(&[NAPI, "coalesce.adaptive_rx=true", "run.duration_ms=50"]);
    assert!(m(&r, "dim_decisions") > 0.0 && m(&r, "dim_profile_changes") > 0.0);
    assert!(m(&r, "interrupts") < 0.9 * m(&r, "rx_offered"));
}

const RSS: [&str; 5] = [NAPI, "intc.kind=\"msix\"", "rss.kind=\"toeplitz\"", "rss.queues=4", "cpu.threads=2"];

/// RSS with code: each queue has its own ring, vector and NAPI instance;
/// vector k goes to CPU k mod 2, so both CPUs run top halves and polls,
/// and each queue's interrupts are its own.
#[test]
fn rss_queues_each_interrupt_and_poll() {
    let r = run(&RSS);
    for q in 0..4 {
        assert!(m(&r, &format!("rss_queue{q}_frames")) > 50.0, "queue {q}");
        assert!(m(&r, &format!("rss_queue{q}_interrupts")) > 30.0, "queue {q}");
    }
    let sum: f64 = (0..4).map(|q| m(&r, &format!("rss_queue{q}_interrupts"))).sum();
    assert_eq!(sum, m(&r, "interrupts"));
    for t in 0..2 {
        assert!(r.bins[t].get(Bin::Interrupt) > 0 && r.bins[t].get(Bin::BottomHalf) > 0, "thread {t}");
    }
    conserved(&r);
}

/// RPS with code: the polls hand each frame to the backlog of the CPU its
/// flow hashes to, and that CPU's backlog poll (the program's, called by
/// the NAPI part) runs the protocol's part. With one queue on CPU 0, CPU 1
/// polls only with RPS.
#[test]
fn rps_moves_the_programs_protocol_work() {
    let one = [NAPI, "intc.kind=\"msix\"", "rss.kind=\"toeplitz\"", "rss.queues=1", "cpu.threads=2"];
    let plain = run(&one);
    let rps = run(&[&one[..], &["rss.rps_cpus=2"]].concat());
    assert_eq!(plain.bins[1].get(Bin::BottomHalf), 0);
    assert!(rps.bins[1].get(Bin::BottomHalf) > 0);
    assert!(m(&rps, "rps_remote_frames") > 0.3 * m(&rps, "rx_delivered"));
    assert!(m(&rps, "napi_schedules") > 1.5 * m(&plain, "napi_schedules"), "backlogs are scheduled too");
    conserved(&rps);
    // On the bare wire too: the one queue's top half reads its cause
    // register (e1000's single vector), which the vector must not clear.
    for r in [&rps, &run(&[NAPI, "rss.kind=\"toeplitz\"", "rss.queues=1", "cpu.threads=2", "rss.rps_cpus=2"])] {
        assert!(m(r, "rx_delivered") > 0.95 * m(r, "rx_offered"), "{} of {}", m(r, "rx_delivered"), m(r, "rx_offered"));
    }
}

/// A scenario of rx_min's machine (`code/rx-min`'s CPU and program) with
/// `workload` as its `[workload]` table, written under the target dir.
fn with_workload(name: &str, workload: &str) -> std::path::PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let program = root.join("python/irqsim/programs/system/rx_min.elf");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("code-workloads");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.toml"));
    let text = format!(
        "[run]\nduration_ms = 20.0\n[cpu]\nclock_mhz = 200.0\n[nic]\nlink_mbps = 1000.0\n[code]\nprogram = {:?}\n[workload]\n{workload}\n",
        program.display().to_string()
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn run_file(path: &Path) -> Result<Report, String> {
    let s = Scenario::from_file(path, &[]).map_err(|e| e.to_string())?;
    let r = simulate(&s, path.parent().unwrap(), Record::default()).map_err(|e| e.to_string())?;
    r.check_invariants().unwrap();
    conserved(&r);
    Ok(r)
}

/// A pcap of `n` UDP frames of `bytes` to 10.0.0.1, `gap_us` apart.
fn received_pcap(path: &Path, n: u32, gap_us: u32, bytes: usize) {
    let mut out: Vec<u8> = Vec::new();
    for w in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, 1] {
        out.extend_from_slice(&w.to_le_bytes());
    }
    let (ip, udp) = ((bytes - 14) as u16, (bytes - 34) as u16);
    for i in 0..n {
        let t = i * gap_us;
        for w in [t / 1_000_000, t % 1_000_000, bytes as u32, bytes as u32] {
            out.extend_from_slice(&w.to_le_bytes());
        }
        let mut f = vec![0u8; bytes];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[14] = 0x45;
        f[16..18].copy_from_slice(&ip.to_be_bytes());
        f[22] = 64;
        f[23] = 17;
        f[26..30].copy_from_slice(&[10, 0, 0, 2]);
        f[30..34].copy_from_slice(&[10, 0, 0, 1]);
        f[34..36].copy_from_slice(&5000u16.to_be_bytes());
        f[36..38].copy_from_slice(&9u16.to_be_bytes());
        f[38..40].copy_from_slice(&udp.to_be_bytes());
        out.extend_from_slice(&f);
    }
    std::fs::write(path, out).unwrap();
}

/// Every workload that drives the NIC drives code as it drives the
/// abstract kernel: a closed-loop flood offers its next frame as code
/// finishes one (one frame in software at a time, the CPU never idle); a
/// trace's and a script's received frames land on code's ring, a synthetic
/// load's too; their other system calls cost `app.syscall_cycles` on the
/// application's thread beside code's own recv.
#[test]
fn workloads_drive_code() {
    let flood = run_file(&with_workload("flood", "kind = \"flood\"\ndirection = \"rx\"\npacket_bytes = 512")).unwrap();
    assert!(m(&flood, "rx_delivered") > 500.0 && m(&flood, "rx_in_flight") <= 1.0);
    assert_eq!(m(&flood, "idle_share"), 0.0, "the closed loop keeps the CPU busy");

    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("code-workloads");
    std::fs::create_dir_all(&dir).unwrap();
    received_pcap(&dir.join("rx.pcap"), 200, 50, 600);
    let trace =
        run_file(&with_workload("trace", &format!("kind = \"trace\"\npcap = {:?}\nhost = \"10.0.0.1\"", dir.join("rx.pcap").display().to_string()))).unwrap();
    // The first frames come while kernel_init still builds the ring.
    assert!(m(&trace, "rx_offered") == 200.0 && m(&trace, "rx_delivered") > 150.0, "{}", m(&trace, "rx_delivered"));

    let synthetic = |syscalls: u32| {
        let w = format!("kind = \"synthetic\"\nrx_mbps = 8.6\npacket_interrupts_per_s = 1080\nsyscalls_per_s = {syscalls}\ntx_share = 0.0");
        run_file(&with_workload(&format!("synthetic-{syscalls}"), &w)).unwrap()
    };
    let (quiet, calls) = (synthetic(0), synthetic(5000));
    assert!(m(&calls, "syscalls") > 50.0 && m(&calls, "rx_delivered") > 10.0);
    let kernel = |r: &Report| r.bins[0].get(Bin::Kernel) as f64;
    assert!(kernel(&calls) - kernel(&quiet) >= 400.0 * m(&calls, "syscalls") * 0.9, "each call costs app.syscall_cycles");

    let script = "kind = \"script\"\nevents = [{at_cycle = 2000000, action = \"receive\", bytes = 600}, {at_cycle = 2100000, action = \"syscall\"}]";
    let s = run_file(&with_workload("script", script)).unwrap();
    assert_eq!((m(&s, "rx_delivered"), m(&s, "syscalls")), (1.0, 1.0));
}

/// The workload's sends run the program's send entry (`code.send`): a
/// script's `send` events, a synthetic load's transmitted share, a send
/// flood's and the frames a trace's host sent each leave NIC 0's wire, counted once, with
/// the kernel's instructions of each send in the kernel bin. A burst larger
/// than the transmit ring is dropped by the entry (-ENOBUFS) and counted;
/// a frame larger than its buffer too (-EMSGSIZE).
#[test]
fn workloads_send_through_the_programs_send_entry() {
    let events: Vec<String> = (0..40u64).map(|i| format!("{{at_cycle = {}, action = \"send\", bytes = 1000}}", 2_000_000 + i * 20_000)).collect();
    let paced = run_file(&with_workload("sends", &format!("kind = \"script\"\nevents = [{}]", events.join(", ")))).unwrap();
    assert_eq!((m(&paced, "tx_offered"), m(&paced, "tx_sent"), m(&paced, "tx_dropped")), (40.0, 40.0, 0.0));
    assert_eq!(m(&paced, "tx_throughput_mbps"), 40.0 * 1000.0 * 8.0 / 20e-3 / 1e6);
    let quiet = run_file(&with_workload("no-sends", "kind = \"script\"\nevents = [{at_cycle = 2000000, action = \"syscall\"}]")).unwrap();
    assert!(m(&paced, "code_kernel_instructions") > m(&quiet, "code_kernel_instructions") + 40.0 * 100.0, "each send runs the entry");

    // On a 10 Mb/s link (1.2 ms a frame) 30 sends at one instant overrun
    // the 16-descriptor ring (one slot stays empty), and a jumbo frame
    // overruns its buffer; the CPU outruns the wire only that slowly.
    let mut burst: Vec<String> = (0..30).map(|_| "{at_cycle = 2000000, action = \"send\", bytes = 1500}".to_string()).collect();
    burst.push("{at_cycle = 3000000, action = \"send\", bytes = 9000}".into());
    let path = with_workload("burst", &format!("kind = \"script\"\nevents = [{}]", burst.join(", ")));
    std::fs::write(&path, std::fs::read_to_string(&path).unwrap().replace("link_mbps = 1000.0", "link_mbps = 10.0")).unwrap();
    let full = run_file(&path).unwrap();
    let (sent, dropped, queued) = (m(&full, "tx_sent"), m(&full, "tx_dropped"), m(&full, "tx_in_flight"));
    assert!(dropped >= 30.0 - 15.0 + 1.0 && sent + queued <= 15.0 && sent > 5.0, "{sent} sent, {dropped} dropped, {queued} queued");

    let synthetic = "kind = \"synthetic\"\nrx_mbps = 4.3\npacket_interrupts_per_s = 1080\nsyscalls_per_s = 0\ntx_share = 0.5\ntx_packet_bytes = 800";
    let mixed = run_file(&with_workload("tx-share", synthetic)).unwrap();
    assert!(m(&mixed, "tx_sent") > 5.0 && m(&mixed, "rx_delivered") > 5.0, "both directions");

    // A send flood is the application: its loop sends as each send returns,
    // and the program's own application does not run.
    let flood = run_file(&with_workload("tx-flood", "kind = \"flood\"\ndirection = \"tx\"\npacket_bytes = 1000")).unwrap();
    assert!(m(&flood, "tx_sent") > 500.0 && m(&flood, "tx_dropped") == 0.0, "{}", m(&flood, "tx_sent"));
    assert_eq!(m(&flood, "code_user_instructions"), 0.0);

    let loopback = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/traces/loopback-stream.pcap");
    let trace =
        run_file(&with_workload("sent-frames", &format!("kind = \"trace\"\npcap = {:?}\nhost = \"127.0.0.1\"", loopback.display().to_string()))).unwrap();
    assert!(m(&trace, "tx_offered") > 0.0 && m(&trace, "tx_sent") > 0.0);
}

/// A program without the send entry stops at the workload's first send
/// with one line; the workloads with no NIC are refused.
#[test]
fn what_code_cannot_send_is_refused() {
    let path = with_workload("no-entry", "kind = \"script\"\nevents = [{at_cycle = 2000000, action = \"send\", bytes = 100}]");
    let text = std::fs::read_to_string(&path).unwrap().replace("[code]\n", "[code]\nsend = \"no_such_entry\"\n");
    std::fs::write(&path, text).unwrap();
    let e = run_file(&path).err().expect("no entry, no send");
    assert!(e.contains("no send entry (`code.send`)") && !e.contains('\n'), "{e}");
    for (name, w, key) in [("exerciser", "kind = \"exerciser\"", "code.program"), ("null-rpc", "kind = \"null_rpc\"", "code.program")] {
        let e = run_file(&with_workload(name, w)).err().unwrap_or_else(|| panic!("{name} runs"));
        assert!(e.contains(key) && !e.contains('\n'), "{name}: {e}");
    }
}
