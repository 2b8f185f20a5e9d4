"""A battery of bad inputs: pcap, strace, scenario TOML, --set, sweep specs
and API argument types. Every command-line case must exit 2 with exactly one line on
stderr that names the file and the line, key or record, with no traceback
and no control character echoed raw. Bad pcaps and straces are built here.

Cases are (id, build, args, names) where ``build(tmp)`` writes the inputs
and returns the words the CLI is given, and ``names`` is a regex the one
line must match.
"""

from __future__ import annotations

import json
import os
import re
import struct
from collections.abc import Callable
from pathlib import Path

import dpkt
import pytest

import irqsim
from irqsim.cli import main

GOOD_STRACE = [
    '100  1700000000.000100 read(3, "abc", 3) = 3 <0.000010>',
    '100  1700000000.000200 write(4, "abc", 3) = 3 <0.000010>',
]


def frame(i: int) -> bytes:
    udp = dpkt.udp.UDP(sport=5000, dport=6000, data=b"x" * 200)
    ip = dpkt.ip.IP(src=bytes([10, 0, 0, 2]), dst=bytes([10, 0, 0, 1]), p=dpkt.ip.IP_PROTO_UDP, data=udp)
    return bytes(dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6, data=ip))


def good_pcap(n: int = 5) -> bytes:
    import io

    buf = io.BytesIO()
    w = dpkt.pcap.Writer(buf)
    for i in range(n):
        w.writepkt(frame(i), ts=1_700_000_000 + i * 0.001)
    return buf.getvalue()


def header(magic: int = 0xA1B2C3D4, snaplen: int = 65535, link: int = 1, endian: str = "<") -> bytes:
    return struct.pack(endian + "IHHiIII", magic, 2, 4, 0, 0, snaplen, link)


def record(ts_frac: int = 0, incl: int = 100, orig: int | None = None, body: bytes | None = None, endian: str = "<") -> bytes:
    body = frame(0)[:incl] if body is None else body
    return struct.pack(endian + "IIII", 1_700_000_000, ts_frac, incl, incl if orig is None else orig) + body


def scenario(tmp: Path, pcap: str = "ok.pcap", strace: str | None = None) -> Path:
    if not (tmp / "ok.pcap").exists():
        (tmp / "ok.pcap").write_bytes(good_pcap())
    extra = f"strace = {json.dumps(strace)}\n" if strace else ""
    s = tmp / "s.toml"
    s.write_text(
        "[cpu]\nclock_mhz = 200.0\n[run]\nduration_ms = 10.0\n[stack]\nenabled = true\n"
        f'[workload]\nkind = "trace"\npcap = {json.dumps(pcap)}\n{extra}host = "10.0.0.1"\n'
    )
    return s


def pcap_case(name: str, data: bytes) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        (tmp / name).write_bytes(data)
        return ["run", str(scenario(tmp, name))]

    return build


def strace_case(lines: list[str] | bytes, name: str = "bad.strace") -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        data = lines if isinstance(lines, bytes) else ("\n".join(lines) + "\n").encode()
        (tmp / name).write_bytes(data)
        return ["run", str(scenario(tmp, strace=name))]

    return build


def toml_case(text: str | bytes, name: str = "s.toml") -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        (tmp / name).write_bytes(text if isinstance(text, bytes) else text.encode())
        return ["run", str(tmp / name)]

    return build


def set_case(*sets: str, command: str = "run", scenario: str = "mt-interrupts/driver-rx-single") -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        args = [command, scenario]
        for s in sets:
            args += ["--set", s]
        return args

    return build


FLOOD = '[workload]\nkind = "flood"\ndirection = "rx"\npacket_bytes = 100\n'
P = r"\.pcap: "
REC = r"\.pcap: record \d+ at byte \d+: "
HDR = header()

