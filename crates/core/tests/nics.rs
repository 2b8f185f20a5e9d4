//! Several NICs on one machine (`[[nics.others]]`): each with its own
//! arrivals, wire, buffer, interrupt and NAPI instance, on its own
//! controller and CPU; frames conserved per NIC and in total; every
//! receive path and the NAPI path's options serve every NIC; each NIC's
//! own RSS and RPS over all of them; what is not modelled is refused.

mod common;

use common::{load, m, run};
use irqsim_core::Report;

const TWO: &str = "compose/two-nics";

/// The bundled scenario's second NIC with `changes` (key, value) to its table,
/// as an override (an override sets the whole list).
fn second_nic(changes: &[(&str, &str)]) -> String {
    let mut fields = vec![
        ("intc", "\"ioapic\""),
        ("line", "16"),
        ("irq_thread", "1"),
        ("process", "\"poisson\""),
        ("rate_per_s", "30000.0"),
        ("packet_bytes", "1000"),
        ("link_mbps", "1000.0"),
    ];
    for &(k, v) in changes {
        match fields.iter_mut().find(|f| f.0 == k) {
            Some(f) => f.1 = v,
            None => fields.push((k, v)),
        }
    }
    let fields: Vec<String> = fields.iter().filter(|f| !f.1.is_empty()).map(|(k, v)| format!("{k} = {v}")).collect();
    format!("nics.others=[{{{}}}]", fields.join(", "))
}

/// The bundled scenario: the first NIC on MSI-X to CPU 0, the second on an
/// IO-APIC pin to CPU 1; each NIC's frames all reach the host through its
/// own interrupt source, and CPU 1 polls the second NIC.
#[test]
fn each_nic_interrupts_through_its_own_controller_to_its_own_cpu() {
    let r = run(TWO, &[]);
    assert_eq!(m(&r, "nics"), 2.0);
    let (first, second) = (m(&r, "nic0_rx_offered"), m(&r, "nic1_rx_offered"));
    assert!(first > 1000.0 && second > 1000.0, "{first} {second}");
    assert_eq!(m(&r, "rx_offered"), first + second);
    assert_eq!(m(&r, "rx_delivered"), m(&r, "rx_offered"), "below both NICs' knees nothing is lost");
    assert_eq!(m(&r, "nic1_rx_taken"), second);
    // Source 0 is the first NIC's MSI-X vector, source 1 the second's pin.
    assert_eq!(m(&r, "source0_serviced"), m(&r, "nic0_interrupts"));
    assert_eq!(m(&r, "source1_serviced"), m(&r, "nic1_interrupts"));
    assert!(r.bins[1].get(irqsim_core::cpu::Bin::BottomHalf) > 0, "CPU 1 polls the second NIC");
    // The same run with the second NIC's frames on CPU 0 leaves CPU 1 idle.
    let r0 = run(TWO, &[&second_nic(&[("irq_thread", "0")])]);
    assert_eq!(m(&r0, "thread1_busy_share"), 0.0);
    assert_eq!((m(&r0, "nic1_rx_dropped"), m(&r0, "nic1_rx_taken")), (0.0, m(&r0, "nic1_rx_offered") - 1.0), "one frame still in its ring");
}

/// Overloaded, the second NIC drops at its own buffer and wire while the
/// first loses nothing: drops are per device, and frames in = dropped +
/// held + taken holds for each (checked by every run's invariants).
#[test]
fn an_overloaded_nic_drops_its_own_frames_only() {
    let r = run(TWO, &[&second_nic(&[("rate_per_s", "300000.0"), ("rx_ring_frames", "32"), ("wire_queue_packets", "8")])]);
    assert!(m(&r, "nic1_rx_dropped") > 1000.0, "{}", m(&r, "nic1_rx_dropped"));
    let first_drops = m(&r, "rx_dropped_nic") + m(&r, "rx_dropped_wire") - m(&r, "nic1_rx_dropped");
    assert_eq!(first_drops, 0.0);
}

