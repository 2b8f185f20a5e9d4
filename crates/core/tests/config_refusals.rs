//! Scenario settings that would be ignored or misread are refused at load,
//! each with one line naming where the value came from and the key.

use irqsim_core::config::parse_override_as;
use irqsim_core::{Scenario, parse_override, run_str};
use std::path::PathBuf;

fn bundled(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios").join(name)
}

fn load(file: &str, sets: &[&str]) -> Result<Scenario, String> {
    let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    Scenario::from_file(&bundled(file), &o).map_err(|e| e.to_string())
}

fn refused(file: &str, sets: &[&str]) -> String {
    load(file, sets).err().unwrap_or_else(|| panic!("{file} {sets:?} was accepted"))
}

fn loads(file: &str, sets: &[&str]) {
    load(file, sets).unwrap_or_else(|e| panic!("{file} {sets:?}: {e}"));
}

const RX: &str = "mt-interrupts/driver-rx-single.toml";
const NULL_RPC: &str = "optimistic-spl/luna88k-idealized.toml";
const EXERCISER: &str = "msi-latency/soc-idle.toml";

/// Every bundled scenario loads as it is.
#[test]
fn every_bundled_scenario_validates() {
    let mut n = 0;
    let mut dirs = vec![bundled("")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "toml") {
                Scenario::from_file(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
        }
    }
    assert!(n >= 18, "found only {n} scenarios");
}

/// A key of a part the workload does not use names the key and the part.
#[test]
fn keys_of_unselected_parts_are_refused_with_the_part_named() {
    for (file, set, part) in [
        (NULL_RPC, "intc.kind=xtpic", "the interrupt controller part is not used by workload kind `null_rpc`"),
        (NULL_RPC, "nic.link_mbps=100", "the NIC part is not used by workload kind `null_rpc`"),
        (EXERCISER, "stack.enabled=true", "the protocol stack part is not used by workload kind `exerciser`"),
        (EXERCISER, "masking.machine=pc386", "the interrupt masking part is not used by workload kind `exerciser`"),
    ] {
        let e = refused(file, &[set]);
        let key = set.split('=').next().unwrap();
        assert!(e.starts_with(&format!("--set: `{key}`: {part}")) && e.ends_with("remove the key"), "{set}: {e}");
    }
}

/// A whole section of an unused part is refused at its first key's line.
#[test]
fn a_section_of_an_unselected_part_is_refused_at_its_line() {
    let text = "[cpu]\nclock_mhz = 200.0\n[nic]\nlink_mbps = 100.0\n[workload]\nkind = \"exerciser\"\nrate_per_s = 100.0\n";
    let e = Scenario::from_toml(text, "s.toml", &[]).unwrap_err().to_string();
    assert!(e.starts_with("s.toml:4: `nic.link_mbps`: the NIC part is not used by workload kind `exerciser`"), "{e}");
}

/// Masking in the NIC path needs critical sections: without them its keys
/// would change nothing.
#[test]
fn masking_keys_on_the_nic_path_need_sections() {
    let e = refused(RX, &["masking.scheme=optimistic"]);
    assert!(e.starts_with("--set: `masking.scheme`: the NIC path has no critical section to mask"), "{e}");
}

/// The direct wire has no bus: a bus latency under it would be ignored.
#[test]
fn bus_keys_need_a_controller() {
    let e = refused(RX, &["bus.mmio_read_ns=1"]);
    assert!(e.starts_with("--set: `bus.mmio_read_ns`: only used when `intc.kind` is"), "{e}");
    loads(RX, &["intc.kind=ioapic", "bus.mmio_read_ns=1"]);
}