PCAP = [
    ("pcap-empty", pcap_case("e.pcap", b""), r"e\.pcap: empty file"),
    ("pcap-short-header", pcap_case("h.pcap", HDR[:10]), r"h\.pcap: truncated pcap global header \(got 10 of 24"),
    ("pcap-bad-magic", pcap_case("m.pcap", struct.pack("<I", 0xDEADBEEF) + b"\0" * 40), r"m\.pcap: not a classic pcap file: magic bytes"),
    ("pcap-pcapng", pcap_case("ng.pcap", struct.pack("<I", 0x0A0D0D0A) + b"\0" * 40), r"ng\.pcap: not a classic pcap file"),
    ("pcap-text-file", pcap_case("t.pcap", b"hello, this is text\n" * 3), r"t\.pcap: not a classic pcap file"),
    ("pcap-link-type", pcap_case("l.pcap", header(link=147) + record()), r"l\.pcap: link type 147 \(user-defined\) is not an Ethernet or IP capture"),
    ("pcap-radiotap", pcap_case("r.pcap", header(link=127) + record()), r"r\.pcap: link type 127 \(802\.11 radiotap\) is not an Ethernet or IP capture"),
    ("pcap-cut-record-header", pcap_case("c.pcap", HDR + record()[:8]), REC.replace(r"\d+ at byte \d+", "1 at byte 24") + "truncated record header"),
    ("pcap-cut-record-body", pcap_case("b.pcap", HDR + record()[:60]), REC + "truncated record body"),
    ("pcap-cut-after-good", pcap_case("g.pcap", good_pcap(20)[:-50]), r"g\.pcap: record 20 at byte \d+: truncated"),
    ("pcap-over-libpcap-max", pcap_case("s.pcap", header(snaplen=64) + record(incl=262_145, body=bytes(262_145))), REC + "corrupt record: captured length 262145 exceeds libpcap's limit 262144"),
    ("pcap-back-in-time", pcap_case("t.pcap", HDR + record(ts_frac=500_000) + record(ts_frac=0)), r"t\.pcap: record 2: its timestamp is 500000 µs before record 1's"),
    # A fraction of a second or more counts as it stands (libpcap hands it on): here it puts record 1 after record 2.
    ("pcap-usec-fraction-past-a-second", pcap_case("u.pcap", HDR + record(ts_frac=1_500_000) + record()), r"u\.pcap: record 2: its timestamp is 1500000 µs before record 1's"),
    ("pcap-nsec-fraction-past-a-second", pcap_case("n.pcap", header(magic=0xA1B23C4D) + record(ts_frac=2_000_000_000) + record()), r"n\.pcap: record 2: its timestamp is 2000000 µs before record 1's"),
    ("pcap-big-endian-cut", pcap_case("be.pcap", header(endian=">") + record(endian=">")[:70]), REC + "truncated record body"),
    ("pcap-huge-record", pcap_case("x.pcap", header(snaplen=0) + record(incl=0xFFFFFFF0, body=b"")), REC + "corrupt record"),
    ("pcap-second-record-bad", pcap_case("2.pcap", HDR + record() + record(incl=0, body=b"")), r"2\.pcap: record 2 at byte 140: corrupt record: frame length 0"),
    ("pcap-missing", lambda tmp: ["run", str(scenario(tmp, "nope.pcap"))], r"nope\.pcap"),
    ("pcap-is-a-directory", lambda tmp: [(tmp / "d.pcap").mkdir(), "run", str(scenario(tmp, "d.pcap"))][1:], r"d\.pcap"),
    ("pcap-markup-and-escape-in-name", pcap_case("x[red]y[bold]\x1b[31mz.pcap", b""), r"x\[red\]y\[bold\]\\x1b\[31mz\.pcap: empty file"),
]

