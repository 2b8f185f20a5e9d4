//! Code's receiving NICs: each frame of NIC 0 lands in the ring of the
//! receive queue RSS steers it to (`device/rss.rs`'s flow mix and Toeplitz
//! table; queue 0 without RSS) and sets that queue's interrupt cause. A
//! frame of another NIC (`[[nics.others]]`, port `k`) lands in the ring of
//! code's NIC `k + 1`, in the queue the port's own RSS steers it to (its
//! queues numbered from `Ports::first[k]`), and sets that queue's cause;
//! its interrupt is the port's input on the controllers (`machine/nics.rs`,
//! a vector per queue), and the port counts it.
//!
//! On the mt and Linux paths the NIC has one interrupt, which its handler
//! ends with an EOI (`code.rs`). On the NAPI path each queue has its own
//! vector (an MSI-X vector per queue with RSS, `device/rss.rs`): it fires
//! when the queue's cause is pending and enabled, its top half
//! (`code.napi_isr`) runs from the controller's chain, and the top half's
//! return ends it. With several queues a vector clears its own cause when
//! it fires, as MSI-X NICs do (ixgbe's EIAC, the 82574's auto-clear), so a
//! top half never reads a cause register another queue shares.
//! Coalescing (and DIM) counts per queue.

use super::{Event, Machine};
use crate::code::frame;
use crate::code::ports::{DD, DESC_BYTES, EOP, InFlight, rx_cause};
use crate::engine::Time;
use crate::kernel::IrqPathKind;

impl Machine {
    /// A received frame comes off the wire into NIC 0: DMA into the buffer
    /// of the next descriptor its queue's ring gives the NIC, or a drop when
    /// it gives none. Out of line: the event loop inlines `land`, and a
    /// machine without code never calls this.
    #[inline(never)]
    pub(crate) fn code_land(&mut self, now: Time, bytes: u32) {
        let (q, flow) = match &mut self.net.rss {
            Some(r) => {
                let (q, flow) = r.steer();
                (q, Some(flow))
            }
            None => (0, None),
        };
        if !self.code_put(now, q, bytes, flow) {
            self.net.counters.rx_dropped_nic += 1;
            // A closed-loop flood's sender tries again a frame's time later.
            if let Some((t, s)) = self.net.workload.rx_serviced(now + self.net.nic.wire_cycles(bytes)) {
                self.queue.schedule(t, Event::Feedback(s));
            }
            return;
        }
        if self.code_coalesces(q) {
            return self.code_coalesce(q, 1);
        }
        self.code_rx_interrupt(now, q);
    }

    /// A frame of port `k` (code's NIC `k + 1`) comes off its wire: into
    /// the ring of the queue its own RSS steers it to (its first without
    /// RSS), or a drop when the ring gives no descriptor. Its flow is the
    /// port's when it steers (several queues, or RPS reads it back).
    pub(crate) fn code_port_land(&mut self, now: Time, k: usize, bytes: u32) {
        let p = &mut self.net.ports.list[k];
        let (i, flow) = match p.steers {
            true => {
                let (i, flow) = p.rx.steer();
                (i, Some(flow))
            }
            false => (0, None),
        };
        let q = self.net.ports.first[k] + i;
        if !self.code_put(now, q, bytes, flow) {
            self.net.ports.list[k].counters.dropped_nic += 1;
            self.net.counters.rx_dropped_nic += 1;
            return;
        }
        if self.code_coalesces(q) {
            return self.code_coalesce(q, 1);
        }
        self.code_rx_interrupt(now, q);
    }

    /// DMA of a frame into the buffer of the next descriptor receive queue
    /// `q`'s ring gives the NIC, and its cause set; `false` (the NIC's
    /// missed count up) when the ring gives none.
    fn code_put(&mut self, now: Time, q: usize, bytes: u32, flow: Option<u32>) -> bool {
        let code = self.code.as_mut().expect("code part selected");
        let (nic, cause) = code.sys.devices.rx_nic(q);
        let ring = *code.sys.devices.rx_ring(q);
        if ring.len == 0 || ring.head == ring.tail {
            code.sys.devices.nics[nic].rx_missed += 1;
            return false;
        }
        let tag = code.next_tag;
        code.next_tag = code.next_tag.checked_add(1).unwrap_or(1);
        // Without RSS the frames cycle through `code.flows` flows.
        let flow = flow.unwrap_or(tag % code.flows);
        let desc = ring.base + ring.head * DESC_BYTES;
        let buf = code.sys.mem.read_u32(desc);
        let mut f = std::mem::take(&mut code.frame);
        frame::build(&mut f, bytes, flow, tag);
        code.dma_write(buf, &f);
        let len = f.len() as u32;
        code.frame = f;
        let mut d = [0u8; 12];
        d[0..4].copy_from_slice(&tag.to_be_bytes());
        d[4..6].copy_from_slice(&(len as u16).to_be_bytes());
        d[8] = DD | EOP;
        code.dma_write(desc + 4, &d);
        code.sys.devices.frames.insert(tag, InFlight { arrival: now, bytes: len, queue: q as u8, flow });
        let r = code.sys.devices.rx_ring(q);
        r.head = (r.head + 1) % r.len;
        code.sys.devices.nics[nic].icr |= cause;
        true
    }

