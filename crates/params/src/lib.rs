//! irqsim's one parameter language, shared by the event-driven core, the
//! execution-driven cores (irqsim-mips) and the programmable NIC
//! (irqsim-firmware).
//!
//! A part declares each of its keys once as a [`Param`] (name, type, unit,
//! default, range, help, and [`When`] it applies; gem5's `Param` idea, as
//! data). The same tables then:
//! - check a TOML table: unknown keys, wrong types and values out of range
//!   are refused with the dotted key named, keys without a default are
//!   required and defaults are filled in ([`check_section`], and
//!   [`check_sections`] for a table of named sub-tables such as a core's
//!   `[l1d]`, `[l2]`);
//! - read the command line's `KEY=VALUE` strings into such a table, typed by
//!   the key's declaration ([`parse_sets`]), so `--set` and TOML are one
//!   language with one set of checks;
//! - render docs/config.md's tables and `irqsim parts`' JSON ([`docs`]).

mod check;
pub mod docs;
mod param;
mod sets;

pub use check::{Problem, check_defaults, check_section, check_sections, describe, find, join, literal, plain, quoted, range_text};
pub use param::{Def, MAX_CYCLES, Param, REQ, Range, Section, Type, When, absent, d};
pub use sets::{parse_keys, parse_sets, parse_u64};
