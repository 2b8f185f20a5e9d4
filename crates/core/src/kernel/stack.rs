//! Protocol layers: a send call goes socket → UDP → IP → Driver Send, each
//! layer calling the next; a received frame goes IP → UDP → socket and is
//! then the application's. All of it runs at the software-interrupt level.
//! Without a timeline the layers of a direction run as one job (`Costs::layered`).

use super::Job;
use super::net::{Phase, Site};
use crate::cpu::SOFT;
use crate::engine::Time;
use crate::machine::Machine;

impl Machine {
    /// The application calls send: a software interrupt into the send path.
    pub(crate) fn apply_send(&mut self, thread: usize, bytes: u32) {
        self.net.counters.tx_offered += 1;
        self.net.counters.tx_in_stack += 1;
        let job = self.net.costs.send_call(bytes);
        self.post(thread, SOFT, job);
    }

    /// A received frame has passed the socket layer: it is the application's.
    pub(crate) fn received(&mut self, now: Time, arrival: Time, bytes: u32) {
        self.net.counters.rx_in_stack -= 1;
        self.deliver(arrival, now, bytes);
    }

    /// One layer is done; the next one runs in the same activation.
    pub(crate) fn layer_done(&mut self, now: Time, _thread: usize, job: Job) -> Option<Job> {
        match job {
            Job::SendSocket { bytes } if !self.net.costs.layered => Some(Job::DriverSend { bytes }),
            Job::SendSocket { bytes } => Some(Job::SendUdp { bytes }),
            Job::SendUdp { bytes } => Some(Job::SendIp { bytes }),
            Job::SendIp { bytes } => Some(Job::DriverSend { bytes }),
            Job::DriverSend { bytes } => {
                self.driver_send(now, bytes);
                None
            }
            Job::RecvIp { arrival, bytes } if self.net.costs.layered => Some(Job::RecvUdp { arrival, bytes }),
            Job::RecvUdp { arrival, bytes } => Some(Job::RecvSocket { arrival, bytes }),
            Job::RecvIp { arrival, bytes } | Job::RecvSocket { arrival, bytes } if self.net.costs.sections.protocol > 0 => {
                Some(Job::Section { phase: Phase::Enter, site: Site::Protocol, arrival, bytes })
            }
            Job::RecvIp { arrival, bytes } | Job::RecvSocket { arrival, bytes } => {
                self.received(now, arrival, bytes);
                None
            }
            _ => unreachable!("layer_done on {job:?}"),
        }
    }
}
