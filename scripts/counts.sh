#!/bin/bash
# The speed counts of docs/performance.md: callgrind's host instructions for
# each benchmark recipe (exact and repeatable, unlike CPU time). Build first:
#   cargo build --release -p irqsim-core --example run -p irqsim-mips --example exec
# then `bash scripts/counts.sh` (about 15 minutes; needs valgrind).
set -e
cd "$(dirname "$0")/.."
R=$PWD/target/release/examples/run; E=$PWD/target/release/examples/exec; S=python/irqsim/scenarios
cg() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | grep refs | awk '{print $NF}'; }
echo "bench $(cg $R $S/bench/rx-overload.toml run.duration_ms=9200)"
for n in 1 64; do echo "msix$n $(cg $R $S/bench/msix-scaling.toml cpu.threads=$n intc.vectors=$n workload.rate_per_s=$((n*20000)) run.duration_ms=$(python3 -c "print(6400/$n)"))"; done
echo "row1440 $(cg $R $S/livelock/e1000-router.toml workload.packet_bytes=1440 workload.rate_per_s=85193 run.duration_ms=1000)"
echo "router $(cg $R $S/livelock/e1000-router.toml run.duration_ms=100)"
# RSS at a fixed rate per queue (150,691 and 2,481,793 events: per event, divide).
echo "rss1 $(cg $R $S/livelock/rss.toml rss.queues=1 workload.rate_per_s=150000 run.duration_ms=200)"
echo "rss16 $(cg $R $S/livelock/rss.toml rss.queues=16 workload.rate_per_s=2400000 run.duration_ms=200)"
echo "long $(cg $E python/irqsim/programs/bench/long.elf)"
echo "twothreads $(cg $E python/irqsim/programs/bench/kernels.elf core.threads=2 run.max_cycles=10000000)"
for n in 1 2 4 6; do echo "nic$n $(cg $R $S/nic-firmware/duplex-64.toml nic_firmware.cores=$n)"; done
(cd $S/smt-hot-thread && echo "netperf-hot $(cg $R netperf-hot.toml run.duration_ms=5 workload.rate_per_s=1200000 nic.link_mbps=100000)")
echo "kernels $(cg $E python/irqsim/programs/bench/kernels.elf)"
echo "kernels-caches $(cg $E python/irqsim/programs/bench/kernels.elf memory.model=caches)"