/// Port I/O is the 8259s' alone, the EOI write the local APIC's, the
/// status read and clear a shared line's: each is refused where the
/// machine's controllers never take that path (a sweep of it there would
/// measure nothing), and a device's own controller counts.
#[test]
fn controller_costs_need_their_controller() {
    let e = refused(EXERCISER, &["bus.port_io_ns=700"]);
    assert!(e.starts_with("--set: `bus.port_io_ns`: only used when `intc.kind` is `xtpic` (it is `msi`)"), "{e}");
    let e = refused(EXERCISER, &["intc.kind=xtpic", "irq_path.lapic_eoi_cycles=5"]);
    assert!(e.starts_with("--set: `irq_path.lapic_eoi_cycles`: only used when `intc.kind` is `ioapic`, `msi`, `msix` (it is `xtpic`)"), "{e}");
    let e = refused(EXERCISER, &["bus.mmio_read_ns=1200"]);
    assert!(e.starts_with("--set: `bus.mmio_read_ns`: only used when `intc.kind` is `xtpic`, `ioapic` (it is `msi`)"), "{e}");
    loads(EXERCISER, &["intc.kind=ioapic", "bus.mmio_read_ns=1200"]);
    loads(EXERCISER, &["intc.kind=xtpic", "bus.port_io_ns=700"]);
    let legacy = "workload.others=[{rate_per_s = 100.0, line = 1, intc = \"xtpic\"}]";
    loads(EXERCISER, &[legacy, "bus.port_io_ns=700"]);
    // An uncached write: a shared line's status clear, or the exerciser's own.
    let e = refused(RX, &["intc.kind=msix", "irq_path.mmio_write_cycles=5"]);
    assert!(
        e.contains("`irq_path.mmio_write_cycles`: only used when `intc.kind` is `xtpic`, `ioapic` (it is `msix`) or `workload.kind` is `exerciser`"),
        "{e}"
    );
    loads(RX, &["intc.kind=ioapic", "irq_path.mmio_write_cycles=5"]);
    loads(EXERCISER, &["irq_path.mmio_write_cycles=5"]);
}

/// Keys that only one variant of a part uses are refused under the others.
#[test]
fn keys_of_unchosen_variants_are_refused() {
    let e = refused(RX, &["stack.ip_cycles=5"]);
    assert!(e.starts_with("--set: `stack.ip_cycles`: only used when `stack.enabled` is `true` (it is `false`)"), "{e}");
    loads(RX, &["stack.enabled=true", "stack.ip_cycles=5"]);
    let e = refused(EXERCISER, &["intc.kind=ioapic", "intc.vectors=1"]);
    assert!(e.starts_with("--set: `intc.vectors`: only used when `intc.kind` is `msi`, `msix` (it is `ioapic`)"), "{e}");
    let e = refused(EXERCISER, &["intc.trigger=edge"]);
    assert!(e.contains("`intc.trigger`: only used when `intc.kind` is `ioapic`"), "{e}");
    let e = refused(EXERCISER, &["intc.kind=xtpic", "workload.priority=9"]);
    assert!(e.contains("`workload.priority`: only used when `intc.kind` is"), "{e}");
    let e = refused(RX, &["cpu.context_switch_cycles=5"]);
    assert!(e.contains("`cpu.context_switch_cycles`: only used when `cpu.context_policy` is `multithreaded` (it is `single`)"), "{e}");
    let e = refused(NULL_RPC, &["stats.max_packet_records=10"]);
    assert!(e.contains("`stats.max_packet_records`: only used when `workload.kind` is"), "{e}");
}

/// The masking model runs one thread: more is refused, not ignored.
#[test]
fn masking_model_refuses_more_than_one_thread() {
    let e = refused(NULL_RPC, &["cpu.threads=4"]);
    assert!(e.starts_with("--set: `cpu.threads`: the masking model runs one hardware thread, got 4"), "{e}");
}

/// Old spellings of rates name their new key.
#[test]
fn renamed_rate_keys_name_their_new_key() {
    let e = refused("bench/rx-overload.toml", &["workload.rate_pps=5"]);
    assert!(e.starts_with("--set: `workload.rate_pps`: was renamed `workload.rate_per_s`"), "{e}");
    let e = refused(EXERCISER, &["workload.others=[{rate_hz = 5.0}]"]);
    assert!(e.contains("`workload.others[0].rate_hz`: was renamed `workload.others.rate_per_s`"), "{e}");
    // Bandwidths have one unit too: Mb/s, as `nic.link_mbps`.
    let e = refused(EXERCISER, &["bus.link_mbytes_per_s=250"]);
    assert!(e.starts_with("--set: `bus.link_mbytes_per_s`: was renamed `bus.link_mbps`"), "{e}");
}

/// An override that is wrong is blamed on the override, not the file, with
/// the word its caller chose.
#[test]
fn bad_overrides_are_blamed_on_their_origin() {
    let e = refused(RX, &["nosuch.key=1"]);
    assert!(e.starts_with("--set: `nosuch`: unknown section `nosuch`"), "{e}");
    let e = refused(RX, &["workload.kind=bogus"]);
    assert!(e.starts_with("--set: `workload.kind`: unknown variant `bogus`"), "{e}");
    let o = [parse_override_as("cpu.threads=0", "overrides").unwrap()];
    let e = Scenario::from_file(&bundled(RX), &o).unwrap_err().to_string();
    assert!(e.starts_with("overrides: `cpu.threads`: must be 1..=64, got 0"), "{e}");
}

