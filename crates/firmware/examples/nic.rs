//! Runs the NIC firmware once, for timing and callgrind:
//! `nic FIRMWARE.elf [KEY=VALUE ...]` (the `nic_firmware` keys) prints the
//! run's cycles (whole and measured), cores and instructions.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((path, sets)) = args.split_first() else {
        eprintln!("usage: nic FIRMWARE.elf [KEY=VALUE ...]");
        std::process::exit(2);
    };
    let fail = |m: String| -> ! {
        eprintln!("{m}");
        std::process::exit(2)
    };
    let cfg = irqsim_firmware::NicConfig::from_sets(sets).unwrap_or_else(|e| fail(e));
    let program = irqsim_mips::Program::load(std::path::Path::new(path)).unwrap_or_else(|e| fail(e.to_string()));
    let o = irqsim_firmware::run(&program, &cfg, None).unwrap_or_else(|e| fail(e.to_string()));
    println!("cores {} window cycles {} frames {} instructions {}", o.cores, o.cycles, o.frames, o.instructions);
}
