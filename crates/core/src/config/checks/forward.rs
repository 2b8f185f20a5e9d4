//! Rules for forwarding (`nic.forward_to`, `nics.others[i].forward_to`):
//! the output NIC exists and its transmitter is the abstract driver's (the
//! programmable NIC's send ring included).

use crate::config::Scenario;

pub(super) fn forward(s: &Scenario) -> Result<(), (String, String)> {
    let nics = 1 + s.nics.others.len();
    let sources = std::iter::once(("nic.forward_to".to_string(), s.nic.forward_to, s.code.selected()))
        .chain(s.nics.others.iter().enumerate().map(|(i, n)| (format!("nics.others[{i}].forward_to"), n.forward_to, s.port_on_code(n))));
    for (key, to, on_code) in sources {
        let Some(to) = to else { continue };
        let to = to as usize;
        if to >= nics {
            return Err((key, format!("NIC {to} does not exist: the machine has {nics} (0: `[nic]`, 1 to {}: `[[nics.others]]`)", nics - 1)));
        }
        if on_code {
            return Err((key, "this NIC's driver is kernel code (`code.program`), which forwards as its program does (`rx_forwarded`): remove the key".into()));
        }
        if to == 0 && s.code.selected() || to > 0 && s.port_on_code(&s.nics.others[to - 1]) {
            return Err((
                key,
                format!("NIC {to}'s driver is kernel code (`code.program`): its transmit ring is the program's; forward to a NIC the abstract kernel drives"),
            ));
        }
    }
    // The programmable NIC's MAC sends Ethernet frames: a larger one
    // forwarded onto it would need IP fragmentation, which is not modelled.
    let max = crate::device::firmware::MAX_FRAME_BYTES;
    if s.nic_firmware.selected()
        && let Some((i, n)) = s.nics.others.iter().enumerate().find(|(_, n)| n.forward_to == Some(0) && n.packet_bytes > max)
    {
        let msg = format!(
            "{}-byte frames forwarded onto NIC 0, the programmable one, whose MAC sends frames of at most {max} bytes: IP would fragment them, which is not modelled; forward them elsewhere or make them smaller",
            n.packet_bytes
        );
        return Err((format!("nics.others[{i}].packet_bytes"), msg));
    }
    let all = s.nic.forward_to.is_some() && s.nics.others.iter().all(|n| n.forward_to.is_some() || n.rate_pps == 0.0);
    if all && s.napi.busy_poll_usecs > 0 {
        return Err((
            "napi.busy_poll_usecs".into(),
            "every NIC's frames are forwarded (`forward_to`): no socket receives any, so none busy-polls; remove the key".into(),
        ));
    }
    let forwarded_to = |k: usize| s.nic.forward_to == Some(k as u32) || s.nics.others.iter().any(|n| n.forward_to == Some(k as u32));
    if let Some(i) = s.nics.others.iter().enumerate().position(|(i, n)| n.tx_queue_packets.is_some() && !forwarded_to(i + 1)) {
        let msg = format!("no NIC forwards to NIC {} (a `forward_to` naming it), so its transmitter is unused: remove the key", i + 1);
        return Err((format!("nics.others[{i}].tx_queue_packets"), msg));
    }
    Ok(())
}
