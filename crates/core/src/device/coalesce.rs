//! Receive-interrupt coalescing on the NIC, with ethtool's semantics
//! (`ethtool -C rx-usecs N rx-frames M`; `struct ethtool_coalesce` in
//! include/uapi/linux/ethtool.h; docs/models/napi-coalescing.md):
//!
//! 1. While the NIC's interrupt is enabled, each frame that lands counts.
//! 2. `rx_frames` > 0: the count reaching it interrupts at once.
//! 3. `rx_usecs` > 0: the first counted frame arms a timer; when it expires
//!    with frames counted, the NIC interrupts.
//! 4. Either zero: only the other applies; both zero is refused (the NIC
//!    would never interrupt).
//! 5. Any interrupt (a transmit completion's too) clears the count and the
//!    timer: the handler takes every frame waiting. An interrupt enabled
//!    again with frames waiting (NAPI) counts them at once.
//!
//! The receiving NIC of kernel code (`machine/code.rs`) coalesces the same
//! way: its receive cause waits for these rules before it asserts the
//! interrupt, and a cause left pending at the handler's end or at the
//! driver's unmask counts the frames the ring holds.
//!
//! With `adaptive_rx` (DIM, `device/dim.rs`) the two keys are DIM's current
//! profile, changed at each decision; in DIM's CQE mode the timer restarts
//! at every counted frame instead of running from the first.

use super::dim::Dim;
use crate::params::{Param, d};
use serde::{Deserialize, Serialize};

/// `[coalesce]`; keys: [`CoalesceConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CoalesceConfig {
    pub rx_usecs: u32,
    pub rx_frames: u32,
    pub adaptive_rx: bool,
    pub dim_mode: DimMode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DimMode {
    Eqe,
    Cqe,
}

const FIXED: &[&str] = &["false"];

impl CoalesceConfig {
    pub const PARAMS: &'static [Param] = &[
        Param::int(
            "rx_usecs",
            "µs",
            d("0"),
            0,
            1_000_000,
            "delay of the receive interrupt after the first frame it covers; 0: only `rx_frames` applies (ethtool rx-usecs)",
        )
        .when("coalesce.adaptive_rx", FIXED),
        Param::int("rx_frames", "", d("1"), 0, 1 << 20, "frames that interrupt at once; 0: only `rx_usecs` applies (ethtool rx-frames)")
            .when("coalesce.adaptive_rx", FIXED),
        Param::flag(
            "adaptive_rx",
            d("false"),
            "DIM chooses rx-usecs and rx-frames from lib/dim's five profiles as the traffic changes (ethtool adaptive-rx; needs the NAPI path, or kernel code, whose driver's re-enable of its receive cause is the sample point)",
        ),
        Param::choice(
            "dim_mode",
            &["eqe", "cqe"],
            d("\"eqe\""),
            "DIM's profiles and timer: from the first event (EQE: 1-256 µs) or restarted at each frame (CQE: 2-64 µs)",
        )
        .when("coalesce.adaptive_rx", &["true"]),
    ];

    /// Whether the NIC coalesces at all (rx-frames 1 alone interrupts per frame).
    pub fn active(&self) -> bool {
        self.adaptive_rx || !(self.rx_usecs == 0 && self.rx_frames == 1)
    }
}

/// The NIC's coalescing state.
#[derive(Debug)]
pub struct Coalesce {
    pub(crate) usecs: u64,
    pub(crate) frames: u64,
    pub(crate) cycles_per_us: f64,
    /// The timer restarts at every counted frame (DIM's CQE mode).
    pub(crate) restart: bool,
    pub dim: Option<Dim>,
    /// Frames counted since the interrupt was enabled or last fired.
    pub(crate) counted: u64,
    /// The armed timer's generation; a fired or cleared timer's event is stale.
    pub(crate) armed: Option<u32>,
    pub(crate) generation: u32,
    pub timer_interrupts: u64,
    pub frame_interrupts: u64,
}

/// What a counted frame does.
pub(crate) enum Then {
    Interrupt,
    Arm(u32),
    Wait,
}

impl Coalesce {
    pub fn new(c: &CoalesceConfig, cycles_per_us: f64) -> Self {
        let dim = c.adaptive_rx.then(|| Dim::new(c.dim_mode == DimMode::Cqe, cycles_per_us));
        let (usec, frames) = dim.as_ref().map_or((c.rx_usecs, c.rx_frames), |d| d.profiles[d.ix]);
        Self {
            usecs: (f64::from(usec) * cycles_per_us).round() as u64,
            frames: u64::from(frames),
            cycles_per_us,
            restart: c.adaptive_rx && c.dim_mode == DimMode::Cqe,
            dim,
            counted: 0,
            armed: None,
            generation: 0,
            timer_interrupts: 0,
            frame_interrupts: 0,
        }
    }

    pub(crate) fn count(&mut self, frames: u64) -> Then {
        self.counted += frames;
        if self.frames > 0 && self.counted >= self.frames {
            self.frame_interrupts += 1;
            return Then::Interrupt;
        }
        if self.usecs > 0 && (self.armed.is_none() || self.restart) {
            self.generation = (self.generation + 1) & ((1 << GENERATION_BITS) - 1);
            self.armed = Some(self.generation);
            return Then::Arm(self.generation);
        }
        Then::Wait
    }

    /// DIM's new profile `(usec, frames)` takes effect.
    pub(crate) fn apply(&mut self, (usec, frames): (u32, u32)) {
        self.usecs = (f64::from(usec) * self.cycles_per_us).round() as u64;
        self.frames = u64::from(frames);
    }

    /// The NIC interrupted: the count and the timer start over.
    pub fn fired(&mut self) {
        self.counted = 0;
        self.armed = None;
    }
}

/// A timer event's tag: the queue in the top 8 bits, the generation below.
pub(crate) const GENERATION_BITS: u32 = 24;

/// Timeline marks of DIM's profile changes (labels are static).
pub(crate) const PROFILE_MARKS: [&str; 5] = ["DIM profile 0", "DIM profile 1", "DIM profile 2", "DIM profile 3", "DIM profile 4"];
