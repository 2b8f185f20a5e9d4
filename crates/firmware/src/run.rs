//! Runs the firmware on N cores against the NIC and host: every core
//! starts in `fw_main`, the system advances one cycle at a time (so each
//! cycle is charged to the instruction it went to, see [`crate::profile`]),
//! and the run measures the frames completed between a warm-up and a
//! target count.

use crate::config::{NicConfig, Organisation};
use crate::nic::Nic;
use crate::profile::{DISPATCH, Functions, HANDLERS, Profile};
use irqsim_mips::run::STACK_TOP;
use irqsim_mips::{Context, Program, Stop, System, SystemConfig};

const STACK_BYTES: u32 = 0x1_0000;

/// Why a run failed, each one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The program is not the NIC firmware.
    Input(String),
    /// A setting is invalid (names the key).
    Config(String),
    /// A frame was lost, duplicated or reordered (a firmware or model bug).
    Invariant(String),
    /// The firmware faulted, left its loop or made too little progress.
    Stopped(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (Error::Input(m) | Error::Config(m) | Error::Invariant(m) | Error::Stopped(m)) = self;
        f.write_str(m)
    }
}

/// One measured run.
pub struct Outcome {
    pub cores: usize,
    pub organisation: Organisation,
    /// Handler owners used (task-level), indexed like [`HANDLERS`].
    pub owners: Vec<u32>,
    /// The measured window.
    pub cycles: u64,
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

fn symbol(p: &Program, name: &str) -> Result<u32, Error> {
    p.symbol(name).ok_or_else(|| Error::Input(format!("{}: no symbol {name} (is this the NIC firmware?)", p.name)))
}

/// Runs `program` (the NIC firmware) as `cfg` says; `owners` is required for task-level.
pub fn run(program: &Program, cfg: &NicConfig, owners: Option<&[u32]>) -> Result<Outcome, Error> {
    let owners: Vec<u32> = match (cfg.organisation, owners) {
        (Organisation::Task, Some(o)) => o.to_vec(),
        (Organisation::Task, None) => return Err(Error::Config("organisation: task-level needs handler owners (from a 1-core profile)".into())),
        (Organisation::Frame, _) => vec![0; HANDLERS.len()],
    };
    if let Some(k) = owners.iter().find(|&&k| k as usize >= cfg.cores) {
        return Err(Error::Config(format!("owners: core {k} does not exist (cores is {})", cfg.cores)));
    }
    let (main, gp, fw_cfg) = (symbol(program, "fw_main")?, symbol(program, "_gp")?, symbol(program, "fw_cfg")?);
    let functions = Functions::new(program);
    let sys_cfg = SystemConfig { cores: cfg.cores, ..SystemConfig::default() };
    let mut sys = System::new(program.clone(), &sys_cfg, Nic::new(cfg));
    let words = [(cfg.organisation == Organisation::Frame) as u32, cfg.batch].into_iter().chain(owners.iter().copied());
    for (i, w) in words.enumerate() {
        sys.mem.write_u32(fw_cfg + 4 * i as u32, w);
    }
    for k in 0..cfg.cores {
        let mut ctx = Context::call(main, STACK_TOP - k as u32 * STACK_BYTES, &[]);
        ctx.r[28] = gp; // $gp: small data, as start.S sets it
        sys.start(k, 0, ctx, 0);
    }
    let mut profile = Profile::new(functions.words());
    let mut current = vec![DISPATCH; cfg.cores];
    let (target_start, target_end) = (cfg.warmup_frames, cfg.warmup_frames + cfg.frames);
    let mut start: Option<(u64, u64, u64, u64, u64)> = None;
    let mut pcs = vec![(0u32, 0u64); cfg.cores];
    let mut now = 0u64;
    loop {
        sys.devices.advance(now);
        if let Some(e) = sys.devices.error.take() {
            return Err(Error::Invariant(format!("{}: at cycle {now}: {e}", program.name)));
        }
        let done = sys.devices.frames_done();
        let instructions = || sys.cores.iter().map(|c| c.threads[0].instructions).sum::<u64>();
        if start.is_none() && done >= target_start {
            let n = &sys.devices;
            start = Some((now, done, instructions(), n.sent, n.host.received));
        }
        if let Some((t0, f0, i0, s0, r0)) = start
            && done >= target_end
        {
            let n = &sys.devices;
            return Ok(Outcome {
                cores: cfg.cores,
                organisation: cfg.organisation,
                owners,
                cycles: now - t0,
                frames: done - f0,
                sent: n.sent - s0,
                received: n.host.received - r0,
                instructions: instructions() - i0,
                dropped: n.dropped,
                host_interrupts: n.host.interrupts,
                host_interrupts_merged: n.host.merged,
                sram_conflicts: n.sram_conflicts(),
                dma_bytes: n.dma_bytes(),
                profile,
                functions,
            });
        }
        if now >= cfg.max_cycles {
            return Err(Error::Stopped(format!("max_cycles: {done} of {target_end} frames done after {now} cycles (the firmware stalled or is too slow)")));
        }
        for (k, p) in pcs.iter_mut().enumerate() {
            let t = &sys.cores[k].threads[0];
            *p = (t.ctx.pc, t.instructions);
        }
        match sys.run(now + 1) {
            Stop::Limit | Stop::Idle => {}
            Stop::Fault { error, .. } => return Err(Error::Stopped(error.to_string())),
            Stop::Returned { core, .. } | Stop::Syscall { core, .. } => {
                return Err(Error::Stopped(format!("{}: core {core} left the dispatch loop at cycle {now}", program.name)));
            }
            // The NIC never asks a core to stop (`Devices::take_stop` is false).
            Stop::Device { core, .. } => return Err(Error::Stopped(format!("{}: core {core} stopped for a device at cycle {now}", program.name))),
        }
        if start.is_some() {
            for (k, &(pc, n)) in pcs.iter().enumerate() {
                profile.charge(&functions, pc, sys.cores[k].threads[0].instructions > n, &mut current[k]);
            }
        }
        now += 1;
    }
}
