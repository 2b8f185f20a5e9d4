//! The NIC as a device: `advance` stops where the host must act, frames
//! given ahead of their arrival land as if given at it, and the device
//! runs the same whether driven in long or short steps.

mod support;

use irqsim_firmware::device::AHEAD;
use irqsim_firmware::{Effect, Nic, NicConfig};
use irqsim_mips::Program;
use support::Loopback;

fn firmware() -> Program {
    Program::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/irqsim/programs/firmware/nic.elf"))).unwrap()
}

/// What a drive to a cycle leaves: instructions, frames accepted, dropped, sent and returned to the host, interrupts.
type State = (u64, u64, u64, u64, u64, u64);

/// Drives `cores` cores with the loopback host and a 64 B receive flood
/// (a frame every `gap` cycles) to cycle `end`, in steps of at most `step`
/// cycles; frames are given `ahead` cycles before they arrive.
fn drive(cores: usize, end: u64, step: u64, ahead: u64, gap: u64) -> State {
    let cfg = NicConfig::from_sets(&[format!("cores={cores}")]).unwrap();
    let (mut nic, _) = Nic::new(&firmware(), &cfg, None).unwrap();
    let (mut host, mut effects) = (Loopback::new(64, gap), vec![]);
    while nic.now() < end {
        let now = nic.now();
        for e in &effects {
            match *e {
                Effect::Interrupt { at, .. } => assert!(at < now, "an interrupt at {at} is seen at {now}"),
                Effect::Transmit { at, .. } | Effect::DmaWrite { at, .. } => assert!(at <= now),
            }
        }
        host.sees(&mut nic, &mut effects);
        let to = (now + step).min(end);
        host.arrive_by(to + ahead, &mut nic);
        nic.advance(to, &mut host.mem, &mut effects).unwrap();
        assert!(nic.now() <= to && nic.now() > now);
        // Early only where the host must act: a frame left this cycle, or an interrupt was asked for in the last.
        let due = |e: &Effect| match *e {
            Effect::Transmit { at, .. } => at == nic.now(),
            Effect::Interrupt { at, .. } => at + 1 == nic.now(),
            Effect::DmaWrite { .. } => false,
        };
        assert!(nic.now() == to || effects.iter().any(due), "at {}: {effects:?}", nic.now());
    }
    host.sees(&mut nic, &mut effects);
    let hw = nic.hardware();
    let (instructions, accepted, dropped, sent) = (nic.instructions(), hw.accepted, hw.dropped, hw.sent);
    (instructions, accepted, dropped, sent, host.received(), host.interrupts)
}

#[test]
fn frames_given_ahead_land_as_if_given_at_their_cycle() {
    for cores in [1, 3] {
        let at_arrival = drive(cores, 60_000, 1, 0, 11);
        assert!(at_arrival.1 > 50 && at_arrival.2 > 0 && at_arrival.4 > 50, "{at_arrival:?}");
        for (step, ahead) in [(1_000, 1_000), (1 << 20, 1 << 16)] {
            assert_eq!(drive(cores, 60_000, step, ahead, 11), at_arrival, "{cores} cores, steps of {step}, frames {ahead} cycles ahead");
        }
    }
}

/// Drives `cores` cores (cores `ahead` cycles ahead at most) as `drive`
/// does, in steps of at most 700 cycles, with a profile window from the first early return (a frame left
/// or an interrupt was asked for: cores may be past it) after cycle 10,000
/// to the first after 30,000: what the host sees after every step (cycle,
/// instructions, effects), then the profile.
fn trace(cores: usize, ahead: u64) -> Trace {
    let cfg = NicConfig::from_sets(&[format!("cores={cores}")]).unwrap();
    let (mut nic, _) = Nic::new(&firmware(), &cfg, None).unwrap();
    nic.set_ahead(ahead);
    let mut host = Loopback::new(64, 11);
    let (mut effects, mut seen, mut on, mut early) = (vec![], vec![], false, false);
    loop {
        let now = nic.now();
        seen.push((now, nic.instructions(), effects.clone()));
        if on && early && now >= 30_000 {
            break;
        }
        host.sees(&mut nic, &mut effects);
        if !on && early && now >= 10_000 {
            nic.begin_profile();
            on = true;
        }
        let to = now + 700;
        host.arrive_by(to, &mut nic);
        nic.advance(to, &mut host.mem, &mut effects).unwrap();
        early = nic.now() < to;
    }
    let p = nic.finish_profile();
    Trace { seen, executed: p.executed, cycles: p.cycles, handler_cycles: p.handler_cycles.to_vec() }
}

/// What [`trace`] records: the host's view after each step, then the profile's counts.
struct Trace {
    seen: Vec<(u64, u64, Vec<Effect>)>,
    executed: Vec<u64>,
    cycles: Vec<u64>,
    handler_cycles: Vec<u64>,
}

#[test]
fn cores_running_ahead_change_nothing_the_host_or_the_profile_sees() {
    for cores in [2, 4, 6] {
        let (lockstep, ahead) = (trace(cores, 0), trace(cores, AHEAD));
        assert_eq!(lockstep.seen.len(), ahead.seen.len(), "{cores} cores: steps");
        for (a, b) in lockstep.seen.iter().zip(&ahead.seen) {
            assert_eq!(a, b, "{cores} cores");
        }
        let same = lockstep.executed == ahead.executed && lockstep.cycles == ahead.cycles;
        assert!(same && lockstep.handler_cycles == ahead.handler_cycles, "{cores} cores: the profile");
    }
}
