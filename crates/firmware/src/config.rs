//! Settings of a NIC firmware run, declared as [`PARAMS`] in irqsim's
//! parameter language (irqsim-params): set as `key=value` strings
//! (`irqsim ilp --record --set cores=2`, `irqsim._core.nic_firmware`) or as a
//! TOML table ([`NicConfig::from_table`]), both checked against the same
//! table, so an unknown key or a bad value is one line naming the key. Time
//! and rates are given in the units of their sources (ns, Gb/s, MHz) and
//! converted once to core cycles.

use irqsim_params::{Param, Section, d};
use toml::Table;

/// Every setting, for the docs: the programmable NIC's keys.
pub const SECTION: Section = Section::new(
    "nic_firmware_study",
    "the nic-firmware study's own run of the programmable NIC against an abstract host (docs/models/nic-firmware.md), set as `key=value` by `irqsim ilp --record --set` and `irqsim._core.nic_firmware(program, [\"cores=2\", ...])`: the device's keys as `[nic_firmware]` takes them on the machine, and the study's wire (`traffic`, `frame_bytes`), host (`host_ns`) and measured window",
    PARAMS,
);

/// Every setting.
pub const PARAMS: &[Param] = &[
    CORES,
    ORGANISATION,
    Param::choice("traffic", &["send", "receive", "duplex"], d("\"duplex\""), "floods from the host (`send`), the wire (`receive`) or both"),
    Param::int("frame_bytes", "bytes", d("1518"), 64, 1518, "Ethernet frame size without preamble and gap"),
    Param::int("frames", "frames", d("2000"), 1, 100_000_000, "frames (sent plus received) measured"),
    Param::int("warmup_frames", "frames", d("200"), 0, 100_000_000, "frames completed before measuring starts"),
    BATCH,
    CLOCK_MHZ,
    LINE_GBPS,
    DMA_GBPS,
    DMA_READ_NS,
    DMA_WRITE_NS,
    Param::float("host_ns", "ns", d("1000.0"), false, 0.0, 1e9, "host driver's delay from an interrupt to new descriptors"),
    SRAM_BANKS,
    Param::int("max_cycles", "cycles", d("50000000"), 1, 1 << 40, "stop with an error if the frames are not done by then"),
];

/// The device's own settings, which `[nic_firmware]` on irqsim-core's
/// machine takes as well (the rest are the study's wire, host and window).
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traffic {
    Send,
    Receive,
    Duplex,
}

impl Traffic {
    pub fn sends(self) -> bool {
        self != Traffic::Receive
    }
    pub fn receives(self) -> bool {
        self != Traffic::Send
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct NicConfig {
    pub cores: usize,
    pub organisation: Organisation,
    pub traffic: Traffic,
    pub frame_bytes: u32,
    pub frames: u64,
    pub warmup_frames: u64,
    pub batch: u32,
    pub clock_mhz: f64,
    pub line_gbps: f64,
    pub dma_gbps: f64,
    pub dma_read_ns: f64,
    pub dma_write_ns: f64,
    pub host_ns: f64,
    pub sram_banks: u32,
    pub max_cycles: u64,
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
            traffic: match text("traffic") {
                "send" => Traffic::Send,
                "receive" => Traffic::Receive,
                _ => Traffic::Duplex,
            },
            frame_bytes: int("frame_bytes") as u32,
            frames: int("frames"),
            warmup_frames: int("warmup_frames"),
            batch: int("batch") as u32,
            clock_mhz: real("clock_mhz"),
            line_gbps: real("line_gbps"),
            dma_gbps: real("dma_gbps"),
            dma_read_ns: real("dma_read_ns"),
            dma_write_ns: real("dma_write_ns"),
            host_ns: real("host_ns"),
            sram_banks: int("sram_banks") as u32,
            max_cycles: int("max_cycles"),
        })
    }

    /// Nanoseconds as core cycles (rounded up: a latency never shrinks to nothing).
    pub fn cycles(&self, ns: f64) -> u64 {
        (ns * self.clock_mhz / 1000.0).ceil() as u64
    }

    /// Core cycles to move `bytes` at `gbps`, in thousandths of a cycle.
    pub fn millicycles(&self, bytes: u64, gbps: f64) -> u64 {
        (bytes as f64 * 8.0 / gbps * self.clock_mhz).round() as u64
    }

    /// Bytes a frame occupies on the wire: preamble and start delimiter (8)
    /// and the inter-frame gap (12) besides the frame (IEEE 802.3).
    pub fn wire_bytes(&self) -> u64 {
        self.frame_bytes as u64 + 20
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_settings_name_their_key() {
        assert_eq!(NicConfig::from_sets(&["cores=9"]).unwrap_err(), "cores: must be 1..=8, got 9");
        assert!(NicConfig::from_sets(&["colour=red"]).unwrap_err().starts_with("colour: unknown field `colour`, expected one of `cores`"));
        assert!(NicConfig::from_sets(&["organisation=pipeline"]).unwrap_err().starts_with("organisation: unknown variant `pipeline`, expected one of `frame`, `task`"));
        assert_eq!(NicConfig::from_sets(&["clock_mhz=fast"]).unwrap_err(), "clock_mhz: invalid type: string \"fast\", expected a number");
        assert!(NicConfig::from_sets(&["cores"]).unwrap_err().contains("expected KEY=VALUE"));
    }

    /// Every key of the `KEYS` rows the settings were before they became a table.
    #[test]
    fn every_key_before_the_table_has_a_param() {
        let before = ["cores", "organisation", "traffic", "frame_bytes", "frames", "warmup_frames", "batch", "clock_mhz", "line_gbps", "dma_gbps", "dma_read_ns", "dma_write_ns", "host_ns", "sram_banks", "max_cycles"];
        for key in before {
            assert!(irqsim_params::find(PARAMS, key).is_some(), "{key} has no Param entry");
        }
        assert_eq!(PARAMS.len(), before.len());
    }

    #[test]
    fn defaults_pass_their_own_checks() {
        irqsim_params::check_defaults("", PARAMS).unwrap();
    }

    /// A TOML table and `key=value` strings are one setting.
    #[test]
    fn tables_and_strings_agree() {
        let t: Table = "cores = 2\norganisation = \"task\"\nclock_mhz = 200\nmax_cycles = 0x1000".parse().unwrap();
        let from_table = NicConfig::from_table(&t).unwrap();
        assert_eq!(from_table, NicConfig::from_sets(&["cores=2", "organisation=task", "clock_mhz=200", "max_cycles=0x1000"]).unwrap());
        assert_ne!(from_table, NicConfig::default());
        let bad: Table = "cores = 9".parse().unwrap();
        assert_eq!(NicConfig::from_table(&bad).unwrap_err(), "cores: must be 1..=8, got 9");
    }

    #[test]
    fn conversions() {
        let c = NicConfig::default();
        assert_eq!(c.cycles(1000.0), 166);
        // A 1518-byte frame at 10 Gb/s: 1538 bytes x 8 / 10 Gb/s = 1230.4 ns = 204.246 cycles of 166 MHz.
        assert_eq!(c.millicycles(c.wire_bytes(), c.line_gbps), 204_246);
    }
}
