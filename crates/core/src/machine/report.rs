//! The machine's report: each selected group of parts contributes its
//! metrics and conservation laws; cycle bins, records and the timeline are
//! common. A metric two groups both name (the run's length) appears once.

use super::{Machine, Route};
use crate::cpu::Bin;
use crate::device::source::Kind;
use crate::report::{Law, Name, Report, latency_metrics, latency_names, named};

type Metrics = Vec<(Name, f64)>;

impl Report {
    pub(crate) fn new(mut m: Machine) -> Self {
        // A run reports some tens of metrics: one allocation, no regrowth.
        let mut metrics: Metrics = Vec::with_capacity(64);
        let mut laws = Vec::new();
        let mut records = Vec::new();
        // A group names each metric once: only those before it can repeat one.
        let mut add = |more: Metrics| {
            let before = metrics.len();
            for (k, v) in more {
                if !metrics[..before].iter().any(|(name, _)| *name == k) {
                    metrics.push((k, v));
                }
            }
        };
        if m.net.active() {
            add(net(&m, &mut laws));
            records = m.net.latencies.take_records();
        }
        if m.delivery.active() {
            add(delivery(&m, &mut laws));
            if records.is_empty() {
                records = std::mem::take(&mut m.delivery.records);
            }
        }
        let queues = m.net.rss.as_ref().map_or(&[][..], |r| &r.coalesce[..]);
        if !queues.is_empty() {
            let sum = |f: fn(&crate::device::coalesce::Coalesce) -> u64| queues.iter().map(f).sum::<u64>() as f64;
            add(named([("coalesce_timer_interrupts", sum(|c| c.timer_interrupts)), ("coalesce_frame_interrupts", sum(|c| c.frame_interrupts))]));
            add(rss_dim(queues.iter().filter_map(|c| c.dim.as_ref()).collect(), m.end));
        }
        if let Some(c) = &m.net.coalesce {
            add(named([("coalesce_timer_interrupts", c.timer_interrupts as f64), ("coalesce_frame_interrupts", c.frame_interrupts as f64)]));
            if let Some(d) = &c.dim {
                add(one_dim(d, m.end));
            }
        }
        // The programmable NIC's DIM is the host's, one per return ring.
        match m.net.firmware.as_ref().map_or(&[][..], |f| &f.dim[..]) {
            [] => {}
            [d] => add(one_dim(d, m.end)),
            dims => add(rss_dim(dims.iter().collect(), m.end)),
        }
        if let Some(r) = &m.net.rss {
            let total = r.frames.iter().sum::<u64>().max(1) as f64;
            add(named([("rss_queues", r.frames.len() as f64), ("rss_busiest_queue_share", *r.frames.iter().max().unwrap_or(&0) as f64 / total)]));
            let per_queue =
                |q: usize| [(format!("rss_queue{q}_frames").into(), r.frames[q] as f64), (format!("rss_queue{q}_interrupts").into(), r.interrupts[q] as f64)];
            add((0..r.frames.len()).flat_map(per_queue).collect());
        }
        if let Some(n) = &m.net.napi {
            add(napi(n, &mut laws));
        }
        if m.masking.active() {
            add(masking(&m, &mut laws));
        }
        if matches!(m.net.route, Route::Masked(_)) || m.masking.wired || m.code.is_some() {
            add(nic_masking(&m, &mut laws));
        }
        if let Some(code) = &m.code {
            add(code_metrics(code));
        }
        add(crate::metrics::cpu_load(&m.threads.iter().map(|t| t.bins()).collect::<Vec<_>>(), m.end));
        let policy = m.threads[0].policy();
        Self {
            clock_mhz: m.clock_mhz,
            elapsed_cycles: m.end,
            metrics,
            bins: m.threads.iter().map(|t| t.bins()).collect(),
            context_bins: m.threads.iter().map(|t| t.context_bins()).collect(),
            code_bins: m.code.as_ref().map_or_else(Vec::new, |c| c.counts.clone()),
            nic_firmware: m.net.firmware.as_ref().and_then(|f| f.window()).map(|w| w.to_json()),
            contexts: (0..policy.contexts()).map(|c| policy.context_name(c).to_string()).collect(),
            records,
            laws,
            timeline: m.timeline,
        }
    }
}