/// Two NICs sharing one level-triggered IO-APIC pin: the handler chain reads
/// each NIC's status, and each NIC's frames are all delivered.
#[test]
fn two_nics_share_a_legacy_line() {
    let own = second_nic(&[("irq_thread", "0"), ("line", "")]);
    let r = run(TWO, &["intc.kind=\"ioapic\"", &own, "cpu.threads=1"]);
    assert!(m(&r, "nic1_rx_taken") > 1000.0);
    // The same pin as the first NIC (the IO-APIC's first free one, 16): shared.
    let same = second_nic(&[("irq_thread", "0")]);
    let shared = run(TWO, &["intc.kind=\"ioapic\"", &same, "cpu.threads=1"]);
    assert_eq!(m(&shared, "nic1_rx_dropped"), 0.0);
    assert!(m(&shared, "nic1_rx_taken") > 1000.0);
    assert!(m(&shared, "source0_serviced") > 0.0 && m(&shared, "source1_serviced") > 0.0);
}

/// The NAPI path's options serve every NIC: each run conserves frames per
/// NIC, delivers the second NIC's frames, and shows its option at work.
#[test]
fn the_napi_options_serve_every_nic() {
    let slow = second_nic(&[("rate_per_s", "5000.0")]);
    let cases: &[(&[&str], &str)] = &[
        (&["napi.threaded=true"], "napi_thread_runs"),
        (&["napi.defer_hard_irqs=2", "napi.gro_flush_timeout_ns=20000"], "napi_deferred"),
        // Below the stack's knee, the poller polls both NICs' instances.
        (&["napi.busy_poll_usecs=50", "stack.enabled=true", "app.background=false", "workload.rate_per_s=5000", &slow], "napi_busy_poll_frames"),
        (&["coalesce.adaptive_rx=true", "run.duration_ms=200"], "dim_decisions"),
        (&["coalesce.rx_usecs=20", "coalesce.rx_frames=8"], "coalesce_timer_interrupts"),
        (&["rss.kind=\"toeplitz\"", "rss.queues=2"], "rss_queue1_frames"),
        (&["masking.driver_section_cycles=300", "masking.protocol_section_cycles=500", "stack.enabled=true"], "masking_cycles"),
        (&["cpu.context_policy=\"multithreaded\""], "nic1_rx_taken"),
    ];
    for (sets, shows) in cases {
        let r = run(TWO, sets);
        assert!(m(&r, shows) > 0.0, "{sets:?}: {shows} = 0");
        assert!(m(&r, "nic1_rx_taken") > 200.0, "{sets:?}: the second NIC's frames");
        assert!(m(&r, "nic0_rx_offered") > 200.0, "{sets:?}");
        if shows == &"napi_busy_poll_frames" {
            assert_eq!(m(&r, "napi_busy_poll_queues"), 2.0);
        }
    }
}

/// The mt path (each NIC's ISR drains its own ring) and the Linux path
/// (each NIC's top half raises its own bottom half), over a controller and
/// over the bare wire: each NIC's frames are all taken, by its own CPU.
#[test]
fn every_receive_path_drains_each_nic() {
    for path in ["mt", "linux"] {
        let r = run(TWO, &[&format!("irq_path.kind=\"{path}\"")]);
        assert_eq!(m(&r, "rx_delivered"), m(&r, "rx_offered"), "{path}");
        assert_eq!(m(&r, "nic1_rx_taken"), m(&r, "nic1_rx_offered"), "{path}");
        assert_eq!(m(&r, "source1_serviced"), m(&r, "nic1_interrupts"), "{path}");
        let bottom = r.bins[1].get(irqsim_core::cpu::Bin::BottomHalf);
        assert_eq!(bottom > 0, path == "linux", "{path}: CPU 1 runs the second NIC's bottom half on the Linux path only");
        assert!(r.bins[1].get(irqsim_core::cpu::Bin::Interrupt) > 0, "{path}: CPU 1 takes the second NIC's interrupts");
    }
    // The bare wire's mt path (the livelock receiver), with critical sections in the driver.
    let wire = ["run.duration_ms=20", "workload.process=\"poisson\"", "workload.rate_per_s=4000", "cpu.threads=2", "masking.driver_section_cycles=300"];
    let nic = "nics.others=[{rate_per_s = 1000.0, packet_bytes = 1000, irq_thread = 1}]";
    let r = run("livelock/receiver", &[&wire[..], &[nic]].concat());
    assert!(m(&r, "nic1_rx_taken") > 10.0 && m(&r, "nic1_rx_dropped") == 0.0);
    assert!(m(&r, "masking_cycles") > 0.0);
}