STRACE = [
    ("strace-garbage-line", strace_case([*GOOD_STRACE, "this is not strace output"]), r"bad\.strace:3: "),
    ("strace-no-timestamp", strace_case(['100  read(3, "abc", 3) = 3']), r"bad\.strace:1: "),
    ("strace-bad-pid", strace_case(['abc  1700000000.000100 read(3, "abc", 3) = 3 <0.000010>']), r"bad\.strace:1: "),
    ("strace-mixed-clock", strace_case([GOOD_STRACE[0], '100  12:00:00.000200 read(3, "abc", 3) = 3 <0.000010>']), r"bad\.strace:2: timestamp"),
    ("strace-resumed-alone", strace_case([GOOD_STRACE[0], '100  1700000000.000300 <... read resumed>"abc", 3) = 3 <0.000010>']), r"bad\.strace:2: pid 100: "),
    ("strace-unfinished-twice", strace_case(["100  1700000000.000100 read(3, <unfinished ...>", "100  1700000000.000200 write(4, <unfinished ...>"]), r"bad\.strace:2: pid 100: "),
    ("strace-resumed-wrong-name", strace_case(["100  1700000000.000100 read(3, <unfinished ...>", '100  1700000000.000200 <... write resumed>"a", 1) = 1 <0.000001>']), r"bad\.strace:2: pid 100: "),
    ("strace-bad-result", strace_case(['100  1700000000.000100 read(3, "abc", 3) = zzz <0.000010>']), r"bad\.strace:1: "),
    ("strace-no-call", strace_case(["100  1700000000.000100 nonsense without parenthesis"]), r"bad\.strace:1: "),
    ("strace-bad-name", strace_case(['100  1700000000.000100 re-ad(3, "abc", 3) = 3 <0.000010>']), r"bad\.strace:1: "),
    ("strace-bad-timestamp", strace_case(['100  17000x0000.000100 read(3, "abc", 3) = 3 <0.000010>']), r"bad\.strace:1: "),
    ("strace-escape-sequence", strace_case([*GOOD_STRACE, "\x1b[2J\x1b[31mred garbage\x07"]), r"bad\.strace:3: .*\\x1b\[2J"),
    ("strace-markup", strace_case([*GOOD_STRACE, "[/] [red]not strace[/red]"]), r"bad\.strace:3: .*`\[/\]`"),
    ("strace-binary", strace_case(b"\xff\xfe\x00\x01garbage\x9b[31m\n"), r"bad\.strace:1"),
    ("strace-missing", lambda tmp: ["run", str(scenario(tmp, strace="nope.strace"))], r"nope\.strace"),
]

EVENTS_FILE = '[cpu]\nclock_mhz = 200.0\n[workload]\nkind = "script"\nevents_file = "ev.csv"\n'


def events_case(data: str | bytes) -> Callable[[Path], list[str]]:
    """A script scenario whose events file ``ev.csv`` holds ``data``."""

    def build(tmp: Path) -> list[str]:
        (tmp / "ev.csv").write_bytes(data if isinstance(data, bytes) else data.encode())
        (tmp / "s.toml").write_text(EVENTS_FILE)
        return ["run", str(tmp / "s.toml")]

    return build


SCRIPT_EVENT = '[[workload.events]]\nat_cycle = 100\naction = "receive"\nbytes = 100\n'

