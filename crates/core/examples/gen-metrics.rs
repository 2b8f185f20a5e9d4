//! Prints docs/metrics.md as the metric table generates it:
//! `cargo run -p irqsim-core --example gen-metrics > docs/metrics.md`.

fn main() {
    print!("{}", irqsim_core::metrics::markdown());
}
