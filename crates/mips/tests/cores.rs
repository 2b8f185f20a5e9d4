//! Cores share memory in cycle order, and within a cycle in index order,
//! whatever cycles they were started at: as if every core were stepped one
//! cycle at a time, lowest index first.

mod common;
use common::*;
use irqsim_mips::{Context, Stop, System, SystemConfig};

#[test]
fn within_a_cycle_the_lower_index_goes_first() {
    // Core 1 from cycle 0 stores 1 at cycle 5; core 0, started at cycle 5,
    // stores 0 at cycle 5. Core 0 goes first in that cycle, so 1 stays.
    let words = [lui(8, 0x1000), addiu(9, 0, 1), NOP, NOP, NOP, sw(9, 0, 8), NOP, NOP, sw(0, 0, 8), NOP, NOP];
    for slice in [1, 2, 3, 100] {
        let p = program(&words, 4096);
        let mut s = System::new(p, &SystemConfig { cores: 2, ..Default::default() }, irqsim_mips::device::NoDevices);
        let mut late = Context::at(TEXT + 4 * 8, 0x7000_0000);
        late.r[8] = DATA;
        s.start(0, 0, late, 5);
        s.start(1, 0, Context::at(TEXT, 0x6FFF_0000), 0);
        let mut until = 0;
        while until < 7 {
            until = (until + slice).min(7);
            assert_eq!(s.run(until), Stop::Limit);
        }
        assert_eq!(s.mem.read_u32(DATA), 1, "slices of {slice} cycles");
    }
}