/// One queue's DIM: its decisions, changes, last profile and each
/// profile's share of the run.
fn one_dim(d: &crate::device::dim::Dim, end: u64) -> Metrics {
    let mut out = named([("dim_decisions", d.decisions as f64), ("dim_profile_changes", d.changes as f64), ("dim_final_profile", d.ix as f64)]);
    out.extend(d.shares(end).iter().enumerate().map(|(i, &x)| (format!("dim_time_share_profile_{i}").into(), x)));
    out
}

/// DIM on every RSS queue: decisions and changes summed, the range of the
/// profiles the queues ended at, and each profile's share of queue-time.
fn rss_dim(dims: Vec<&crate::device::dim::Dim>, end: u64) -> Metrics {
    if dims.is_empty() {
        return Vec::new();
    }
    let sum = |f: fn(&crate::device::dim::Dim) -> u64| dims.iter().map(|d| f(d)).sum::<u64>() as f64;
    let ends = || dims.iter().map(|d| d.ix);
    let (lowest, highest) = (ends().min().unwrap_or(0), ends().max().unwrap_or(0));
    let mut out = named([
        ("dim_decisions", sum(|d| d.decisions)),
        ("dim_profile_changes", sum(|d| d.changes)),
        ("dim_final_profile_min", lowest as f64),
        ("dim_final_profile_max", highest as f64),
    ]);
    let mut shares = [0.0; 5];
    for d in &dims {
        for (s, x) in shares.iter_mut().zip(d.shares(end)) {
            *s += x / dims.len() as f64;
        }
    }
    out.extend(shares.iter().enumerate().map(|(i, &x)| (format!("dim_time_share_profile_{i}").into(), x)));
    out
}

