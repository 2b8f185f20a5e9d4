//! Settings of a NIC firmware run as `KEY=VALUE` strings. Every key is in
//! [`KEYS`] with its default and meaning; an unknown key or a bad value is
//! one line naming the key. Time and rates are given in the units of their
//! sources (ns, Gb/s, MHz) and converted once to core cycles.

use irqsim_mips::config::parse_u64;

/// `(key, default, meaning)` of every setting.
pub const KEYS: &[(&str, &str, &str)] = &[
    ("cores", "1", "NIC cores running the firmware (1-8)"),
    ("organisation", "frame", "frame (any core runs any handler) or task (one core per handler type)"),
    ("traffic", "duplex", "send, receive or duplex floods from the host and the wire"),
    ("frame_bytes", "1518", "Ethernet frame size without preamble and gap (64-1518)"),
    ("frames", "2000", "frames (sent plus received) measured"),
    ("warmup_frames", "200", "frames completed before measuring starts"),
    ("batch", "4", "frames or descriptors a handler claims at a time (1-16)"),
    ("clock_mhz", "166", "core clock (Willmann et al. 2005: 166 MHz)"),
    ("line_gbps", "10", "MAC line rate per direction"),
    ("dma_gbps", "16", "bandwidth of each DMA engine (PCIe 1.0 x8 per direction)"),
    ("dma_read_ns", "1000", "latency of a DMA read (a host memory round trip)"),
    ("dma_write_ns", "250", "latency of a DMA write (posted)"),
    ("host_ns", "1000", "host driver's delay from an interrupt to new descriptors"),
    ("sram_banks", "4", "SRAM banks; cores touching one bank in a cycle stall (Willmann: 4)"),
    ("max_cycles", "50000000", "stop with an error if the frames are not done by then"),
];

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

/// A bad setting: `key: message`.
pub fn bad(key: &str, msg: impl std::fmt::Display) -> String {
    format!("{key}: {msg}")
}

impl NicConfig {
    pub fn from_sets<S: AsRef<str>>(sets: &[S]) -> Result<NicConfig, String> {
        let default = |k: &str| KEYS.iter().find(|e| e.0 == k).map(|e| e.1.to_string()).unwrap_or_default();
        let mut values: Vec<(String, String)> = KEYS.iter().map(|e| (e.0.to_string(), default(e.0))).collect();
        for s in sets {
            let s = s.as_ref();
            let (k, v) = s.split_once('=').ok_or_else(|| bad(s, "expected KEY=VALUE"))?;
            let slot = values.iter_mut().find(|e| e.0 == k.trim());
            let known = KEYS.iter().map(|e| e.0).collect::<Vec<_>>().join(", ");
            slot.ok_or_else(|| bad(k.trim(), format!("unknown key (known: {known})")))?.1 = v.trim().to_string();
        }
        let get = |k: &str| values.iter().find(|e| e.0 == k).map(|e| e.1.as_str()).unwrap_or("");
        let int = |k: &str, lo: u64, hi: u64| {
            parse_u64(get(k)).filter(|v| (lo..=hi).contains(v)).ok_or_else(|| bad(k, format!("expected an integer in {lo}..={hi} (got {:?})", get(k))))
        };
        let real = |k: &str, lo: f64, hi: f64| {
            get(k).parse::<f64>().ok().filter(|v| (lo..=hi).contains(v)).ok_or_else(|| bad(k, format!("expected a number in {lo}..={hi} (got {:?})", get(k))))
        };
        let organisation = match get("organisation") {
            "frame" => Organisation::Frame,
            "task" => Organisation::Task,
            v => return Err(bad("organisation", format!("expected frame or task (got {v:?})"))),
        };
        let traffic = match get("traffic") {
            "send" => Traffic::Send,
            "receive" => Traffic::Receive,
            "duplex" => Traffic::Duplex,
            v => return Err(bad("traffic", format!("expected send, receive or duplex (got {v:?})"))),
        };
        Ok(NicConfig {
            cores: int("cores", 1, 8)? as usize,
            organisation,
            traffic,
            frame_bytes: int("frame_bytes", 64, 1518)? as u32,
            frames: int("frames", 1, 100_000_000)?,
            warmup_frames: int("warmup_frames", 0, 100_000_000)?,
            batch: int("batch", 1, 16)? as u32,
            clock_mhz: real("clock_mhz", 1.0, 10_000.0)?,
            line_gbps: real("line_gbps", 0.001, 1000.0)?,
            dma_gbps: real("dma_gbps", 0.001, 1000.0)?,
            dma_read_ns: real("dma_read_ns", 0.0, 1e6)?,
            dma_write_ns: real("dma_write_ns", 0.0, 1e6)?,
            host_ns: real("host_ns", 0.0, 1e9)?,
            sram_banks: int("sram_banks", 1, 64)? as u32,
            max_cycles: int("max_cycles", 1, 1 << 40)?,
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
        assert!(NicConfig::from_sets(&["cores=9"]).unwrap_err().starts_with("cores: expected an integer in 1..=8"));
        assert!(NicConfig::from_sets(&["colour=red"]).unwrap_err().starts_with("colour: unknown key"));
        assert!(NicConfig::from_sets(&["organisation=pipeline"]).unwrap_err().starts_with("organisation: expected frame or task"));
        assert!(NicConfig::from_sets(&["cores"]).unwrap_err().contains("expected KEY=VALUE"));
    }

    #[test]
    fn conversions() {
        let c = NicConfig::default();
        assert_eq!(c.cycles(1000.0), 166);
        // A 1518-byte frame at 10 Gb/s: 1538 bytes x 8 / 10 Gb/s = 1230.4 ns = 204.246 cycles of 166 MHz.
        assert_eq!(c.millicycles(c.wire_bytes(), c.line_gbps), 204_246);
    }
}
