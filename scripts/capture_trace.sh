#!/usr/bin/env bash
# Capture a real tcpdump + strace trace pair of a UDP media stream over loopback, the way
# the mt-interrupts study (shared/seeds/mt-interrupts-communication-processor.txt, §5.1)
# traced a RealPlayer stream: packets with tcpdump, the player's system calls with strace.
#
# Usage: scripts/capture_trace.sh [OUT_DIR]        (default OUT_DIR: traces)
# Environment: NAME (default loopback-stream), DURATION_S (1.5), RATE_MBPS (8.6),
#              ACK_EVERY (10), SEED (1), PYTHON (the real interpreter, not a shim).
# Writes OUT_DIR/NAME.pcap and OUT_DIR/NAME.strace. Needs root (or CAP_NET_RAW for
# tcpdump and ptrace rights for strace), tcpdump and strace
# (`apt-get install -y tcpdump strace`).
#
# The server (scripts/stream_udp.py server) binds 127.0.0.2:5004; the client binds
# 127.0.0.1, sends PLAY, receives the stream and acknowledges every ACK_EVERY datagrams.
# tcpdump keeps 128 bytes of each frame (headers only; the record's orig_len keeps the real
# size). Only the client runs under strace. Read the pair with host address 127.0.0.1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out_dir=${1:-traces}
name=${NAME:-loopback-stream}
duration_s=${DURATION_S:-1.5}
rate_mbps=${RATE_MBPS:-8.6}
ack_every=${ACK_EVERY:-10}
seed=${SEED:-1}
server_addr=127.0.0.2
server_port=5004
client_addr=127.0.0.1

for tool in tcpdump strace; do
    command -v "$tool" >/dev/null || { echo "capture_trace: $tool not found (apt-get install -y $tool)" >&2; exit 1; }
done
# Resolve the real interpreter so that strace does not trace a pyenv/asdf shim script.
python=${PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}

mkdir -p "$out_dir"
pcap="$out_dir/$name.pcap"
strace_log="$out_dir/$name.strace"
work=$(mktemp -d)
tcpdump_pid=""
server_pid=""

cleanup() {
    # Stop only the processes this script started.
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then kill "$server_pid" || true; fi
    if [[ -n "$tcpdump_pid" ]] && kill -0 "$tcpdump_pid" 2>/dev/null; then kill -INT "$tcpdump_pid" || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

wait_for() { # wait_for SECONDS COMMAND...: poll until COMMAND succeeds
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do
        if ((SECONDS >= deadline)); then return 1; fi
        sleep 0.05
    done
}

# 1. Packet capture: headers only (-s 128), no name lookups, each packet handed over and
#    written at once (--immediate-mode -U; otherwise packets still in the kernel's
#    TPACKET_V3 ring block when tcpdump is stopped are lost).
tcpdump -i lo -s 128 -n --immediate-mode -U -Z root -w "$pcap" "udp and host $server_addr" 2>"$work/tcpdump.log" &
tcpdump_pid=$!
wait_for 10 grep -q "listening on" "$work/tcpdump.log" || { cat "$work/tcpdump.log" >&2; exit 1; }

# 2. Stream server, not traced.
"$python" -I "$here/stream_udp.py" server --bind "$server_addr:$server_port" \
    --rate-mbps "$rate_mbps" --duration-s "$duration_s" --seed "$seed" \
    --ready-file "$work/server.ready" 2>"$work/server.log" &
server_pid=$!
wait_for 10 test -s "$work/server.ready" || { cat "$work/server.log" >&2; exit 1; }

# 3. Client under strace: every thread (-f), epoch µs timestamps (-ttt), durations (-T),
#    fds annotated with socket addresses (-yy), network calls plus read/write.
strace -f -ttt -T -yy -e trace=network,read,write -o "$strace_log" \
    "$python" -I -S "$here/stream_udp.py" client --bind "$client_addr:0" \
    --server "$server_addr:$server_port" --ack-every "$ack_every" 2>"$work/client.log"

wait "$server_pid"
server_pid=""
sleep 1.5 # longer than libpcap's 1 s ring-block timeout, in case immediate mode is absent
kill -INT "$tcpdump_pid"
wait "$tcpdump_pid" || true
tcpdump_pid=""

echo "server: $(cat "$work/server.log")"
echo "client: $(cat "$work/client.log")"
echo "tcpdump: $(grep -E 'captured|received|dropped' "$work/tcpdump.log" | tr '\n' ' ')"
ls -l "$pcap" "$strace_log"

# Every datagram must be in the capture: PLAY + stream + ACKs + 3 END.
expected=$("$python" -c '
import json, sys
server = json.loads(open(sys.argv[1]).read().splitlines()[-1])
client = json.loads(open(sys.argv[2]).read().splitlines()[-1])
print(1 + server["datagrams"] + client["acks_sent"] + 3)' "$work/server.log" "$work/client.log")
captured=$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured.*/\1/p' "$work/tcpdump.log")
if [[ "$captured" != "$expected" ]]; then
    echo "capture_trace: tcpdump captured $captured packets, expected $expected" >&2
    exit 1
fi
