//! The delivery study's report: latency distributions at the bus analyzer,
//! counts, CPU cost per interrupt, and the conservation laws.

use super::Model;
use crate::cpu::Bin;
use crate::report::{Law, Report, latency_metrics, named};

impl Model {
    pub(super) fn report(self) -> Report {
        let c = self.counters;
        let clock = self.clock_mhz;
        let sum = |f: fn(&super::Source) -> u64| self.sources.iter().map(f).sum::<u64>();
        let raised = sum(|s| s.raised);
        let serviced = sum(|s| s.serviced);
        let lost = sum(|s| s.lost);
        let in_flight = sum(|s| s.holding()) + self.intc.holding() + c.taken_unclaimed;
        let ex = &self.sources[0];
        let bins: Vec<_> = self.threads.iter().map(|t| *t.bins()).collect();
        let busy: u64 = bins.iter().map(|b| b.get(Bin::Interrupt) + b.get(Bin::Overhead) + b.get(Bin::BottomHalf)).sum();
        let user: u64 = bins.iter().map(|b| b.get(Bin::User)).sum();
        // Per serviced interrupt: spurious deliveries are part of its cost.
        let per_irq = busy as f64 / serviced.max(1) as f64;
        let seconds = self.end as f64 / (clock * 1e6);
        let mut metrics: Vec<(String, f64)> = named([
            ("sim_seconds", seconds),
            ("events", c.events as f64),
            ("interrupts_raised", raised as f64),
            ("interrupts_serviced", serviced as f64),
            ("interrupts_lost", lost as f64),
            ("interrupts_in_flight", in_flight as f64),
            ("exerciser_raised", ex.raised as f64),
            ("exerciser_serviced", ex.serviced as f64),
            ("exerciser_lost", ex.lost as f64),
            ("spurious_interrupts", c.spurious as f64),
            ("tasklet_runs", c.tasklet_runs as f64),
            ("tasklet_merged", c.tasklet_merged as f64),
            ("interrupt_overtook_data", c.overtook_data as f64),
            ("stale_data_reads", c.stale_reads as f64),
            ("cpu_cycles_per_interrupt", per_irq),
            ("cpu_us_per_interrupt", per_irq / clock),
            ("max_interrupts_per_s", if serviced == 0 { f64::NAN } else { clock * 1e6 / per_irq }),
            ("user_share", user as f64 / (self.end as f64 * bins.len() as f64)),
        ]);
        metrics.extend(latency_metrics("isr_latency", &self.isr_hist, clock));
        metrics.extend(latency_metrics("tasklet_latency", &self.tasklet_hist, clock));
        let scheduled_pending = u64::from(self.tasklet_scheduled);
        let laws = vec![
            Law { what: "interrupts raised = serviced + lost + in flight", lhs: raised, rhs: serviced + lost + in_flight },
            Law {
                what: "exerciser ISR claims = tasklet runs + merged schedules + scheduled",
                lhs: c.exerciser_claims,
                rhs: c.tasklet_runs + c.tasklet_merged + scheduled_pending,
            },
            Law { what: "stale DMA data reads = 0", lhs: c.stale_reads, rhs: 0 },
        ];
        Report {
            clock_mhz: clock,
            elapsed_cycles: self.end,
            metrics,
            bins,
            context_bins: self.threads.iter().map(|t| t.context_bins()).collect(),
            contexts: (0..self.policy.contexts()).map(|c| self.policy.context_name(c).to_string()).collect(),
            records: self.records,
            laws,
            timeline: self.timeline,
        }
    }
}
