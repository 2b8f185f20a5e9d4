//! The NIC driver: Driver Send (start the transmitter or queue the frame) and
//! the Driver ISR, which acknowledges transmit completions and drains the
//! receive buffer one frame at a time until it is empty, masked throughout.

use super::Job;
use crate::cpu::{IRQ, SOFT};
use crate::engine::Time;
use crate::nic::{Accept, Send};
use crate::sim::{Event, Sim};

impl Sim {
    /// A frame reaches the NIC from the wire.
    pub(crate) fn receive(&mut self, now: Time, bytes: u32) {
        self.counters.rx_offered += 1;
        self.timeline.mark(now, "frame received");
        if self.nic.receive(now, bytes) == Accept::Dropped {
            self.counters.rx_dropped_nic += 1;
            // A closed-loop sender keeps one frame outstanding: it tries again
            // when DMA frees buffer space (a frame waiting for the ISR would
            // be this loop's one frame, so the buffer is full of DMAs).
            let retry = self.nic.next_release().unwrap_or(now + 1).max(now + 1);
            if let Some((t, s)) = self.workload.rx_serviced(retry) {
                self.queue.schedule(t, Event::Feedback(s));
            }
            return;
        }
        self.raise_irq(Job::IsrRx);
    }

    /// The transmitter has put a frame on the wire.
    pub(crate) fn tx_out(&mut self, now: Time) {
        let bytes = self.nic.tx_finished();
        self.counters.tx_sent += 1;
        self.counters.tx_sent_bytes += u64::from(bytes);
        self.timeline.mark(now, "frame sent");
        self.raise_irq(Job::IsrTx);
    }

    /// Asserts the NIC's interrupt unless its ISR is already pending or
    /// running (the ISR rereads the status register before it returns).
    fn raise_irq(&mut self, first: Job) {
        if self.irq_posted {
            return;
        }
        self.irq_posted = true;
        self.counters.interrupts += 1;
        let now = self.queue.now();
        self.timeline.mark(now, "NIC interrupt");
        self.post(self.irq_thread, IRQ, first);
        self.dispatch(self.irq_thread);
    }

    /// The ISR finished one step; it goes on while the NIC has work for it.
    pub(crate) fn isr_step(&mut self, now: Time, thread: usize, job: Job) -> Option<Job> {
        match job {
            Job::IsrTx => {
                if let Some(out) = self.nic.ack_tx(now) {
                    self.queue.schedule(out, Event::TxOut);
                }
            }
            Job::IsrRx => {
                let (frame, in_memory) = self.nic.take_rx(now).expect("an Rx ISR step always has a frame");
                if self.costs.stack {
                    if self.counters.rx_in_stack >= self.backlog_limit {
                        self.counters.rx_dropped_backlog += 1;
                    } else {
                        self.counters.rx_in_stack += 1;
                        // The SWI waits while the ISR runs (it is a lower level).
                        self.post(thread, SOFT, Job::RecvIp { arrival: frame.arrival, bytes: frame.bytes });
                    }
                } else {
                    // Driver layer only: the frame is delivered once its DMA is done.
                    self.deliver(frame.arrival, in_memory, frame.bytes);
                }
                if let Some((t, s)) = self.workload.rx_serviced(now) {
                    self.queue.schedule(t, Event::Feedback(s));
                }
            }
            _ => unreachable!("isr_step on {job:?}"),
        }
        if self.nic.tx_done_pending {
            Some(Job::IsrTx)
        } else if self.nic.rx_waiting() > 0 {
            Some(Job::IsrRx)
        } else {
            self.irq_posted = false;
            None
        }
    }

    /// Driver Send finished: hand the frame to the NIC.
    pub(crate) fn driver_send(&mut self, now: Time, bytes: u32) {
        self.counters.tx_in_stack -= 1;
        match self.nic.send(now, bytes) {
            Send::Started(out) => self.queue.schedule(out, Event::TxOut),
            Send::Queued => {}
            Send::Dropped => self.counters.tx_dropped += 1,
        }
    }

    pub(crate) fn deliver(&mut self, arrival: Time, at: Time, bytes: u32) {
        self.counters.rx_delivered += 1;
        self.counters.rx_delivered_bytes += u64::from(bytes);
        self.latencies.record(arrival, at - arrival);
    }
}
