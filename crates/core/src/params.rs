//! Parameter declarations: one [`Param`] per key, giving its name, type,
//! unit, default, range and help in one place. The language is the
//! irqsim-params crate's, shared with the execution-driven cores and the
//! programmable NIC; this module names it where the parts declare their keys.
//!
//! A part's table drives everything about its keys: [`check_section`] refuses
//! unknown keys, wrong types and values out of range, requires the keys that
//! have no default and fills in the defaults, so serde only ever sees complete
//! sections (the structs carry no defaults of their own); `docs.rs` renders
//! the same tables as docs/config.md.

pub use irqsim_params::*;