    /// Whether receive queue `q`'s NIC coalesces its interrupts (NIC 0 per
    /// queue with RSS).
    fn code_coalesces(&mut self, q: usize) -> bool {
        if self.net.ports.holds(q) {
            return self.port_coalescer(q).is_some();
        }
        self.net.rss.as_ref().map_or(self.net.coalesce.is_some(), |r| !r.coalesce.is_empty())
    }

    /// Queue `q` may interrupt: at once, or under coalescing (`[coalesce]`)
    /// once the frames waiting meet its rules.
    pub(super) fn code_rx_raise(&mut self, now: Time, q: usize) {
        if self.code_coalesces(q) {
            let waiting = self.code.as_mut().expect("code part selected").sys.devices.rx_ring(q).waiting();
            return self.code_coalesce(q, waiting);
        }
        self.code_rx_interrupt(now, q);
    }

    /// Coalescing counts `frames` for queue `q` while its interrupt is
    /// enabled and not already raised (at least one: a pending cause always
    /// interrupts in the end).
    fn code_coalesce(&mut self, q: usize, frames: u64) {
        if !self.code_rx_irq_off(q) {
            self.coalesce_count(q, frames.max(1));
        }
    }

    /// Queue `q`'s interrupt cannot fire now: raised and not yet ended, or
    /// its cause is not pending and enabled.
    pub(crate) fn code_rx_irq_off(&mut self, q: usize) -> bool {
        let napi = self.net.path == IrqPathKind::Napi;
        let code = self.code.as_mut().expect("code part selected");
        let p = &code.sys.devices;
        let nic = p.rx_nic(q).0;
        if napi { code.rxq_posted[q] || !p.rx_asserted(q) } else { code.irq_posted[nic] || !p.nics[nic].asserted() }
    }

    /// Queue `q` interrupts if its cause is pending and enabled and its
    /// last interrupt has ended: on the NAPI path its own vector (another
    /// NIC's: its port's input), else its NIC's one interrupt
    /// (`code_interrupt`).
    pub(crate) fn code_rx_interrupt(&mut self, now: Time, q: usize) {
        let code = self.code.as_mut().expect("code part selected");
        let nic = code.sys.devices.rx_nic(q).0;
        if self.net.path != IrqPathKind::Napi {
            return self.code_interrupt(now, nic);
        }
        if self.code_rx_irq_off(q) {
            return;
        }
        let code = self.code.as_mut().expect("code part selected");
        code.rxq_posted[q] = true;
        if nic > 0 {
            let i = code.sys.devices.rx_owner(q).1;
            return self.code_port_interrupt(now, nic - 1, i);
        }
        if let Some(r) = &mut self.net.rss {
            // One queue (RSS on for RPS's hash) keeps e1000's single vector:
            // its top half reads and clears the cause register itself.
            if r.rings.len() > 1 {
                code.sys.devices.nics[0].icr &= !rx_cause(q);
            }
            r.interrupts[q] += 1;
        }
        if let Some(c) = self.coalescer(q) {
            c.fired();
        }
        self.net.counters.interrupts += 1;
        self.timeline.mark(now, "NIC interrupt");
        if self.net.rss.is_some() {
            self.signal_vector(now, 0, q);
        } else {
            self.signal_interrupt(now, 0, 0);
        }
    }

    /// Port `k`'s queue `i` interrupts through its controller input: its
    /// one interrupt, or with its own RSS the queue's vector, which clears
    /// the queue's cause as it fires (as NIC 0's queues' vectors do).
    pub(super) fn code_port_interrupt(&mut self, now: Time, k: usize, i: usize) {
        let r = &mut self.net.ports.list[k].rx;
        r.interrupts[i] += 1;
        if let Some(c) = r.coalesce.get_mut(i) {
            c.fired();
        }
        let vectors = r.rings.len() > 1;
        self.net.counters.interrupts += 1;
        self.timeline.mark(now, "NIC interrupt");
        let src = self.net.ports.src + k;
        if vectors {
            self.code.as_mut().expect("code part selected").sys.devices.nics[k + 1].icr &= !rx_cause(i);
            return self.signal_vector(now, src, i);
        }
        self.signal_interrupt(now, src, 0);
    }

    /// Queue `q`'s top half returned: its interrupt has ended, and a cause
    /// pending and enabled again raises it anew.
    pub(super) fn code_queue_isr_done(&mut self, now: Time, q: usize) {
        self.code.as_mut().expect("code part selected").rxq_posted[q] = false;
        self.code_rx_raise(now, q);
    }
}
