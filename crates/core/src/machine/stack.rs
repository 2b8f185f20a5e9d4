//! Protocol layers: a send call goes socket → UDP → IP → Driver Send, each
//! layer calling the next; a received frame goes IP → UDP → socket and is
//! then the application's. All of it runs at the software-interrupt level.
//! Without a timeline the layers of a direction run as one job (`Costs::layered`).
//! Which layer follows which is in the kernel's one match on the job
//! (`Machine::after`); this file is where a call enters and a frame leaves.

use crate::cpu::SOFT;
use crate::engine::Time;
use crate::kernel::Job;
use crate::kernel::net::Site;
use crate::machine::Machine;

impl Machine {
    /// The application calls send: a software interrupt into the send path.
    pub(crate) fn apply_send(&mut self, thread: usize, bytes: u32) {
        self.net.counters.tx_offered += 1;
        if self.code.is_some() {
            return self.code_send(thread, bytes);
        }
        self.net.counters.tx_in_stack += 1;
        let job = self.net.costs.send_call(bytes);
        self.post(thread, SOFT, job);
    }

    /// A received frame has passed the socket layer: it is the application's.
    pub(crate) fn received(&mut self, now: Time, arrival: Time, bytes: u32) {
        self.net.counters.rx_in_stack -= 1;
        self.deliver(arrival, now, bytes);
    }

    /// The socket layer is done with a received frame: its critical
    /// section, if it has one, runs first.
    pub(crate) fn socket_done(&mut self, now: Time, arrival: Time, bytes: u32) -> Option<Job> {
        if self.net.costs.sections.protocol > 0 {
            return Some(Job::section(Site::Protocol, 0, arrival, bytes));
        }
        self.received(now, arrival, bytes);
        None
    }
}
