//! Rules between keys of several parts that no one part's table can state,
//! run after the tables have filled every section ([`Scenario::check`]): one
//! file per part, each naming the key to change.

mod code;
mod firmware;
mod forward;
mod intc;
mod masking;
mod nic;
mod nics;

pub(super) use intc::exerciser;
pub use intc::nic_wiring;
pub(super) use masking::null_rpc;

use super::Scenario;

/// The parts' rules for a scenario whose workload drives the NIC.
pub(super) fn nic(s: &Scenario) -> Result<(), (String, String)> {
    nics::nics(s)?;
    forward::forward(s)?;
    intc::nic(s)?;
    code::code(s)?;
    nic::coalesce(s)?;
    nic::napi(s)?;
    nic::rss(s)?;
    firmware::firmware(s)?;
    masking::nic(s)
}
