"""Bad input gives a clear error naming the file and the line, record or key:
never a panic, never a traceback, never a silently wrong result."""

from __future__ import annotations

import struct
from pathlib import Path

import dpkt
import pytest

import irqsim

TRACES = Path(irqsim.__file__).parent / "traces"


def scenario(tmp: Path, pcap: str, strace: str | None = None) -> Path:
    s = tmp / "s.toml"
    extra = f'strace = "{strace}"\n' if strace else ""
    s.write_text(
        "[cpu]\nclock_mhz = 200.0\n[run]\nduration_ms = 100.0\n[stack]\nenabled = true\n"
        f'[workload]\nkind = "trace"\npcap = "{pcap}"\n{extra}host = "10.0.0.1"\n'
    )
    return s


def write_pcap(path: Path, n: int = 20) -> None:
    with path.open("wb") as f:
        w = dpkt.pcap.Writer(f)
        for i in range(n):
            udp = dpkt.udp.UDP(sport=5000, dport=6000, data=b"x" * 500)
            ip = dpkt.ip.IP(src=bytes([10, 0, 0, 2]), dst=bytes([10, 0, 0, 1]), p=dpkt.ip.IP_PROTO_UDP, data=udp)
            eth = dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6, data=ip)
            w.writepkt(bytes(eth), ts=1_700_000_000 + i * 0.001)


def test_good_pcap_written_by_dpkt_replays(tmp_path):
    """A pcap written by an independent library is read: every frame received and delivered."""
    write_pcap(tmp_path / "ok.pcap")
    r = irqsim.run(scenario(tmp_path, "ok.pcap"))
    assert r.metrics["rx_offered"] == 20 and r.metrics["rx_delivered"] == 20


def test_truncated_pcap_names_file_and_record(tmp_path):
    write_pcap(tmp_path / "ok.pcap")
    data = (tmp_path / "ok.pcap").read_bytes()
    (tmp_path / "cut.pcap").write_bytes(data[: len(data) - 100])
    with pytest.raises(irqsim.TraceError, match=r"cut\.pcap: record \d+ at byte \d+: truncated"):
        irqsim.run(scenario(tmp_path, "cut.pcap"))


def test_wrong_magic_names_the_bytes(tmp_path):
    (tmp_path / "bad.pcap").write_bytes(struct.pack("<I", 0xDEADBEEF) + b"\0" * 40)
    with pytest.raises(irqsim.TraceError, match=r"bad\.pcap.*(magic|ef be ad de|efbeadde)"):
        irqsim.run(scenario(tmp_path, "bad.pcap"))


def test_garbage_strace_line_names_file_and_line(tmp_path):
    write_pcap(tmp_path / "ok.pcap")
    good = (TRACES / "loopback-stream.strace").read_text().splitlines()[:5]
    (tmp_path / "bad.strace").write_text("\n".join(good + ["this is not strace output"]) + "\n")
    with pytest.raises(irqsim.TraceError, match=r"bad\.strace:6"):
        irqsim.run(scenario(tmp_path, "ok.pcap", "bad.strace"))


def test_missing_trace_file_is_an_input_error(tmp_path):
    with pytest.raises(irqsim.IrqsimError, match=r"nope\.pcap"):
        irqsim.run(scenario(tmp_path, "nope.pcap"))


def test_unknown_key_names_key_and_line(tmp_path):
    s = tmp_path / "s.toml"
    s.write_text('[cpu]\nclock_mhz = 200.0\ncontext_polcy = "single"\n[workload]\nkind = "flood"\ndirection = "rx"\npacket_bytes = 100\n')
    with pytest.raises(irqsim.ConfigError, match=r"s\.toml:3: `cpu\.context_polcy`: unknown field"):
        irqsim.run(s)


@pytest.mark.parametrize("clock", ["0.0", "-200.0"])
def test_zero_or_negative_clock_names_key(tmp_path, clock):
    s = tmp_path / "s.toml"
    s.write_text(f'[cpu]\nclock_mhz = {clock}\n[workload]\nkind = "flood"\ndirection = "rx"\npacket_bytes = 100\n')
    with pytest.raises(irqsim.ConfigError, match=r"s\.toml:2: `cpu\.clock_mhz`: must be in \(0, 100_000\]"):
        irqsim.run(s)


def test_bad_enum_value_names_key(tmp_path):
    with pytest.raises(irqsim.ConfigError, match=r"`cpu\.context_policy`"):
        irqsim.run("mt-interrupts/driver-rx-single", {"cpu.context_policy": "quantum"})


def test_invalid_toml_names_line(tmp_path):
    s = tmp_path / "s.toml"
    s.write_text("[cpu\nclock_mhz = 1\n")
    with pytest.raises(irqsim.ConfigError, match=r"s\.toml: .*line 1"):
        irqsim.run(s)


def test_packet_larger_than_nic_buffer_is_refused():
    with pytest.raises(irqsim.ConfigError, match=r"`workload\.packet_bytes`.*never fit"):
        irqsim.run("mt-interrupts/driver-rx-single", {"nic.rx_buffer_bytes": 1000})


def test_real_trace_pair_replays():
    """The committed capture replays end to end through the full stack."""
    r = irqsim.run("mt-interrupts/trace-loopback")
    assert r.metrics["rx_delivered"] > 1000 and r.metrics["syscalls"] > 0
    r.check_invariants()
