//! The study's run: the NIC device ([`crate::device`]) driven by the
//! abstract host ([`crate::host`]) and a wire that floods it at line rate
//! and checks what it sends. The run measures the frames completed between
//! a warm-up and a target count, with the profile of that window.
//!
//! The driver steps from one host event to the next, giving the device the
//! wire's frames ahead: the device runs its cores in between and returns
//! early when a frame has left or an interrupt was asked for, so every
//! check and the window's edges fall on the cycle they did when the cores
//! were stepped one cycle at a time.

use crate::config::{NicConfig, Organisation};
use crate::device::{Effect, Nic};
use crate::error::Error;
use crate::host::Host;
use crate::profile::{Functions, HANDLERS, Profile};
use irqsim_mips::Program;

/// Cycles the wire gives the NIC its frames ahead (any number gives the same run).
const LOOK_AHEAD: u64 = 1 << 16;

/// One measured run.
pub struct Outcome {
    pub cores: usize,
    pub organisation: Organisation,
    /// Handler owners used (task-level), indexed like [`HANDLERS`].
    pub owners: Vec<u32>,
    /// The measured window.
    pub cycles: u64,
    /// The whole run, warm-up included: the cycle it ended at.
    pub elapsed: u64,
    pub frames: u64,
    pub sent: u64,
    pub received: u64,
    pub instructions: u64,
    pub dropped: u64,
    pub host_interrupts: u64,
    pub host_interrupts_merged: u64,
    pub sram_conflicts: u64,
    pub dma_bytes: (u64, u64),
    pub profile: Profile,
    pub functions: Functions,
}

impl Outcome {
    pub fn frames_per_kcycle(&self) -> f64 {
        self.frames as f64 * 1000.0 / self.cycles as f64
    }

    pub fn ipc(&self) -> f64 {
        self.instructions as f64 / self.cycles as f64
    }
}

/// Static handler assignment for `cores` (task-level): handlers by
/// decreasing cost, each to the least-loaded core (longest processing time
/// first), from per-handler cycles of a 1-core run.
pub fn task_owners(handler_cycles: &[u64], cores: usize) -> Vec<u32> {
    let mut order: Vec<usize> = (0..HANDLERS.len()).collect();
    order.sort_by_key(|&h| (std::cmp::Reverse(handler_cycles[h]), h));
    let mut load = vec![0u64; cores];
    let mut owners = vec![0u32; HANDLERS.len()];
    for h in order {
        let k = (0..cores).min_by_key(|&k| (load[k], k)).unwrap_or(0);
        load[k] += handler_cycles[h];
        owners[h] = k as u32;
    }
    owners
}

/// The wire: a receive flood at line rate into the NIC, and the far end
/// of the NIC's transmissions, which checks that they come in order.
struct Wire {
    frame_bytes: u32,
    /// When the next frame arrives, in thousandths of a cycle (u64::MAX: no flood).
    next: u64,
    frame_time: u64,
    /// The sequence number the next transmitted frame must carry.
    expect: u64,
}

impl Wire {
    /// Gives the NIC every frame arriving by the start of cycle `to`, ahead
    /// (it lands at its cycle: the first whose start is not before its last bit).
    fn send_by(&mut self, to: u64, nic: &mut Nic) {
        while self.next <= to.saturating_mul(1000) {
            nic.frame_arrives(self.next.div_ceil(1000), self.frame_bytes);
            self.next += self.frame_time;
        }
    }

    fn transmitted(&mut self, seq: u32, len: u32) -> Result<(), String> {
        let expect = self.expect;
        self.expect += 1;
        if seq != expect as u32 || len != self.frame_bytes {
            return Err(format!("wire: frame {expect} expected next, got frame {seq} of {len} bytes"));
        }
        Ok(())
    }
}

/// Runs `program` (the NIC firmware) as `cfg` says; `owners` is required for task-level.
pub fn run(program: &Program, cfg: &NicConfig, owners: Option<&[u32]>) -> Result<Outcome, Error> {
    let (mut nic, owners) = Nic::new(program, cfg, owners)?;
    let mut host = Host::new(cfg.frame_bytes, cfg.cycles(cfg.host_ns), cfg.traffic.sends(), cfg.traffic.receives());
    let frame_time = cfg.millicycles(cfg.wire_bytes(), cfg.line_gbps);
    let mut wire = Wire { frame_bytes: cfg.frame_bytes, next: if cfg.traffic.receives() { frame_time } else { u64::MAX }, frame_time, expect: 0 };
    let (target_start, target_end) = (cfg.warmup_frames, cfg.warmup_frames + cfg.frames);
    let mut start: Option<(u64, u64, u64, u64, u64)> = None;
    let mut effects = Vec::new();
    let invariant = |now: u64, e: String| Error::Invariant(format!("{}: at cycle {now}: {e}", program.name));
    loop {
        // The start of cycle `now`: the NIC's hardware has acted and the
        // frames due have landed; the host acts before the cores run it.
        let now = nic.now();
        for e in effects.drain(..) {
            match e {
                Effect::Transmit { seq, len, .. } => wire.transmitted(seq, len).map_err(|e| invariant(now, e))?,
                Effect::Interrupt { at, .. } => host.interrupt(at),
                Effect::DmaWrite { .. } => {}
            }
        }
        host.advance(now).map_err(|e| invariant(now, e))?;
        for (mailbox, value) in host.mailboxes() {
            nic.host_writes_mailbox(mailbox, value);
        }
        let hw = nic.hardware();
        let done = hw.sent + host.received;
        if start.is_none() && done >= target_start {
            start = Some((now, done, nic.instructions(), hw.sent, host.received));
            nic.begin_profile();
        }
        if let Some((t0, f0, i0, s0, r0)) = start
            && done >= target_end
        {
            let (profile, hw) = (nic.finish_profile(), nic.hardware());
            return Ok(Outcome {
                cores: cfg.cores,
                organisation: cfg.organisation,
                owners,
                cycles: now - t0,
                elapsed: now,
                frames: done - f0,
                sent: hw.sent - s0,
                received: host.received - r0,
                instructions: nic.instructions() - i0,
                dropped: hw.dropped,
                host_interrupts: host.interrupts,
                host_interrupts_merged: host.merged,
                sram_conflicts: hw.sram_conflicts(),
                dma_bytes: hw.dma_bytes(),
                profile,
                functions: nic.functions().clone(),
            });
        }
        if now >= cfg.max_cycles {
            return Err(Error::Stopped(format!("max_cycles: {done} of {target_end} frames done after {now} cycles (the firmware stalled or is too slow)")));
        }
        // The host's wake-up is never before the next cycle (it has acted in this one).
        let to = (now + LOOK_AHEAD).min(host.wake_at().map_or(u64::MAX, |t| t.max(now + 1))).min(cfg.max_cycles);
        wire.send_by(to, &mut nic);
        nic.advance(to, &mut host.mem, &mut effects)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_check_catches_a_frame_out_of_order() {
        let mut wire = Wire { frame_bytes: 1518, next: u64::MAX, frame_time: 1, expect: 0 };
        wire.transmitted(0, 1518).unwrap();
        assert_eq!(wire.transmitted(2, 1518).unwrap_err(), "wire: frame 1 expected next, got frame 2 of 1518 bytes");
        assert!(wire.transmitted(2, 64).unwrap_err().contains("frame 2 expected next, got frame 2 of 64 bytes"));
    }
}