TOML = [
    ("toml-script-too-large", toml_case('[workload]\nkind = "script"\n' + SCRIPT_EVENT * 80_000), r"s\.toml: \d+ bytes, more than a scenario may hold \(4194304\)"),
    ("script-events-file-out-of-order", events_case("10,receive,64\n5,send,64\n"), r"ev\.csv:2: `at_cycle`: 5 comes before the previous event's 10"),
    ("script-events-file-binary", events_case(b"\xff\x1b[31m,receive\n"), r"ev\.csv:1: .*valid UTF-8"),
    ("script-events-and-file", toml_case(EVENTS_FILE + SCRIPT_EVENT), r"s\.toml:5: `workload\.events_file`: give the events inline"),
    ("toml-syntax", toml_case("[cpu\nclock_mhz = 1\n"), r"s\.toml: line 1, column \d+: unclosed table"),
    ("toml-unknown-key", toml_case('[cpu]\nclock_mhz = 200.0\ncontext_polcy = "single"\n' + FLOOD), r"s\.toml:3: `cpu\.context_polcy`: unknown field"),
    ("toml-wrong-type", toml_case('[cpu]\nclock_mhz = "fast"\n' + FLOOD), r"s\.toml:2: `cpu\.clock_mhz`"),
    ("toml-zero-clock", toml_case("[cpu]\nclock_mhz = 0.0\n" + FLOOD), r"s\.toml:2: `cpu\.clock_mhz`: must be in \(0, 100_000\], got 0"),
    ("toml-negative-clock", toml_case("[cpu]\nclock_mhz = -1.0\n" + FLOOD), r"s\.toml:2: `cpu\.clock_mhz`"),
    ("toml-bad-enum", toml_case('[cpu]\nclock_mhz = 200.0\ncontext_policy = "quantum"\n' + FLOOD), r"s\.toml:3: `cpu\.context_policy`"),
    ("toml-duplicate-key", toml_case("[cpu]\nclock_mhz = 200.0\nclock_mhz = 100.0\n" + FLOOD), r"s\.toml: line 3, column \d+: duplicate key"),
    ("toml-unknown-section", toml_case("[bogus]\nx = 1\n" + FLOOD), r"s\.toml:1: `bogus`"),
    ("toml-unknown-workload", toml_case('[workload]\nkind = "teleport"\n'), r"s\.toml:2: `workload\.kind`: unknown variant `teleport`"),
    ("toml-packet-too-big", toml_case('[cpu]\nclock_mhz = 200.0\n[nic]\nrx_buffer_bytes = 1000\n[workload]\nkind = "flood"\ndirection = "rx"\npacket_bytes = 1500\n'), r"s\.toml(:\d+)?: `workload\.packet_bytes`.*never fit"),
    ("toml-markup-key", toml_case('[cpu]\n"[red]x" = 1\n' + FLOOD), r"s\.toml:2: `cpu\.\[red\]x`"),
    ("toml-escape-key", toml_case('[cpu]\n"\\u001b[31mx" = 1\n' + FLOOD), r"s\.toml(:\d+)?: `cpu\.\\x1b\[31mx`"),
    ("toml-escape-value", toml_case('[cpu]\ncontext_policy = "\\u001b[2J"\n' + FLOOD), r"s\.toml:2: `cpu\.context_policy`"),
    ("toml-not-utf8", toml_case(b"[cpu]\nclock_mhz = \xff\xfe\n"), r"s\.toml"),
    ("toml-missing-file", lambda tmp: ["run", str(tmp / "gone.toml")], r"gone\.toml"),
    ("toml-equals-dir-missing", lambda tmp: ["run", str(tmp / "packet_bytes=64" / "s.toml")], r"packet_bytes=64/s\.toml"),
    ("toml-validate-syntax", lambda tmp: [(tmp / "v.toml").write_text("x = = 1\n"), "validate", str(tmp / "v.toml")][1:], r"v\.toml: line 1, column \d+: [^\\]*$"),
]

