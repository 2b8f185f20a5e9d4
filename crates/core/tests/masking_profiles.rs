//! Machine profiles against Tables 1 and 2, the bundled null-RPC scenarios,
//! and the errors bad masking configurations give.

// In a module so that `cargo test masking` selects these tests.
mod masking {
    use irqsim_core::masking::{Costs, Effects, Machine};
    use irqsim_core::{Scenario, parse_override, run_file};
    use std::path::PathBuf;

    fn scenarios() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios/optimistic-spl")
    }

    /// Each profile's idealized fast paths are exactly its Table 1 and Table 2 entries.
    #[test]
    fn fast_path_costs_equal_the_tables() {
        let table1 = [
            (Machine::Luna88k, 96),
            (Machine::Flamingo, 21),
            (Machine::Decstation5000_120, 80),
            (Machine::Decstation5000_200, 14),
            (Machine::Pc386, 179),
            (Machine::Gateway66v, 279),
        ];
        let table2 = [(Machine::Luna88k, Some(51)), (Machine::Decstation5000_120, Some(31)), (Machine::Decstation5000_200, Some(31)), (Machine::Pc386, None)];
        for (m, cycles) in table1 {
            let c = Costs::new(m.profile(), Effects::default(), None);
            assert_eq!(c.conventional_pair(), cycles, "{m:?}");
        }
        for (m, cycles) in table2 {
            let c = Costs::new(m.profile(), Effects::default(), None);
            assert_eq!(c.optimistic_pair(), cycles, "{m:?}");
        }
    }

    /// With no interrupts, a null RPC costs its path plus exactly one pair, and
    /// the pair is the table entry (idealized files) in both schemes.
    #[test]
    fn null_rpc_costs_path_plus_one_pair() {
        for machine in ["luna88k", "decstation_5000_120", "decstation_5000_200"] {
            for scheme in ["conventional", "optimistic"] {
                let path = scenarios().join(format!("{machine}-idealized.toml"));
                let o = [parse_override(&format!("masking.scheme=\"{scheme}\"")).unwrap()];
                let r = run_file(&path, &o, Default::default()).unwrap();
                r.check_invariants().unwrap();
                let s = Scenario::from_file(&path, &o).unwrap();
                let irqsim_core::config::WorkloadConfig::NullRpc(w) = &s.workload else { panic!("not null_rpc") };
                let c = s.masking.costs();
                let pair = if scheme == "conventional" { c.conventional_pair() } else { c.optimistic_pair().unwrap() };
                assert_eq!(r.metric("mask_cycles_per_rpc"), Some(pair as f64), "{machine} {scheme}");
                assert_eq!(r.metric("cycles_per_rpc"), Some((w.rpc_path_cycles as u64 + pair) as f64), "{machine} {scheme}");
                assert!(r.metric("rpcs").unwrap() > 100.0);
            }
        }
    }

    /// Interrupts inside the section are held (conventional) or deferred
    /// (optimistic), and every one is accounted for.
    #[test]
    fn interrupts_are_held_or_deferred_and_conserved() {
        let path = scenarios().join("luna88k-modelled.toml");
        for scheme in ["conventional", "optimistic"] {
            let o = [parse_override(&format!("masking.scheme=\"{scheme}\"")).unwrap(), parse_override("workload.interrupt_rate_per_s=50000").unwrap()];
            let r = run_file(&path, &o, Default::default()).unwrap();
            r.check_invariants().unwrap();
            let (held, deferred) = (r.metric("interrupts_held").unwrap(), r.metric("interrupts_deferred").unwrap());
            match scheme {
                "conventional" => assert!(held > 0.0 && deferred == 0.0),
                _ => assert!(deferred > 0.0),
            }
        }
    }

    fn error(file: &str, sets: &[&str]) -> String {
        let o: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
        Scenario::from_file(&scenarios().join(file), &o).unwrap_err().to_string()
    }

    #[test]
    fn bad_configs_name_the_key() {
        let e = error("luna88k-idealized.toml", &["workload.section_level=8"]);
        assert!(e.contains("`workload.section_level`") && e.contains("levels 1..=7"), "{e}");
        let e = error("luna88k-idealized.toml", &["workload.interrupt_levels=[1, 9]"]);
        assert!(e.contains("`workload.interrupt_levels[1]`"), "{e}");
        let e = error("luna88k-idealized.toml", &["workload.handler_cycles=-5"]);
        assert!(e.contains("`workload.handler_cycles`"), "{e}");
        let e = error("luna88k-idealized.toml", &["masking.stall_cycles_per_instruction=-0.5"]);
        assert!(e.contains("`masking.stall_cycles_per_instruction`") && e.contains("in [0, 1000]"), "{e}");
        let e = error("luna88k-idealized.toml", &["masking.optimistic_pair_cycles=-1", "masking.optimistic_pair_instructions=3"]);
        assert!(e.contains("`masking.optimistic_pair_cycles`"), "{e}");
        let e = error("luna88k-idealized.toml", &["masking.machine=\"pc386\"", "masking.scheme=\"optimistic\"", "cpu.clock_mhz=25.0"]);
        assert!(e.contains("`masking.scheme`") && e.contains("no optimistic (Table 2) figure"), "{e}");
        let e = error("luna88k-idealized.toml", &["masking.machine=\"flamingo\""]);
        assert!(e.contains("`cpu.clock_mhz`") && e.contains("150"), "{e}");
        let e = error("luna88k-idealized.toml", &["masking.sheme=\"optimistic\""]);
        assert!(e.contains("`masking.sheme`"), "{e}");
        let e = error("luna88k-idealized.toml", &["workload.section_cycles=99999"]);
        assert!(e.contains("`workload.section_cycles`"), "{e}");
    }

    /// A machine without a Table 2 figure runs optimistic once the scenario supplies one.
    #[test]
    fn supplied_optimistic_figure_is_used() {
        let o: Vec<_> = [
            "masking.machine=\"pc386\"",
            "masking.scheme=\"optimistic\"",
            "cpu.clock_mhz=25.0",
            "masking.optimistic_pair_instructions=10",
            "masking.optimistic_pair_cycles=12",
        ]
        .iter()
        .map(|s| parse_override(s).unwrap())
        .collect();
        let r = run_file(&scenarios().join("luna88k-idealized.toml"), &o, Default::default()).unwrap();
        assert_eq!(r.metric("mask_cycles_per_rpc"), Some(12.0));
    }
}
