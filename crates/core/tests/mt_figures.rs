//! The paper's Figure 4 and Figure 5 sequences (seed paper, Section 4), replayed
//! as scripted runs and checked span by span on the timeline.
//!
//! Contexts, multithreaded policy: C1 = application (P3, context index 0),
//! C2 = Driver ISR (P1, index 1), C3 = protocol layers (P2, index 2). With the
//! single-context policy everything runs in context 0 and every preemption of
//! running code pays `save_restore_cycles`.
//!
//! All costs are written out in the scenario (not left to defaults) so that
//! the arithmetic in the comments below stays true whatever the defaults
//! become. Clock 200 MHz; 500-byte frames; DMA 4 bytes/cycle; link 50 Mb/s.
//!
//! Shared arithmetic (cycles):
//! - send path of one 500-byte frame, after the SWI entry:
//!   socket 3090 + UDP 3090 + IP (3090 + 500 × 1 copy) 3590 + Driver Send 2756 = 12,526;
//! - receive path after the SWI entry: IP 3090 + UDP (3090 + 500 copy + 5139 wake-up)
//!   8729 + socket 3090 = 14,909;
//! - a transmitted frame leaves the wire ceil(500 / 4) = 125 DMA cycles plus
//!   500 × 8 bit / 50 Mb/s = 80 µs = 16,000 wire cycles = 16,125 cycles after
//!   Driver Send hands it to the NIC.

use irqsim_core::cpu::Bin;
use irqsim_core::{Record, Report, Scenario};

const CLOCK_MHZ: u64 = 200;
const IRQ_ENTRY: u64 = 6;
const SWI_ENTRY: u64 = 6;
const SAVE_RESTORE: u64 = 186;
const DRIVER_SEND: u64 = 2756;
const ISR_TX: u64 = 536;
const ISR_RX: u64 = 2228;
const SOCKET: u64 = 3090;
const UDP: u64 = 3090;
const IP: u64 = 3090;
const WAKEUP: u64 = 5139;
const BYTES: u64 = 500;
/// 1 cycle per byte copied (IP on send, UDP on receive).
const COPY: u64 = BYTES;
const LINK_MBPS: u64 = 50;
const DMA_BYTES_PER_CYCLE: u64 = 4;
/// 0.2 ms at 200 MHz.
const END: u64 = 40_000;

/// Cycles from Driver Send's end to the frame being on the wire (TxOut).
const TX_TIME: u64 = BYTES.div_ceil(DMA_BYTES_PER_CYCLE) + BYTES * 8 * CLOCK_MHZ / LINK_MBPS;

const C1: usize = 0;
const C2: usize = 1;
const C3: usize = 2;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Policy {
    Single,
    Multithreaded,
}

impl Policy {
    fn key(self) -> &'static str {
        match self {
            Policy::Single => "single",
            Policy::Multithreaded => "multithreaded",
        }
    }
    /// Save/restore paid by a preemption of running code.
    fn sr(self) -> u64 {
        match self {
            Policy::Single => SAVE_RESTORE,
            Policy::Multithreaded => 0,
        }
    }
}

fn scenario(policy: Policy, events: &str) -> String {
    format!(
        r#"
name = "figure"
[run]
seed = 1
duration_ms = 0.2
[cpu]
clock_mhz = {CLOCK_MHZ}.0
threads = 1
context_policy = "{policy}"
irq_entry_cycles = {IRQ_ENTRY}
swi_entry_cycles = {SWI_ENTRY}
save_restore_cycles = {SAVE_RESTORE}
[nic]
rx_buffer_bytes = 16384
tx_queue_packets = 64
link_mbps = {LINK_MBPS}.0
dma_bytes_per_cycle = {DMA_BYTES_PER_CYCLE}.0
irq_thread = 0
[driver]
send_cycles = {DRIVER_SEND}
isr_tx_done_cycles = {ISR_TX}
isr_rx_done_cycles = {ISR_RX}
[stack]
enabled = true
socket_cycles = {SOCKET}
udp_cycles = {UDP}
ip_cycles = {IP}
copy_cycles_per_byte = 1.0
recv_wakeup_cycles = {WAKEUP}
backlog_packets = 1000
[app]
background = true
syscall_cycles = 400
thread = 0
[workload]
kind = "script"
{events}
"#,
        policy = policy.key()
    )
}

