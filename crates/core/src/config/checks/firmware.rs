//! What the programmable NIC (`[nic_firmware]`) combines with beyond the
//! keys it replaces (`device::firmware::excludes`): RSS's keys are its
//! return rings (firmware that steers, nic_rss.elf, when more than one;
//! checked when the machine loads the firmware) or, with one ring, the
//! host's RPS over it.

use super::super::Scenario;

pub(super) fn firmware(s: &Scenario) -> Result<(), (String, String)> {
    if !s.nic_firmware.selected() || !s.rss.active() {
        return Ok(());
    }
    if s.rss.queues == 1 && !s.rss.rps() {
        return Err((
            "rss.kind".into(),
            "with one return ring RSS only draws the flows RPS steers: set `rss.rps_cpus` or `rss.queues` > 1, or remove the key".into(),
        ));
    }
    Ok(())
}