/// A syntax error is one line naming the file, line and column.
#[test]
fn syntax_error_is_one_line_with_line_and_column() {
    let e = Scenario::from_toml("[cpu]\nclock_mhz = 1\n[workload\nkind = 1\n", "s.toml", &[]).unwrap_err().to_string();
    assert!(e.starts_with("s.toml: line 3, column 10: ") && !e.contains('\n'), "{e}");
}

/// An error inside the n-th `[[workload.events]]` table names its line.
#[test]
fn script_event_errors_name_their_line() {
    let text = "[cpu]\nclock_mhz = 200.0\n[workload]\nkind = \"script\"\n\
                [[workload.events]]\nat_cycle = 10\naction = \"receive\"\nbytes = 100\n\
                [[workload.events]]\nat_cycle = 20\naction = \"dance\"\n";
    let e = Scenario::from_toml(text, "s.toml", &[]).unwrap_err().to_string();
    assert!(e.starts_with("s.toml:11: `workload.events[1].action`: unknown variant `dance`"), "{e}");
    let e = Scenario::from_toml(&text.replace("\"dance\"", "\"send\""), "s.toml", &[]).unwrap_err().to_string();
    assert!(e.starts_with("s.toml:9: `workload.events[1].bytes`: a `send` needs a frame size"), "{e}");
}

/// Seeds cover all of u64; beyond TOML's integers they are decimal strings.
#[test]
fn seeds_cover_u64() {
    let base = "[cpu]\nclock_mhz = 200.0\n[workload]\nkind = \"flood\"\ndirection = \"rx\"\npacket_bytes = 100\n[run]\n";
    let load = |seed: &str| Scenario::from_toml(&format!("{base}seed = {seed}\n"), "s.toml", &[]);
    assert_eq!(load("\"18446744073709551615\"").unwrap().run.seed, u64::MAX);
    assert_eq!(load("\"9223372036854775808\"").unwrap().run.seed, 1 << 63);
    assert_eq!(load("9223372036854775807").unwrap().run.seed, (1 << 63) - 1);
    let e = load("\"18446744073709551616\"").unwrap_err().to_string();
    assert!(e.starts_with("s.toml:8: `run.seed`: `18446744073709551616` is not an integer in 0..=18446744073709551615"), "{e}");
    let e = load("-1").unwrap_err().to_string();
    assert!(e.contains("`run.seed`: must be 0..="), "{e}");
    // On the command line a large seed needs no quotes.
    let o = [parse_override("run.seed=18446744073709551615").unwrap()];
    assert_eq!(Scenario::from_toml(base, "s.toml", &o).unwrap().run.seed, u64::MAX);
}

/// Caps on what a run keeps and how long it runs.
#[test]
fn caps_have_maxima() {
    for (set, key) in [
        ("stats.timeline_max_items=1000001", "`stats.timeline_max_items`: must be 0..=1_000_000"),
        ("stats.max_packet_records=10000001", "`stats.max_packet_records`: must be 0..=10_000_000"),
        ("run.duration_ms=1e12", "`run.duration_ms`: must be in (0, 3_600_000]"),
    ] {
        let e = refused(RX, &[set]);
        assert!(e.contains(key), "{set}: {e}");
    }
}

/// A run past `run.max_events` stops with an error naming the key and the file.
#[test]
fn max_events_stops_a_run() {
    let text = "[cpu]\nclock_mhz = 200.0\n[run]\nduration_ms = 1000.0\nmax_events = 100000\n[nic]\nlink_mbps = 10000.0\n\
                [workload]\nkind = \"flood\"\ndirection = \"rx\"\npacket_bytes = 100\n";
    let e = run_str(text, "long.toml", &[]).err().expect("stopped").to_string();
    assert!(e.starts_with("long.toml: `run.max_events`: the run passed 100000 events at cycle "), "{e}");
}

