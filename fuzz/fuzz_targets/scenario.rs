//! cargo-fuzz target: see `irqsim_fuzz::scenario`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    irqsim_fuzz::scenario(data);
});