/// Throughputs count delivered (received) or transmitted bits only; drops never count.
fn net(m: &Machine, laws: &mut Vec<Law>) -> Metrics {
    let n = &m.net;
    let c = &n.counters;
    let s = m.end as f64 / (m.clock_mhz * 1e6);
    // Frames code holds: on the ring, in the socket, queued to send.
    let (held, software) = m.code.as_ref().map_or((0, 0), |k| (k.sys.devices.frames.len() as u64, k.dropped_software));
    let rx_in_flight = n.nic.rx_waiting() as u64
        + n.rss.as_ref().map_or(0, |r| r.waiting())
        + n.napi.as_ref().map_or(0, |x| x.backlogged())
        + c.rx_in_stack
        + c.rx_in_dma
        + n.wire_waiting
        + held
        + n.firmware.as_ref().map_or(0, |f| f.in_flight())
        + n.ports.list.iter().map(|p| p.in_flight()).sum::<u64>()
        + n.forwarding.queued;
    // Forwarded frames on the wire, and frames the send entry queued.
    let sending = m.code.as_ref().map_or(0, |k| k.tx_busy.iter().zip(&k.tx_forwarding).filter(|&(&b, &f)| b && f).count() as u64 + k.sends_queued);
    let ports_sending = n.ports.list.iter().map(|p| p.tx.in_flight()).sum::<u64>();
    let tx_in_flight = n.nic.tx_in_flight() as u64 + c.tx_in_stack + sending + n.firmware.as_ref().map_or(0, |f| f.sending()) + ports_sending;
    let mut metrics = named([
        ("sim_seconds", s),
        ("sim_cycles", m.end as f64),
        ("events", m.events as f64),
        ("rx_offered", c.rx_offered as f64),
        ("rx_delivered", c.rx_delivered as f64),
        ("rx_dropped_nic", c.rx_dropped_nic as f64),
        ("rx_dropped_backlog", c.rx_dropped_backlog as f64),
        ("rx_dropped_wire", c.rx_dropped_wire as f64),
        ("rx_in_flight", rx_in_flight as f64),
        ("rx_throughput_mbps", c.rx_delivered_bytes as f64 * 8.0 / s / 1e6),
        ("tx_offered", c.tx_offered as f64),
        ("tx_sent", c.tx_sent as f64),
        ("tx_dropped", c.tx_dropped as f64),
        ("tx_in_flight", tx_in_flight as f64),
        ("tx_throughput_mbps", c.tx_sent_bytes as f64 * 8.0 / s / 1e6),
        ("interrupts", c.interrupts as f64),
        ("syscalls", c.syscalls as f64),
        ("syscalls_dropped", c.syscalls_dropped as f64),
        ("reordered_stimuli", n.reordered as f64),
    ]);
    if let crate::workload::Workload::Trace(t) = &n.workload {
        // Captured frames larger than the NIC's buffer (GRO/TSO): dropped, counted here.
        metrics.push(("rx_oversize_frames".into(), t.oversize_frames() as f64));
    }
    if m.code.is_some() {
        metrics.push(("rx_dropped_software".into(), software as f64));
        metrics.push(("rx_dropped_route".into(), m.code.as_ref().map_or(0, |k| k.sys.devices.rt_overflow) as f64));
        // A kernel per core (`code.cpus`): which one each CPU ran.
        if let Some(cpus) = m.code.as_ref().and_then(|k| k.cpus.as_ref()) {
            metrics.extend(cpus.iter().enumerate().map(|(t, &c)| (format!("cpu{t}_runs_code").into(), f64::from(u8::from(c)))));
        }
    }
    if let Some(f) = &n.firmware {
        metrics.extend(named([
            ("nic_firmware_instructions", f.instructions() as f64),
            ("nic_firmware_interrupts", f.interrupts as f64),
            ("nic_firmware_cycles", f.now() as f64),
        ]));
        if let Some((frames, timer)) = f.coalesce {
            metrics.extend(named([("coalesce_timer_interrupts", timer as f64), ("coalesce_frame_interrupts", frames as f64)]));
        }
        let w = f.window();
        let window = |x: fn(&irqsim_firmware::Measured) -> u64| w.map_or(0.0, |w| x(w) as f64);
        metrics.extend(named([
            ("nic_firmware_window_cycles", window(|w| w.cycles)),
            ("nic_firmware_window_frames", window(|w| w.frames)),
            ("nic_firmware_window_instructions", window(|w| w.instructions)),
        ]));
    }
    metrics.extend(latency_metrics(latency_names!("latency"), n.latencies.distribution(), m.clock_mhz));
    laws.push(Law {
        what: "rx offered = delivered + dropped + in flight",
        lhs: c.rx_offered,
        rhs: c.rx_delivered + c.rx_dropped_nic + c.rx_dropped_backlog + c.rx_dropped_wire + software + n.forwarding.dropped + rx_in_flight,
    });
    if n.forwarding.first.is_some() || n.ports.list.iter().any(|p| p.forward.is_some()) {
        metrics.extend(named([("rx_forwarded", n.forwarding.forwarded as f64), ("rx_dropped_forward", n.forwarding.dropped as f64)]));
    }
    metrics.extend(ports(m, laws));
    laws.push(Law { what: "system calls = done + dropped + waiting", lhs: c.syscalls, rhs: c.syscalls_done + c.syscalls_dropped + c.syscalls_waiting });
    laws.push(Law { what: "tx offered = sent + dropped + in flight", lhs: c.tx_offered, rhs: c.tx_sent + c.tx_dropped + tx_in_flight });
    metrics
}

