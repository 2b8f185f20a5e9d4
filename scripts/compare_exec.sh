#!/bin/bash
# Runs every bundled standalone program under SMT and memory settings with two
# builds of the `exec` example and reports any difference in output, exit
# status, instructions, cycles or cache counts (wall time and speed dropped).
#
#   scripts/compare_exec.sh OLD_EXEC NEW_EXEC      # from the repository root
#
# docs/performance/iss.md, issue 24's eighth session (the four one-thread settings: twelfth).
set -u
A=$1 B=$2 P=python/irqsim/programs
settings=(
  ""
  "memory.model=caches"
  "memory.model=caches l1i.hit_cycles=1"
  "memory.model=caches l1d.size_bytes=1024 l1d.ways=4 l2.size_bytes=16384 l1i.size_bytes=1024"
  "core.threads=2"
  "core.threads=3"
  "core.threads=2 core.policy=icount"
  "core.threads=3 core.interrupt_thread=2"
  "core.threads=2 memory.model=caches"
  "core.threads=2 memory.model=caches l1i.hit_cycles=1"
  "core.cores=2 core.threads=2"
  "core.threads=3 core.policy=icount memory.model=caches"
  "core.threads=2 memory.model=caches l1d.size_bytes=2048 l1d.ways=1"
  "core.threads=2 pipeline.load_use_cycles=3 pipeline.branch_taken_cycles=1"
)
n=0 bad=0
for prog in $P/*.elf $P/system/*.elf $P/hostile/*.elf $P/bench/kernels.elf; do
  max=30000000
  case $prog in *spin* | *flood*) max=3000000 ;; esac
  for s in "${settings[@]}"; do
    n=$((n + 1))
    # shellcheck disable=SC2086 # each setting is several words
    a=$(timeout 300 "$A" "$prog" $s run.max_cycles=$max 2>&1 | sed -E 's/\| [0-9.]+ s wall.*//')
    # shellcheck disable=SC2086
    b=$(timeout 300 "$B" "$prog" $s run.max_cycles=$max 2>&1 | sed -E 's/\| [0-9.]+ s wall.*//')
    if [ "$a" != "$b" ]; then
      bad=$((bad + 1))
      echo "differs: $prog $s"
    fi
  done
done
echo "$n runs, $bad differ"
