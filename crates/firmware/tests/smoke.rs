use irqsim_firmware::{NicConfig, run};
use irqsim_mips::Program;

#[test]
fn smoke() {
    let p = Program::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/irqsim/programs/firmware/nic.elf"))).unwrap();
    for cores in [1, 2, 4] {
        let cfg = NicConfig::from_sets(&[format!("cores={cores}"), "frames=400".into(), "warmup_frames=100".into(), "frame_bytes=64".into()]).unwrap();
        let o = run(&p, &cfg, None).unwrap();
        eprintln!("cores {cores}: fpkc {:.2} ipc {:.2} sent {} recv {} dropped {} lock {} ord {} dmaw {} hw {} disp {}", o.frames_per_kcycle(), o.ipc(), o.sent, o.received, o.dropped, o.profile.lock, o.profile.ordering, o.profile.dma_wait, o.profile.handler_work, o.profile.dispatch_work);
        eprintln!("  handlers {:?} inv {:?}", o.profile.handler_instructions, o.profile.invocations);
    }
}