/// A NIC's own coalescing and DIM (its `rx_usecs`, `rx_frames`,
/// `adaptive_rx`) gate its interrupts only: the first NIC, on its own CPU
/// and controller, interrupts exactly as before.
#[test]
fn each_nic_coalesces_on_its_own() {
    let plain = run(TWO, &["run.duration_ms=200"]);
    let held = run(TWO, &["run.duration_ms=200", &second_nic(&[("rx_frames", "8"), ("rx_usecs", "50")])]);
    assert!(m(&held, "nic1_coalesce_interrupts") > 0.0);
    assert!(m(&held, "nic1_interrupts") < 0.6 * m(&plain, "nic1_interrupts"), "{} {}", m(&held, "nic1_interrupts"), m(&plain, "nic1_interrupts"));
    assert_eq!(m(&held, "nic0_interrupts"), m(&plain, "nic0_interrupts"));
    assert_eq!(m(&held, "nic1_rx_dropped"), 0.0);
    let dim = run(TWO, &["run.duration_ms=200", &second_nic(&[("adaptive_rx", "true")])]);
    assert!(m(&dim, "nic1_dim_decisions") > 0.0);
    assert!(dim.metric("dim_decisions").is_none(), "the first NIC has no DIM");
    // Both NICs coalescing, each by its own rules, on the mt path.
    let both = run(TWO, &["irq_path.kind=\"mt\"", "coalesce.rx_frames=4", "coalesce.rx_usecs=100", &second_nic(&[("rx_frames", "8"), ("rx_usecs", "50")])]);
    assert!(m(&both, "coalesce_frame_interrupts") + m(&both, "coalesce_timer_interrupts") > 0.0 && m(&both, "nic1_coalesce_interrupts") > 0.0);
}

/// Many NICs on many CPUs, each on its own MSI-X vector.
#[test]
fn eight_nics_on_four_cpus() {
    // The first NIC and six others on MSI-X vectors, one on an IO-APIC pin.
    let own = |k: usize| if k == 1 { "intc = \"ioapic\", " } else { "" };
    let others: Vec<String> = (1..8).map(|k| format!("{{{}rate_per_s = 5000.0, packet_bytes = 500, irq_thread = {}}}", own(k), k % 4)).collect();
    let list = format!("nics.others=[{}]", others.join(", "));
    let r = run(TWO, &[&list, "cpu.threads=4"]);
    assert_eq!(m(&r, "nics"), 8.0);
    for k in 1..8 {
        assert!(m(&r, &format!("nic{k}_rx_taken")) > 100.0, "NIC {k}");
        assert_eq!(m(&r, &format!("nic{k}_rx_dropped")), 0.0, "NIC {k}");
    }
    for t in 0..4 {
        assert!(m(&r, &format!("thread{t}_busy_share")) > 0.0, "CPU {t}");
    }
}

#[test]
fn the_same_scenario_gives_the_same_numbers() {
    let bits = |r: &Report| r.metrics.iter().map(|(k, v)| (k.clone(), v.to_bits())).collect::<Vec<_>>();
    assert_eq!(bits(&run(TWO, &[])), bits(&run(TWO, &[])));
    // Each NIC draws its own arrivals: another seed moves both.
    let (a, b) = (run(TWO, &[]), run(TWO, &["run.seed=2"]));
    assert_ne!(m(&a, "nic1_rx_offered"), m(&b, "nic1_rx_offered"));
    // The second NIC at the first's rate and size: its own stream, not a copy.
    let twin = run(TWO, &[&second_nic(&[("rate_per_s", "40000.0"), ("packet_bytes", "1500")])]);
    assert_ne!(m(&twin, "nic0_rx_offered"), m(&twin, "nic1_rx_offered"));
}

