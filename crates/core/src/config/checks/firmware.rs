//! What the programmable NIC (`[nic_firmware]`) combines with beyond the
//! keys it replaces (`device::firmware::excludes`): RSS's keys are the
//! host's RPS over its one return ring.

use super::super::Scenario;

pub(super) fn firmware(s: &Scenario) -> Result<(), (String, String)> {
    if !s.nic_firmware.selected() || !s.rss.active() {
        return Ok(());
    }
    if s.rss.queues > 1 {
        let msg = "the programmable NIC's firmware (programs/firmware) returns frames on one ring: set 1, and spread the protocol's work over CPUs with RPS (`rss.rps_cpus`)";
        return Err(("rss.queues".into(), msg.into()));
    }
    if !s.rss.rps() {
        return Err(("rss.kind".into(), "with one return ring RSS only draws the flows RPS steers: set `rss.rps_cpus`, or remove the key".into()));
    }
    Ok(())
}
