//! The instruction-parallel organisation (the paper's Table 1): every basic
//! block of the firmware is scheduled for a VLIW configuration and weighted
//! by how often a 1-core run executed it. One bundle retires per cycle, so
//! the weighted bundle count is the VLIW core's cycles for the profiled
//! frames.

use crate::blocks::blocks;
use crate::ilp::{Memory, Units, schedule};
use irqsim_mips::Program;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// A 1-core run's execution counts (the `--profile` file of `irqsim ilp`).
#[derive(Clone, Debug, PartialEq)]
pub struct BlockProfile {
    pub program: String,
    pub frames: u64,
    pub cycles: u64,
    pub instructions: u64,
    /// Executions by address, in address order, one entry per address.
    pub counts: Vec<(u32, u64)>,
}

impl BlockProfile {
    pub fn to_json(&self) -> Value {
        let counts: Vec<Value> = self.counts.iter().map(|&(pc, n)| Value::Array(vec![Value::String(hex(pc)), n.into()])).collect();
        json!({"program": self.program, "frames": self.frames, "cycles": self.cycles, "instructions": self.instructions, "counts": counts})
    }

    /// Parses a profile; errors name the file and the field.
    pub fn parse(text: &str, file: &str) -> Result<BlockProfile, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("{file}: not JSON: {e}"))?;
        let num = |k: &str| v.get(k).and_then(Value::as_u64).ok_or_else(|| format!("{file}: {k}: expected a non-negative integer"));
        // The last count given for an address holds.
        let mut counts = BTreeMap::new();
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
        Ok(BlockProfile { program, frames, cycles: num("cycles")?, instructions: num("instructions")?, counts: counts.into_iter().collect() })
    }

    /// Executions of the instruction at `pc`.
    fn count(&self, pc: u32) -> Option<u64> {
        self.counts.binary_search_by_key(&pc, |e| e.0).ok().map(|k| self.counts[k].1)
    }
}

/// `pc` as `0x` and eight lowercase hex digits (as `format!("0x{pc:08x}")`, without the formatter: a profile has a name per executed word).
fn hex(pc: u32) -> String {
    let digits = (0..8).rev().map(|i| char::from_digit((pc >> (4 * i)) & 15, 16).unwrap_or('0'));
    "0x".chars().chain(digits).collect()
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
    let executed: Vec<_> = blocks.iter().filter_map(|b| profile.count(b.start).map(|n| (b, n))).filter(|e| e.1 > 0).collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile's JSON names each address as `0x` and eight lowercase hex
    /// digits, in address order, and reads back as written (the last count
    /// of an address given twice holds).
    #[test]
    fn a_profile_reads_back_as_written() {
        let counts = vec![(0, 1), (0x0040_06d0, 5004), (0x00ab_cdef, 7), (0xffff_fffc, u64::MAX)];
        let p = BlockProfile { program: "p".into(), frames: 2, cycles: 3, instructions: 4, counts };
        let v = p.to_json();
        let names: Vec<&str> = v["counts"].as_array().unwrap().iter().map(|e| e[0].as_str().unwrap()).collect();
        let expected: Vec<String> = p.counts.iter().map(|(pc, _)| format!("0x{pc:08x}")).collect();
        assert_eq!(names, expected);
        assert_eq!(BlockProfile::parse(&v.to_string(), "f").unwrap(), p);
        let twice = r#"{"frames": 1, "cycles": 1, "instructions": 1, "counts": [["0x10", 1], ["0x8", 2], ["0x10", 3]]}"#;
        assert_eq!(BlockProfile::parse(twice, "f").unwrap().counts, vec![(8, 2), (16, 3)]);
    }
}