/// A NIC's own RSS: its frames' flows hashed over its own queues, each with
/// its ring, its MSI-X vector to its own CPU and its NAPI instance.
#[test]
fn a_nic_steers_its_own_frames_over_its_own_queues() {
    // NIC 1 keeps the IO-APIC pin (and `intc.trigger` its meaning); NIC 2 is on MSI-X.
    let pin = "{intc = \"ioapic\", line = 16, irq_thread = 1, rate_per_s = 1000.0, packet_bytes = 100}";
    let nic2 =
        |extra: &str| format!("nics.others=[{pin}, {{intc = \"msix\", irq_thread = 0, rate_per_s = 30000.0, packet_bytes = 1000, link_mbps = 1000.0{extra}}}]");
    let quiet = ["workload.rate_per_s=100.0"];
    // One queue: its vector goes to CPU 0, and CPU 1 only serves NIC 1's trickle.
    let one = run(TWO, &[&quiet[..], &[&nic2("")]].concat());
    // Two queues: vector 1 goes to CPU 1, which now polls half of NIC 2's frames.
    let two = run(TWO, &[&quiet[..], &[&nic2(", queues = 2")]].concat());
    assert_eq!(m(&two, "nic2_rss_queues"), 2.0);
    assert!(one.metric("nic2_rss_queues").is_none(), "no RSS metrics for one queue");
    let share = |r: &Report| r.bins[1].get(irqsim_core::cpu::Bin::BottomHalf) as f64 / r.bins[0].get(irqsim_core::cpu::Bin::BottomHalf) as f64;
    assert!(share(&one) < 0.1 && share(&two) > 0.6, "CPU 1's polling against CPU 0's: {} then {}", share(&one), share(&two));
    assert_eq!(m(&two, "source2_serviced"), m(&two, "nic2_interrupts"), "both vectors are NIC 2's source");
    assert_eq!(m(&two, "nic2_rx_offered"), m(&one, "nic2_rx_offered"), "the same frames, spread");
    assert_eq!(m(&two, "nic2_rx_dropped"), 0.0);
    // Its flows decide the spread: eight flows under a steep Zipf skew crowd one queue.
    let even = run(TWO, &[&quiet[..], &[&nic2(", queues = 4")]].concat());
    let skewed = run(TWO, &[&quiet[..], &[&nic2(", queues = 4, flows = 8, flow_skew = 2.0")]].concat());
    let (e, k) = (m(&even, "nic2_rss_busiest_queue_share"), m(&skewed, "nic2_rss_busiest_queue_share"));
    assert!(e < 0.35 && k > 0.6, "busiest queue's share: {e} uniform, {k} skewed");
    // Each queue coalesces on its own: every interrupt is its coalescing's.
    let held = run(TWO, &[&quiet[..], &[&nic2(", queues = 4, rx_usecs = 400, rx_frames = 0")]].concat());
    assert_eq!(m(&held, "nic2_coalesce_interrupts"), m(&held, "nic2_interrupts"));
    assert!(m(&held, "nic2_interrupts") < 0.5 * m(&even, "nic2_interrupts"), "{} {}", m(&held, "nic2_interrupts"), m(&even, "nic2_interrupts"));
}

/// RPS steers every NIC's frames: the second NIC's flows, hashed, send the
/// protocol's work of its frames to the other CPU's backlog.
#[test]
fn rps_steers_every_nics_frames() {
    let rps = ["rss.kind=\"toeplitz\"", "rss.queues=1", "stack.enabled=true", "workload.rate_per_s=100.0"];
    let nic1 = second_nic(&[("irq_thread", "0"), ("rate_per_s", "5000.0")]);
    let off = run(TWO, &[&rps[..], &[&nic1]].concat());
    let on = run(TWO, &[&rps[..], &[&nic1, "rss.rps_cpus=2"]].concat());
    assert_eq!(m(&off, "rps_remote_frames"), 0.0);
    assert_eq!(m(&off, "thread1_busy_share"), 0.0);
    // About half the flows hash to CPU 1; nearly all its frames are NIC 1's.
    let remote = m(&on, "rps_remote_frames");
    assert!(remote > 0.3 * m(&on, "nic1_rx_taken"), "{remote} of {}", m(&on, "nic1_rx_taken"));
    assert!(m(&on, "thread1_busy_share") > 0.0);
    assert_eq!(m(&on, "rx_delivered") + m(&on, "rx_in_flight"), m(&off, "rx_delivered") + m(&off, "rx_in_flight"));
}

/// Beside the programmable NIC (the first, its firmware on its own cores),
/// an e1000-like NIC's frames reach the host through its own source. With
/// a host that keeps up, the firmware NIC's frames all arrive as they did
/// alone; with the scenario's overloaded host, the other NIC's frames take
/// host time from the firmware NIC's.
#[test]
fn another_nic_beside_the_programmable_one() {
    let (fw, fast) = ("compose/rx-firmware", "driver.isr_rx_done_cycles=1000");
    let other = "nics.others=[{rate_per_s = 20000.0, packet_bytes = 500, link_mbps = 1000.0}]";
    let alone = run(fw, &[fast]);
    let beside = run(fw, &[fast, other]);
    assert!(m(&beside, "nic1_rx_taken") > 50.0 && m(&beside, "nic1_rx_dropped") == 0.0, "{}", m(&beside, "nic1_rx_taken"));
    assert_eq!(m(&beside, "source1_serviced"), m(&beside, "nic1_interrupts"));
    assert_eq!(m(&beside, "nic0_rx_offered"), m(&alone, "rx_offered"), "the firmware NIC's own arrivals are unchanged");
    assert_eq!(m(&beside, "nic_firmware_interrupts"), m(&alone, "nic_firmware_interrupts"));
    assert_eq!(m(&beside, "rx_delivered") + m(&beside, "rx_in_flight"), m(&alone, "rx_delivered") + m(&alone, "rx_in_flight") + m(&beside, "nic1_rx_offered"));
    let (slow_alone, slow_beside) = (run(fw, &[]), run(fw, &[other]));
    assert!(m(&slow_beside, "rx_delivered") - m(&slow_beside, "nic1_rx_taken") < m(&slow_alone, "rx_delivered"));
}

