//! Rules between the receive path's keys: coalescing and DIM, NAPI's busy
//! polling, RSS and RPS. Each names the key to change.

use crate::config::{Direction, Scenario, WorkloadConfig};
use crate::kernel::IrqPathKind;

/// ethtool's refusal of a NIC that would never interrupt (the first NIC's
/// `[coalesce]` and each other NIC's own keys).
pub(super) const NEVER_INTERRUPTS: &str = "rx_usecs and rx_frames are both 0: the NIC would never interrupt (ethtool refuses it)";

/// ethtool's rule between the two keys, and DIM's path: `(key, message)`.
pub(crate) fn coalesce(s: &Scenario) -> Result<(), (String, String)> {
    let c = &s.coalesce;
    if !c.adaptive_rx && c.rx_usecs == 0 && c.rx_frames == 0 {
        return Err(("coalesce.rx_frames".into(), NEVER_INTERRUPTS.into()));
    }
    // Kernel code's driver is its own: DIM samples where it enables its
    // receive cause again (its napi_complete_done).
    if c.adaptive_rx && !s.code.selected() && s.irq_path.kind != Some(IrqPathKind::Napi) {
        return Err(("coalesce.adaptive_rx".into(), "DIM samples at napi_complete_done: needs irq_path.kind = \"napi\"".into()));
    }
    Ok(())
}

/// Busy polling's combinations: `(key, message)`.
pub(crate) fn napi(s: &Scenario) -> Result<(), (String, String)> {
    let n = &s.napi;
    if !s.napi_used() {
        return Ok(());
    }
    if n.busy_poll_usecs > 0 && s.irq_path.kind != Some(IrqPathKind::Napi) {
        // sk_busy_loop polls the NAPI instance of the socket's last frame; the
        // first NIC's frames, on the Linux path, carry none.
        let msg = "the receiving socket busy-polls the first NIC's NAPI instance: needs irq_path.kind = \"napi\" (here only other NICs are on NAPI)";
        return Err(("napi.busy_poll_usecs".into(), msg.into()));
    }
    if s.code.selected() && n.rotting {
        // Code's NIC latches its receive cause in ICR: enabling the
        // interrupt with a cause pending asserts it at once.
        let msg = "the rotting NIC is the abstract one; code's NIC (e1000-like) latches its receive cause, so frames waiting when the driver enables its interrupt raise it at once: remove the key";
        return Err(("napi.rotting".into(), msg.into()));
    }
    if s.code.selected() && n.late_ack {
        let msg = "with code the program's driver reads and acknowledges its NIC's cause itself: remove the key";
        return Err(("napi.late_ack".into(), msg.into()));
    }
    if n.poll_within_budget && (s.code.selected() || n.threaded) {
        let msg = "a poll within the NET_RX run's budget needs the abstract driver polled by the softirq: code's driver takes its weight, a NAPI thread has no budget; remove the key";
        return Err(("napi.poll_within_budget".into(), msg.into()));
    }
    if n.prefer_busy_poll && (n.busy_poll_usecs == 0 || n.defer_hard_irqs == 0 || n.gro_flush_timeout_ns == 0) {
        let msg = "prefers busy polling: needs busy_poll_usecs, defer_hard_irqs and gro_flush_timeout_ns above 0";
        return Err(("napi.prefer_busy_poll".into(), msg.into()));
    }
    if n.busy_poll_usecs == 0 {
        return Ok(());
    }
    let err = |msg: &str| Err(("napi.busy_poll_usecs".to_string(), msg.to_string()));
    if s.app.background && !s.code.selected() {
        return err("the application busy-polls in recv: it cannot also be the CPU-bound app.background");
    }
    if matches!(&s.workload, WorkloadConfig::Flood(f) if f.direction == Direction::Tx) {
        return err("the application busy-polls in recv: it cannot also be the send flood's sender");
    }
    Ok(())
}

/// The combinations RSS is modelled in: `(key, message)`.
pub(crate) fn rss(s: &Scenario) -> Result<(), (String, String)> {
    let c = &s.rss;
    if !c.active() {
        return Ok(());
    }
    let err = |msg: String| Err(("rss.kind".to_string(), msg));
    if s.irq_path.kind != Some(IrqPathKind::Napi) {
        return err("RSS queues are polled by NAPI instances: needs irq_path.kind = \"napi\"".into());
    }
    if s.intc.kind.legacy() {
        return err(format!("one MSI-X vector per queue: needs intc.kind = \"msix\", \"msi\" or \"direct\", not the {}", s.intc.kind.name()));
    }
    if matches!(s.intc.kind.kind().vectors, Some((_, true))) && !c.queues.is_power_of_two() {
        return err(format!("{} grants a power of two of vectors; {} queues need intc.kind = \"msix\"", s.intc.kind.name(), c.queues));
    }
    if s.bus.link_mbps.is_some() {
        return Err(("bus.link_mbps".into(), "the queues' DMA would share one link, which is not modelled: remove bus.link_mbps or RSS".into()));
    }
    if c.rps_cpus as usize > s.cpu.threads {
        return Err(("rss.rps_cpus".into(), format!("{} CPUs do not exist (cpu.threads = {})", c.rps_cpus, s.cpu.threads)));
    }
    if c.rps_cpus > 0 && !s.stack.enabled && !s.code.selected() {
        return Err(("rss.rps_cpus".into(), "RPS hands the protocol's part to other CPUs: needs stack.enabled = true".into()));
    }
    if s.code.selected() && s.code.flows != 1 {
        return Err(("code.flows".into(), "with RSS the frames' flows are `rss.flows` (the flow mix the NIC hashes): remove code.flows".into()));
    }
    Ok(())
}
