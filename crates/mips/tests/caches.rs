//! Cache behaviour computed by hand: strides, associativity conflicts, LRU,
//! the four pinning modes, and miss counts through a running program.

mod common;
use common::*;
use irqsim_mips::SystemConfig;
use irqsim_mips::cache::{Cache, Geometry};
use irqsim_mips::hierarchy::HierarchyConfig;

fn cache(size_bytes: u32, ways: u32, line_bytes: u32) -> Cache {
    Cache::new(Geometry { size_bytes, ways, line_bytes, hit_cycles: 0 }, 2)
}

/// Misses of requester 0 over `addrs`.
fn misses(c: &mut Cache, addrs: impl IntoIterator<Item = u32>) -> u64 {
    let before = c.counts[0].misses;
    for a in addrs {
        c.access(a, 0);
    }
    c.counts[0].misses - before
}

#[test]
fn small_strides_miss_once_per_line() {
    // 1 KiB direct-mapped, 32-byte lines: a 1 KiB array read with stride 4
    // misses once per line (32), then fits entirely (0 on the second pass).
    let mut c = cache(1024, 1, 32);
    assert_eq!(misses(&mut c, (0..1024).step_by(4)), 32);
    assert_eq!(misses(&mut c, (0..1024).step_by(4)), 0);
    // Stride 8 over the next 512 bytes: 16 lines, 16 misses (evicting half).
    assert_eq!(misses(&mut c, (1024..1536).step_by(8)), 16);
    assert_eq!(misses(&mut c, (0..1024).step_by(4)), 16);
}

#[test]
fn stride_of_the_cache_size_conflicts_in_a_direct_mapped_cache() {
    // Two addresses 1 KiB apart share the set of a 1 KiB direct-mapped cache: every access misses.
    let mut c = cache(1024, 1, 32);
    assert_eq!(misses(&mut c, [0, 1024].repeat(10)), 20);
    // Two ways hold both.
    let mut c = cache(1024, 2, 32);
    assert_eq!(misses(&mut c, [0, 512].repeat(10)), 2);
}

#[test]
fn lru_evicts_the_least_recently_used_way() {
    // 2-way, 16 sets of 32 bytes: 0, 512, 1024 map to set 0.
    let mut c = cache(1024, 2, 32);
    assert_eq!(misses(&mut c, [0, 512, 0, 1024]), 3); // 1024 evicts 512 (LRU)
    assert_eq!(misses(&mut c, [0]), 0);
    assert_eq!(misses(&mut c, [512]), 1);
    // Cyclic access to three lines in a 2-way set always misses under LRU.
    let mut c = cache(1024, 2, 32);
    assert_eq!(misses(&mut c, [0, 512, 1024].repeat(5)), 15);
}

#[test]
fn a_way_emptied_by_another_cores_store_is_filled_before_any_line_is_evicted() {
    // 2-way, set 0: 0 (older), 512 (newer, then invalidated); 1024 goes into the
    // empty way, whatever age the line that left it had, and 0 stays.
    let mut c = cache(1024, 2, 32);
    assert_eq!(misses(&mut c, [0, 512]), 2);
    c.invalidate(512);
    assert_eq!(misses(&mut c, [1024]), 1);
    assert_eq!(misses(&mut c, [0, 1024]), 0);
    assert!(!c.contains(512));
}

#[test]
fn a_range_invalidated_drops_exactly_its_lines_in_any_way() {
    // 6-way (ways compared four at a time, then two), 4 sets of 32-byte lines:
    // each set filled with lines 0..6 of it; a range from the middle of one
    // line to the middle of another drops the lines it touches, whichever way
    // they are in, and nothing else.
    let mut c = cache(768, 6, 32);
    let lines: Vec<u32> = (0..24).map(|k| k * 32).collect();
    assert_eq!(misses(&mut c, lines.iter().copied()), 24);
    c.invalidate_range(5 * 32 + 7, 12 * 32);
    for &a in &lines {
        assert_eq!(c.contains(a), !(5 * 32..18 * 32).contains(&a), "line at {a}");
    }
    // Dropped ways are empty: refilling them evicts nothing.
    assert_eq!(misses(&mut c, (5..18).map(|k| k * 32)), 13);
    assert_eq!(misses(&mut c, lines.iter().copied()), 0);
    // An empty range drops nothing; one reaching the top of memory stops there.
    c.invalidate_range(7 * 32, 0);
    c.invalidate_range(u32::MAX - 40, 100);
    assert_eq!(misses(&mut c, lines.iter().copied()), 0);
}

