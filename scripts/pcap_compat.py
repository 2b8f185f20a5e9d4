"""How many public captures irqsim replays, and why it refuses the rest
(docs/reliability.md, "libpcap compatibility").

    python scripts/pcap_compat.py TCPDUMP_REPO [--list]

TCPDUMP_REPO is a clone of https://github.com/the-tcpdump-group/tcpdump (a
work tree, or a bare git directory: its HEAD's files are read with git). Its
`tests/` holds the captures of tcpdump's own test suite: 785 `.pcap` and 45
`.pcapng` files. Each is replayed as a `trace` workload for 0.01 ms at
200 MHz with the largest NIC buffer (this measures the reader, not the
NIC), the host being the IPv4 address that occurs most often in it, so the
trace workload's whole pass over the file runs (every record read and
checked). A capture replays when that run succeeds; otherwise the error,
with its numbers blanked (`N`; a link type keeps its own), is the reason.
A capture in which this script finds no IPv4 header is run with host
0.0.0.0, so its reason is the reader's error, or "no IPv4 packet".
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import irqsim

SCENARIO = '[run]\nduration_ms = 0.01\n[cpu]\nclock_mhz = 200.0\n[nic]\nrx_buffer_bytes = 1073741824\n[workload]\nkind = "trace"\npcap = "{pcap}"\nhost = "{host}"\n'


def captures(repo: Path, into: Path) -> list[Path]:
    """The repository's `tests/*.pcap` and `*.pcapng`, copied into ``into``."""
    if (repo / "tests").is_dir():
        return sorted(p for p in (repo / "tests").iterdir() if p.suffix in (".pcap", ".pcapng"))
    names = subprocess.run(["git", "--git-dir", str(repo), "ls-tree", "--name-only", "HEAD", "tests/"], capture_output=True, text=True, check=True).stdout.split()
    out = []
    for name in names:
        if Path(name).suffix in (".pcap", ".pcapng"):
            path = into / Path(name).name
            path.write_bytes(subprocess.run(["git", "--git-dir", str(repo), "show", f"HEAD:{name}"], capture_output=True, check=True).stdout)
            out.append(path)
    return sorted(out)


def _ipv4(link: int, frame: bytes) -> bytes | None:
    """The IPv4 header of a frame, if it holds one (a tolerant look, only to pick a host)."""
    if link == 1:
        off, kind = 12, None
        while off + 2 <= len(frame):
            kind = int.from_bytes(frame[off : off + 2], "big")
            if kind not in (0x8100, 0x88A8):
                break
            off += 4
        return frame[off + 2 :] if kind == 0x0800 else None
    starts = {0: 4, 108: 4, 12: 0, 14: 0, 101: 0, 228: 0, 113: 16, 276: 20}
    start = starts.get(link)
    if start is None:
        return None
    ip = frame[start:]
    return ip if ip[:1] and ip[0] >> 4 == 4 else None


def host(path: Path) -> str:
    """The IPv4 address seen most often (source or destination), or 0.0.0.0."""
    data = path.read_bytes()
    if len(data) < 24 or data[:4] not in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d"):
        return "0.0.0.0"
    end = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    link = struct.unpack(end + "I", data[20:24])[0] & 0xFFFF
    seen: Counter[bytes] = Counter()
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(end + "I", data[off + 8 : off + 12])[0]
        ip = _ipv4(link, data[off + 16 : off + 16 + incl])
        if ip is not None and len(ip) >= 20:
            seen.update([ip[12:16], ip[16:20]])
        off += 16 + incl
    return ".".join(map(str, seen.most_common(1)[0][0])) if seen else "0.0.0.0"


def reason(path: Path, error: Exception) -> str:
    """The error without the file's name, its numbers blanked but a link type's."""
    msg = str(error).replace(str(path), "").lstrip(": ")
    link = re.match(r"link type (\d+)( \([^)]*\))?", msg)
    if link:
        return link.group(0)
    msg = re.sub(r"\(read: .*", "", msg)
    return re.sub(r"\d+", "N", msg).strip()


def main(repo: Path, listing: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        outcomes: Counter[str] = Counter()
        files = captures(repo, tmp)
        for pcap in files:
            scenario = tmp / f"{pcap.name}.toml"
            address = host(pcap)
            scenario.write_text(SCENARIO.format(pcap=pcap.resolve(), host=address))
            try:
                irqsim.run(scenario)
                outcome = "replays"
            except irqsim.IrqsimError as e:
                outcome = reason(pcap.resolve(), e)
                if address == "0.0.0.0" and "workload.host" in outcome:
                    outcome = "no IPv4 packet (IPv6, ARP or other traffic only)"
            outcomes[outcome] += 1
            if listing:
                print(f"{pcap.name}\t{outcome}")
        kinds = Counter(p.suffix for p in files)
        print(f"{len(files)} captures ({kinds['.pcap']} .pcap, {kinds['.pcapng']} .pcapng)")
        for outcome, n in outcomes.most_common():
            print(f"{n:5d}  {outcome}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), "--list" in sys.argv[2:])
