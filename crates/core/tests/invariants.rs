//! Invariants over random scenarios (proptest): whatever the context policy,
//! costs, buffer sizes, backlog, offered load (from light to 3× what the CPU
//! can service), stack on or off and workload (Poisson or periodic arrivals,
//! receive or send flood, the synthetic generator), a run
//! - conserves packets in each direction and its thread's bins sum to the
//!   elapsed cycles (`Report::check_invariants`);
//! - records a timeline whose spans never overlap on a hardware thread (hence
//!   on any track), never go backwards in time and stay within the run, whose
//!   device marks are in time order, and which accounts for exactly the
//!   non-idle cycles of the bins;
//! - delivers no more than was offered, and counts only delivered (received)
//!   or sent bits as throughput, never dropped ones.

use irqsim_core::cpu::Bin;
use irqsim_core::{Record, Report, Scenario};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Load {
    /// Open-loop arrivals at `factor` × the CPU's receive capacity.
    Arrivals {
        poisson: bool,
        factor: f64,
    },
    Flood {
        rx: bool,
        gap: u64,
    },
    Synthetic {
        tx_share: f64,
    },
}

#[derive(Debug, Clone)]
struct Case {
    multithreaded: bool,
    clock_mhz: u64,
    irq_entry: u64,
    swi_entry: u64,
    save_restore: u64,
    context_switch: u64,
    driver_send: u64,
    isr_tx: u64,
    isr_rx: u64,
    stack: bool,
    layer: [u64; 3],
    copy_per_byte: f64,
    wakeup: u64,
    backlog: u64,
    packet_bytes: u32,
    rx_buffer_extra: u64,
    tx_queue: u64,
    link_mbps: f64,
    dma: f64,
    background: bool,
    seed: u64,
    duration_us: u64,
    load: Load,
}

impl Case {
    /// Cycles the CPU spends on one received frame (upper estimate).
    fn rx_cycles(&self) -> f64 {
        let mut c = (self.irq_entry + self.save_restore + self.isr_rx) as f64;
        if self.stack {
            c += (self.swi_entry + self.save_restore + self.layer.iter().sum::<u64>() + self.wakeup) as f64 + self.copy_per_byte * f64::from(self.packet_bytes);
        }
        c
    }

    fn toml(&self) -> String {
        let workload = match self.load {
            Load::Arrivals { poisson, factor } => {
                let capacity_pps = self.clock_mhz as f64 * 1e6 / self.rx_cycles();
                format!(
                    "kind = \"arrivals\"\nprocess = \"{}\"\nrate_per_s = {:?}\npacket_bytes = {}",
                    if poisson { "poisson" } else { "periodic" },
                    factor * capacity_pps,
                    self.packet_bytes
                )
            }
            Load::Flood { rx, gap } => {
                format!("kind = \"flood\"\ndirection = \"{}\"\npacket_bytes = {}\ngap_cycles = {gap}", if rx { "rx" } else { "tx" }, self.packet_bytes)
            }
            Load::Synthetic { tx_share } => format!(
                // About 1,000 receive frames of packet_bytes per simulated second.
                "kind = \"synthetic\"\nrx_mbps = {:?}\npacket_interrupts_per_s = 20000\nsyscalls_per_s = 20000\ntx_share = {tx_share:?}\ntx_packet_bytes = {}",
                f64::from(self.packet_bytes) * 8.0 * 20000.0 * (1.0 - tx_share) / 1e6,
                self.packet_bytes
            ),
        };
        format!(
            r#"
[run]
seed = {seed}
duration_ms = {duration_ms:?}
[cpu]
clock_mhz = {clock}.0
threads = 1
context_policy = "{policy}"
irq_entry_cycles = {irq}
swi_entry_cycles = {swi}
save_restore_cycles = {sr}
{cs}
[nic]
rx_buffer_bytes = {rxbuf}
tx_queue_packets = {txq}
link_mbps = {link:?}
dma_bytes_per_cycle = {dma:?}
[driver]
send_cycles = {send}
isr_tx_done_cycles = {isr_tx}
isr_rx_done_cycles = {isr_rx}
[stack]
{stack}
[app]
background = {background}
[stats]
timeline_max_items = 1000000
[workload]
{workload}
"#,
            seed = self.seed,
            // At most 400,000 cycles, so that a case runs in milliseconds.
            duration_ms = self.duration_us.min(400_000 / self.clock_mhz) as f64 / 1000.0,
            clock = self.clock_mhz,
            policy = if self.multithreaded { "multithreaded" } else { "single" },
            irq = self.irq_entry,
            swi = self.swi_entry,
            sr = self.save_restore,
            // A context switch is only paid (and only accepted) between multithreaded contexts.
            cs = if self.multithreaded { format!("context_switch_cycles = {}", self.context_switch) } else { String::new() },
            rxbuf = u64::from(self.packet_bytes) + self.rx_buffer_extra,
            txq = self.tx_queue,
            link = self.link_mbps,
            dma = self.dma,
            send = self.driver_send,
            isr_tx = self.isr_tx,
            isr_rx = self.isr_rx,
            // The layers' keys are refused when the stack is off.
            stack = if self.stack {
                format!(
                    "enabled = true\nsocket_cycles = {}\nudp_cycles = {}\nip_cycles = {}\ncopy_cycles_per_byte = {:?}\nrecv_wakeup_cycles = {}\nbacklog_packets = {}",
                    self.layer[0], self.layer[1], self.layer[2], self.copy_per_byte, self.wakeup, self.backlog
                )
            } else {
                "enabled = false".into()
            },
            // A send flood is the application: a CPU-bound one is refused beside it.
            background = self.background && !matches!(self.load, Load::Flood { rx: false, .. }),
        )
    }
}

