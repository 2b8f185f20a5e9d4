//! Prints docs/config.md as the parameter tables generate it, the
//! programmable NIC's (irqsim-firmware) included:
//! `cargo run -p irqsim-core --example gen-config > docs/config.md`.

fn main() {
    print!("{}", irqsim_core::config::markdown(&[irqsim_firmware::config::SECTION]));
}
