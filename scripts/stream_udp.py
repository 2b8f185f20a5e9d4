#!/usr/bin/env python3
"""A small UDP media-stream workload for capturing real traces (see scripts/capture_trace.sh).

Two roles, standard library only:

``server``
    Binds ADDR:PORT, waits for a ``PLAY`` request, then streams numbered datagrams of
    random payload size (uniform in [min, max] bytes) to the requester at a constant wire
    bit rate (Ethernet + IPv4 + UDP headers counted), like a video server. It drains the
    client's acknowledgements as they come, and finishes with three small ``END``
    datagrams.

``client``
    Binds ADDR:0, sends ``PLAY`` to the server, receives the stream and sends a 16-byte
    ``ACK`` (highest sequence number seen, packets received) every N datagrams, like a
    player's receiver reports. It stops at ``END`` or after a silence of a few seconds.

Both print a one-line JSON summary on stderr.
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import struct
import sys
import time

# Datagram header: sequence number, server send time (ns, CLOCK_REALTIME).
HEADER = struct.Struct("!IQ")
# Bytes a datagram occupies on an Ethernet wire besides its UDP payload.
WIRE_OVERHEAD_BYTES = 14 + 20 + 8
END = b"END"


def parse_addr(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host, int(port)


def serve(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    sock.bind(parse_addr(args.bind))
    if args.ready_file:
        with open(args.ready_file, "w") as f:
            f.write("ready\n")
    sock.settimeout(args.wait_s)
    try:
        request, client = sock.recvfrom(2048)
    except socket.timeout:
        print(json.dumps({"role": "server", "error": "no PLAY request"}), file=sys.stderr)
        return 1
    if not request.startswith(b"PLAY"):
        print(json.dumps({"role": "server", "error": f"unexpected request {request[:16]!r}"}), file=sys.stderr)
        return 1

    sock.setblocking(False)
    bits_per_s = args.rate_mbps * 1e6
    filler = bytes(rng.getrandbits(8) for _ in range(args.max_payload))
    sent = sent_bytes = acks = 0
    start = time.perf_counter()
    next_send = start
    end = start + args.duration_s
    while next_send < end:
        delay = next_send - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        size = rng.randint(args.min_payload, args.max_payload)
        payload = HEADER.pack(sent, time.time_ns()) + filler[: size - HEADER.size]
        sock.sendto(payload, client)
        sent += 1
        sent_bytes += size
        next_send += (size + WIRE_OVERHEAD_BYTES) * 8 / bits_per_s
        while True:  # drain acknowledgements without blocking
            try:
                sock.recvfrom(2048)
                acks += 1
            except BlockingIOError:
                break
    elapsed = time.perf_counter() - start
    for _ in range(3):
        sock.sendto(END, client)
        time.sleep(0.005)
    wire_mbps = (sent_bytes + sent * WIRE_OVERHEAD_BYTES) * 8 / elapsed / 1e6
    summary = {
        "role": "server",
        "datagrams": sent,
        "payload_bytes": sent_bytes,
        "acks": acks,
        "seconds": round(elapsed, 4),
        "wire_mbps": round(wire_mbps, 3),
    }
    print(json.dumps(summary), file=sys.stderr)
    return 0


def play(args: argparse.Namespace) -> int:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    sock.bind(parse_addr(args.bind))
    server = parse_addr(args.server)
    sock.sendto(b"PLAY", server)
    sock.settimeout(args.idle_s)
    received = received_bytes = acks = 0
    highest = -1
    try:
        while True:
            data, _ = sock.recvfrom(2048)
            if data.startswith(END):
                break
            if len(data) < HEADER.size:
                continue
            seq, _sent_ns = HEADER.unpack_from(data)
            highest = max(highest, seq)
            received += 1
            received_bytes += len(data)
            if received % args.ack_every == 0:
                sock.sendto(struct.pack("!4sIII", b"ACK ", highest, received, 0), server)
                acks += 1
    except socket.timeout:
        pass
    summary = {
        "role": "client",
        "datagrams": received,
        "payload_bytes": received_bytes,
        "lost": highest + 1 - received,
        "acks_sent": acks,
    }
    print(json.dumps(summary), file=sys.stderr)
    return 0 if received else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    roles = parser.add_subparsers(dest="role", required=True)
    s = roles.add_parser("server", help="stream datagrams to whoever sends PLAY")
    s.add_argument("--bind", default="127.0.0.2:5004")
    s.add_argument("--rate-mbps", type=float, default=8.6, help="wire bit rate (default 8.6, as in the study)")
    s.add_argument("--duration-s", type=float, default=1.5)
    s.add_argument("--min-payload", type=int, default=500)
    s.add_argument("--max-payload", type=int, default=1400)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--wait-s", type=float, default=20.0, help="how long to wait for PLAY")
    s.add_argument("--ready-file", help="written once the socket is bound")
    c = roles.add_parser("client", help="request and receive a stream, acknowledging every N datagrams")
    c.add_argument("--bind", default="127.0.0.1:0")
    c.add_argument("--server", default="127.0.0.2:5004")
    c.add_argument("--ack-every", type=int, default=10)
    c.add_argument("--idle-s", type=float, default=3.0, help="give up after this long without data")
    args = parser.parse_args(argv)
    if args.role == "server":
        if not HEADER.size <= args.min_payload <= args.max_payload <= 65507:
            parser.error("need 12 <= --min-payload <= --max-payload <= 65507")
        return serve(args)
    if args.ack_every < 1:
        parser.error("--ack-every must be at least 1")
    return play(args)


if __name__ == "__main__":
    sys.exit(main())
