//! The masking model's semantics: random nested critical sections and random
//! interrupt arrivals under both protection schemes.

// In a module so that `cargo test masking` selects these tests.
mod masking {
    use irqsim_core::cpu::{Bin, EntryCosts};
    use irqsim_core::machine::masking::Model;
    use irqsim_core::masking::profiles::LUNA88K;
    use irqsim_core::masking::{Arrival, Costs, Counters, Effects, HandlerRun, Program, Scheme, Step};
    use proptest::prelude::*;

    const LEVELS: u8 = 4;
    const ENTRY: EntryCosts = EntryCosts { irq_entry: 6, swi_entry: 6, save_restore: 64, context_switch: 0 };

    /// Runs `programs` (0 = base) with `arrivals` to quiescence; returns the log
    /// sorted by interrupt id, and the model's leftovers.
    fn run(programs: &[Program], arrivals: &[Arrival], scheme: Scheme) -> (Vec<HandlerRun>, u64, u64) {
        let (log, in_flight, counters) = run_counted(programs, arrivals, scheme);
        (log, in_flight, counters.raised)
    }

    fn run_counted(programs: &[Program], arrivals: &[Arrival], scheme: Scheme) -> (Vec<HandlerRun>, u64, Counters) {
        let costs = Costs::new(&LUNA88K, Effects::default(), None);
        let end = 1 << 40;
        let mut m = Model::new(LEVELS, ENTRY, programs.to_vec(), Vec::from(arrivals).into_iter(), scheme, costs, end).unwrap();
        m.keep_log();
        m.run().unwrap();
        let mut log = m.take_log();
        log.sort_by_key(|h| h.id);
        assert_eq!(m.thread().bins().total(), end, "bins must sum to elapsed cycles");
        (log, m.in_flight(), m.counters())
    }