SET = [
    ("set-no-equals", set_case("cpu.clock_mhz"), r"--set: `cpu\.clock_mhz`"),
    ("set-unknown-key", set_case("cpu.bogus=1"), r"--set: `cpu\.bogus`: unknown field"),
    ("set-bad-type", set_case("cpu.clock_mhz=fast"), r"--set: `cpu\.clock_mhz`"),
    ("set-empty-key", set_case("=5"), r"--set: "),
    ("set-zero-clock", set_case("cpu.clock_mhz=0"), r"--set: `cpu\.clock_mhz`: must be in \(0, 100_000\], got 0"),
    ("set-markup-value", set_case("cpu.context_policy=[/]"), r"--set: `cpu\.context_policy`"),
    ("set-markup-key", set_case("cpu.[red]x=1"), r"--set: `cpu\.\[red\]x`"),
    ("set-escape-value", set_case('cpu.context_policy="\x1b[2J"'), r"--set: `cpu\.context_policy`"),
    ("set-escape-key", set_case("cpu.\x1b[31mx=1"), r"--set: `cpu\.\\x1b\[31mx`"),
    ("set-negative-duration", set_case("run.duration_ms=-1"), r"--set: `run\.duration_ms`"),
    ("set-bad-kind", set_case("workload.kind=nope"), r"--set: `workload\.kind`: unknown variant `nope`"),
    ("set-table-as-value", set_case("cpu=5"), r"--set: `cpu`"),
    ("set-newline-value", set_case('cpu.context_policy="a\nb"'), r"--set: `cpu\.context_policy`"),
    ("set-on-validate", set_case("nic.bogus=1", command="validate"), r"--set: `nic\.bogus`"),
    ("set-on-timeline", set_case("cpu.threads=0", command="timeline"), r"--set: `cpu\.threads`"),
    (
        "set-source-on-rss-vector",
        set_case("run.duration_ms=5", 'sources.others=[{process="periodic", rate_per_s=1000.0, line=1}]', scenario="livelock/rss"),
        r"--set: `sources\.others\[0\]\.line`: MSI-X vector 1 is already taken.*16 RSS queues",
    ),
    ("set-cancelled-rx-usecs", set_case("coalesce.rx_usecs=50"), r"--set: `coalesce\.rx_usecs`: changes nothing while `coalesce\.rx_frames` is 1"),
    ("set-bus-link-with-rss", set_case("bus.link_mbps=8000", scenario="livelock/rss"), r"--set: `bus\.link_mbps`: the queues' DMA"),
]

def sweep_case(text: str | bytes) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        (tmp / "sweep.toml").write_bytes(text if isinstance(text, bytes) else text.encode())
        return ["sweep", str(tmp / "sweep.toml"), "-o", str(tmp / "out")]

    return build


SWEEP = [
    ("sweep-syntax", sweep_case("scenario = \n"), r"sweep\.toml: .*line 1"),
    ("sweep-not-utf8", sweep_case(b"scenario = \"\xff\"\n"), r"sweep\.toml: byte \d+: not UTF-8"),
    ("sweep-unknown-key", sweep_case('scenario = "bench/rx-overload"\ngrids = 1\n'), r"sweep\.toml: `grids`: unknown key"),
    ("sweep-no-scenario", sweep_case("seeds = 2\n"), r"sweep\.toml: `scenario`"),
    ("sweep-bad-scenario", sweep_case('scenario = "no/such"\n'), r"no bundled scenario `no/such`"),
    ("sweep-misspelt-grid-key", sweep_case('scenario = "bench/rx-overload"\n[grid]\n"cpu.clok_mhz" = [1.0, 2.0]\n'), r"sweep\.toml: `cpu\.clok_mhz`"),
    ("sweep-zip-lengths", sweep_case('scenario = "bench/rx-overload"\n[zip]\n"a.b" = [1]\n"c.d" = [1, 2]\n'), r"sweep\.toml: `zip`"),
    ("sweep-repeated-seed", sweep_case('scenario = "bench/rx-overload"\nseeds = [1, 2, 1]\n'), r"sweep\.toml: `seeds`: seed 1 is listed 2 times"),
    ("sweep-seed-count-huge", sweep_case('scenario = "bench/rx-overload"\nseeds = 1000000000000\n'), r"sweep\.toml: `seeds`: 1,000,000,000,000 seeds are more runs than max_runs = 100,000"),
    ("sweep-grid-too-large", sweep_case('scenario = "bench/rx-overload"\n[grid]\n"cpu.clock_mhz" = [' + ", ".join(str(float(i)) for i in range(1, 1001)) + ']\n"workload.packet_bytes" = [' + ", ".join(str(i) for i in range(100, 1100)) + "]\n"), r"sweep\.toml: `max_runs`: 1,000 × 1,000 grid points × 1 seed = 1,000,000 runs"),
    ("sweep-max-runs-bad", sweep_case('scenario = "bench/rx-overload"\nmax_runs = 0\n'), r"sweep\.toml: `max_runs`: must be an integer from 1"),
    ("sweep-escape-in-key", sweep_case('scenario = "bench/rx-overload"\n[grid]\n"cpu.\\u001b[2Jx" = [1]\n'), r"sweep\.toml: `cpu\.\\x1b\[2Jx`"),
]

