#!/usr/bin/env bash
# Fuzzes targets one after another on a shared machine (docs/reliability.md, "Fuzzing"):
# each in chunks of CHUNK_SECONDS (default 60) under `nice -n 19`, a chunk started only while
# the load average is at most LOAD_MAX (default 6), until the target has run TARGET_EXECS
# inputs (default 10,000,000), CPU_BUDGET CPU-seconds (default 600) or MAX_CHUNKS chunks.
# The corpus carries over from chunk to chunk (fuzz/corpus/TARGET). Stops at the first crash.
#   cargo +nightly fuzz build && scripts/fuzz_chunks.sh LOGDIR pcap strace ...
# Prints a line per chunk (inputs, CPU-seconds, coverage, peak RSS) and a total per target.
set -uo pipefail
logs=$(realpath "$1"); shift
mkdir -p "$logs"
cd "$(dirname "$0")/../fuzz"
bin=target/x86_64-unknown-linux-gnu/release
for t in "$@"; do
    dict=$t
    case $t in short_run) dict=scenario ;; trace_run) dict=pcap ;; program) dict=elf ;; esac
    mkdir -p corpus/$t regressions/$t artifacts/$t
    execs=0 cpu=0 n=0
    while [ $execs -lt ${TARGET_EXECS:-10000000} ] && [ "$(echo "$cpu < ${CPU_BUDGET:-600}" | bc)" = 1 ] && [ $n -lt ${MAX_CHUNKS:-1000} ]; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        if [ "$(echo "$load > ${LOAD_MAX:-6}" | bc)" = 1 ]; then sleep 30; continue; fi
        n=$((n + 1))
        log=$logs/$t-$n.log
        /usr/bin/time -f "%U %S" -o "$log.cpu" nice -n 19 $bin/$t corpus/$t seeds/$t regressions/$t -dict=dict/$dict.dict \
            -max_total_time=${CHUNK_SECONDS:-60} -timeout=10 -rss_limit_mb=${RSS_MB:-1024} -print_final_stats=1 \
            -artifact_prefix=artifacts/$t/ >"$log" 2>&1
        rc=$?
        e=$(grep -o "number_of_executed_units: *[0-9]*" "$log" | grep -o "[0-9]*$")
        c=$(awk '{print $1 + $2}' "$log.cpu")
        execs=$((execs + ${e:-0})) cpu=$(echo "$cpu + $c" | bc)
        echo "$t chunk $n: ${e:-0} inputs, $c CPU-s, load $load, $(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1), $(grep -o 'peak_rss_mb: *[0-9]*' "$log")"
        [ $rc -eq 0 ] || { echo "$t: exit $rc, see $log and fuzz/artifacts/$t/"; exit 1; }
    done
    echo "$t: $execs inputs in $cpu CPU-s, $n chunks"
done
