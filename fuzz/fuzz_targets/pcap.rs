//! cargo-fuzz target: see `irqsim_fuzz::pcap`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    irqsim_fuzz::pcap(data);
});