    /// A balanced block of steps: work and nested sections.
    fn block() -> impl Strategy<Value = Vec<Step>> {
        let leaf = (1u64..60).prop_map(|c| vec![Step::Run(c)]);
        leaf.prop_recursive(3, 24, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 1..3).prop_map(|v| v.concat()),
                (1..=LEVELS, inner).prop_map(|(l, body)| {
                    let mut v = vec![Step::Enter(l)];
                    v.extend(body);
                    v.push(Step::Exit);
                    v
                }),
            ]
        })
    }

    fn program(bin: Bin) -> impl Strategy<Value = Program> {
        prop::collection::vec(block(), 1..4).prop_map(move |v| Program { steps: v.concat(), bin, repeat: false })
    }

    fn scenario() -> impl Strategy<Value = (Vec<Program>, Vec<Arrival>)> {
        (program(Bin::Kernel), prop::collection::vec(program(Bin::Interrupt), 1..4)).prop_flat_map(|(base, handlers)| {
            let n = handlers.len();
            let arrivals = prop::collection::vec((0u64..1500, 1..=LEVELS, 1..=n), 0..25).prop_map(|mut v| {
                v.sort_by_key(|a| a.0);
                v.into_iter().map(|(at, priority, program)| Arrival { at, priority, program }).collect::<Vec<_>>()
            });
            let mut programs = vec![base];
            programs.extend(handlers);
            (Just(programs), arrivals)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Both schemes run every interrupt's handler exactly once, never while a
        /// section masks its priority, never before it arrives, and in arrival
        /// order within a priority.
        #[test]
        fn both_schemes_run_the_same_handlers_under_the_priority_rules((programs, arrivals) in scenario()) {
            let mut runs = Vec::new();
            for scheme in [Scheme::Conventional, Scheme::Optimistic] {
                let (log, in_flight, raised) = run(&programs, &arrivals, scheme);
                prop_assert_eq!(raised, arrivals.len() as u64);
                prop_assert_eq!(in_flight, 0, "{:?}: interrupts left unhandled", scheme);
                let ids: Vec<u32> = log.iter().map(|h| h.id).collect();
                prop_assert_eq!(ids, (0..arrivals.len() as u32).collect::<Vec<_>>(), "{:?}: each handler exactly once", scheme);
                for h in &log {
                    prop_assert!(h.masking_level < h.priority, "{:?}: handler {} (priority {}) began inside a section at {}", scheme, h.id, h.priority, h.masking_level);
                    prop_assert!(h.arrived <= h.started && h.started <= h.finished);
                }
                for p in 1..=LEVELS {
                    let starts: Vec<u64> = log.iter().filter(|h| h.priority == p).map(|h| h.started).collect();
                    prop_assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{:?}: priority {} out of arrival order", scheme, p);
                }
                runs.push(log.iter().map(|h| (h.id, h.priority, h.arrived)).collect::<Vec<_>>());
            }
            prop_assert_eq!(&runs[0], &runs[1]);
        }
    }

    fn base(steps: Vec<Step>) -> Vec<Program> {
        vec![Program { steps, bin: Bin::Kernel, repeat: false }, Program { steps: vec![Step::Run(100)], bin: Bin::Interrupt, repeat: false }]
    }

    /// An interrupt above the section's level preempts at once in both schemes.
    #[test]
    fn interrupt_above_the_section_preempts_at_once() {
        let programs = base(vec![Step::Run(100), Step::Enter(2), Step::Run(1000), Step::Exit, Step::Run(100)]);
        let arrivals = [Arrival { at: 500, priority: 3, program: 1 }];
        for scheme in [Scheme::Conventional, Scheme::Optimistic] {
            let (log, _, _) = run(&programs, &arrivals, scheme);
            // Entry, register save and (optimistic) the 2-cycle prologue test.
            assert!(log[0].started - 500 <= ENTRY.irq_entry + ENTRY.save_restore + 2, "{scheme:?}: {:?}", log[0]);
        }
    }

    /// An interrupt at the section's level waits for the section's end in both
    /// schemes; only the optimistic one takes it first (and defers it).
    #[test]
    fn interrupt_inside_the_section_waits_for_its_end() {
        let programs = base(vec![Step::Run(100), Step::Enter(2), Step::Run(1000), Step::Exit, Step::Run(100)]);
        let arrivals = [Arrival { at: 500, priority: 2, program: 1 }];
        let raise = Costs::new(&LUNA88K, Effects::default(), None).conventional_raise;
        for scheme in [Scheme::Conventional, Scheme::Optimistic] {
            let (log, _, _) = run(&programs, &arrivals, scheme);
            // The section's body ends at 100 + raise + 1000 (+ the optimistic detour).
            assert!(log[0].started > 1100 + raise, "{scheme:?}: {:?}", log[0]);
            assert_eq!(log[0].masking_level, 0);
        }
    }

    /// The random scenarios reach the slow paths: a good share of them hold
    /// (conventional) and defer (optimistic) interrupts.
    #[test]
    fn random_scenarios_exercise_held_and_deferred_interrupts() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let (mut held, mut deferred, n) = (0, 0, 200);
        for _ in 0..n {
            let (programs, arrivals) = scenario().new_tree(&mut runner).map(|t| t.current()).unwrap_or_default();
            held += (run_counted(&programs, &arrivals, Scheme::Conventional).2.held > 0) as u32;
            deferred += (run_counted(&programs, &arrivals, Scheme::Optimistic).2.deferred > 0) as u32;
        }
        assert!(held > n / 5 && deferred > n / 5, "held in {held}, deferred in {deferred} of {n}");
    }

    /// Unbalanced sections, priorities the model lacks and bad arrivals are refused, not run.
    #[test]
    fn invalid_programs_and_arrivals_are_refused() {
        let costs = Costs::new(&LUNA88K, Effects::default(), None);
        let new = |steps: Vec<Step>, arrivals: Vec<Arrival>| Model::new(LEVELS, ENTRY, base(steps), arrivals.into_iter(), Scheme::Optimistic, costs, 10_000);
        let e = new(vec![Step::Enter(5), Step::Exit], vec![]).err().unwrap();
        assert!(e.contains("priority 5"), "{e}");
        assert!(new(vec![Step::Exit], vec![]).err().unwrap().contains("exit without"));
        assert!(new(vec![Step::Enter(1)], vec![]).err().unwrap().contains("left open"));
        let mut m = new(vec![Step::Run(10)], vec![Arrival { at: 5, priority: 0, program: 1 }]).unwrap();
        assert!(m.run().unwrap_err().contains("priority 0"));
    }
}
