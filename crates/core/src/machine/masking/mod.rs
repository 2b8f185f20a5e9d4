//! The masking part on the machine: interrupts of the priority-level sources
//! arrive and are taken, held or deferred by each CPU's mask, and critical
//! sections in the network path raise and lower it. The masks' state, the
//! schemes and the programs are the masking part's (`masking/`).

mod jobs;
mod model;

pub use model::Model;

use super::{Event, Machine};
use crate::cpu::USER;
use crate::engine::Time;
use crate::error::Result;
use crate::masking::jobs::{Irq, Scheme};

impl Machine {
    pub(crate) fn start_masking(&mut self) {
        if !self.masking.active() {
            return;
        }
        if let Some(job) = self.base_job() {
            self.post(0, USER, job);
        }
        self.schedule_arrival();
    }

    fn schedule_arrival(&mut self) {
        if let Some(a) = self.masking.arrivals.next()
            && a.at < self.end
        {
            let program = u32::try_from(a.program).unwrap_or(u32::MAX);
            self.queue.schedule(a.at.max(self.queue.now()), Event::Arrive { priority: a.priority, program });
        }
    }

    /// An interrupt arrives. Stops the run at a priority outside
    /// `1..=levels` or an unknown program.
    #[inline(never)]
    pub(crate) fn arrive(&mut self, now: Time, priority: u8, program: u32) -> Result<()> {
        let m = &mut self.masking;
        if priority == 0 || priority > m.levels || program as usize >= m.programs.len() {
            let msg = format!("arrival at {now}: priority {priority} (levels 1..={}), program {program}", m.levels);
            return Err(crate::Error::Config { file: self.name().to_string(), key: "workload".into(), line: None, msg });
        }
        if m.merge_if_full() {
            self.schedule_arrival();
            return Ok(());
        }
        // Checked above: fewer programs than u16::MAX (check_programs).
        let program = program as u16;
        let irq = Irq { id: m.next_id, priority };
        m.next_id += 1;
        if m.log.is_some() {
            m.arrived.push(now);
        }
        if priority <= m.cpus[0].hw {
            m.counters.held += 1;
            m.cpus[0].held[priority as usize].push_back((irq, program));
        } else {
            let check = m.scheme == Scheme::Optimistic;
            self.post_interrupt(0, irq, program, check);
        }
        self.schedule_arrival();
        self.dispatch(0);
        Ok(())
    }
}
