//! Rules for the NICs beside the first (`[[nics.others]]`), each naming the
//! key to change.

use crate::config::Scenario;

/// More NICs than this beside the first: a NAPI queue number is a byte,
/// shared with the first NIC's RSS queues and RPS's backlogs.
pub(crate) const MAX_OTHERS: usize = 32;

pub(crate) fn nics(s: &Scenario) -> Result<(), (String, String)> {
    let others = &s.nics.others;
    if others.is_empty() {
        return Ok(());
    }
    let err = |key: String, msg: String| Err((key, msg));
    if others.len() > MAX_OTHERS {
        return err(format!("nics.others[{MAX_OTHERS}]"), format!("{} NICs beside the first: at most {MAX_OTHERS}", others.len()));
    }
    if s.nic_firmware.selected() {
        return err("nics.others".into(), "the programmable NIC (`nic_firmware.program`) is the first NIC's; other NICs beside it are not modelled yet".into());
    }
    if s.rss.rps() {
        return err("rss.rps_cpus".into(), "RPS steers the first NIC's RSS flows; the other NICs' frames carry no flow of that mix: remove the key or the other NICs".into());
    }
    for (i, n) in others.iter().enumerate() {
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
        if s.code.selected() && n.rx_ring_frames.is_some() {
            return err(key("rx_ring_frames"), "with kernel code (`code.program`) its descriptors are the ring the program's driver gives it (RDLEN): remove the key".into());
        }
        // Kernel code's driver enables its cause again where DIM samples.
        if n.adaptive_rx && !s.code.selected() && s.irq_path.kind != Some(crate::kernel::IrqPathKind::Napi) {
            return err(key("adaptive_rx"), "DIM samples at napi_complete_done: needs irq_path.kind = \"napi\"".into());
        }
        if n.rx_usecs == 0 && n.rx_frames == 0 {
            return err(key("rx_frames"), super::nic::NEVER_INTERRUPTS.into());
        }
        if n.rx_usecs > 0 && n.rx_frames == 1 {
            return err(key("rx_usecs"), "changes nothing while its rx_frames = 1: the first frame interrupts at once, before any rx_usecs timer could expire; set rx_frames to 0 (the timer alone) or above 1".into());
        }
        if u64::from(n.packet_bytes) > n.rx_buffer_bytes {
            return err(key("packet_bytes"), format!("{}-byte packets never fit its {}-byte rx_buffer_bytes", n.packet_bytes, n.rx_buffer_bytes));
        }
    }
    Ok(())
}