/// Each NIC's own counts beside the totals, when there are several (the
/// first NIC's are the totals less the others'), and each other NIC's
/// frames in = dropped + held + taken.
fn ports(m: &Machine, laws: &mut Vec<Law>) -> Metrics {
    let n = &m.net;
    if n.ports.list.is_empty() {
        return Vec::new();
    }
    let c = &n.counters;
    let sum = |f: fn(&super::nics::Port) -> u64| n.ports.list.iter().map(f).sum::<u64>();
    let mut out = named([
        ("nics", (n.ports.list.len() + 1) as f64),
        ("nic0_rx_offered", (c.rx_offered - sum(|p| p.counters.offered)) as f64),
        ("nic0_interrupts", (c.interrupts - sum(|p| p.interrupts())) as f64),
    ]);
    for (i, p) in n.ports.list.iter().enumerate() {
        let k = &p.counters;
        let name = |what: &str| format!("nic{}_{what}", i + 1).into();
        let (dropped, taken) = (k.dropped_wire + k.dropped_nic, p.taken().0);
        out.extend(
            [("rx_offered", k.offered), ("rx_dropped", dropped), ("rx_taken", taken), ("interrupts", p.interrupts())].map(|(what, x)| (name(what), x as f64)),
        );
        // With kernel code, frames it holds (on its ring, in its queues);
        // taken are those it finished with (delivered or dropped).
        let queues = n.ports.first[i]..n.ports.first[i] + p.rx.rings.len();
        let code = m.code.as_ref().map_or(0, |c| c.sys.devices.frames.values().filter(|f| queues.contains(&usize::from(f.queue))).count() as u64);
        laws.push(Law { what: "a NIC's rx offered = dropped + held + taken by the driver", lhs: k.offered, rhs: dropped + p.in_flight() + code + taken });
        if n.forwarding.first == Some(i as u8 + 1) || n.ports.list.iter().any(|o| o.forward == Some(i as u8 + 1)) {
            out.push((name("tx_sent"), p.sent as f64));
        }
        if !p.rx.coalesce.is_empty() {
            let fired: u64 = p.rx.coalesce.iter().map(|c| c.timer_interrupts + c.frame_interrupts).sum();
            out.push((name("coalesce_interrupts"), fired as f64));
            if p.rx.coalesce[0].dim.is_some() {
                out.push((name("dim_decisions"), p.rx.coalesce.iter().filter_map(|c| c.dim.as_ref()).map(|d| d.decisions).sum::<u64>() as f64));
            }
        }
        if p.rx.rings.len() > 1 {
            let steered: u64 = p.rx.frames.iter().sum();
            let busiest = p.rx.frames.iter().max().copied().unwrap_or(0);
            out.extend(
                [("rss_queues", p.rx.rings.len() as f64), ("rss_busiest_queue_share", busiest as f64 / steered.max(1) as f64)].map(|(what, x)| (name(what), x)),
            );
        }
    }
    out
}

