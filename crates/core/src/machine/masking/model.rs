//! The masking part alone on a one-thread machine: programs and arrivals
//! given directly, run to quiescence or an end (the masking semantics'
//! property tests, `tests/masking_model.rs`).

use crate::cpu::{EntryCosts, IRQ, Thread};
use crate::engine::Time;
use crate::kernel::Job;
use crate::machine::Machine;
use crate::masking::state::Masking;
use crate::masking::{Arrival, Costs, Counters, HandlerRun, Program, Scheme};
use crate::timeline::Timeline;

/// Programs and arrivals run on a one-thread machine with a single register
/// context, to quiescence or `end` (the masking semantics' tests).
pub struct Model(Machine);

impl Model {
    /// A model over `levels` priorities; `programs[0]` is the base program.
    /// Refuses a program whose sections do not balance or name a priority
    /// outside `1..=levels`.
    pub fn new<I: Iterator<Item = Arrival> + 'static>(
        levels: u8,
        entry: EntryCosts,
        programs: Vec<Program>,
        arrivals: I,
        scheme: Scheme,
        costs: Costs,
        end: Time,
    ) -> std::result::Result<Self, String> {
        let masking = Masking::new(1, levels, programs, Box::new(arrivals), scheme, costs)?;
        let mut m = Machine::shell("", 1.0, end, 1, IRQ as usize + levels as usize, crate::cpu::ContextPolicy::Single, entry, Timeline::disabled());
        m.masking = masking;
        Ok(Self(m))
    }

    /// Keeps every handler's life, for [`Model::take_log`].
    pub fn keep_log(&mut self) {
        self.0.masking.log = Some(Vec::new());
    }

    pub fn run(&mut self) -> std::result::Result<(), String> {
        self.0.simulate(&mut crate::Unwatched).map_err(|e| e.to_string())
    }

    pub fn take_log(&mut self) -> Vec<HandlerRun> {
        self.0.masking.log.take().unwrap_or_default()
    }

    pub fn thread(&self) -> &Thread<Job> {
        &self.0.threads[0]
    }

    pub fn in_flight(&self) -> u64 {
        self.0.masking.in_flight()
    }

    pub fn counters(&self) -> Counters {
        self.0.masking.counters
    }
}
