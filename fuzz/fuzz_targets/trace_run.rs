//! cargo-fuzz target: see `irqsim_fuzz::trace_run`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    irqsim_fuzz::trace_run(data);
});
