//! cargo-fuzz target: see `fuzz/src/mips.rs` (`elf`).
#![no_main]

#[path = "../src/mips.rs"]
mod mips;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mips::elf(data);
});