def elf_case(data: bytes | Callable[[], bytes], name: str = "e.elf") -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        (tmp / name).write_bytes(data() if callable(data) else data)
        return ["exec", str(tmp / name)]

    return build


def _arith(edit: Callable[[bytearray], None]) -> Callable[[], bytes]:
    """The shipped arith.elf with `edit` applied."""

    def build() -> bytes:
        from irqsim.exec import program_path

        b = bytearray(program_path("arith").read_bytes())
        edit(b)
        return bytes(b)

    return build


def _truncate(b: bytearray) -> None:
    del b[100:]


def _scramble(b: bytearray) -> None:
    b[16:52] = b"\xff" * 36


# Bad executables for `irqsim exec`: the same one-line, exit-2 contract.
ELF = [
    ("elf-empty", elf_case(b""), r"e\.elf"),
    ("elf-not-elf", elf_case(b"#!/bin/sh\necho hi\n"), r"e\.elf"),
    ("elf-bare-magic", elf_case(b"\x7fELF"), r"e\.elf"),
    ("elf-64-bit", elf_case(b"\x7fELF\x02\x02\x01" + bytes(57)), r"e\.elf"),
    ("elf-little-endian", elf_case(b"\x7fELF\x01\x01\x01" + bytes(45)), r"e\.elf"),
    ("elf-truncated-program", elf_case(_arith(_truncate)), r"e\.elf"),
    ("elf-scrambled-header", elf_case(_arith(_scramble)), r"e\.elf"),
    ("elf-escape-in-name", elf_case(b"nope", name="e\x1b[31m.elf"), r"e\\x1b\[31m\.elf"),
]

def fifo_case(name: str, args: Callable[[Path], list[str]]) -> Callable[[Path], list[str]]:
    """A FIFO where a file is read: opening it would block until a writer came, deaf to Ctrl-C."""

    def build(tmp: Path) -> list[str]:
        os.mkfifo(tmp / name)
        return args(tmp)

    return build


def events_case_fifo(tmp: Path) -> list[str]:
    (tmp / "s.toml").write_text(EVENTS_FILE)
    return ["run", str(tmp / "s.toml")]


FIFO = [
    ("fifo-scenario", fifo_case("f.toml", lambda tmp: ["run", str(tmp / "f.toml")]), r"f\.toml: not a regular file"),
    ("fifo-pcap", fifo_case("f.pcap", lambda tmp: ["run", str(scenario(tmp, "f.pcap"))]), r"f\.pcap: not a regular file \(a FIFO\)"),
    ("fifo-events-file", fifo_case("ev.csv", events_case_fifo), r"ev\.csv: not a regular file \(a FIFO\)"),
    ("fifo-strace", fifo_case("f.strace", lambda tmp: ["run", str(scenario(tmp, strace="f.strace"))]), r"f\.strace: not a regular file \(a FIFO\)"),
    ("fifo-elf", fifo_case("f.elf", lambda tmp: ["exec", str(tmp / "f.elf")]), r"f\.elf: not a regular file"),
    ("fifo-sweep-spec", fifo_case("f.toml", lambda tmp: ["sweep", str(tmp / "f.toml"), "-o", str(tmp / "out")]), r"f\.toml: not a regular file"),
]

CLI_CASES = PCAP + STRACE + TOML + SET + SWEEP + ELF + FIFO
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


@pytest.mark.parametrize(("build", "names"), [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES])
def test_cli_bad_input_is_one_clean_line(tmp_path, monkeypatch, capsys, build, names):
    monkeypatch.chdir(tmp_path)
    args = build(tmp_path)
    with pytest.raises(SystemExit) as e:
        main(args)
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert err.endswith("\n") and err.count("\n") == 1, repr(err)
    assert err.startswith("error: ") and "Traceback" not in err and "PanicException" not in err and "internal error" not in err
    assert not CONTROL.search(err[:-1]), repr(err)
    assert re.search(names, err), (names, err)


