"""The C receive and forward path (programs/kernel/) before the machine runs it.

kernel_test is the kernel's sources with a fake NIC in memory and a driver
that calls nic_isr, net_rx_action and sys_recv directly; its own checks
make it exit 1 on any failure. Its output under qemu-mips is compared by
tests/test_exec.py and crates/mips/tests/conformance.rs (every top-level
program); here: its counts, and that the Pentium 4 caches change nothing
but timing. Also the footprint method on the machine's ELFs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from irqsim import exec as mips
from irqsim.studies import smt_footprint as fp
from irqsim.studies.smt_hot_thread import P4_CACHES

P4 = [f"{k}={v}" for k, v in P4_CACHES.items()]

# What each phase of programs/kernel/test.c must count (see the comments there).
EXPECTED = {
    "receive.delivered": 4,  # 3 frames, then one after -EAGAIN; a short buffer truncates
    "receive.net_rx_runs": 1,
    "receive.wakes": 1,
    "bad.dropped": 7,  # IP checksum, version, protocol, fragment, length, UDP checksum, port
    "bad.delivered": 1,
    "ring.rdh": 0,  # 40 frames through 8 descriptors: the ring wrapped 5 times
    "ring.rdt": 7,
    "ring.missed": 3,  # the NIC owns 7 of 8: a burst of 10 misses 3
    "ring.sock_dropped": 3,  # a queue of 4 takes 4 of the 7
    "ring.free_skbs": 24,  # 32 minus the 8 in the ring: every other skb came back
    "budget.net_rx_runs": 3,  # 7 frames at 3 per run
    "pool.dropped": 1,
    "slab.delivered": 600,  # 3 bursts of 200 received on CPU 1, read on CPU 0
    "slab.free_skbs": 248,  # 256 minus the 8 in the ring: every object came back
    "slab.drained": 224,  # 248 less the 24 in CPU 0's array, which CPU 1 cannot take
    "nat.sent": 13,
    "nat.connections": 6,
    "nat.dropped": 2,  # a full conntrack table, TTL 1
    "route.sources": 768,  # 1.5 x the route cache's 512 entries: all delivered
    "route.entries": 512,  # the collector keeps the cache within them
    "route.overflows": 1,  # every entry held: one frame dropped and counted
    "checksums.cases": 5000,
    "checksums.mismatches": 0,
}


def counts(stdout: str) -> dict[str, int]:
    return {k: int(v) for k, v in (line.split("=") for line in stdout.splitlines() if "=" in line)}


@pytest.fixture(scope="module")
def perfect():
    return mips.run("kernel_test")


def test_every_check_passes_with_the_expected_counts(perfect):
    assert perfect["exit_code"] == 0, perfect["stdout"]
    assert perfect["stdout"].endswith("kernel_test: ok\n") and "FAIL" not in perfect["stdout"]
    assert counts(perfect["stdout"]) == EXPECTED


def test_pentium4_caches_change_timing_only(perfect):
    cached = mips.run("kernel_test", P4)
    assert (cached["exit_code"], cached["stdout"]) == (perfect["exit_code"], perfect["stdout"])
    assert cached["instructions"] == perfect["instructions"] and cached["cycles"] > perfect["cycles"]
    c = cached["caches"]
    assert 0 < c["l1d"]["misses"] < c["l1d"]["accesses"] and c["l2"]["misses"] <= c["l2"]["accesses"]


@pytest.mark.parametrize("workload", sorted(fp.KERNELS))
def test_machine_elfs_have_the_contracts_entries(workload):
    elf = fp.Elf(fp.KERNELS[workload])
    for entry in (*fp.ENTRIES, "kconfig"):
        assert entry in elf.symbols, entry
    assert all(elf.symbols[e].is_func for e in fp.ENTRIES) and not elf.symbols["kconfig"].is_func
    assert "main" not in elf.symbols


def test_static_footprint_follows_the_calls():
    sf = fp.static_footprint("nat")
    bh = set(sf["net_rx_action"]["functions"])
    assert {"net_rx_action", "ip_rcv", "udp_rcv", "nat_forward", "skb_alloc", "nic_xmit"} <= bh
    assert "sys_recv" not in bh and "kernel_init" not in bh
    assert {"ip_route_input", "ct_put", "dst_release"} <= bh
    assert {"skb_head_alloc", "kmalloc_data"} <= bh  # alloc_skb's two slab allocations
    # recv frees the skb as __kfree_skb does: route, socket charge, connection,
    # then kfree of the data and kmem_cache_free of the head
    assert set(sf["sys_recv"]["functions"]) == {"sys_recv", "skb_free", "dst_release", "sock_rfree", "ct_put", "kfree_data", "skb_head_free", "cache_free"}
    assert sf["app_main"]["functions"] == ["app_main"]  # user code reaches no kernel function
    for a in sf.values():
        assert a["code_bytes"] / 64 <= a["code_lines"] <= a["code_bytes"] / 64 + len(a["functions"]) + 1
    assert fp.data_objects("nat")["rx_desc"] == 16 * 256


# Linux 2.6.11's objects for the paper's Alpha (docs/models/smt-hot-thread.md,
# "Linux 2.6's footprint"): slab object size x count in the ELF.
SIZES_2_6 = {
    "head_pages": 8192 * 41,  # skbuff_head_cache: 25 sk_buffs (264 B, SLAB_HWCACHE_ALIGN: 320) a page, 1,024 of them
    "data_pages": 8192 * 512,  # kmalloc(2296): size-4096, 2 a page
    "kmem_caches": 448 * 2,  # kmem_cache_t, NR_CPUS 32
    "socks": 832 * 4,  # udp_sock 792 B, SLAB_HWCACHE_ALIGN
    "conns": 304 * 4096,  # ip_conntrack, ip_conntrack_max of them
    "ct_hash": 16 * 512,  # list_head buckets with 128 MiB
    "rtables": 320 * 512,  # rtable 312 B, SLAB_HWCACHE_ALIGN
    "rt_hash": 16 * 1024,  # rt_hash_bucket with 128 MiB
    "netdevs": 896 * 2,  # net_device 872 B, NETDEV_ALIGN 32
    "udp_hash": 8 * 128,  # UDP_HTABLE_SIZE hlist heads
}


@pytest.mark.parametrize("workload", sorted(fp.KERNELS))
def test_objects_have_linux_2_6_sizes(workload):
    objects = fp.data_objects(workload)
    assert {k: objects[k] for k in SIZES_2_6} == SIZES_2_6


def test_the_docs_footprint_table_is_the_measured_one():
    doc = (Path(__file__).resolve().parent.parent / "docs" / "models" / "smt-hot-thread.md").read_text()
    table = doc.split("<!-- footprint:nat -->\n")[1].split("\n<!-- /footprint -->")[0]
    assert table == fp.footprint_markdown("nat"), "regenerate the table with smt_footprint.footprint_markdown()"


@pytest.fixture(scope="module")
def measured():
    return {w: fp.measure(w, P4_CACHES) for w in ("netperf", "nat")}


def test_dma_by_another_core_leaves_the_payload_uncached(measured):
    def per_call(m, act, field):
        s = m["steady"][act]
        return s[field] / s["calls"]

    # 1,472 payload bytes span 23 lines: recv's copy misses each once when the NIC's DMA
    # invalidated them, and hardly at all when the NIC's copy went through the same core.
    assert per_call(measured["netperf"], "sys_recv", "l1d") >= 23
    # (With the Pentium 4's 8 KiB L1D the 2.6-sized objects the bottom half touches evict
    # most of the payload before recv too, so the CPU's copy is compared with a 32 KiB one.)
    cpu_copy = fp.measure("netperf", {**P4_CACHES, "l1d.size_bytes": 32 * 1024}, dma_core=False)
    assert per_call(cpu_copy, "sys_recv", "l1d") < 2
    assert cpu_copy["steady"]["sys_recv"]["instructions"] == measured["netperf"]["steady"]["sys_recv"]["instructions"]
    # The NAT's bottom half does more per frame than delivery to a socket; the code stays cached.
    assert per_call(measured["nat"], "net_rx_action", "instructions") > 1.25 * per_call(measured["netperf"], "net_rx_action", "instructions")
    for m in measured.values():
        assert all(a["l1i"] == 0 for a in m["steady"].values())


def test_measurement_is_deterministic(measured):
    assert fp.measure("nat", P4_CACHES) == measured["nat"]


def test_the_docs_per_frame_table_is_the_measured_one():
    doc = (Path(__file__).resolve().parent.parent / "docs" / "models" / "smt-hot-thread.md").read_text()
    table = doc.split("<!-- per-frame -->\n")[1].split("\n<!-- /per-frame -->")[0]
    assert table == fp.per_frame_markdown(), "regenerate the table with smt_footprint.per_frame_markdown()"


def test_the_docs_machine_bins_table_is_the_measured_one():
    doc = (Path(__file__).resolve().parent.parent / "docs" / "models" / "smt-hot-thread.md").read_text()
    table = doc.split("<!-- machine-bins -->\n")[1].split("\n<!-- /machine-bins -->")[0]
    assert table == fp.machine_markdown(), "regenerate the table with smt_footprint.machine_markdown()"
