#!/usr/bin/env bash
# Builds every C program here into a static big-endian MIPS ELF (o32, R4000)
# under python/irqsim/programs/, where the package ships them. Needs Debian's
# gcc-mips-linux-gnu. The build is reproducible: same sources, same bytes.
#   programs/build.sh            rebuild in place
#   programs/build.sh --check    rebuild into a temporary directory and fail
#                                if any committed ELF differs (CI)
set -euo pipefail
cd "$(dirname "$0")"
CC=${CC:-mips-linux-gnu-gcc}
out=../python/irqsim/programs
if [[ "${1:-}" == "--check" ]]; then
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out" "$out/bench" "$out/system" "$out/firmware" "$out/kernel" "$out/hostile"
flags=(-march=r4000 -mabi=32 -mno-abicalls -fno-pic -O2 -static -nostdlib
       -ffreestanding -fno-builtin -fno-stack-protector -fno-asynchronous-unwind-tables
       -ffile-prefix-map="$PWD"=. -Wall -Wextra -Werror -Wno-unused-parameter
       -Wl,--build-id=none -Wl,-z,norelro)
# tests/ and handlers/ are compared with qemu-mips; bench/ is too long for
# that and system/ uses irqsim's device registers, which qemu does not have;
# hostile/ misbehave on purpose (tests/test_exec_hostile.py).
for src in tests/*.c handlers/*.c bench/*.c system/*.c hostile/*.c; do
    name=$(basename "$src" .c)
    [[ "$src" == bench/* || "$src" == system/* || "$src" == hostile/* ]] && name=$(dirname "$src")/$name
    extra=()
    [[ "$name" == likely ]] && extra=(-mbranch-likely)
    # rx_min's data stays where it was before its send path grew the text,
    # so its receive path keeps its cache sets (docs/models/cores.md).
    [[ "$name" == system/rx_min ]] && extra=(-Wl,--section-start=.sbss=0x412000)
    "$CC" "${flags[@]}" "${extra[@]}" -o "$out/$name.elf" rt/start.S rt/rt.c "$src"
done
# rx_nics: rx_min's driver serving every NIC the machine has
# ([[nics.others]]): the same source with its RX_NICS lines in.
"$CC" "${flags[@]}" -DRX_NICS -o "$out/system/rx_nics.elf" rt/start.S rt/rt.c system/rx_min.c
# rx_nics_rss: the same, and each other NIC's own RSS queues and RPS for
# their frames (-DRX_NICS_RSS).
"$CC" "${flags[@]}" -DRX_NICS_RSS -o "$out/system/rx_nics_rss.elf" rt/start.S rt/rt.c system/rx_min.c
# fw_rx_nics: fw_rx's driver of the programmable NIC with other NICs beside
# it and RPS: the same source with its FW_NICS lines in.
"$CC" "${flags[@]}" -DFW_NICS -o "$out/system/fw_rx_nics.elf" rt/start.S rt/rt.c system/fw_rx.c
# fw_rx_rss: fw_rx's driver of firmware that steers over several return
# rings (nic_rss.elf), a NAPI instance and vector each (-DFW_RSS).
"$CC" "${flags[@]}" -DFW_RSS -o "$out/system/fw_rx_rss.elf" rt/start.S rt/rt.c system/fw_rx.c
# The NIC firmware is one program of several files (crates/firmware runs it).
"$CC" "${flags[@]}" -o "$out/firmware/nic.elf" rt/start.S rt/rt.c firmware/*.c
# nic_rss: the same firmware steering frames over several return rings by
# their flow's hash, a vector each (-DFW_RSS).
"$CC" "${flags[@]}" -DFW_RSS -o "$out/firmware/nic_rss.elf" rt/start.S rt/rt.c firmware/*.c
# nic_coal: the same firmware moderating its host interrupts with the NIC's
# timer and a frame count (-DFW_COAL).
"$CC" "${flags[@]}" -DFW_COAL -o "$out/firmware/nic_coal.elf" rt/start.S rt/rt.c firmware/*.c
# nic_rss_coal: both, a frame count and a deadline per return ring on the
# NIC's one timer (-DFW_RSS -DFW_COAL).
"$CC" "${flags[@]}" -DFW_RSS -DFW_COAL -o "$out/firmware/nic_rss_coal.elf" rt/start.S rt/rt.c firmware/*.c
# kernel/: the Linux-shaped receive and forward path, one ELF per role for
# the machine (entry symbols, no main), and kernel_test: the same sources
# with a fake NIC in memory and a test driver, which qemu-mips runs too;
# kernel/measure-*: the same with counters read around each activity, on
# the stack pool (-DSKB_POOL) they were measured on for livelock's inputs,
# the route cache collector out of the way (kernel/bare.ld) and the data
# where it was when they were measured.
pool_src=(kernel/init.c kernel/skb.c kernel/nic.c kernel/ip.c kernel/route.c kernel/socket.c kernel/nat.c)
ksrc=("${pool_src[@]}" kernel/slab.c)
# kernel_elf OUT ARGS: a machine kernel with its NAPI entries (kernel/napi.c)
# placed after everything else (kernel/napi.ld: its code after the rodata)
# and the data segment pinned where the kernel without them has it, so no
# address of the other paths moves (the SMT study's cache sets); 4 KiB file
# alignment keeps the gap before the pinned data small.
kernel_elf() {
    local elf=$1 bare=$out/kernel/.bare.elf
    shift
    "$CC" "${flags[@]}" -Wl,-e,kernel_init -Wl,-T,kernel/bare.ld -o "$bare" "$@"
    local data
    data=0x$(mips-linux-gnu-nm "$bare" | awk '$3 == "_fdata" { print $1 }')
    rm "$bare"
    "$CC" "${flags[@]}" -Wl,-e,kernel_init -Wl,-T,kernel/napi.ld -Wl,--section-start=.data="$data" -Wl,-z,max-page-size=4096 -o "$elf" "$@" kernel/napi.c
}
kernel_elf "$out/kernel/host.elf" rt/rt.c "${ksrc[@]}" kernel/app.c
kernel_elf "$out/kernel/nat.elf" -DCONFIG_FORWARD=1 rt/rt.c "${ksrc[@]}" kernel/app.c
# kernel/*-sched: the same with 2.6.11's scheduler (kernel/sched.c), the SMT
# study's non-default option.
kernel_elf "$out/kernel/host-sched.elf" -DCONFIG_SCHED rt/rt.c "${ksrc[@]}" kernel/app.c kernel/sched.c
kernel_elf "$out/kernel/nat-sched.elf" -DCONFIG_SCHED -DCONFIG_FORWARD=1 rt/rt.c "${ksrc[@]}" kernel/app.c kernel/sched.c
# kernel/host-nics: the host kernel serving every NIC ([[nics.others]]):
# kernel/nics.c wraps init.c's kernel_init and nic.c's net_rx_action and
# has the NAPI entries in napi.c's place.
"$CC" "${flags[@]}" -Wl,-e,kernel_init -Dkernel_init=kernel_init_nic0 -Dnet_rx_action=net_rx_action_nic0 -o "$out/kernel/host-nics.elf" rt/rt.c "${ksrc[@]}" kernel/app.c kernel/nics.c
# kernel/host-nics-rss: the same with other NICs' own RSS queues (-DNICS_RSS).
"$CC" "${flags[@]}" -Wl,-e,kernel_init -Dkernel_init=kernel_init_nic0 -Dnet_rx_action=net_rx_action_nic0 -DNICS_RSS -o "$out/kernel/host-nics-rss.elf" rt/rt.c "${ksrc[@]}" kernel/app.c kernel/nics.c
# kernel/*-padK: the default kernels with code moved K x 16 bytes and data
# K x 64 bytes (kernel/pad.c, linked first): the SMT study's layout probes.
for k in 1 2 3; do
    kernel_elf "$out/kernel/host-pad$k.elf" -DLAYOUT_PAD=$k kernel/pad.c rt/rt.c "${ksrc[@]}" kernel/app.c
    kernel_elf "$out/kernel/nat-pad$k.elf" -DLAYOUT_PAD=$k -DCONFIG_FORWARD=1 kernel/pad.c rt/rt.c "${ksrc[@]}" kernel/app.c
done
"$CC" "${flags[@]}" -DFAKE_NIC -o "$out/kernel_test.elf" rt/start.S rt/rt.c "${ksrc[@]}" kernel/fake_nic.c kernel/test.c
for fwd in 0 1; do
    name=$([[ $fwd == 1 ]] && echo nat || echo netperf)
    "$CC" "${flags[@]}" -DFAKE_NIC -DMEASURE -DSKB_POOL -DCONFIG_FORWARD=$fwd -Wl,-T,kernel/bare.ld -Wl,--section-start=.data=0x414000 -o "$out/kernel/measure-$name.elf" \
        rt/start.S rt/rt.c "${pool_src[@]}" kernel/fake_nic.c kernel/measure.c
done
if [[ "${1:-}" == "--check" ]]; then
    stale=0
    for f in "$out"/*.elf "$out"/{bench,system,firmware,kernel,hostile}/*.elf; do
        rel=${f#"$out"/}
        if ! cmp -s "$f" "../python/irqsim/programs/$rel"; then
            echo "programs: python/irqsim/programs/$rel is stale or missing: run programs/build.sh and commit" >&2
            stale=1
        fi
    done
    for f in ../python/irqsim/programs/*.elf ../python/irqsim/programs/{bench,system,firmware,kernel,hostile}/*.elf; do
        [[ -e "$out/${f#../python/irqsim/programs/}" ]] || { echo "programs: $f has no source" >&2; stale=1; }
    done
    exit $stale
fi
