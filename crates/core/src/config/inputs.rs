//! The files a scenario reads besides its own text: kernel code, NIC
//! firmware, a trace's capture and system-call log, a script's events. A
//! result names each with its content hash (the Python side's provenance),
//! so that a sweep resumed after one of them changed computes its runs
//! again instead of keeping results of the old file.

use super::{Scenario, WorkloadConfig};
use std::path::{Path, PathBuf};

/// The keys that name an input file, in the order [`Scenario::inputs`] lists them.
pub const INPUT_KEYS: &[&str] = &["code.program", "nic_firmware.program", "workload.pcap", "workload.strace", "workload.events_file"];

/// One input file: the key that names it and its path as the run opens it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub key: &'static str,
    pub path: PathBuf,
}

impl Scenario {
    /// The files the run of this scenario reads, each relative to
    /// `base_dir` as the parts resolve it.
    pub fn inputs(&self, base_dir: &Path) -> Vec<Input> {
        let trace = match &self.workload {
            WorkloadConfig::Trace(t) => [Some(t.pcap.as_str()), t.strace.as_deref()],
            _ => [None, None],
        };
        let events = match &self.workload {
            WorkloadConfig::Script(c) => c.events_file.as_deref(),
            _ => None,
        };
        let given = [self.code.program.as_deref(), self.nic_firmware.program.as_deref(), trace[0], trace[1], events];
        INPUT_KEYS.iter().zip(given).filter_map(|(&key, g)| Some(Input { key, path: base_dir.join(g?) })).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundled(name: &str) -> (Scenario, PathBuf) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/irqsim/scenarios").join(name);
        (Scenario::from_file(&path, &[]).unwrap(), path.parent().unwrap().to_path_buf())
    }

    #[test]
    fn a_trace_names_its_capture_and_log_beside_the_scenario() {
        let (s, dir) = bundled("mt-interrupts/trace-loopback.toml");
        let got: Vec<_> = s.inputs(&dir).into_iter().map(|i| (i.key, i.path)).collect();
        assert_eq!(
            got,
            [("workload.pcap", dir.join("../../traces/loopback-stream.pcap")), ("workload.strace", dir.join("../../traces/loopback-stream.strace"))]
        );
        assert!(got.iter().all(|(_, p)| p.is_file()));
    }

    #[test]
    fn code_names_its_program_and_arrivals_no_file() {
        let (s, dir) = bundled("code/rx-min.toml");
        assert_eq!(s.inputs(&dir).iter().map(|i| i.key).collect::<Vec<_>>(), ["code.program"]);
        let (s, dir) = bundled("livelock/receiver.toml");
        assert!(s.inputs(&dir).is_empty());
    }
}
