//! RPS on the machine: the polling CPU hands a frame's protocol work to the
//! backlog of the CPU its hash picks (`kernel/napi/rps.rs`).

use crate::engine::Time;
use crate::machine::Machine;

impl Machine {
    /// Queue `q`'s frame (arrival, bytes) left the ring on `cpu`: it goes
    /// to the backlog of the CPU its flow picks.
    pub(super) fn rps_enqueue(&mut self, cpu: usize, q: usize, arrival: Time, bytes: u32) {
        let hash = match self.net.ports.holds(q) {
            true => self.port_take_hash(q),
            false => self.net.rss.as_mut().expect("RPS steers RSS flows").take_hash(q),
        };
        let n = self.napi();
        let base = n.device_queues();
        let rps = n.rps.as_mut().expect("RPS enqueue needs RPS");
        let target = rps.cpu(hash);
        if rps.backlogs[target].len() >= rps.limit {
            self.net.counters.rx_dropped_backlog += 1;
            return;
        }
        rps.backlogs[target].push_back((arrival, bytes, q as u8));
        rps.remote += u64::from(target != cpu);
        self.napi_schedule(target, base + target);
        if target != cpu {
            self.dispatch(target);
        }
    }
}