/// Each NIC on its own receive path, as a kernel with NAPI and older
/// drivers side by side: on a NAPI machine the second NIC's driver drains
/// it in its ISR (`mt`) or raises its own NET_RX bottom half (`linux`),
/// and NAPI schedules only the first NIC's instance.
#[test]
fn each_nic_on_its_own_receive_path() {
    let napi = run(TWO, &[]);
    assert_eq!(m(&napi, "napi_schedules"), m(&napi, "nic0_interrupts") + m(&napi, "nic1_interrupts"));
    for path in ["\"linux\"", "\"mt\""] {
        let r = run(TWO, &[&second_nic(&[("irq_path", path)])]);
        assert_eq!(m(&r, "napi_schedules"), m(&r, "nic0_interrupts"), "{path}: NAPI serves the first NIC only");
        assert_eq!(m(&r, "nic1_rx_taken"), m(&napi, "nic1_rx_taken"), "{path}: the second NIC's frames all taken");
        let cpu1 = r.bins[1];
        let (irq, bh) = (cpu1.get(irqsim_core::cpu::Bin::Interrupt), cpu1.get(irqsim_core::cpu::Bin::BottomHalf));
        match path {
            "\"mt\"" => assert!(bh == 0 && irq > 2 * napi.bins[1].get(irqsim_core::cpu::Bin::Interrupt), "its ISR drains it: {irq} {bh}"),
            _ => assert!(bh > irq, "its bottom half drains it: {irq} {bh}"),
        }
    }
}

/// A Linux machine whose second NIC is a NAPI driver's (a 2.6 kernel served
/// both kinds side by side): the first NIC's top half raises its NET_RX
/// bottom half, NAPI polls only the second NIC, and `[napi]` is the second
/// NIC's (its weight shapes its polls); busy polling, which polls the
/// receiving socket's instance, needs the first NIC on NAPI.
#[test]
fn a_napi_nic_on_a_linux_machine() {
    let napi = run(TWO, &[]);
    let linux = ["irq_path.kind=\"linux\"", &second_nic(&[("irq_path", "\"napi\"")])];
    let r = run(TWO, &linux);
    assert_eq!(m(&r, "napi_schedules"), m(&r, "nic1_interrupts"), "NAPI serves the second NIC only");
    assert!(m(&r, "nic0_interrupts") > 500.0);
    assert_eq!(m(&r, "nic1_rx_taken"), m(&napi, "nic1_rx_taken"), "the second NIC's frames all taken");
    assert_eq!(m(&r, "rx_delivered"), m(&r, "rx_offered"), "below both NICs' knees nothing is lost");
    let small = run(TWO, &[linux[0], linux[1], "napi.weight=1"]);
    assert!(m(&small, "napi_polls") > m(&r, "napi_polls"), "its weight is the second NIC's: {} {}", m(&small, "napi_polls"), m(&r, "napi_polls"));
    assert_eq!(m(&small, "nic0_interrupts"), m(&r, "nic0_interrupts"), "the first NIC's path does not poll");
    let e = load(TWO, &[linux[0], linux[1], "napi.busy_poll_usecs=50"]).expect_err("busy polling refused");
    assert!(!e.contains('\n') && e.contains("napi.busy_poll_usecs") && e.contains("first NIC"), "{e}");
    let e = load(TWO, &[linux[0], "napi.weight=8"]).expect_err("no NIC on NAPI: its keys are refused");
    assert!(!e.contains('\n') && e.contains("napi"), "{e}");
}