fn load() -> impl Strategy<Value = Load> {
    prop_oneof![
        4 => (any::<bool>(), 0.05f64..3.0).prop_map(|(poisson, factor)| Load::Arrivals { poisson, factor }),
        3 => (any::<bool>(), prop_oneof![Just(0u64), 0u64..5000]).prop_map(|(rx, gap)| Load::Flood { rx, gap }),
        1 => (0.0f64..0.9).prop_map(|tx_share| Load::Synthetic { tx_share }),
    ]
}

prop_compose! {
    fn case()(
        multithreaded in any::<bool>(),
        clock_mhz in prop_oneof![Just(200u64), 50u64..1000],
        (irq_entry, swi_entry, save_restore, context_switch) in (0u64..20, 0u64..20, prop_oneof![Just(0u64), 0u64..400], prop_oneof![Just(0u64), 0u64..50]),
        (driver_send, isr_tx, isr_rx) in (100u64..4000, 50u64..1000, 100u64..4000),
        stack in any::<bool>(),
        layer in [0u64..4000, 0u64..4000, 0u64..4000],
        copy_per_byte in prop_oneof![Just(0.0f64), 0.0f64..3.0],
        wakeup in 0u64..6000,
        backlog in prop_oneof![1u64..4, 4u64..2000],
        packet_bytes in 40u32..1500,
        rx_buffer_extra in prop_oneof![Just(0u64), 0u64..4000, 0u64..40000],
        tx_queue in prop_oneof![1u64..3, 3u64..128],
        link_mbps in prop_oneof![1.0f64..100.0, 100.0f64..20000.0],
        dma in 0.25f64..16.0,
        background in any::<bool>(),
        // TOML integers are i64.
        seed in 0..i64::MAX as u64,
        duration_us in 100u64..1500,
        load in load(),
    ) -> Case {
        Case {
            multithreaded, clock_mhz, irq_entry, swi_entry, save_restore, context_switch, driver_send, isr_tx, isr_rx,
            stack, layer, copy_per_byte, wakeup, backlog, packet_bytes, rx_buffer_extra, tx_queue, link_mbps, dma,
            background, seed, duration_us, load,
        }
    }
}