/// Latency distributions at the bus analyzer, counts, CPU cost per interrupt.
fn delivery(m: &Machine, laws: &mut Vec<Law>) -> Metrics {
    let d = &m.delivery;
    let c = d.counters;
    let clock = m.clock_mhz;
    let sum = |f: fn(&crate::device::source::Source) -> u64| d.sources.iter().map(f).sum::<u64>();
    let raised = sum(|s| s.raised);
    let serviced = sum(|s| s.serviced);
    let lost = sum(|s| s.lost);
    let in_flight = sum(|s| s.holding()) + d.intc.holding() + c.taken_unclaimed;
    let bins: Vec<_> = m.threads.iter().map(|t| t.bins()).collect();
    let busy: u64 = bins.iter().map(|b| b.get(Bin::Interrupt) + b.get(Bin::Overhead) + b.get(Bin::BottomHalf)).sum();
    let user: u64 = bins.iter().map(|b| b.get(Bin::User)).sum();
    // Per serviced interrupt: spurious deliveries are part of its cost.
    let per_irq = busy as f64 / serviced.max(1) as f64;
    let seconds = m.end as f64 / (clock * 1e6);
    let mut metrics = named([
        ("sim_seconds", seconds),
        ("events", m.events as f64),
        ("interrupts_raised", raised as f64),
        ("interrupts_serviced", serviced as f64),
        ("interrupts_lost", lost as f64),
        ("interrupts_in_flight", in_flight as f64),
    ]);
    laws.push(Law { what: "interrupts raised = serviced + lost + in flight", lhs: raised, rhs: serviced + lost + in_flight });
    if d.sources.len() > 1 {
        for (i, s) in d.sources.iter().enumerate() {
            metrics.extend([("raised", s.raised), ("serviced", s.serviced), ("lost", s.lost)].map(|(what, n)| (format!("source{i}_{what}").into(), n as f64)));
        }
    }
    let exercisers = || d.sources.iter().filter(|s| s.kind == Kind::Exerciser);
    if exercisers().next().is_none() {
        metrics.extend(named([("spurious_interrupts", c.spurious as f64), ("cpu_cycles_per_interrupt", per_irq)]));
        return metrics;
    }
    // Every exerciser's, summed (the exerciser workload has one).
    let ex = |f: fn(&crate::device::source::Source) -> u64| exercisers().map(f).sum::<u64>() as f64;
    metrics.extend(named([
        ("exerciser_raised", ex(|s| s.raised)),
        ("exerciser_serviced", ex(|s| s.serviced)),
        ("exerciser_lost", ex(|s| s.lost)),
        ("spurious_interrupts", c.spurious as f64),
        ("tasklet_runs", c.tasklet_runs as f64),
        ("tasklet_merged", c.tasklet_merged as f64),
        ("interrupt_overtook_data", c.overtook_data as f64),
        ("stale_data_reads", c.stale_reads as f64),
        ("cpu_cycles_per_interrupt", per_irq),
        ("cpu_us_per_interrupt", per_irq / clock),
        ("max_interrupts_per_s", if serviced == 0 { f64::NAN } else { clock * 1e6 / per_irq }),
        ("user_share", user as f64 / (m.end as f64 * bins.len() as f64)),
    ]));
    metrics.extend(latency_metrics(latency_names!("isr_latency"), &d.isr_hist, clock));
    metrics.extend(latency_metrics(latency_names!("tasklet_latency"), &d.tasklet_hist, clock));
    laws.push(Law {
        what: "exerciser ISR claims = tasklet runs + merged schedules + scheduled",
        lhs: c.exerciser_claims,
        rhs: c.tasklet_runs + c.tasklet_merged + d.tasklets.iter().filter(|t| t.is_some()).count() as u64,
    });
    laws.push(Law { what: "stale DMA data reads = 0", lhs: c.stale_reads, rhs: 0 });
    metrics
}

/// Null-RPC cycles and the cost of masking per RPC.
fn masking(m: &Machine, laws: &mut Vec<Law>) -> Metrics {
    let k = &m.masking;
    let c = k.counters;
    let costs = k.costs;
    let per_rpc = |x: f64| {
        if c.passes == 0 { f64::NAN } else { x / c.passes as f64 }
    };
    let cycles_per_rpc = per_rpc(c.last_pass_end as f64);
    let in_flight = k.in_flight();
    laws.push(Law { what: "interrupts raised = handled + merged + in flight", lhs: c.raised, rhs: c.handled + c.merged + in_flight });
    named([
        ("sim_cycles", m.end as f64),
        ("events", m.events as f64),
        ("rpcs", c.passes as f64),
        ("cycles_per_rpc", cycles_per_rpc),
        ("us_per_rpc", cycles_per_rpc / m.clock_mhz),
        ("mask_cycles_per_rpc", per_rpc(c.base_masking_cycles as f64)),
        ("masking_cycles_per_rpc", per_rpc(c.masking_cycles as f64)),
        ("conventional_pair_cycles", costs.conventional_pair() as f64),
        ("optimistic_pair_cycles", costs.optimistic_pair().map_or(f64::NAN, |x| x as f64)),
        ("continuation_cycles", costs.continuation as f64),
        ("interrupts", c.raised as f64),
        ("interrupts_handled", c.handled as f64),
        ("interrupts_held", c.held as f64),
        ("interrupts_deferred", c.deferred as f64),
        ("interrupts_merged", c.merged as f64),
        ("interrupts_in_flight", in_flight as f64),
    ])
}

