//! The instruction-parallel organisation (the paper's Table 1): every basic
//! block of the firmware is scheduled for a VLIW configuration and weighted
//! by how often a 1-core run executed it. One bundle retires per cycle, so
//! the weighted bundle count is the VLIW core's cycles for the profiled
//! frames.

use crate::blocks::blocks;
use crate::ilp::{Memory, Units, schedule};
use irqsim_mips::Program;
use serde_json::{Value, json};
use std::collections::HashMap;

/// A 1-core run's execution counts (the `--profile` file of `irqsim ilp`).
#[derive(Clone, Debug, PartialEq)]
pub struct BlockProfile {
    pub program: String,
    pub frames: u64,
    pub cycles: u64,
    pub instructions: u64,
    pub counts: HashMap<u32, u64>,
}

impl BlockProfile {
    pub fn to_json(&self) -> Value {
        let mut counts: Vec<_> = self.counts.iter().map(|(&pc, &n)| json!([format!("0x{pc:08x}"), n])).collect();
        counts.sort_by(|a, b| a[0].as_str().cmp(&b[0].as_str()));
        json!({"program": self.program, "frames": self.frames, "cycles": self.cycles, "instructions": self.instructions, "counts": counts})
    }

    /// Parses a profile; errors name the file and the field.
    pub fn parse(text: &str, file: &str) -> Result<BlockProfile, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("{file}: not JSON: {e}"))?;
        let num = |k: &str| v.get(k).and_then(Value::as_u64).ok_or_else(|| format!("{file}: {k}: expected a non-negative integer"));
        let mut counts = HashMap::new();
        let list = v.get("counts").and_then(Value::as_array).ok_or_else(|| format!("{file}: counts: expected a list of [pc, count]"))?;
        for (k, e) in list.iter().enumerate() {
            let pc = e.get(0).and_then(Value::as_str).and_then(|s| u32::from_str_radix(s.trim_start_matches("0x"), 16).ok());
            match (pc, e.get(1).and_then(Value::as_u64)) {
                (Some(pc), Some(n)) => counts.insert(pc, n),
                _ => return Err(format!("{file}: counts[{k}]: expected [\"0xPC\", count]")),
            };
        }
        let frames = num("frames")?;
        if frames == 0 {
            return Err(format!("{file}: frames: must be positive"));
        }
        let program = v.get("program").and_then(Value::as_str).unwrap_or("").to_string();
        Ok(BlockProfile { program, frames, cycles: num("cycles")?, instructions: num("instructions")?, counts })
    }
}

/// One VLIW configuration's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub units: Units,
    pub bundles: u64,
    pub instructions: u64,
}

impl Row {
    pub fn ipc(&self) -> f64 {
        self.instructions as f64 / self.bundles as f64
    }
}

/// Schedules every executed block for each configuration under the `memory` rule.
pub fn evaluate(program: &Program, profile: &BlockProfile, configs: &[Units], memory: Memory) -> Result<Vec<Row>, String> {
    let blocks = blocks(program);
    let executed: Vec<_> = blocks.iter().filter_map(|b| profile.counts.get(&b.start).map(|&n| (b, n))).filter(|e| e.1 > 0).collect();
    if executed.is_empty() {
        return Err(format!("profile: no executed block starts in {} (a profile of another program?)", program.name));
    }
    Ok(configs
        .iter()
        .map(|&units| {
            let (mut bundles, mut instructions) = (0, 0);
            for (b, n) in &executed {
                let insts: Vec<_> = b.insts.iter().map(|e| e.2).collect();
                let s = schedule(&insts, units, memory);
                bundles += n * s.length as u64;
                instructions += n * s.instructions() as u64;
            }
            Row { units, bundles, instructions }
        })
        .collect())
}
