//! A loopback host for driving the NIC device in this crate's tests
//! (irqsim-core's machine is the NIC's host in every run): the wire floods
//! the MAC with a frame every `gap` cycles, and each time the NIC stops
//! for the host (a frame left, an interrupt asked for) the host keeps the
//! send and receive rings full behind what the status block gives back.
//! It checks nothing (the machine checks every frame) and acts only where
//! the device stops, so how the NIC is driven cannot change what it sees.

use irqsim_firmware::memory::{BUF, Memory, RECV_BUFS, RECV_RING, RING, SEND_BUFS, SEND_RING, STATUS};
use irqsim_firmware::nic::{Arrival, Mailbox};
use irqsim_firmware::{Effect, Error, HostMemory, Nic};

pub struct Loopback {
    pub mem: Memory,
    bytes: u32,
    gap: u64,
    /// When the next frame arrives.
    next: u64,
    sends: u64,
    buffers: u64,
    pub interrupts: u64,
}

impl Loopback {
    pub fn new(bytes: u32, gap: u64) -> Self {
        Loopback { mem: Memory::default(), bytes, gap, next: gap, sends: 0, buffers: 0, interrupts: 0 }
    }

    /// Frames the NIC has returned (the status block's receive producer).
    pub fn received(&mut self) -> u64 {
        u64::from(self.mem.read(STATUS + 4))
    }

    /// The host sees `effects`: where the NIC stopped for it, it posts
    /// frames to send and receive buffers up to a ring beyond those given back.
    pub fn sees(&mut self, nic: &mut Nic, effects: &mut Vec<Effect>) {
        let stopped = nic.now() == 0 || effects.iter().any(|e| !matches!(e, Effect::DmaWrite { .. }));
        self.interrupts += effects.drain(..).filter(|e| matches!(e, Effect::Interrupt { .. })).count() as u64;
        if !stopped {
            return;
        }
        let (sent, received) = (u64::from(self.mem.read(STATUS)), self.received());
        while self.sends < sent + RING {
            let i = self.sends;
            let (bd, buf) = (SEND_RING + (i % RING) as u32 * 16, SEND_BUFS + (i % RING) as u32 * BUF);
            for (k, v) in [buf, self.bytes, i as u32, 0].into_iter().enumerate() {
                self.mem.write(bd + 4 * k as u32, v);
            }
            self.mem.write(buf, i as u32);
            self.sends += 1;
        }
        while self.buffers < received + RING {
            let j = (self.buffers % RING) as u32;
            self.mem.write(RECV_RING + j * 16, RECV_BUFS + j * BUF);
            self.mem.write(RECV_RING + j * 16 + 4, BUF);
            self.buffers += 1;
        }
        nic.host_writes_mailbox(Mailbox::Send, self.sends);
        nic.host_writes_mailbox(Mailbox::Receive, self.buffers);
    }

    /// Gives the NIC, ahead, every frame arriving by cycle `to`.
    pub fn arrive_by(&mut self, to: u64, nic: &mut Nic) {
        while self.next <= to {
            nic.frame_arrives(Arrival { at: self.next, len: self.bytes, hash: 0, tag: self.next, flow: 0 });
            self.next += self.gap;
        }
    }

    /// Runs the NIC to cycle `end`, in steps of at most `step` cycles.
    #[allow(dead_code)] // not every test drives the NIC this way
    pub fn run(&mut self, nic: &mut Nic, end: u64, step: u64) -> Result<(), Error> {
        let mut effects = Vec::new();
        while nic.now() < end {
            self.sees(nic, &mut effects);
            let to = (nic.now() + step).min(end);
            self.arrive_by(to, nic);
            nic.advance(to, &mut self.mem, &mut effects)?;
        }
        Ok(())
    }
}
