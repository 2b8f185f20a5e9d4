//! Prints docs/config.md as the parameter tables generate it:
//! `cargo run -p irqsim-core --example gen-config > docs/config.md`.

fn main() {
    print!("{}", irqsim_core::config::markdown(&[]));
}