OK = "mt-interrupts/driver-rx-single"

API_CASES = [
    ("scenario-int", lambda: irqsim.run(123), "scenario"),
    ("scenario-none", lambda: irqsim.run(None), "scenario"),
    ("scenario-bytes", lambda: irqsim.run(b"[cpu]\nclock_mhz = 1.0\n"), "scenario"),
    ("scenario-list", lambda: irqsim.run([OK]), "scenario"),
    ("overrides-int", lambda: irqsim.run(OK, 5), "overrides"),
    ("overrides-str", lambda: irqsim.run(OK, "run.seed=2"), "overrides"),
    ("overrides-bytes", lambda: irqsim.run(OK, b"run.seed=2"), "overrides"),
    ("overrides-int-key", lambda: irqsim.run(OK, {1: 2}), "overrides"),
    ("overrides-int-item", lambda: irqsim.run(OK, [1]), "overrides"),
    ("overrides-object-value", lambda: irqsim.run(OK, {"run.seed": object()}), "overrides: `run.seed`"),
    ("overrides-none-value", lambda: irqsim.run(OK, {"run.seed": None}), "overrides: `run.seed`"),
    ("timeline-str", lambda: irqsim.run(OK, timeline="yes"), "timeline"),
    ("timeline-int", lambda: irqsim.run(OK, timeline=1), "timeline"),
    ("progress-not-callable", lambda: irqsim.run(OK, progress=5), "progress"),
    ("validate-scenario-int", lambda: irqsim.validate(123), "scenario"),
    ("validate-overrides-int", lambda: irqsim.validate(OK, 5), "overrides"),
    ("sweep-out-none", lambda: irqsim.sweep({"scenario": OK}, out=None), "out"),
    ("sweep-workers-str", lambda: irqsim.sweep({"scenario": OK}, out="x", workers="two"), "workers"),
    ("sweep-workers-zero", lambda: irqsim.sweep({"scenario": OK}, out="x", workers=0), "workers"),
    ("sweep-spec-int", lambda: irqsim.sweep(5, out="x"), "spec"),
    ("sweep-sets-str", lambda: irqsim.sweep({"scenario": OK}, out="x", sets="run.seed=2"), "sets"),
]


@pytest.mark.parametrize(("call", "names"), [c[1:] for c in API_CASES], ids=[c[0] for c in API_CASES])
def test_api_wrong_argument_type_names_the_argument(call, names):
    with pytest.raises(irqsim.ArgumentError) as e:
        call()
    assert isinstance(e.value, TypeError) and isinstance(e.value, irqsim.IrqsimError)
    assert str(e.value).startswith(names), str(e.value)


def test_api_override_errors_say_overrides_not_set():
    with pytest.raises(irqsim.ConfigError, match=r"^overrides: `cpu\.bogus`"):
        irqsim.run(OK, {"cpu.bogus": 1})
    with pytest.raises(irqsim.ConfigError, match=r"^overrides: `cpu\.clock_mhz`"):
        irqsim.validate(OK, ["cpu.clock_mhz=0"])


def test_battery_is_large_enough():
    assert len(CLI_CASES) + len(API_CASES) >= 60


def test_names_print_without_markup_or_raw_escapes(tmp_path, cli):
    """A scenario path with markup, an emoji code and an escape sequence is printed as written, the escape escaped."""
    d = tmp_path / "m[red]x[/]"
    d.mkdir(parents=True)
    path = d / "s:smile:\x1b[31m.toml"
    path.write_text(irqsim.scenario_path("mt-interrupts/driver-rx-single").read_text())
    p = cli("run", str(path), "--set", "run.duration_ms=1")
    assert p.returncode == 0, p.stderr
    title = "".join(line.strip() for line in p.stdout.split(" metric ")[0].splitlines())
    assert title.endswith("m[red]x[/]/s:smile:\\x1b[31m.toml") and "\x1b" not in p.stdout