#[test]
fn a_sets_newest_line_is_remembered_per_set_and_forgotten_when_it_goes() {
    // 2-way, 16 sets: 0, 512, 1024 in set 0, 32 in set 1. Repeats of each
    // set's newest line, between accesses to other sets, keep LRU order.
    let mut c = cache(1024, 2, 32);
    assert_eq!(misses(&mut c, [0, 512, 32, 512, 32, 512, 1024]), 4); // 1024 evicts 0
    assert_eq!(misses(&mut c, [512, 1024, 32]), 0);
    assert_eq!(misses(&mut c, [0]), 1); // evicts 512, older than 1024
    // An invalidated newest line misses next time.
    c.invalidate(0);
    assert_eq!(misses(&mut c, [0]), 1);
    // A line a range lock brings in is its set's newest: a repeat of the
    // line newest before it must become newest again. 4-way, set 0: 0,
    // 512, 1024 (locked), 1536, 2048, 2560.
    let mut c = cache(2048, 4, 32);
    assert_eq!(misses(&mut c, [0, 512]), 2);
    assert_eq!(c.lock_range(1024, 32, 0), Ok(1));
    assert_eq!(misses(&mut c, [512]), 0);
    c.unlock_all();
    assert_eq!(misses(&mut c, [1536, 2048, 2560]), 3); // 2048 evicts 0, 2560 evicts 1024
    assert_eq!(misses(&mut c, [512]), 0);
}

#[test]
fn way_pinning_limits_allocation_but_not_hits() {
    let mut c = cache(1024, 2, 32);
    c.access(0, 0); // thread 0's line in way 0 (the empty ways fill lowest first)
    c.pin.set_way_mask(1, 0b10).unwrap();
    // Thread 1 streams through set 0: only way 1 is its to allocate, so thread 0's line stays.
    for k in 1..10 {
        c.access(k * 512, 1);
    }
    assert_eq!(misses(&mut c, [0]), 0);
    // Thread 1 still hits on thread 0's line (lookups search every way).
    let before = c.counts[1].misses;
    c.access(0, 1);
    assert_eq!(c.counts[1].misses, before);
    // CAT's rules: masks are contiguous and non-empty.
    assert!(c.pin.set_way_mask(0, 0).is_err());
    let mut c8 = cache(4096, 4, 32);
    assert!(c8.pin.set_way_mask(0, 0b1010).is_err());
    assert!(c8.pin.set_way_mask(0, 0b1_0000).is_err());
    assert!(c8.pin.set_way_mask(0, 0b0110).is_ok());
}

#[test]
fn set_pinning_reserves_sets_for_one_thread() {
    let mut c = cache(1024, 1, 32); // 32 sets
    c.pin.reserve_sets(0, 0, 4, 32).unwrap();
    c.access(0, 0);
    // Thread 1 maps into reserved set 0: served without allocating, so it misses every time...
    let before = c.counts[1].misses;
    for _ in 0..3 {
        c.access(1024, 1);
    }
    assert_eq!(c.counts[1].misses - before, 3);
    // ...and thread 0's line survives.
    assert_eq!(misses(&mut c, [0]), 0);
    // Outside the reserved sets thread 1 allocates normally.
    c.access(1024 + 4 * 32, 1);
    assert!(c.contains(1024 + 4 * 32));
    assert!(c.pin.reserve_sets(1, 2, 4, 32).is_err(), "overlapping reservation");
    assert!(c.pin.reserve_sets(1, 30, 4, 32).is_err(), "past the last set");
}

#[test]
fn range_pinning_locks_lines_in() {
    let mut c = cache(1024, 2, 32);
    assert_eq!(c.lock_range(0, 64, 0), Ok(2)); // two lines fetched and locked
    assert_eq!(c.locked_lines(), 2);
    // Streaming through set 0 and 1 cannot evict them.
    for k in 1..20 {
        c.access(k * 512, 0);
        c.access(k * 512 + 32, 0);
    }
    assert_eq!(misses(&mut c, [0, 32]), 0);
    c.unlock_all();
    for k in 1..3 {
        c.access(k * 512, 0);
    }
    assert_eq!(misses(&mut c, [0]), 1, "unlocked lines age out again");
}