/// Critical sections in the NIC path: what masking cost per delivered
/// frame, and the interrupts the masks held or deferred: the NIC's on the
/// bare wire (with their conservation law), every device's behind a
/// controller (which keeps them until taken).
fn nic_masking(m: &Machine, laws: &mut Vec<Law>) -> Metrics {
    let k = &m.masking;
    let c = k.counters;
    let frames = m.net.counters.rx_delivered;
    let mut out = named([
        ("masking_cycles", c.masking_cycles as f64),
        ("masking_cycles_per_frame", if frames == 0 { f64::NAN } else { c.masking_cycles as f64 / frames as f64 }),
    ]);
    if k.wired || m.code.is_some() {
        out.extend(named([("interrupts_held", c.held as f64), ("interrupts_deferred", c.deferred as f64)]));
        return out;
    }
    let in_flight = k.in_flight();
    laws.push(Law { what: "masked NIC interrupts raised = handled + merged + in flight", lhs: c.raised, rhs: c.handled + c.merged + in_flight });
    out.extend(named([("nic_interrupts_held", c.held as f64), ("nic_interrupts_deferred", c.deferred as f64), ("nic_interrupts_in_flight", in_flight as f64)]));
    out
}

/// What code did, summed over threads: instructions and misses per bin.
fn code_metrics(code: &crate::code::Code) -> Metrics {
    let totals = code.totals();
    let mut out = Vec::new();
    for bin in [Bin::User, Bin::Kernel, Bin::Interrupt, Bin::BottomHalf] {
        let c = totals[bin as usize];
        let name = bin.name();
        out.push((format!("code_{name}_instructions").into(), c.instructions as f64));
        if code.sys.caches.is_some() {
            out.push((format!("code_{name}_l1i_misses").into(), c.l1i_misses as f64));
            out.push((format!("code_{name}_l1d_misses").into(), c.l1d_misses as f64));
            out.push((format!("code_{name}_l2_misses").into(), c.l2_misses as f64));
        }
    }
    out.push(("rx_forwarded".into(), code.forwarded as f64));
    out
}

/// What the NAPI path did, and its two invariants.
fn napi(n: &crate::kernel::napi::Napi, laws: &mut Vec<Law>) -> Metrics {
    let c = n.counters;
    laws.push(Law { what: "NIC interrupt enabled while its poll is scheduled = 0", lhs: c.irq_enabled_while_scheduled, rhs: 0 });
    laws.push(Law { what: "frames of one poll above the weight = 0", lhs: c.max_poll_frames.saturating_sub(n.weight), rhs: 0 });
    let mut out = named([
        ("napi_schedules", c.schedules as f64),
        // The same loop runs in the softirq or, threaded, in each instance's thread.
        ("napi_softirq_runs", if n.threaded { 0.0 } else { c.softirq_runs as f64 }),
        ("napi_thread_runs", if n.threaded { c.softirq_runs as f64 } else { 0.0 }),
        ("napi_polls", c.polls as f64),
        ("napi_completes", c.completes as f64),
        ("napi_not_done", c.polls.saturating_sub(c.completes) as f64),
        ("napi_time_squeezes", c.squeezes as f64),
        ("napi_max_poll_frames", c.max_poll_frames as f64),
        ("napi_max_run_frames", c.max_run_frames as f64),
        ("napi_rotted", c.rotted as f64),
        ("napi_late_acks", c.late_acks as f64),
        ("napi_deferred", c.deferred as f64),
        ("napi_busy_poll_frames", n.busy.as_ref().map_or(0, |b| b.frames) as f64),
        ("napi_busy_poll_sleeps", n.busy.as_ref().map_or(0, |b| b.sleeps) as f64),
        ("rps_remote_frames", n.rps.as_ref().map_or(0, |r| r.remote) as f64),
    ]);
    // With RSS: how many queues' instances the receiver busy-polled.
    if let Some(b) = n.busy.as_ref().filter(|b| b.by_queue.len() > 1) {
        out.extend(named([("napi_busy_poll_queues", b.by_queue.iter().filter(|&&f| f > 0).count() as f64)]));
    }
    out
}
