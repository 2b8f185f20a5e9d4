//! What the CPU runs for an interrupt, Linux 2.6 style.
//!
//! At an interrupt level (interrupts disabled throughout, as with
//! `IRQF_DISABLED`, so interrupts never nest):
//! 1. `Entry`: hardware vectoring (the thread's entry cost), the
//!    controller's acknowledge (INTA, 8259 mask and EOI, or a local-APIC EOI
//!    write) and the kernel's path to the first handler.
//! 2. For each handler registered on the input, in order, every one of them:
//!    legacy lines first `Read` the device's status (a non-posted read: the
//!    CPU stalls for the round trip, and the completion cannot overtake the
//!    device's DMA data, so it also flushes it); a handler whose device's bit
//!    is set `Claim`s: it writes the clear, then the exerciser's ISR-entry
//!    signature, and schedules the tasklet. An MSI handler claims at once,
//!    its first MMIO write being the signature.
//! 3. `Exit`: the controller's end (8259 unmask, level EOI) and irq_exit.
//!
//! Then, at the software-interrupt level (preempted by any new interrupt,
//! above user work, after all pending interrupts since those are above it):
//! `TaskletEntry` (softirq entry, then the tasklet's signature write) and
//! `Tasklet`, its work.

use crate::cpu::Label;

/// A step of the interrupt path. The identity of the interrupt being served
/// waits beside the CPU (`Delivery::taken`, `reads`, `tasklets`), and so does
/// the cost of a step that varies (`Delivery::step`), keeping jobs small: a
/// CPU serves one interrupt at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// The busy user task.
    User,
    /// Entry on `cpu`, the controller's acknowledge included.
    Entry {
        input: u16,
        cpu: u16,
    },
    /// Handler `h` of the input's chain reads its device's status; `cpu`
    /// stalls for the round trip.
    Read {
        input: u16,
        h: u16,
        cpu: u16,
    },
    /// Handler `h` services its device's interrupt on `cpu`.
    Claim {
        input: u16,
        h: u16,
        cpu: u16,
    },
    /// The controller's end (unmask, EOI) and irq_exit on `cpu`.
    Exit {
        cpu: u16,
    },
    /// The tasklet of source `src` (an exerciser): softirq entry, then its signature.
    TaskletEntry {
        src: u16,
    },
    Tasklet,
    /// The optimistic prologue on `cpu`: the software mask's test, before
    /// the entry (critical sections under optimistic protection, `masking.rs`).
    Prologue {
        input: u16,
        cpu: u16,
    },
    /// The prologue found the interrupt masked: it builds the continuation,
    /// raises the hardware mask and returns.
    Defer,
}

impl Label for Job {
    fn label(&self) -> &'static str {
        match self {
            Job::User => "user task",
            Job::Entry { .. } => "irq entry",
            Job::Read { .. } => "ISR status read",
            Job::Claim { .. } => "ISR",
            Job::Exit { .. } => "irq exit",
            Job::TaskletEntry { .. } => "softirq entry",
            Job::Tasklet => "tasklet",
            Job::Prologue { .. } => "interrupt prologue",
            Job::Defer => "build continuation",
        }
    }

    fn args(&self) -> crate::timeline::Args {
        match *self {
            Job::Entry { input, .. } => [Some(("input", u64::from(input))), None],
            Job::Read { input, h, .. } | Job::Claim { input, h, .. } => [Some(("input", u64::from(input))), Some(("handler", u64::from(h)))],
            _ => [None, None],
        }
    }
}
