//! cargo-fuzz target: see `irqsim_fuzz::short_run`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    irqsim_fuzz::short_run(data);
});
