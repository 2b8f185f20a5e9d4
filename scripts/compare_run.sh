#!/bin/bash
# Runs every bundled scenario at 100 ms, the speed recipes of counts.sh and
# the firmware NIC's duplex runs at 1, 2, 4 and 6 cores with two builds of the
# `run` example and reports any scenario whose JSON report differs (the wall
# time dropped): the gate a change that should keep results passes.
#
#   scripts/compare_run.sh OLD_RUN NEW_RUN      # from the repository root
set -u
A=$(realpath "$1") B=$(realpath "$2") S=python/irqsim/scenarios
runs=()
for f in $(find $S -name '*.toml' | sort); do runs+=("$f run.duration_ms=100"); done
runs+=(
  "$S/bench/rx-overload.toml run.duration_ms=500"
  "$S/bench/msix-scaling.toml cpu.threads=1 intc.vectors=1 workload.rate_per_s=20000 run.duration_ms=200"
  "$S/bench/msix-scaling.toml cpu.threads=8 intc.vectors=8 workload.rate_per_s=160000 run.duration_ms=100"
  "$S/bench/msix-scaling.toml cpu.threads=64 intc.vectors=64 workload.rate_per_s=1280000 run.duration_ms=20"
  "$S/livelock/e1000-router.toml workload.packet_bytes=1440 workload.rate_per_s=85193 run.duration_ms=200"
  "$S/livelock/e1000-router.toml run.duration_ms=100"
  "$S/livelock/rss.toml rss.queues=1 workload.rate_per_s=150000 run.duration_ms=100"
  "$S/livelock/rss.toml rss.queues=16 workload.rate_per_s=2400000 run.duration_ms=50"
)
for n in 1 2 4 6; do
  for f in duplex-64 duplex-1518; do runs+=("$S/nic-firmware/$f.toml nic_firmware.cores=$n"); done
done
same=0 bad=0
strip() { sed 's/"wall_seconds": *[0-9.e+-]*//g'; }
for r in "${runs[@]}"; do
  # shellcheck disable=SC2086
  a=$(cd "$(dirname ${r%% *})" && "$A" $(basename ${r%% *}) ${r#* } 2>&1 | strip; echo "rc=${PIPESTATUS[0]}")
  # shellcheck disable=SC2086
  b=$(cd "$(dirname ${r%% *})" && "$B" $(basename ${r%% *}) ${r#* } 2>&1 | strip; echo "rc=${PIPESTATUS[0]}")
  if [ "$a" == "$b" ]; then same=$((same + 1)); else bad=$((bad + 1)); echo "differ: $r"; fi
done
echo "same $same differ $bad"
