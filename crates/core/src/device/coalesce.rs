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

use crate::config::params::{Param, d};
use crate::engine::Time;
use crate::machine::{Event, Machine};
use serde::{Deserialize, Serialize};

/// `[coalesce]`; keys: [`CoalesceConfig::PARAMS`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CoalesceConfig {
    pub rx_usecs: u32,
    pub rx_frames: u32,
}

impl CoalesceConfig {
    pub const PARAMS: &'static [Param] = &[
        Param::int(
            "rx_usecs",
            "µs",
            d("0"),
            0,
            1_000_000,
            "delay of the receive interrupt after the first frame it covers; 0: only `rx_frames` applies (ethtool rx-usecs)",
        ),
        Param::int("rx_frames", "", d("1"), 0, 1 << 20, "frames that interrupt at once; 0: only `rx_usecs` applies (ethtool rx-frames)"),
    ];

    /// Whether the NIC coalesces at all (rx-frames 1 alone interrupts per frame).
    pub fn active(&self) -> bool {
        !(self.rx_usecs == 0 && self.rx_frames == 1)
    }

    /// ethtool's rule between the two keys: `(key, message)`.
    pub fn check(&self) -> Result<(), (String, String)> {
        if self.rx_usecs == 0 && self.rx_frames == 0 {
            return Err(("coalesce.rx_frames".into(), "rx_usecs and rx_frames are both 0: the NIC would never interrupt (ethtool refuses it)".into()));
        }
        Ok(())
    }
}

/// The NIC's coalescing state.
#[derive(Debug)]
pub struct Coalesce {
    usecs: u64,
    frames: u64,
    /// Frames counted since the interrupt was enabled or last fired.
    counted: u64,
    /// The armed timer's generation; a fired or cleared timer's event is stale.
    armed: Option<u32>,
    generation: u32,
    pub timer_interrupts: u64,
    pub frame_interrupts: u64,
}

/// What a counted frame does.
enum Then {
    Interrupt,
    Arm(u32),
    Wait,
}

impl Coalesce {
    pub fn new(c: &CoalesceConfig, cycles_per_us: f64) -> Self {
        Self {
            usecs: (f64::from(c.rx_usecs) * cycles_per_us).round() as u64,
            frames: u64::from(c.rx_frames),
            counted: 0,
            armed: None,
            generation: 0,
            timer_interrupts: 0,
            frame_interrupts: 0,
        }
    }

    fn count(&mut self, frames: u64) -> Then {
        self.counted += frames;
        if self.frames > 0 && self.counted >= self.frames {
            self.frame_interrupts += 1;
            return Then::Interrupt;
        }
        if self.usecs > 0 && self.armed.is_none() {
            self.generation = self.generation.wrapping_add(1);
            self.armed = Some(self.generation);
            return Then::Arm(self.generation);
        }
        Then::Wait
    }

    /// The NIC interrupted: the count and the timer start over.
    pub fn fired(&mut self) {
        self.counted = 0;
        self.armed = None;
    }
}

impl Machine {
    /// `frames` landed (or wait at a re-enable) while the NIC's interrupt
    /// is enabled: interrupt now, arm the timer, or wait.
    pub(crate) fn coalesce_count(&mut self, frames: u64) {
        let Some(c) = self.net.coalesce.as_mut() else { return };
        match c.count(frames) {
            Then::Interrupt => self.raise_nic_irq(),
            Then::Arm(generation) => {
                let at = self.queue.now() + c.usecs;
                if at < self.end {
                    self.queue.schedule(at, Event::CoalesceTimer(generation));
                }
            }
            Then::Wait => {}
        }
    }

    /// The coalescing timer of `generation` expires.
    #[inline(never)]
    pub(crate) fn coalesce_timer(&mut self, _now: Time, generation: u32) {
        let Some(c) = self.net.coalesce.as_mut() else { return };
        if c.armed != Some(generation) {
            return;
        }
        c.armed = None;
        if c.counted > 0 && !self.net.irq_posted {
            c.timer_interrupts += 1;
            self.raise_nic_irq();
        }
    }
}