/// A run whose rates alone promise more events than `run.max_events` is
/// refused at load, before it starts.
#[test]
fn a_run_too_long_for_max_events_is_refused_at_load() {
    let e = refused("bench/rx-overload.toml", &["run.duration_ms=3600000", "workload.rate_per_s=1e6"]);
    assert!(e.starts_with("--set: `run.duration_ms`: the workload offers about 3.600e9 stimuli in 3600000 ms"), "{e}");
    assert!(e.contains("more than run.max_events = 1000000000"), "{e}");
}

/// The Linux path's costs mean nothing on the mt path (the NIC's default),
/// and the exerciser runs on the Linux path only.
#[test]
fn linux_path_keys_need_the_linux_path() {
    let e = refused(RX, &["irq_path.entry_cycles=99999"]);
    assert!(e.starts_with("--set: `irq_path.entry_cycles`: only used when `irq_path.kind` is `linux`, `napi` (it is `mt`)"), "{e}");
    loads(RX, &["irq_path.kind=linux", "irq_path.entry_cycles=99999"]);
    let e = refused(RX, &["irq_path.lapic_eoi_cycles=5"]);
    assert!(e.contains("only used when `intc.kind` is"), "{e}");
    let e = refused(EXERCISER, &["irq_path.kind=mt"]);
    assert!(e.starts_with("--set: `irq_path.kind`: only used when `workload.kind` is"), "{e}");
}

/// The XT-PIC reaches CPU 0 only: routing the NIC elsewhere is refused at
/// load, naming the key; so is half an optimistic cost figure on the NIC path.
#[test]
fn unroutable_and_half_given_settings_on_the_nic_path_are_refused() {
    let e = refused(RX, &["intc.kind=xtpic", "cpu.threads=2", "nic.irq_thread=1"]);
    assert!(e.starts_with("--set: `nic.irq_thread`: the XT-PIC delivers to CPU 0 only"), "{e}");
    let e = refused("compose/rx-sections.toml", &["masking.optimistic_pair_cycles=40"]);
    assert!(e.contains("`masking.optimistic_pair_cycles`: give both"), "{e}");
}

/// The exerciser's vector count would be silently ignored by a NIC.
#[test]
fn the_exercisers_vectors_are_refused_for_the_nic() {
    let e = refused(RX, &["intc.kind=\"msi\"", "intc.vectors=4"]);
    assert!(e.contains("`intc.vectors`") && e.contains("rss.queues"), "{e}");
}

/// RSS takes one MSI-X vector per queue from the first free ones: another
/// source's line among them is refused at load, not met by the machine
/// (this once panicked when the load check wired the NIC with one vector).
#[test]
fn a_source_on_an_rss_queues_vector_is_refused_at_load() {
    let other = "sources.others=[{process=\"periodic\", rate_per_s=1000.0, line=1}]";
    let e = refused("livelock/rss.toml", &["run.duration_ms=5", other]);
    assert_eq!(
        e,
        "--set: `sources.others[0].line`: MSI-X vector 1 is already taken: message-signaled interrupts are never shared (the NIC's 16 RSS queues take vectors 0..=15)"
    );
    // Past the queues' vectors the source is wired and runs beside them.
    let free = "sources.others=[{process=\"periodic\", rate_per_s=1000.0, line=16}]";
    let text = std::fs::read_to_string(bundled("livelock/rss.toml")).unwrap();
    let o: Vec<_> = ["run.duration_ms=5", free].iter().map(|s| parse_override(s).unwrap()).collect();
    run_str(&text, "rss.toml", &o).unwrap().check_invariants().unwrap();
}

/// A key whose effect another key's value cancels is refused, naming both:
/// a sweep over it alone would silently measure nothing. Its "off" value
/// (0) is accepted, and so is the pair that works.
#[test]
fn a_key_another_cancels_is_refused_naming_both() {
    const NAPI: &str = "livelock/receiver.toml";
    for (file, sets, key, by) in [
        (RX, &["coalesce.rx_usecs=50"][..], "coalesce.rx_usecs", "coalesce.rx_frames` is 1"),
        (RX, &["coalesce.rx_usecs=50", "coalesce.rx_frames=1"][..], "coalesce.rx_usecs", "coalesce.rx_frames` is 1"),
        (NAPI, &["irq_path.kind=\"napi\"", "napi.gro_flush_timeout_ns=50000"][..], "napi.gro_flush_timeout_ns", "napi.defer_hard_irqs` is 0"),
        (NAPI, &["irq_path.kind=\"napi\"", "napi.defer_hard_irqs=2"][..], "napi.defer_hard_irqs", "napi.gro_flush_timeout_ns` is 0"),
        (NAPI, &["irq_path.kind=\"napi\"", "napi.busy_poll_budget=16"][..], "napi.busy_poll_budget", "napi.busy_poll_usecs` is 0"),
    ] {
        let e = refused(file, sets);
        assert!(e.starts_with(&format!("--set: `{key}`: changes nothing while `{by}")) && e.ends_with("or remove the key"), "{sets:?}: {e}");
    }
    loads(RX, &["coalesce.rx_usecs=0", "coalesce.rx_frames=1"]);
    loads(RX, &["coalesce.rx_usecs=50", "coalesce.rx_frames=0"]);
    loads(RX, &["coalesce.rx_usecs=50", "coalesce.rx_frames=8"]);
    loads(NAPI, &["irq_path.kind=\"napi\"", "napi.defer_hard_irqs=2", "napi.gro_flush_timeout_ns=50000"]);
    loads(NAPI, &["irq_path.kind=\"napi\"", "napi.defer_hard_irqs=0", "napi.gro_flush_timeout_ns=0"]);
}

