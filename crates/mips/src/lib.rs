//! Execution-driven cores for irqsim: real MIPS32 code (o32, big-endian,
//! as `mips-linux-gnu-gcc -march=r4000 -mabi=32` emits it) on simulated
//! R4000-class in-order cores with caches, cache pinning and SMT.
//!
//! - [`elf`] loads a static executable; [`decode`] and [`exec`] are the
//!   instruction set; [`context`] is a register file.
//! - [`timing`] is the pipeline's interlocks; [`cache`], [`pin`] and
//!   [`hierarchy`] the memory side; [`core`] shares an issue slot among
//!   hardware threads; [`system`] runs N cores in shared memory, each
//!   thread's slice by basic blocks ([`block`]) where it can, the threads
//!   of a core that share its issue slot cycle by cycle (a round-robin
//!   pair by schedules of both threads' runs, `duet`); `ahead` lets
//!   cores run ahead of one another through work none of the others sees
//!   ([`System::run_ahead`]), by blocks where they can (`turn`).
//! - [`device`] maps device registers for code; [`run`] runs a
//!   freestanding program to its `exit` (the `irqsim exec` command).

mod ahead;
pub mod block;
pub mod bus;
pub mod cache;
pub mod code;
pub mod config;
pub mod context;
pub mod core;
pub mod decode;
pub mod device;
mod duet;
pub mod elf;
pub mod error;
pub mod exec;
pub mod hierarchy;
mod interleave;
pub mod mem;
pub mod pin;
mod plain;
pub mod run;
mod slice;
pub mod system;
pub mod timing;
mod turn;

pub use context::Context;
pub use elf::Program;
pub use error::Error;
pub use system::{Stop, System, SystemConfig};
