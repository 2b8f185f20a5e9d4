//! A measured window as JSON (the `nic_firmware` part of a machine run's
//! report): its throughput and IPC, where the cores' cycles went
//! (bins summed over cores, per handler, per function), the NIC's counters,
//! and the execution profile the VLIW study weights its blocks by.

use crate::config::Organisation;
use crate::profile::{DISPATCH, HANDLERS};
use crate::vliw::BlockProfile;
use crate::window::Measured;
use serde_json::{Value, json};

impl Measured {
    /// Cycles and executed instructions charged to each function, most cycles first.
    pub fn function_cycles(&self) -> Vec<(String, u64, u64)> {
        let f = &self.functions;
        let mut by = vec![(0u64, 0u64); f.names.len()];
        for w in 0..f.words() {
            let id = f.of(w);
            if id != crate::profile::NO_FUNCTION {
                by[id as usize].0 += self.profile.cycles[w];
                by[id as usize].1 += self.profile.executed[w];
            }
        }
        let mut out: Vec<_> = f.names.iter().zip(by).filter(|e| e.1.0 > 0).map(|(n, (c, i))| (n.clone(), c, i)).collect();
        out.sort_by_key(|e| (std::cmp::Reverse(e.1), e.0.clone()));
        out
    }

    /// The window's execution counts, for the VLIW study.
    pub fn block_profile(&self) -> BlockProfile {
        BlockProfile {
            program: self.program.clone(),
            frames: self.frames,
            cycles: self.cycles,
            instructions: self.instructions,
            counts: self.profile.counts(&self.functions),
        }
    }

    pub fn to_json(&self) -> Value {
        let p = &self.profile;
        let handlers: Vec<Value> = (0..=DISPATCH)
            .map(|h| {
                let name = HANDLERS.get(h).copied().unwrap_or("dispatch loop");
                json!({"name": name, "invocations": p.invocations[h], "instructions": p.handler_instructions[h], "cycles": p.handler_cycles[h]})
            })
            .collect();
        let functions: Vec<Value> = self.function_cycles().into_iter().map(|(n, c, i)| json!({"name": n, "cycles": c, "instructions": i})).collect();
        json!({
            "cores": self.cores,
            "organisation": if self.organisation == Organisation::Frame { "frame" } else { "task" },
            "owners": self.owners,
            "cycles": self.cycles,
            "end_cycle": self.end,
            "frames": self.frames,
            "sent": self.sent,
            "received": self.received,
            "instructions": self.instructions,
            "frames_per_kcycle": self.frames_per_kcycle(),
            "ipc": self.ipc(),
            "dropped": self.dropped,
            "sram_conflicts": self.sram_conflicts,
            "dma_read_bytes": self.dma_bytes.0,
            "dma_write_bytes": self.dma_bytes.1,
            "bins": {
                "handler_work": p.handler_work,
                "dispatch_polling": p.dispatch_work,
                "lock_spin": p.lock,
                "ordering": p.ordering,
                "dma_queue_full": p.dma_wait,
            },
            "handlers": handlers,
            "functions": functions,
            "profile": self.block_profile().to_json(),
        })
    }
}