fn run(policy: Policy, events: &str) -> Report {
    let text = scenario(policy, events);
    let s = Scenario::from_toml(&text, "figure.toml", &[]).expect("scenario loads");
    assert_eq!(s.duration_cycles(), END);
    let report = irqsim_core::simulate(&s, std::path::Path::new("."), Record { timeline: true }).expect("run");
    report.check_invariants().expect("invariants");
    assert_eq!(report.timeline.dropped(), 0);
    report
}

type S = (usize, &'static str, u64, u64);

fn spans(r: &Report) -> Vec<S> {
    r.timeline.spans().iter().map(|s| (s.context, s.label, s.start, s.end)).collect()
}

/// Builds the expected timeline with a cursor, mapping contexts per policy.
struct Expect {
    policy: Policy,
    t: u64,
    spans: Vec<S>,
}

impl Expect {
    fn new(policy: Policy) -> Self {
        Self { policy, t: 0, spans: Vec::new() }
    }
    fn run(&mut self, ctx: usize, label: &'static str, cycles: u64) {
        let ctx = if self.policy == Policy::Single { 0 } else { ctx };
        self.spans.push((ctx, label, self.t, self.t + cycles));
        self.t += cycles;
    }
    fn run_until(&mut self, ctx: usize, label: &'static str, until: u64) {
        assert!(until > self.t, "{label}: scripted time {until} is not after {}", self.t);
        self.run(ctx, label, until - self.t);
    }
}

/// Consecutive distinct contexts of the spans (overhead counted in the context it is spent in).
fn context_order(s: &[S]) -> Vec<usize> {
    let mut v: Vec<usize> = s.iter().map(|x| x.0).collect();
    v.dedup();
    v
}

/// Labels in execution order, consecutive repeats and overhead removed.
fn work_order(s: &[S]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = s.iter().map(|x| x.1).filter(|l| *l != "overhead").collect();
    v.dedup();
    v
}

/// Every span of each layer runs in the given context.
fn assert_layer_contexts(s: &[S], want: &[(&str, usize)]) {
    for span in s {
        if span.1 == "overhead" {
            continue;
        }
        let ctx = want.iter().find(|(l, _)| *l == span.1).unwrap_or_else(|| panic!("unexpected layer {span:?}")).1;
        assert_eq!(span.0, ctx, "layer `{}` ran in context {} instead of {ctx}: {span:?}", span.1, span.0);
    }
}

fn overheads(s: &[S]) -> Vec<u64> {
    s.iter().filter(|x| x.1 == "overhead").map(|x| x.3 - x.2).collect()
}

fn marks(r: &Report) -> Vec<(&'static str, u64)> {
    r.timeline.marks().iter().map(|m| (m.label, m.time)).collect()
}

// ---------------------------------------------------------------- Figure 4

/// The application sends first (the send whose Tx-done interrupt arrives later).
const F4_SEND_AT: u64 = 1_000;
/// The frame arrives while the application runs again in C1.
const F4_RX_AT: u64 = 20_000;

const FIG4_EVENTS: &str = r#"
[[workload.events]]
at_cycle = 1000
action = "send"
bytes = 500
[[workload.events]]
at_cycle = 20000
action = "receive"
bytes = 500
"#;

/// Figure 4's expected timeline.
///
/// Multithreaded (sr = 0), cycles:
/// - C1 application 0..1000; the send SWI: C3 entry 1000..1006, socket send
///   ..4096, UDP send ..7186, IP send ..10776, Driver Send ..13532; the frame is
///   out at 13532 + 16125 = 29657 (the Tx-done interrupt);
/// - C1 application 13532..20000; the frame arrives at 20000: C2 entry ..20006,
///   Driver ISR (Rx done) ..22234 (the SWI it queues waits meanwhile);
/// - C3 SWI entry ..22240, IP receive ..25330, UDP receive from 25330 (8729
///   cycles, to 34059 undisturbed) — the Tx-done interrupt at 29657 lands in it;
/// - C2 entry 29657..29663, Driver ISR (Tx done) ..30199; C3 UDP receive resumes
///   with 8729 − 4327 = 4402 cycles ..34601, socket receive ..37691; C1 to 40000.
///
/// Single (sr = 186): the send SWI and the Rx interrupt each preempt the
/// application (6 + 186), so the send ends at 13718 and the frame is out at
/// 29843; the ISR runs 20192..22420; the protocol's SWI starts after the ISR
/// finished (6 only): IP 22426..25516, UDP receive from 25516 (to 34245
/// undisturbed), preempted at 29843 by the Tx-done interrupt (6 + 186).
fn fig4_expected(policy: Policy) -> Expect {
    let sr = policy.sr();
    let mut e = Expect::new(policy);
    e.run_until(C1, "application", F4_SEND_AT);
    e.run(C3, "overhead", SWI_ENTRY + sr);
    e.run(C3, "socket send", SOCKET);
    e.run(C3, "UDP send", UDP);
    e.run(C3, "IP send", IP + COPY);
    e.run(C3, "Driver Send", DRIVER_SEND);
    let tx_out = e.t + TX_TIME;
    e.run_until(C1, "application", F4_RX_AT);
    e.run(C2, "overhead", IRQ_ENTRY + sr);
    e.run(C2, "Driver ISR (Rx done)", ISR_RX);
    // The queued SWI starts only now, after the ISR finished: no save/restore.
    e.run(C3, "overhead", SWI_ENTRY);
    e.run(C3, "IP receive", IP);
    let udp = UDP + COPY + WAKEUP;
    let udp_start = e.t;
    assert!(udp_start < tx_out && tx_out < udp_start + udp, "the Tx-done interrupt ({tx_out}) must land inside UDP receive ({udp_start}..{})", udp_start + udp);
    e.run_until(C3, "UDP receive", tx_out);
    e.run(C2, "overhead", IRQ_ENTRY + sr);
    e.run(C2, "Driver ISR (Tx done)", ISR_TX);
    e.run(C3, "UDP receive", udp - (tx_out - udp_start));
    e.run(C3, "socket receive", SOCKET);
    e.run_until(C1, "application", END);
    e
}

/// Figure 4, multithreaded contexts: the application runs in C1; the Rx
/// interrupt switches to C2 for the Driver ISR while the SWI it queued waits;
/// after the ISR, C3 runs IP, UDP and socket receive; the Tx-done interrupt of
/// the send issued earlier preempts the protocol (C2, Driver ISR Tx done); the
/// protocol resumes in C3 where it left off; only then does C1 resume. Checks
/// every span exactly (context, layer, start, end), the order of context
/// switches, which context runs each layer, and that each entry costs only
/// its 6-cycle pipeline sequence (no save/restore).
#[test]
fn figure4_multithreaded_sequence() {
    let r = run(Policy::Multithreaded, FIG4_EVENTS);
    let got = spans(&r);
    let want = fig4_expected(Policy::Multithreaded);
    assert_eq!(got, want.spans, "Figure 4 timeline (multithreaded)");

    // The order of context switches: app, send protocol, app, Rx ISR, receive
    // protocol, Tx ISR, receive protocol (where it left off), app.
    assert_eq!(context_order(&got), vec![C1, C3, C1, C2, C3, C2, C3, C1]);
    assert_eq!(
        work_order(&got),
        vec![
            "application",
            "socket send",
            "UDP send",
            "IP send",
            "Driver Send",
            "application",
            "Driver ISR (Rx done)",
            "IP receive",
            "UDP receive",
            "Driver ISR (Tx done)",
            "UDP receive",
            "socket receive",
            "application",
        ]
    );
    assert_layer_contexts(
        &got,
        &[
            ("application", C1),
            ("Driver ISR (Rx done)", C2),
            ("Driver ISR (Tx done)", C2),
            ("socket send", C3),
            ("UDP send", C3),
            ("IP send", C3),
            ("Driver Send", C3),
            ("IP receive", C3),
            ("UDP receive", C3),
            ("socket receive", C3),
        ],
    );
    // Both packets are processed before the application gets the CPU back:
    // nothing runs in C1 from the Rx interrupt to the end of socket receive.
    let rx_isr = got.iter().position(|s| s.1 == "Driver ISR (Rx done)").unwrap();
    let sock = got.iter().position(|s| s.1 == "socket receive").unwrap();
    assert!(got[rx_isr..=sock].iter().all(|s| s.0 != C1));

    // Four entries (send SWI, Rx IRQ, receive SWI, Tx IRQ), 6 cycles each, nothing else.
    assert_eq!(overheads(&got), vec![SWI_ENTRY, IRQ_ENTRY, SWI_ENTRY, IRQ_ENTRY]);
    assert_eq!(r.bins[0].get(Bin::Overhead), 2 * SWI_ENTRY + 2 * IRQ_ENTRY);

    // The device's view: the Rx interrupt at the arrival, the Tx-done one when the frame is out.
    let tx_out = F4_SEND_AT + SWI_ENTRY + SOCKET + UDP + IP + COPY + DRIVER_SEND + TX_TIME;
    assert_eq!(tx_out, 29_657);
    assert_eq!(marks(&r), vec![("frame received", F4_RX_AT), ("NIC interrupt", F4_RX_AT), ("frame sent", tx_out), ("NIC interrupt", tx_out)]);
    assert_eq!(r.metric("rx_delivered"), Some(1.0));
    assert_eq!(r.metric("tx_sent"), Some(1.0));
    assert_eq!(r.metric("interrupts"), Some(2.0));
}

/// Figure 4, single register context: the same work in the same order, but
/// every preemption of running code (the send SWI and the Rx interrupt
/// preempting the application, the Tx-done interrupt preempting the protocol)
/// pays `save_restore_cycles` on top of its entry, while the protocol SWI,
/// which starts only after the preempting ISR finished, pays its entry alone.
/// Overhead cycles are asserted exactly: 3 × 186 + 4 × 6 = 582.
#[test]
fn figure4_single_context_pays_save_restore_per_preemption() {
    let r = run(Policy::Single, FIG4_EVENTS);
    let got = spans(&r);
    let want = fig4_expected(Policy::Single);
    assert_eq!(got, want.spans, "Figure 4 timeline (single context)");
    assert!(got.iter().all(|s| s.0 == 0));

    let mt = run(Policy::Multithreaded, FIG4_EVENTS);
    assert_eq!(work_order(&got), work_order(&spans(&mt)), "same order of work under both policies");

    let preempt = IRQ_ENTRY + SAVE_RESTORE;
    assert_eq!(overheads(&got), vec![SWI_ENTRY + SAVE_RESTORE, preempt, SWI_ENTRY, preempt]);
    assert_eq!(r.bins[0].get(Bin::Overhead), 3 * SAVE_RESTORE + 2 * SWI_ENTRY + 2 * IRQ_ENTRY);
    assert_eq!(r.bins[0].get(Bin::Overhead), 582);
    // The extra overhead is the only difference in the kernel's and ISR's own work.
    assert_eq!(r.bins[0].get(Bin::Kernel), mt.bins[0].get(Bin::Kernel));
    assert_eq!(r.bins[0].get(Bin::Interrupt), mt.bins[0].get(Bin::Interrupt));
    assert_eq!(r.bins[0].get(Bin::User) + 3 * SAVE_RESTORE, mt.bins[0].get(Bin::User));
}

// ---------------------------------------------------------------- Figure 5

/// An earlier send whose transmission completes during the second send call.
const F5_SEND1_AT: u64 = 1_000;
/// The application's send system call of Figure 5.
const F5_SEND2_AT: u64 = 20_000;

const FIG5_EVENTS: &str = r#"
[[workload.events]]
at_cycle = 1000
action = "send"
bytes = 500
[[workload.events]]
at_cycle = 20000
action = "send"
bytes = 500
"#;

/// Figure 5's expected timeline.
///
/// Multithreaded: the first send runs in C3 1006..13532 and its frame is out
/// at 13532 + 16125 = 29657. The second send call at 20000: C3 entry ..20006,
/// socket send ..23096, UDP send ..26186, IP send from 26186 (3590 cycles, to
/// 29776 undisturbed) — the Tx-done interrupt at 29657 lands in it: C2 entry
/// ..29663, Driver ISR (Tx done) ..30199; IP send resumes for 119 cycles
/// ..30318, Driver Send ..33074; C1 to the end (the second frame is out at
/// 33074 + 16125 = 49199, after the end at 40000).
///
/// Single: both send calls preempt the application (6 + 186): the first ends
/// at 13718, its frame is out at 29843; the second runs socket 20192..23282,
/// UDP ..26372, IP from 26372 (to 29962), preempted at 29843 (6 + 186).
fn fig5_expected(policy: Policy) -> Expect {
    let sr = policy.sr();
    let mut e = Expect::new(policy);
    e.run_until(C1, "application", F5_SEND1_AT);
    e.run(C3, "overhead", SWI_ENTRY + sr);
    e.run(C3, "socket send", SOCKET);
    e.run(C3, "UDP send", UDP);
    e.run(C3, "IP send", IP + COPY);
    e.run(C3, "Driver Send", DRIVER_SEND);
    let tx_out = e.t + TX_TIME;
    e.run_until(C1, "application", F5_SEND2_AT);
    e.run(C3, "overhead", SWI_ENTRY + sr);
    e.run(C3, "socket send", SOCKET);
    e.run(C3, "UDP send", UDP);
    let ip = IP + COPY;
    let ip_start = e.t;
    assert!(ip_start < tx_out && tx_out < ip_start + ip, "the Tx-done interrupt ({tx_out}) must land inside IP send ({ip_start}..{})", ip_start + ip);
    e.run_until(C3, "IP send", tx_out);
    e.run(C2, "overhead", IRQ_ENTRY + sr);
    e.run(C2, "Driver ISR (Tx done)", ISR_TX);
    e.run(C3, "IP send", ip - (tx_out - ip_start));
    e.run(C3, "Driver Send", DRIVER_SEND);
    assert!(e.t + TX_TIME > END, "the second frame must still be on its way at the end");
    e.run_until(C1, "application", END);
    e
}

/// Figure 5, multithreaded contexts: the application in C1 makes a send system
/// call; the SWI switches to C3, which runs socket, UDP and IP send; the
/// Tx-done interrupt of an earlier transmission arrives meanwhile and switches
/// to C2 (Driver ISR Tx done); the send path resumes in C3 where it left off
/// and runs Driver Send; then C1 resumes. Checks every span exactly, the order
/// of context switches and which context runs each layer.
#[test]
fn figure5_multithreaded_sequence() {
    let r = run(Policy::Multithreaded, FIG5_EVENTS);
    let got = spans(&r);
    let want = fig5_expected(Policy::Multithreaded);
    assert_eq!(got, want.spans, "Figure 5 timeline (multithreaded)");

    // app, first send, app, second send call, Tx-done ISR, the send call resumed, app.
    assert_eq!(context_order(&got), vec![C1, C3, C1, C3, C2, C3, C1]);
    let second_call: Vec<&str> = work_order(&got).into_iter().skip(6).collect();
    assert_eq!(second_call, vec!["socket send", "UDP send", "IP send", "Driver ISR (Tx done)", "IP send", "Driver Send", "application"]);
    assert_layer_contexts(
        &got,
        &[("application", C1), ("Driver ISR (Tx done)", C2), ("socket send", C3), ("UDP send", C3), ("IP send", C3), ("Driver Send", C3)],
    );
    assert_eq!(overheads(&got), vec![SWI_ENTRY, SWI_ENTRY, IRQ_ENTRY]);
    assert_eq!(r.bins[0].get(Bin::Overhead), 2 * SWI_ENTRY + IRQ_ENTRY);

    let tx_out = F5_SEND1_AT + SWI_ENTRY + SOCKET + UDP + IP + COPY + DRIVER_SEND + TX_TIME;
    assert_eq!(tx_out, 29_657);
    assert_eq!(marks(&r), vec![("frame sent", tx_out), ("NIC interrupt", tx_out)]);
    assert_eq!(r.metric("tx_offered"), Some(2.0));
    assert_eq!(r.metric("tx_sent"), Some(1.0));
    assert_eq!(r.metric("tx_in_flight"), Some(1.0));
}

/// Figure 5, single register context: same order of work; both send calls
/// preempt the running application and the Tx-done interrupt preempts the
/// running protocol, so each pays 186 cycles of save/restore on top of its
/// entry: overhead = 3 × 186 + 2 × 6 + 6 = 576 cycles exactly.
#[test]
fn figure5_single_context_pays_save_restore_per_preemption() {
    let r = run(Policy::Single, FIG5_EVENTS);
    let got = spans(&r);
    let want = fig5_expected(Policy::Single);
    assert_eq!(got, want.spans, "Figure 5 timeline (single context)");
    assert!(got.iter().all(|s| s.0 == 0));

    let mt = run(Policy::Multithreaded, FIG5_EVENTS);
    assert_eq!(work_order(&got), work_order(&spans(&mt)), "same order of work under both policies");
    assert_eq!(overheads(&got), vec![SWI_ENTRY + SAVE_RESTORE, SWI_ENTRY + SAVE_RESTORE, IRQ_ENTRY + SAVE_RESTORE]);
    assert_eq!(r.bins[0].get(Bin::Overhead), 576);
    assert_eq!(r.bins[0].get(Bin::User) + 3 * SAVE_RESTORE, mt.bins[0].get(Bin::User));
}

/// Single context: an interrupt that arrives while nothing runs (no
/// background application, CPU idle) preempts no code and so pays its entry
/// alone; likewise the protocol SWI it queues. Only preemption of running code
/// costs a save/restore.
#[test]
fn single_context_idle_cpu_pays_no_save_restore() {
    let text = scenario(Policy::Single, "[[workload.events]]\nat_cycle = 1000\naction = \"receive\"\nbytes = 500\n")
        .replace("background = true", "background = false");
    let s = Scenario::from_toml(&text, "idle.toml", &[]).unwrap();
    let r = irqsim_core::simulate(&s, std::path::Path::new("."), Record { timeline: true }).unwrap();
    r.check_invariants().unwrap();
    let got = spans(&r);
    let mut e = Expect::new(Policy::Single);
    e.t = 1000;
    e.run(C2, "overhead", IRQ_ENTRY);
    e.run(C2, "Driver ISR (Rx done)", ISR_RX);
    e.run(C3, "overhead", SWI_ENTRY);
    e.run(C3, "IP receive", IP);
    e.run(C3, "UDP receive", UDP + COPY + WAKEUP);
    e.run(C3, "socket receive", SOCKET);
    assert_eq!(got, e.spans);
    assert_eq!(r.bins[0].get(Bin::Overhead), IRQ_ENTRY + SWI_ENTRY);
    assert_eq!(r.bins[0].get(Bin::Idle), END - (IRQ_ENTRY + ISR_RX + SWI_ENTRY + IP + UDP + COPY + WAKEUP + SOCKET));
}

/// The Driver ISR runs masked to completion: a Tx-done interrupt raised while
/// the Rx ISR runs does not preempt it (no second entry, no save/restore); the
/// ISR finds the transmit completion when it rereads the status and handles it
/// in the same activation, and only then does the queued protocol SWI run.
///
/// Arithmetic (multithreaded): the send's frame is out at 29657 (as in Figure
/// 4); the frame arrives at 28000, so the Rx ISR runs 28006..30234 and the
/// Tx-done interrupt at 29657 lands inside it. The ISR goes on with Tx done
/// 30234..30770; the SWI enters 30770..30776; IP receive ..33866; UDP receive
/// from 33866 is cut by the end of the run at 40000.
#[test]
fn interrupt_during_masked_isr_is_handled_in_the_same_activation() {
    for policy in [Policy::Multithreaded, Policy::Single] {
        let events = FIG4_EVENTS.replace("at_cycle = 20000", "at_cycle = 28000");
        let r = run(policy, &events);
        let sr = policy.sr();
        let mut e = Expect::new(policy);
        e.run_until(C1, "application", F4_SEND_AT);
        e.run(C3, "overhead", SWI_ENTRY + sr);
        e.run(C3, "socket send", SOCKET);
        e.run(C3, "UDP send", UDP);
        e.run(C3, "IP send", IP + COPY);
        e.run(C3, "Driver Send", DRIVER_SEND);
        let tx_out = e.t + TX_TIME;
        e.run_until(C1, "application", 28_000);
        e.run(C2, "overhead", IRQ_ENTRY + sr);
        assert!(e.t < tx_out && tx_out < e.t + ISR_RX, "Tx done must land inside the Rx ISR");
        e.run(C2, "Driver ISR (Rx done)", ISR_RX);
        e.run(C2, "Driver ISR (Tx done)", ISR_TX);
        e.run(C3, "overhead", SWI_ENTRY);
        e.run(C3, "IP receive", IP);
        e.run_until(C3, "UDP receive", END);
        assert_eq!(spans(&r), e.spans, "{policy:?}");
        // One interrupt raised for both causes.
        assert_eq!(r.metric("interrupts"), Some(1.0), "{policy:?}");
        assert_eq!(r.bins[0].get(Bin::Overhead), 2 * SWI_ENTRY + IRQ_ENTRY + 2 * sr, "{policy:?}");
    }
}

/// A context switch is paid when execution actually moves to a context: an
/// application that resumes once after a burst of interrupts pays one switch
/// back to C1, however many times a return to C1 was cut short at the very
/// cycle it began.
///
/// Scenario (multithreaded, `context_switch_cycles` = 100, driver layer only):
/// five frames, each arriving at the cycle the previous Driver ISR returns
/// (1000 + k × 2334, 2334 = 100 switch + 6 entry + 2228 ISR). Every return to
/// C1 is preempted before it runs a cycle, then the application resumes once,
/// at 12,670, and should pay one 100-cycle switch.
#[test]

fn resumed_application_pays_one_context_switch() {
    const CS: u64 = 100;
    let events: String =
        (0..5u64).map(|k| format!("[[workload.events]]\nat_cycle = {}\naction = \"receive\"\nbytes = 500\n", 1000 + k * (CS + IRQ_ENTRY + ISR_RX))).collect();
    let text = scenario(Policy::Multithreaded, &events)
        .replace("\n[nic]", &format!("\ncontext_switch_cycles = {CS}\n[nic]"))
        .replace("enabled = true", "enabled = false")
        // Frames 2,334 cycles apart: a link fast enough to carry them so.
        .replace(&format!("link_mbps = {LINK_MBPS}.0"), "link_mbps = 100000.0");
    // The layers' keys are refused when the stack is off.
    let text: String = text
        .lines()
        .filter(|l| !l.ends_with("_cycles_per_byte = 1.0") && !["socket_", "udp_", "ip_", "recv_", "backlog_"].iter().any(|k| l.starts_with(k)))
        .map(|l| format!("{l}\n"))
        .collect();
    let s = Scenario::from_toml(&text, "switch.toml", &[]).unwrap();
    let r = irqsim_core::simulate(&s, std::path::Path::new("."), Record { timeline: true }).unwrap();
    r.check_invariants().unwrap();
    let got = spans(&r);
    let resume = 1000 + 5 * (CS + IRQ_ENTRY + ISR_RX);
    assert_eq!(resume, 12_670);
    let app_overhead: Vec<S> = got.iter().copied().filter(|s| s.0 == C1 && s.1 == "overhead").collect();
    assert_eq!(app_overhead, vec![(C1, "overhead", resume, resume + CS)], "the application pays one switch when it resumes");
    assert_eq!(*got.last().unwrap(), (C1, "application", resume + CS, END));
}
