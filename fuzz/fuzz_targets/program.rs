//! cargo-fuzz target: see `fuzz/src/mips.rs` (`program`).
#![no_main]

#[path = "../src/mips.rs"]
mod mips;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mips::program(data);
});
