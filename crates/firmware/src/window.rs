//! A measured window of the NIC's work, as the nic-firmware study reports
//! it: from the moment `warmup` frames are done (put on the wire or
//! returned to the host) to the moment `warmup + frames` are, the window's
//! NIC cycles, frames and instructions, and the profile of the cores over
//! it ([`crate::profile`]). Whoever drives the device (irqsim-core's
//! machine) tells the window what its host has seen; the window starts and
//! stops the device's profile at the cycle the device is at.

use crate::config::{NicConfig, Organisation};
use crate::device::Nic;
use crate::profile::{Functions, Profile};

/// The window's edges, in frames done.
pub struct Window {
    cores: usize,
    organisation: Organisation,
    owners: Vec<u32>,
    warmup: u64,
    frames: u64,
    start: Option<Start>,
    measured: Option<Measured>,
}

/// Where the window started: the NIC cycle and the counts then.
struct Start {
    at: u64,
    done: u64,
    instructions: u64,
    sent: u64,
    received: u64,
}

/// One measured window.
pub struct Measured {
    /// The firmware's file name (without its directory: the same run
    /// from another directory reports the same).
    pub program: String,
    pub cores: usize,
    pub organisation: Organisation,
    /// Handler owners used (task-level), indexed like [`crate::profile::HANDLERS`].
    pub owners: Vec<u32>,
    /// NIC cycles the window lasted.
    pub cycles: u64,
    /// The cycle it ended at.
    pub end: u64,
    /// Frames done in it: sent on the wire plus returned to the host.
    pub frames: u64,
    pub sent: u64,
    pub received: u64,
    pub instructions: u64,
    /// Frames the MAC dropped, the whole run up to the window's end.
    pub dropped: u64,
    pub sram_conflicts: u64,
    pub dma_bytes: (u64, u64),
    pub profile: Profile,
    pub functions: Functions,
}

impl Measured {
    pub fn frames_per_kcycle(&self) -> f64 {
        self.frames as f64 * 1000.0 / self.cycles as f64
    }

    pub fn ipc(&self) -> f64 {
        self.instructions as f64 / self.cycles as f64
    }
}

impl Window {
    /// A window of `frames` frames after `warmup` (`frames` 0: none) of
    /// the NIC `cfg` sets up, its handlers on `owners`.
    pub fn new(cfg: &NicConfig, owners: Vec<u32>, warmup: u64, frames: u64) -> Self {
        Window { cores: cfg.cores, organisation: cfg.organisation, owners, warmup, frames, start: None, measured: None }
    }

    /// The host has seen `received` frames returned, with the NIC at
    /// [`Nic::now`]: the window starts or ends there if its frames are
    /// done. `true` when it has just ended.
    pub fn observe(&mut self, nic: &mut Nic, received: u64) -> bool {
        if self.frames == 0 || self.measured.is_some() {
            return false;
        }
        let sent = nic.hardware().sent;
        let done = sent + received;
        if self.start.is_none() && done >= self.warmup {
            self.start = Some(Start { at: nic.now(), done, instructions: nic.instructions(), sent, received });
            nic.begin_profile();
        }
        let Some(s) = &self.start else { return false };
        if done < self.warmup + self.frames {
            return false;
        }
        let profile = nic.finish_profile();
        let hw = nic.hardware();
        self.measured = Some(Measured {
            program: std::path::Path::new(&nic.program().name).file_name().map_or_else(|| nic.program().name.clone(), |f| f.to_string_lossy().into_owned()),
            cores: self.cores,
            organisation: self.organisation,
            owners: self.owners.clone(),
            cycles: nic.now() - s.at,
            end: nic.now(),
            frames: done - s.done,
            sent: sent - s.sent,
            received: received - s.received,
            instructions: nic.instructions() - s.instructions,
            dropped: hw.dropped,
            sram_conflicts: hw.sram_conflicts(),
            dma_bytes: hw.dma_bytes(),
            profile,
            functions: nic.functions().clone(),
        });
        true
    }

    /// The window, once it has ended.
    pub fn measured(&self) -> Option<&Measured> {
        self.measured.as_ref()
    }
}
