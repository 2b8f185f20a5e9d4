//! The interrupt-delivery parameters (the MSI latency paper's methodology):
//! the controller (`[intc]`), the fabric (`[bus]`), the Linux interrupt path
//! (`[irq_path]`) and the exerciser workload. The parts they configure are
//! `intc/`, `device/source.rs`, `kernel/linux.rs` and `machine/delivery.rs`.

mod config;

pub use config::{
    BusConfig, EXERCISER_LINK_MBPS, ExerciserConfig, IntcConfig, IrqPathConfig, IrqPathKind, SourceConfig, SourceKind, SourcesConfig, check, check_nic, nic_wiring,
};