#[test]
fn trace_pinning_locks_every_line_allocated_while_on() {
    let mut c = cache(1024, 2, 32);
    c.pin.set_trace(0, true);
    c.access(0, 0);
    c.access(32, 0);
    c.pin.set_trace(0, false);
    assert_eq!(c.locked_lines(), 2);
    for k in 1..10 {
        c.access(k * 512, 0);
    }
    assert_eq!(misses(&mut c, [0, 32]), 0);
}

#[test]
fn all_ways_pinned_behaves_as_if_way_zero_were_unlocked() {
    // ARM1176: with every way locked, allocation replaces way 0.
    let mut c = cache(1024, 2, 32);
    c.pin.set_trace(0, true);
    c.access(0, 0); // way 0, locked
    c.access(512, 0); // way 1, locked
    c.pin.set_trace(0, false);
    assert_eq!(misses(&mut c, [1024]), 1); // replaces way 0 (line 0), unlocked
    assert!(!c.contains(0) && c.contains(512) && c.contains(1024));
    assert_eq!(c.locked_lines(), 1);
    assert_eq!(misses(&mut c, [2048]), 1); // way 0 again: 1024 goes, 512 stays locked
    assert!(c.contains(512) && !c.contains(1024));
}

fn cached(l1d: Geometry) -> SystemConfig {
    let h = HierarchyConfig { l1d, ..Default::default() };
    SystemConfig { caches: Some(h), ..Default::default() }
}

#[test]
fn a_program_striding_through_memory_misses_as_computed() {
    // for (p = DATA; p != DATA + 4096; p += 32) load *p;   twice over.
    let loop_words = [
        lui(8, DATA >> 16),
        addiu(9, 8, 4096),
        lw(10, 0, 8), // loop:
        addiu(8, 8, 32),
        bne(8, 9, -3),
        NOP,
    ];
    let twice: Vec<u32> = loop_words.iter().chain(loop_words.iter()).copied().collect();
    let g = Geometry { size_bytes: 8192, ways: 2, line_bytes: 32, hit_cycles: 0 };
    let mut s = system(program(&twice, 4096), &cached(g));
    assert!(matches!(s.run(1 << 30), irqsim_mips::Stop::Syscall { .. }));
    let h = s.caches.as_ref().unwrap();
    // 128 lines of 32 bytes: 128 misses the first time, none the second (4 KiB fits in 8 KiB).
    assert_eq!(h.l1d[0].counts[0], irqsim_mips::cache::Counts { accesses: 256, misses: 128 });
    // L2 has 64-byte lines: 64 of those data misses miss in L2 too, plus
    // one for the text (14 words: two 32-byte L1I lines in one L2 line).
    assert_eq!(h.l1i[0].counts[0].misses, 2);
    assert_eq!(h.l2[0].counts[0].misses, 64 + 1);
    // A 2 KiB L1D cannot hold 4 KiB: the second pass misses again.
    let g = Geometry { size_bytes: 2048, ..g };
    let mut s = system(program(&twice, 4096), &cached(g));
    s.run(1 << 30);
    assert_eq!(s.caches.as_ref().unwrap().l1d[0].counts[0].misses, 256);
}

#[test]
fn miss_latency_is_charged() {
    let words = [lui(8, DATA >> 16), lw(9, 0, 8)];
    let perfect = cycles_to_exit(&words, &SystemConfig::default());
    let h = HierarchyConfig::default();
    let with = cycles_to_exit(&words, &SystemConfig { caches: Some(h), ..Default::default() });
    // One text line (4 words fit a 32-byte line) missing in L1I and L2, one data line likewise.
    let miss = (h.l2.hit_cycles + h.memory_cycles) as u64;
    assert_eq!(with, perfect + 2 * miss);
}

#[test]
fn a_range_larger_than_the_cache_is_refused() {
    let mut c = cache(1024, 2, 32); // 32 lines
    assert_eq!(c.lock_range(0, 1024, 0), Ok(32));
    let e = c.lock_range(0, 1025, 0).unwrap_err();
    assert!(e.contains("33 lines, more than the cache's 32"), "{e}");
    assert!(c.lock_range(0, u32::MAX, 0).is_err());
}