/// The synthetic generator's received frame size for the `rx_mbps` that
/// `Case::toml` writes (see `workload/synthetic.rs`).
fn synthetic_rx_bytes(packet_bytes: u32, tx_share: f64) -> u32 {
    let n_tx = (20000.0 * tx_share).round();
    let n_rx = 20000.0 - n_tx;
    let rx_mbps = f64::from(packet_bytes) * 8.0 * 20000.0 * (1.0 - tx_share) / 1e6;
    (rx_mbps * 1e6 / 8.0 / n_rx).round() as u32
}

fn m(r: &Report, name: &str) -> f64 {
    r.metric(name).unwrap_or_else(|| panic!("no metric {name}"))
}

/// Every property of the module doc, for one run.
fn check(r: &Report, packet_bytes: u32) -> Result<(), String> {
    r.check_invariants()?;

    // Timeline: one thing at a time per hardware thread, forward in time, inside the run.
    let spans = r.timeline.spans();
    let threads = r.bins.len();
    let mut busy = vec![0u64; threads];
    let mut overhead = vec![0u64; threads];
    let mut last_end = vec![0u64; threads];
    for s in spans {
        let t = s.thread;
        if t >= threads || s.context >= r.contexts.len() {
            return Err(format!("span on unknown track: {s:?}"));
        }
        if s.start >= s.end {
            return Err(format!("empty or backwards span: {s:?}"));
        }
        if s.start < last_end[t] {
            return Err(format!("span overlaps or goes back before {}: {s:?}", last_end[t]));
        }
        if s.end > r.elapsed_cycles {
            return Err(format!("span past the end {}: {s:?}", r.elapsed_cycles));
        }
        last_end[t] = s.end;
        busy[t] += s.end - s.start;
        if s.label == "overhead" {
            overhead[t] += s.end - s.start;
        }
    }
    if let Some(w) = r.timeline.marks().windows(2).find(|w| w[1].time < w[0].time) {
        return Err(format!("marks go back in time: {:?} then {:?}", w[0], w[1]));
    }
    if r.timeline.marks().last().is_some_and(|m| m.time > r.elapsed_cycles) {
        return Err("mark past the end".into());
    }
    if r.timeline.dropped() == 0 {
        for (t, b) in r.bins.iter().enumerate() {
            if busy[t] != r.elapsed_cycles - b.get(Bin::Idle) {
                return Err(format!("thread {t}: spans cover {} cycles, bins say {} non-idle", busy[t], r.elapsed_cycles - b.get(Bin::Idle)));
            }
            if overhead[t] != b.get(Bin::Overhead) {
                return Err(format!("thread {t}: overhead spans {} != overhead bin {}", overhead[t], b.get(Bin::Overhead)));
            }
        }
    }

    // Delivered ≤ offered, per direction.
    let (rx_off, rx_del) = (m(r, "rx_offered"), m(r, "rx_delivered"));
    let (tx_off, tx_sent) = (m(r, "tx_offered"), m(r, "tx_sent"));
    if rx_del > rx_off || tx_sent > tx_off {
        return Err(format!("delivered more than offered: rx {rx_del}/{rx_off}, tx {tx_sent}/{tx_off}"));
    }
    if r.records.len() as f64 > rx_del {
        return Err(format!("{} latency records for {rx_del} delivered packets", r.records.len()));
    }

    // Throughput counts delivered / sent bits only (fixed-size frames here).
    let secs = m(r, "sim_seconds");
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0);
    let rx_mbps = m(r, "rx_throughput_mbps");
    let want_rx = rx_del * f64::from(packet_bytes) * 8.0 / secs / 1e6;
    if !close(rx_mbps, want_rx) {
        return Err(format!("rx throughput {rx_mbps} Mb/s is not the {rx_del} delivered frames' {want_rx} Mb/s"));
    }
    Ok(())
}

fn check_tx(r: &Report, tx_bytes: u32) -> Result<(), String> {
    let secs = m(r, "sim_seconds");
    let tx_mbps = m(r, "tx_throughput_mbps");
    let want = m(r, "tx_sent") * f64::from(tx_bytes) * 8.0 / secs / 1e6;
    if (tx_mbps - want).abs() > 1e-9 * want.max(1.0) {
        return Err(format!("tx throughput {tx_mbps} Mb/s is not the {} sent frames' {want} Mb/s", m(r, "tx_sent")));
    }
    Ok(())
}