/// One key of one NIC's table set by its index is the same run as the list
/// set whole with that key changed; an index past the list is refused.
#[test]
fn a_nics_key_set_by_its_index() {
    for (k, v) in [("irq_path", "\"linux\""), ("rate_per_s", "1000.0")] {
        let a = run(TWO, &[&format!("nics.others[0].{k}={v}")]);
        let b = run(TWO, &[&second_nic(&[(k, v)])]);
        assert_eq!(a.metrics, b.metrics, "{k}");
    }
    let whole = run(TWO, &["nics.others[0]={intc = \"ioapic\", line = 16, irq_thread = 1, rate_per_s = 5000.0, packet_bytes = 100}"]);
    assert!(m(&whole, "nic1_rx_offered") < 500.0);
    let e = load(TWO, &["nics.others[1].rate_per_s=1.0"]).expect_err("no second item");
    assert!(e.contains("nics.others[1].rate_per_s") && e.contains("1 item"), "{e}");
    let e = load(TWO, &["nics.others[-1].rate_per_s=1.0"]).expect_err("a bad index");
    assert!(e.contains("name[index]"), "{e}");
}

/// What is not modelled, or meaningless, is refused in one line naming the key.
#[test]
fn refusals_name_the_key() {
    let refused = |name: &str, sets: &[&str], key: &str| {
        let e = load(name, sets).err().unwrap_or_else(|| panic!("{sets:?} loaded"));
        assert!(!e.contains('\n') && e.contains(key), "{sets:?}: {e}");
    };
    refused(TWO, &[&second_nic(&[("rx_usecs", "20")])], "nics.others[0].rx_usecs");
    refused(TWO, &[&second_nic(&[("rx_usecs", "0"), ("rx_frames", "0")])], "nics.others[0].rx_frames");
    refused(TWO, &[&second_nic(&[("adaptive_rx", "true"), ("rx_frames", "4")])], "nics.others[0].rx_frames");
    refused(TWO, &["irq_path.kind=\"linux\"", &second_nic(&[("adaptive_rx", "true")])], "nics.others[0].adaptive_rx");
    refused(TWO, &[&second_nic(&[("irq_thread", "5")])], "nics.others[0].irq_thread");
    refused(TWO, &[&second_nic(&[("packet_bytes", "9000"), ("rx_buffer_bytes", "4096")])], "nics.others[0].packet_bytes");
    refused(TWO, &[&second_nic(&[("queues", "2")])], "nics.others[0].queues");
    let beside_a_pin = |own: &str| {
        format!("nics.others=[{{intc = \"ioapic\", line = 16, rate_per_s = 1.0, packet_bytes = 100}}, {{rate_per_s = 1.0, packet_bytes = 100, {own}}}]")
    };
    refused(TWO, &["irq_path.kind=\"linux\"", &beside_a_pin("intc = \"msix\", queues = 2")], "nics.others[1].queues");
    refused(TWO, &[&beside_a_pin("intc = \"msi\", queues = 3")], "nics.others[1].queues");
    refused(TWO, &[&second_nic(&[("flows", "8")])], "nics.others[0].flows");
    refused(TWO, &["irq_path.kind=\"mt\"", &second_nic(&[("irq_path", "\"napi\"")])], "nics.others[0].irq_path");
    refused(TWO, &["irq_path.kind=\"mt\"", &second_nic(&[("irq_path", "\"linux\"")])], "nics.others[0].irq_path");
    refused(TWO, &[&second_nic(&[("irq_path", "\"mt\""), ("adaptive_rx", "true")])], "nics.others[0].adaptive_rx");
    // 1 + 1 + 19 × 16 queues: past the NAPI instances' 256.
    let wide = "{intc = \"msix\", rate_per_s = 1.0, packet_bytes = 100, queues = 16}";
    let many = format!("nics.others=[{{intc = \"ioapic\", line = 16, rate_per_s = 1.0, packet_bytes = 100}}, {}]", vec![wide; 19].join(", "));
    refused(TWO, &[&many], "nics.others[19].queues");
    refused(TWO, &["nics.others=[{rate_per_s = 1.0, packet_bytes = 100, colour = 1}]"], "colour");
    refused(TWO, &[&second_nic(&[("line", "30")])], "nics.others[0].line");
    let pic =
        "nics.others=[{intc = \"ioapic\", rate_per_s = 1.0, packet_bytes = 100}, {intc = \"xtpic\", irq_thread = 1, rate_per_s = 1.0, packet_bytes = 100}]";
    refused(TWO, &[pic], "nics.others[1].irq_thread");
    refused("msi-latency/soc-idle", &["nics.others=[{rate_per_s = 1.0, packet_bytes = 100}]"], "nics");
}
