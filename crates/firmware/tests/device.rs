//! The NIC as a device: `advance` stops where the host must act, frames
//! given ahead of their arrival land as if given at it, and the device
//! runs the same whether driven in long or short steps.

use irqsim_firmware::host::Host;
use irqsim_firmware::{Effect, Nic, NicConfig};
use irqsim_mips::Program;

fn firmware() -> Program {
    Program::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/irqsim/programs/firmware/nic.elf"))).unwrap()
}

/// What a drive to a cycle leaves: instructions, frames accepted, dropped, sent and received by the host, interrupts.
type State = (u64, u64, u64, u64, u64, u64);

/// Drives `cores` cores with the abstract host and a 64 B receive flood
/// (a frame every `gap` cycles) to cycle `end`, in steps of at most `step`
/// cycles; frames are given `ahead` cycles before they arrive.
fn drive(cores: usize, end: u64, step: u64, ahead: u64, gap: u64) -> State {
    let cfg = NicConfig::from_sets(&[format!("cores={cores}"), "frame_bytes=64".into()]).unwrap();
    let (mut nic, _) = Nic::new(&firmware(), &cfg, None).unwrap();
    let mut host = Host::new(64, cfg.cycles(cfg.host_ns), true, true);
    let (mut next, mut effects) = (gap, vec![]);
    while nic.now() < end {
        let now = nic.now();
        for e in effects.drain(..) {
            match e {
                Effect::Interrupt { at, .. } => {
                    assert!(at < now, "an interrupt at {at} is seen at {now}");
                    host.interrupt(at)
                }
                Effect::Transmit { at, .. } | Effect::DmaWrite { at, .. } => assert!(at <= now),
            }
        }
        host.advance(now).unwrap();
        for (mailbox, value) in host.mailboxes() {
            nic.host_writes_mailbox(mailbox, value);
        }
        let to = (now + step).min(end).min(host.wake_at().map_or(u64::MAX, |t| t.max(now + 1)));
        while next <= to + ahead {
            nic.frame_arrives(next, 64);
            next += gap;
        }
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
    let hw = nic.hardware();
    (nic.instructions(), hw.accepted, hw.dropped, hw.sent, host.received, host.interrupts)
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