/// `[code.core]`'s tables are checked like every other part's: the file, the
/// line and the whole dotted key; the list form names `code.core` and the item.
#[test]
fn core_settings_name_their_line_and_key() {
    let text = std::fs::read_to_string(bundled("smt-hot-thread/nat-hot.toml")).unwrap();
    let line = text.lines().position(|l| l == "ways = 4").unwrap() + 1;
    let e = Scenario::from_toml(&text.replace("ways = 4", "ways = 65"), "nat-hot.toml", &[]).unwrap_err().to_string();
    assert_eq!(e, format!("nat-hot.toml:{line}: `code.core.l1d.ways`: must be 1..=64, got 65"));
    let e = Scenario::from_toml(&text.replace("model = \"caches\"", "model = \"perfect\""), "nat-hot.toml", &[]).unwrap_err().to_string();
    assert!(e.contains("`code.core.memory.latency_cycles`: only used when `code.core.memory.model` is `caches` (it is `perfect`)"), "{e}");
    let e = refused("code/rx-min.toml", &["code.core=[\"l1d.sise_bytes=1\"]"]);
    assert!(e.starts_with("--set: `code.core`: `l1d.sise_bytes`: unknown field `sise_bytes`, expected one of `size_bytes`"), "{e}");
}

/// A send flood is the application: a CPU-bound one asked for beside it
/// would never run (it was silently ignored), so it is refused; `false`
/// says what happens and loads.
#[test]
fn a_background_application_beside_a_send_flood_is_refused() {
    let e = refused("mt-interrupts/driver-tx-single.toml", &["app.background=true"]);
    assert_eq!(
        e,
        "--set: `app.background`: a send flood (`workload.direction = \"tx\"`) is the application: it sends again as each send returns, so no CPU-bound application runs beside it; remove the key"
    );
    loads("mt-interrupts/driver-tx-single.toml", &["app.background=false"]);
    loads(RX, &["app.background=true"]);
}

/// Kernel code's NIC puts each frame in its ring's buffer as the frame
/// comes off the wire, and its transmit ring is the program's: the
/// e1000-like NIC's buffer, DMA pacing and transmit queue changed nothing
/// there (they were silently ignored), so they are refused, naming why.
#[test]
fn the_abstract_nics_buffer_and_dma_keys_are_refused_with_code() {
    for (set, why) in [
        ("nic.rx_buffer_bytes=65536", "it has no on-chip buffer; remove the key"),
        ("nic.dma_bytes_per_cycle=2.0", "its DMA is not timed; remove the key"),
        ("bus.link_mbps=100.0", "it paces the NIC's DMA"),
        ("nic.tx_queue_packets=8", "kernel code's transmit ring is the program's"),
    ] {
        let e = refused("code/rx-min.toml", &[set]);
        let key = set.split('=').next().unwrap();
        assert!(e.starts_with(&format!("--set: `{key}`: ")) && e.contains(why) && !e.contains('\n'), "{set}: {e}");
    }
    // So do another NIC's where code drives it, and only there.
    for set in ["nics.others[0].rx_buffer_bytes=65536", "nics.others[0].dma_bytes_per_cycle=0.5"] {
        let e = refused("code/two-nics.toml", &[set]);
        assert!(e.contains("its driver is kernel code") && !e.contains('\n'), "{set}: {e}");
        loads("code/kernel-per-core.toml", &[set]);
    }
}
