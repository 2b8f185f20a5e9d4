//! Rules for the NICs beside the first (`[[nics.others]]`), each naming the
//! key to change.

use crate::config::Scenario;
use crate::device::nics::NicPortConfig;
use crate::kernel::IrqPathKind;

/// More NICs than this beside the first (events number them by a byte;
/// their queues share the NAPI instances' numbers, `MAX_QUEUES`).
pub(crate) const MAX_OTHERS: usize = 32;

/// NAPI instances a machine may have: each queue's number is a byte.
const MAX_QUEUES: usize = 256;

pub(crate) fn nics(s: &Scenario) -> Result<(), (String, String)> {
    let others = &s.nics.others;
    if others.is_empty() {
        return Ok(());
    }
    let err = |key: String, msg: String| Err((key, msg));
    if others.len() > MAX_OTHERS {
        return err(format!("nics.others[{MAX_OTHERS}]"), format!("{} NICs beside the first: at most {MAX_OTHERS}", others.len()));
    }
    let queues = s.rss.vectors() as usize + others.iter().map(|n| n.queues as usize).sum::<usize>();
    let backlogs = if s.rss.rps() { s.cpu.threads } else { 0 };
    if queues + backlogs > MAX_QUEUES {
        let msg = format!("{queues} receive queues over all NICs and {backlogs} RPS backlogs: at most {MAX_QUEUES} NAPI instances in all");
        return err(format!("nics.others[{}].queues", others.len() - 1), msg);
    }
    if s.code.selected() {
        code(s)?;
    }
    for (i, n) in others.iter().enumerate() {
        // Its driver is the program, or the abstract kernel beside it (`code.cpus`).
        let on_code = s.port_on_code(n);
        let key = |leaf: &str| format!("nics.others[{i}].{leaf}");
        if n.irq_thread >= s.cpu.threads {
            return err(key("irq_thread"), format!("thread {} does not exist (cpu.threads = {})", n.irq_thread, s.cpu.threads));
        }
        if n.rate_pps > s.cpu.clock_mhz * 1e6 {
            return err(key("rate_per_s"), format!("{} per second is more than one per cycle of the {} MHz clock", n.rate_pps, s.cpu.clock_mhz));
        }
        if n.adaptive_rx && (n.rx_usecs != 0 || n.rx_frames != 1) {
            let k = if n.rx_usecs != 0 { "rx_usecs" } else { "rx_frames" };
            return err(key(k), "only used when its `adaptive_rx` is `false` (DIM chooses them); remove the key".into());
        }
        if on_code && n.rx_ring_frames.is_some() {
            return err(
                key("rx_ring_frames"),
                "with kernel code (`code.program`) its descriptors are the ring the program's driver gives it (RDLEN): remove the key".into(),
            );
        }
        // Kernel code's driver enables its cause again where DIM samples.
        if n.adaptive_rx && !on_code && IrqPathKind::of_nic(n.irq_path, s.irq_path.kind) != IrqPathKind::Napi {
            return err(
                key("adaptive_rx"),
                "DIM samples at napi_complete_done: needs its path on NAPI (irq_path.kind = \"napi\", its `irq_path` absent or \"napi\")".into(),
            );
        }
        if n.rx_usecs == 0 && n.rx_frames == 0 {
            return err(key("rx_frames"), super::nic::NEVER_INTERRUPTS.into());
        }
        if n.rx_usecs > 0 && n.rx_frames == 1 {
            return err(key("rx_usecs"), "changes nothing while its rx_frames = 1: the first frame interrupts at once, before any rx_usecs timer could expire; set rx_frames to 0 (the timer alone) or above 1".into());
        }
        path(s, n, on_code).map_err(|msg| (key("irq_path"), msg))?;
        if n.queues > 1 {
            rss(s, n).map_err(|msg| (key("queues"), msg))?;
        } else if !s.rss.rps() {
            for (leaf, set) in [("flows", n.flows.is_some()), ("flow_skew", n.flow_skew.is_some())] {
                if set {
                    return err(
                        key(leaf),
                        "its frames' flows are drawn only to steer them: with its `queues` above 1 or RPS (`rss.rps_cpus`); remove the key".into(),
                    );
                }
            }
        }
        if u64::from(n.packet_bytes) > n.rx_buffer_bytes {
            return err(key("packet_bytes"), format!("{}-byte packets never fit its {}-byte rx_buffer_bytes", n.packet_bytes, n.rx_buffer_bytes));
        }
    }
    Ok(())
}

/// What another NIC's own RSS needs, as the first NIC's (`nic::rss`): a
/// NAPI instance per queue, and a vector per queue on its controller.
fn rss(s: &Scenario, n: &NicPortConfig) -> Result<(), String> {
    if IrqPathKind::of_nic(n.irq_path, s.irq_path.kind) != IrqPathKind::Napi {
        return Err("its RSS queues are polled by NAPI instances: needs its path on NAPI (irq_path.kind = \"napi\", its `irq_path` absent or \"napi\")".into());
    }
    let kind = n.intc.unwrap_or(s.intc.kind);
    if kind.legacy() {
        return Err(format!("one vector per queue: needs its `intc` (or intc.kind) \"msix\", \"msi\" or \"direct\", not the {}", kind.name()));
    }
    if matches!(kind.kind().vectors, Some((_, true))) && !n.queues.is_power_of_two() {
        return Err(format!("{} grants a power of two of vectors; {} queues need \"msix\"", kind.name(), n.queues));
    }
    Ok(())
}

/// What other NICs beside kernel code need: code's NIC `k` (its rings and
/// cause register) is the `k`th other NIC, and the program's driver serves
/// it (whether it serves several queues or RPS is the program's to say,
/// `code::other_queues_fit`). RPS backlogs are the program's: a frame the
/// abstract kernel's driver took cannot join one.
fn code(s: &Scenario) -> Result<(), (String, String)> {
    if s.rss.rps()
        && let Some(i) = s.nics.others.iter().position(|n| !s.port_on_code(n))
    {
        let msg = format!(
            "the RPS backlogs are the program's, and nics.others[{i}]'s driver is the abstract kernel's (its interrupts go to a CPU outside code.cpus): a frame cannot pass from one kernel to the other; remove the key or send its interrupts to a code CPU"
        );
        return Err(("rss.rps_cpus".into(), msg));
    }
    Ok(())
}

/// Where another NIC's own receive path can run: NAPI and a Linux top half
/// need the Linux interrupt path (do_IRQ, the NET_RX softirq and their
/// costs); on a CPU that runs kernel code its driver is the program's.
fn path(s: &Scenario, n: &NicPortConfig, on_code: bool) -> Result<(), String> {
    if n.irq_path.is_none() {
        return Ok(());
    }
    let own = IrqPathKind::of_nic(n.irq_path, None);
    let machine = s.irq_path.kind.unwrap_or(IrqPathKind::Mt);
    if on_code {
        return Err("its interrupts go to a CPU that runs kernel code (`code.program`, `code.cpus`), where the program's driver is every NIC's: remove the key, or send its interrupts (`irq_thread`) to a CPU of the abstract kernel".into());
    }
    match (own, machine) {
        (IrqPathKind::Napi, IrqPathKind::Mt) => {
            Err("a NAPI poll runs in the NET_RX softirq of the Linux interrupt path (do_IRQ): irq_path.kind = \"linux\" or \"napi\"".into())
        }
        (IrqPathKind::Linux, IrqPathKind::Mt) => {
            Err("a Linux top half and NET_RX bottom half need the Linux interrupt path (do_IRQ): irq_path.kind = \"linux\" or \"napi\"".into())
        }
        _ => Ok(()),
    }
}