proptest! {
    // No regression files: the tree is shared; a failure prints its scenario TOML.
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    /// For any random single-thread scenario, the run satisfies every
    /// invariant listed in the module doc.
    #[test]
    fn random_scenarios_keep_invariants(c in case()) {
        let text = c.toml();
        let s = Scenario::from_toml(&text, "random.toml", &[]).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let r = irqsim_core::simulate(&s, std::path::Path::new("."), Record { timeline: true })
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        // Synthetic receive frames are sized by the generator; sends always use packet_bytes.
        let rx_bytes = match c.load {
            Load::Synthetic { tx_share } => synthetic_rx_bytes(c.packet_bytes, tx_share),
            _ => c.packet_bytes,
        };
        check(&r, rx_bytes).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        check_tx(&r, c.packet_bytes).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    }

    /// Overload: with Poisson arrivals at 1.5–3× the CPU's receive capacity,
    /// small buffers and backlog, the invariants still hold and the delivered
    /// frames never exceed what the CPU can service (elapsed cycles / the
    /// minimum work per frame, one frame of slack).
    #[test]
    fn overload_drops_but_never_counts_drops(mut c in case(), factor in 1.5f64..3.0) {
        c.load = Load::Arrivals { poisson: true, factor };
        c.duration_us = 1500;
        c.rx_buffer_extra = c.rx_buffer_extra.min(4000);
        c.backlog = c.backlog.min(8);
        let text = c.toml();
        let s = Scenario::from_toml(&text, "overload.toml", &[]).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let r = irqsim_core::simulate(&s, std::path::Path::new("."), Record { timeline: true }).unwrap();
        check(&r, c.packet_bytes).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        // Minimal CPU work per delivered frame, with no overhead at all.
        let mut min_cycles = c.isr_rx as f64;
        if c.stack {
            // The copy is rounded to whole cycles.
            min_cycles += c.layer.iter().sum::<u64>() as f64 + c.wakeup as f64 + (c.copy_per_byte * f64::from(c.packet_bytes) - 0.5).max(0.0);
        }
        let cap = r.elapsed_cycles as f64 / min_cycles + 1.0;
        prop_assert!(m(&r, "rx_delivered") <= cap, "delivered {} > capacity {cap}\n{text}", m(&r, "rx_delivered"));
    }
}

/// A fixed, heavily overloaded receive scenario (Poisson at 3× capacity, a
/// 2-frame NIC buffer, a 4-packet backlog): frames are dropped, and the
/// received throughput is exactly the delivered frames' bits, strictly below
/// the offered bits.
#[test]
fn drops_are_not_throughput() {
    let text = r#"
[run]
seed = 11
duration_ms = 5.0
[cpu]
clock_mhz = 200.0
[nic]
rx_buffer_bytes = 3000
link_mbps = 1000.0
[stack]
enabled = true
backlog_packets = 4
[workload]
kind = "arrivals"
rate_per_s = 30000.0
packet_bytes = 1500
"#;
    let s = Scenario::from_toml(text, "overload.toml", &[]).unwrap();
    let r = irqsim_core::simulate(&s, std::path::Path::new("."), Record { timeline: true }).unwrap();
    check(&r, 1500).unwrap();
    let dropped = m(&r, "rx_dropped_nic") + m(&r, "rx_dropped_backlog");
    assert!(dropped > 10.0, "dropped {dropped}");
    let secs = m(&r, "sim_seconds");
    let offered_mbps = m(&r, "rx_offered") * 1500.0 * 8.0 / secs / 1e6;
    let delivered_mbps = m(&r, "rx_delivered") * 1500.0 * 8.0 / secs / 1e6;
    assert!((m(&r, "rx_throughput_mbps") - delivered_mbps).abs() < 1e-9);
    assert!(m(&r, "rx_throughput_mbps") < offered_mbps);
}
