//! Receive packet steering (RPS; Documentation/networking/scaling.rst,
//! `get_rps_cpu`, `enqueue_to_backlog` and `process_backlog` in
//! net/core/dev.c): the CPU that polls a receive queue runs only the
//! driver's part of each frame, then hands the frame to the CPU its flow
//! hash picks, through that CPU's backlog.
//!
//! 1. The flow's hash (the NIC's Toeplitz hash) scaled to `rss.rps_cpus`
//!    picks CPU `⌊hash × n / 2³²⌋` (`reciprocal_scale`).
//! 2. The frame joins that CPU's backlog (`stack.backlog_packets`,
//!    netdev_max_backlog; a full one drops it, `rx_dropped_backlog`), and
//!    the backlog's own NAPI instance is scheduled there (an IPI when it is
//!    another CPU; its cost is not modelled).
//! 3. That CPU's NET_RX polls the backlog like any instance: the protocol's
//!    part of each frame, then its delivery.

use std::collections::VecDeque;

use crate::engine::Time;

/// The per-CPU backlogs that RPS fills.
#[derive(Debug)]
pub struct Rps {
    pub cpus: u64,
    /// Each CPU's backlog: (arrival, bytes, receive queue) of frames
    /// waiting for the protocol.
    pub backlogs: Vec<VecDeque<(Time, u32, u8)>>,
    pub(crate) limit: usize,
    /// Frames handed to another CPU.
    pub remote: u64,
}

impl Rps {
    pub fn new(cpus: u32, threads: usize, limit: usize) -> Self {
        Self { cpus: u64::from(cpus), backlogs: vec![VecDeque::new(); threads], limit, remote: 0 }
    }

    /// The CPU a flow hash picks.
    pub fn cpu(&self, hash: u32) -> usize {
        ((u64::from(hash) * self.cpus) >> 32) as usize
    }

    pub fn waiting(&self) -> u64 {
        self.backlogs.iter().map(|b| b.len() as u64).sum()
    }
}
