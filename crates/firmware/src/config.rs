//! The programmable NIC's settings, declared as [`PARAMS`] in irqsim's
//! parameter language (irqsim-params): the device's keys of a scenario's
//! `[nic_firmware]` ([`NicConfig::from_table`]) or `key=value` strings
//! ([`NicConfig::from_sets`]), both checked against the same table, so an
//! unknown key or a bad value is one line naming the key. Time and rates
//! are given in the units of their sources (ns, Gb/s, MHz) and converted
//! once to core cycles.

use irqsim_params::{Param, d};
use toml::Table;

/// Every setting.
pub const PARAMS: &[Param] = &[CORES, ORGANISATION, BATCH, CLOCK_MHZ, LINE_GBPS, DMA_GBPS, DMA_READ_NS, DMA_WRITE_NS, SRAM_BANKS];

pub const CORES: Param = Param::int("cores", "", d("1"), 1, 8, "NIC cores running the firmware");
pub const ORGANISATION: Param =
    Param::choice("organisation", &["frame", "task"], d("\"frame\""), "`frame`: any core runs any handler; `task`: one core per handler type");
pub const BATCH: Param = Param::int("batch", "", d("4"), 1, 16, "frames or descriptors a handler claims at a time");
pub const CLOCK_MHZ: Param = Param::float("clock_mhz", "MHz", d("166.0"), false, 1.0, 10_000.0, "core clock (Willmann et al. 2005: 166 MHz)");
pub const LINE_GBPS: Param = Param::float("line_gbps", "Gb/s", d("10.0"), false, 0.001, 1000.0, "MAC line rate per direction");
pub const DMA_GBPS: Param = Param::float("dma_gbps", "Gb/s", d("16.0"), false, 0.001, 1000.0, "bandwidth of each DMA engine (PCIe 1.0 x8 per direction)");
pub const DMA_READ_NS: Param = Param::float("dma_read_ns", "ns", d("1000.0"), false, 0.0, 1e6, "latency of a DMA read (a host memory round trip)");
pub const DMA_WRITE_NS: Param = Param::float("dma_write_ns", "ns", d("250.0"), false, 0.0, 1e6, "latency of a DMA write (posted)");
pub const SRAM_BANKS: Param = Param::int("sram_banks", "", d("4"), 1, 64, "SRAM banks; cores touching one bank in a cycle stall (Willmann: 4)");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Organisation {
    Frame,
    Task,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NicConfig {
    pub cores: usize,
    pub organisation: Organisation,
    pub batch: u32,
    pub clock_mhz: f64,
    pub line_gbps: f64,
    pub dma_gbps: f64,
    pub dma_read_ns: f64,
    pub dma_write_ns: f64,
    pub sram_banks: u32,
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig::from_sets::<&str>(&[]).expect("defaults parse")
    }
}

impl NicConfig {
    /// Applies `key=value` settings over the defaults.
    pub fn from_sets<S: AsRef<str>>(sets: &[S]) -> Result<NicConfig, String> {
        let t = irqsim_params::parse_keys(sets, PARAMS).map_err(|(key, msg)| format!("{key}: {msg}"))?;
        Self::from_table(&t)
    }

    /// The settings of a table of [`PARAMS`], defaults filled in.
    pub fn from_table(t: &Table) -> Result<NicConfig, String> {
        let mut t = t.clone();
        irqsim_params::check_section(&mut t, "", PARAMS).map_err(|(key, msg)| format!("{key}: {msg}"))?;
        // Checked: present (a default), of its type and in range.
        let int = |k: &str| t[k].as_integer().expect("checked") as u64;
        let real = |k: &str| t[k].as_float().or_else(|| t[k].as_integer().map(|i| i as f64)).expect("checked");
        let text = |k: &str| t[k].as_str().expect("checked");
        Ok(NicConfig {
            cores: int("cores") as usize,
            organisation: if text("organisation") == "task" { Organisation::Task } else { Organisation::Frame },
            batch: int("batch") as u32,
            clock_mhz: real("clock_mhz"),
            line_gbps: real("line_gbps"),
            dma_gbps: real("dma_gbps"),
            dma_read_ns: real("dma_read_ns"),
            dma_write_ns: real("dma_write_ns"),
            sram_banks: int("sram_banks") as u32,
        })
    }

    /// Nanoseconds as core cycles (rounded up: a latency never shrinks to nothing).
    pub fn cycles(&self, ns: f64) -> u64 {
        (ns * self.clock_mhz / 1000.0).ceil() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_settings_name_their_key() {
        assert_eq!(NicConfig::from_sets(&["cores=9"]).unwrap_err(), "cores: must be 1..=8, got 9");
        assert!(NicConfig::from_sets(&["colour=red"]).unwrap_err().starts_with("colour: unknown field `colour`, expected one of `cores`"));
        assert!(
            NicConfig::from_sets(&["organisation=pipeline"])
                .unwrap_err()
                .starts_with("organisation: unknown variant `pipeline`, expected one of `frame`, `task`")
        );
        assert_eq!(NicConfig::from_sets(&["clock_mhz=fast"]).unwrap_err(), "clock_mhz: invalid type: string \"fast\", expected a number");
        assert!(NicConfig::from_sets(&["cores"]).unwrap_err().contains("expected KEY=VALUE"));
    }

    #[test]
    fn defaults_pass_their_own_checks() {
        irqsim_params::check_defaults("", PARAMS).unwrap();
    }

    /// A TOML table and `key=value` strings are one setting.
    #[test]
    fn tables_and_strings_agree() {
        let t: Table = "cores = 2\norganisation = \"task\"\nclock_mhz = 200\nsram_banks = 0x10".parse().unwrap();
        let from_table = NicConfig::from_table(&t).unwrap();
        assert_eq!(from_table, NicConfig::from_sets(&["cores=2", "organisation=task", "clock_mhz=200", "sram_banks=0x10"]).unwrap());
        assert_ne!(from_table, NicConfig::default());
        let bad: Table = "cores = 9".parse().unwrap();
        assert_eq!(NicConfig::from_table(&bad).unwrap_err(), "cores: must be 1..=8, got 9");
    }

    #[test]
    fn conversions() {
        // 1000 ns at 166 MHz: 166 cycles; 1 ns rounds up to a whole cycle.
        let c = NicConfig::default();
        assert_eq!((c.cycles(1000.0), c.cycles(1.0)), (166, 1));
    }
}
