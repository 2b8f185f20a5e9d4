#!/usr/bin/env bash
# Fuzzes targets on a shared machine (docs/reliability.md, "Fuzzing"): a chunk of CHUNK_SECONDS
# (default 60) of each target in turn, under `nice -n 19` so that any other work takes the CPU
# first; a chunk starts only while the load average is at most LOAD_MAX (default: no limit, as
# nice 19 already yields) and before STOP_AT (a time `date -d` reads, e.g. 11:15; default none).
# A target is done after TARGET_EXECS inputs (default 10,000,000; `TARGET=N` sets its own),
# CPU_BUDGET CPU-seconds (default: no limit) or MAX_CHUNKS chunks. TIMEOUT (default 10) is libFuzzer's
# -timeout in wall seconds: raise it on a loaded machine, where nice 19 may get a few per cent of a core.
# The corpus carries over from chunk to chunk (fuzz/corpus/TARGET). A target stops at its first
# crash (the others go on) and the script then exits with status 1.
#   cd fuzz && cargo +nightly fuzz build -O -a -s none && cd .. && scripts/fuzz_chunks.sh LOGDIR pcap strace=8200000 ...
# Prints a line per chunk (inputs, CPU-seconds, coverage, peak RSS) and a total per target.
set -uo pipefail
logs=$(realpath "$1"); shift
mkdir -p "$logs"
cd "$(dirname "$0")/../fuzz"
bin=${FUZZ_BIN:-target/x86_64-unknown-linux-gnu/release}
stop=$([ -n "${STOP_AT:-}" ] && date -d "$STOP_AT" +%s || echo 9999999999)
declare -A goal execs cpu chunks
targets=() failed=0
for arg in "$@"; do
    t=${arg%%=*}
    targets+=("$t")
    goal[$t]=$([ "$arg" = "$t" ] && echo "${TARGET_EXECS:-10000000}" || echo "${arg#*=}")
    execs[$t]=0 cpu[$t]=0 chunks[$t]=0
    mkdir -p corpus/$t regressions/$t artifacts/$t
done
unfinished() {
    local t=$1
    [ ${execs[$t]} -lt ${goal[$t]} ] && [ ${chunks[$t]} -lt ${MAX_CHUNKS:-1000000} ] &&
        [ "$(echo "${cpu[$t]} < ${CPU_BUDGET:-999999999}" | bc)" = 1 ]
}
while :; do
    left=0
    for t in "${targets[@]}"; do
        unfinished "$t" || continue
        left=1
        now=$(date +%s)
        [ "$now" -lt "$stop" ] || break 2
        load=$(cut -d' ' -f1 /proc/loadavg)
        while [ "$(echo "$load > ${LOAD_MAX:-999999999}" | bc)" = 1 ]; do sleep 30; load=$(cut -d' ' -f1 /proc/loadavg); done
        seconds=$(( stop - now < ${CHUNK_SECONDS:-60} ? stop - now : ${CHUNK_SECONDS:-60} ))
        dict=$t
        case $t in short_run) dict=scenario ;; trace_run) dict=pcap ;; program) dict=elf ;; esac
        n=$((chunks[$t] + 1)) chunks[$t]=$((chunks[$t] + 1))
        log=$logs/$t-$n.log
        /usr/bin/time -f "%U %S" -o "$log.cpu" nice -n 19 $bin/$t corpus/$t seeds/$t regressions/$t -dict=dict/$dict.dict \
            -max_total_time=$seconds -runs=$((goal[$t] - execs[$t])) -timeout=${TIMEOUT:-10} -rss_limit_mb=${RSS_MB:-1024} -print_final_stats=1 \
            -artifact_prefix=artifacts/$t/ >"$log" 2>&1
        rc=$?
        e=$(grep -o "number_of_executed_units: *[0-9]*" "$log" | grep -o "[0-9]*$")
        c=$(tail -1 "$log.cpu" | awk '{print $1 + $2}')  # after time's "exited with non-zero status" line
        execs[$t]=$((execs[$t] + ${e:-0})) cpu[$t]=$(echo "${cpu[$t]} + $c" | bc)
        echo "$(date -u +%H:%M) $t chunk $n: ${e:-0} inputs, $c CPU-s, load $load, $(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1), $(grep -o 'peak_rss_mb: *[0-9]*' "$log")"
        [ $rc -eq 0 ] || { echo "$t: exit $rc, see $log and fuzz/artifacts/$t/"; goal[$t]=0 failed=1; }
    done
    [ $left = 1 ] || break
done
for t in "${targets[@]}"; do
    echo "$t: ${execs[$t]} inputs in ${cpu[$t]} CPU-s, ${chunks[$t]} chunks"
done
exit $failed
