"""``irqsim bench``: simulator speed on the bundled saturated receive scenario.

Reports delivered packets, events and simulated seconds per second of the
simulation alone (scenario loading included, Python start-up not), both per
wall-clock second and per CPU-second of this process (the simulation's own
work, unmoved by other load on the machine). Drops are reported apart and
never counted as throughput.
"""

from __future__ import annotations

import time
import timeit

from irqsim import IrqsimError, api

SCENARIO = "bench/rx-overload"


def best_of(fn, repeat: int, cpu_clock=time.process_time):
    """``(wall, cpu, result)`` of the run of ``fn()`` with the least CPU time
    of ``repeat`` runs, timed by :class:`timeit.Timer` on ``cpu_clock`` (this
    process's CPU clock unless told)."""
    runs = []

    def once() -> None:
        t0 = time.perf_counter()
        r = fn()
        runs.append((time.perf_counter() - t0, r))

    cpus = timeit.Timer(once, timer=cpu_clock).repeat(repeat=max(1, repeat), number=1)
    best = min(range(len(cpus)), key=cpus.__getitem__)
    return runs[best][0], cpus[best], runs[best][1]


def measure(overrides: list[str], repeat: int = 3, scenario: str = SCENARIO) -> dict:
    """The best of ``repeat`` runs of ``scenario``, by CPU time."""
    wall, cpu, r = best_of(lambda: api.run(scenario, overrides), repeat)
    m = r.metrics
    sim_s = r.elapsed_cycles / (r.clock_mhz * 1e6)
    per_cpu = max(cpu, 1e-9)
    return {
        "scenario": scenario,
        "repeat": max(1, repeat),
        "wall_seconds": wall,
        "cpu_seconds": cpu,
        "delivered_packets": m.get("rx_delivered", 0),
        "dropped_packets": m.get("rx_dropped_nic", 0) + m.get("rx_dropped_backlog", 0) + m.get("rx_dropped_wire", 0),
        "events": m["events"],
        "sim_seconds": sim_s,
        "delivered_packets_per_wall_s": m.get("rx_delivered", 0) / wall,
        "events_per_wall_s": m["events"] / wall,
        "sim_seconds_per_wall_s": sim_s / wall,
        "delivered_packets_per_cpu_s": m.get("rx_delivered", 0) / per_cpu,
        "events_per_cpu_s": m["events"] / per_cpu,
        "sim_seconds_per_cpu_s": sim_s / per_cpu,
    }


SCALING = "bench/msix-scaling"
#: Interrupts per second in the scaling bench: in all (load ``fixed``), or per CPU (``per-cpu``).
PER_CPU_RATE = 20_000.0


def parse_counts(text: str) -> list[int]:
    """``--scaling 1,8,64`` as CPU counts from 1 to 64; anything else is bad input."""
    try:
        counts = [int(x) for x in text.split(",")]
    except ValueError:
        counts = []
    if not counts or any(not 1 <= n <= 64 for n in counts):
        raise IrqsimError(f"--scaling {text!r}: give CPU counts from 1 to 64 separated by commas, e.g. 1,8,64")
    return counts


def scaling(threads: list[int], repeat: int = 3, sim_seconds: float = 64.0) -> list[dict]:
    """``bench/msix-scaling`` with ``cpu.threads`` = ``intc.vectors`` = each
    of ``threads``, under two loads:

    - ``fixed``: 20,000 interrupts per second in all, ``sim_seconds`` long,
      whatever the CPUs: the same events at every count, so the events per
      CPU-second show what one more CPU and one more source cost;
    - ``per-cpu``: 20,000 per second on each CPU, ``sim_seconds / n`` long:
      the same events again, but more of them in flight at once as the CPUs
      grow (deeper queues), as a machine under load would have.
    """
    rows = []
    for load in ("fixed", "per-cpu"):
        for n in threads:
            rate, ms = (PER_CPU_RATE, sim_seconds * 1e3) if load == "fixed" else (PER_CPU_RATE * n, sim_seconds * 1e3 / n)
            sets = [f"cpu.threads={n}", f"intc.vectors={n}", f"workload.rate_per_s={rate}", f"run.duration_ms={ms}"]
            res = measure(sets, repeat=repeat, scenario=SCALING)
            rows.append({"load": load, "threads": n, "sources": n} | {k: res[k] for k in ("events", "wall_seconds", "cpu_seconds", "events_per_wall_s", "events_per_cpu_s")})
    return rows


ISS_PROGRAM = "bench/kernels"
#: The long loops run beside qemu-mips (bench/kernels for 16 rounds).
LONG_PROGRAM = "bench/long"
#: (memory, threads, settings) of the instruction-set simulator's rows: one
#: thread; one beside an idle thread (reserved for interrupts, never started);
#: two busy threads, each running the whole program.
ISS_RUNS = [
    ("perfect", "1", ["memory.model=perfect"]),
    ("caches", "1", ["memory.model=caches"]),
    ("perfect", "1 + idle", ["memory.model=perfect", "core.threads=2", "core.interrupt_thread=1"]),
    ("perfect", "2", ["memory.model=perfect", "core.threads=2"]),
]


def _cpu_with_children() -> float:
    """This process's CPU time and its finished children's (qemu-mips runs as one)."""
    import resource

    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + u.ru_utime + u.ru_stime


def _row(simulator: str, program: str, memory: str, threads: str, n: int, cycles: int | None, wall: float, cpu: float) -> dict:
    return {
        "simulator": simulator,
        "program": program,
        "memory": memory,
        "threads": threads,
        "instructions": n,
        "cycles": cycles,
        "wall_seconds": wall,
        "cpu_seconds": cpu,
        "instructions_per_wall_s": n / wall,
        "instructions_per_cpu_s": n / max(cpu, 1e-9),
    }


def iss(repeat: int = 3, program: str = ISS_PROGRAM, long_program: str | None = LONG_PROGRAM) -> list[dict]:
    """The instruction-set simulator on ``program`` (a sieve, CRC-32, a
    matrix product and a sort) with perfect memory, with the default L1 and
    L2 caches, beside an idle hardware thread and as two busy threads; then
    ``long_program`` with perfect memory and, if it is installed, under
    qemu-mips (a JIT, no caches modelled): simulated instructions per wall
    second and per CPU-second, the best of ``repeat`` runs by CPU time (the
    program's loading included)."""
    import shutil
    import subprocess

    from irqsim import exec as iss_exec

    rows = []
    for memory, threads, sets in ISS_RUNS:
        wall, cpu, r = best_of(lambda: iss_exec.run(program, sets), repeat)  # noqa: B023 (called at once)
        rows.append(_row("irqsim", program, memory, threads, r["instructions"], r["cycles"], wall, cpu))
    if long_program is None:
        return rows
    wall, cpu, r = best_of(lambda: iss_exec.run(long_program, ["memory.model=perfect"]), repeat)
    n = r["instructions"]
    rows.append(_row("irqsim", long_program, "perfect", "1", n, r["cycles"], wall, cpu))
    if shutil.which("qemu-mips"):
        elf = str(iss_exec.program_path(long_program))
        wall, cpu, q = best_of(lambda: subprocess.run(["qemu-mips", elf], capture_output=True), repeat, _cpu_with_children)
        if q.stdout.decode("utf-8", "replace") != r["stdout"]:
            raise IrqsimError(f"qemu-mips printed other output than irqsim for {long_program}")
        # qemu counts no instructions: the count is irqsim's of the same program.
        rows.append(_row("qemu-mips", long_program, "perfect", "1", n, None, wall, cpu))
    return rows


#: The tiny runs of the overhead bench: the simulation itself is a few events,
#: so what is left is loading the scenario, building the machine and the report,
#: and Python's share.
TINY_RUNS = [("abstract", "bench/rx-overload"), ("code", "code/rx-min")]
TINY_SETS = ["run.duration_ms=0.01"]


def overhead(repeat: int = 3, runs: int = 1000) -> list[dict]:
    """Cost per tiny run (10 simulated µs) of ``irqsim.run`` and of the core's
    ``_core.run`` alone (load, machine, simulation, report), the best of
    ``repeat`` loops of ``runs`` by CPU time; Python's share is the difference."""
    from irqsim import _core

    rows = []
    for kind, scenario in TINY_RUNS:
        path = api.scenario_path(scenario)
        events = api.run(scenario, TINY_SETS).metrics["events"]

        def loop(run) -> None:
            for _ in range(runs):
                run()

        wall, cpu, _ = best_of(lambda: loop(lambda: api.run(scenario, TINY_SETS)), repeat)  # noqa: B023 (called at once)
        core_wall, core_cpu, _ = best_of(lambda: loop(lambda: _core.run(path=path, sets=TINY_SETS)), repeat)  # noqa: B023
        rows.append(
            {
                "run": kind,
                "scenario": scenario,
                "events": events,
                "runs": runs,
                "us_per_run_cpu": cpu / runs * 1e6,
                "us_per_run_wall": wall / runs * 1e6,
                "core_us_per_run_cpu": core_cpu / runs * 1e6,
                "python_us_per_run_cpu": (cpu - core_cpu) / runs * 1e6,
                "runs_per_cpu_s": runs / max(cpu, 1e-9),
            }
        )
    return rows


#: Cores of the programmable NIC's rows in ``irqsim bench --nic-firmware``.
NIC_CORES = (1, 2, 4, 6)


def nic_firmware(repeat: int = 3, frames: int = 40_000, cores: tuple[int, ...] = NIC_CORES, fast_program: str = LONG_PROGRAM) -> list[dict]:
    """The programmable NIC's cores against the instruction-set simulator's
    fast path, in simulated core-cycles per CPU-second: ``fast_program``
    with perfect memory (one core, blocks run whole), then the NIC firmware on
    each of ``cores`` (the machine run of nic-firmware/duplex-64: 64 B
    full-duplex floods, frame-level, ``frames`` measured after a tenth as
    many of warm-up; the whole run's NIC cycles times the cores), the best
    of ``repeat`` runs by CPU time each."""
    from irqsim import api, exec as iss_exec

    def row(what: str, n: int, core_cycles: int, wall: float, cpu: float, fast: float) -> dict:
        rate = core_cycles / max(cpu, 1e-9)
        return {"run": what, "cores": n, "core_cycles": core_cycles, "wall_seconds": wall, "cpu_seconds": cpu,
                "core_cycles_per_cpu_s": rate, "of_fast_path": rate / fast}

    wall, cpu, r = best_of(lambda: iss_exec.run(fast_program, ["memory.model=perfect"]), repeat)
    fast = r["cycles"] / max(cpu, 1e-9)
    rows = [row(f"ISS fast path ({fast_program}, perfect memory)", 1, r["cycles"], wall, cpu, fast)]
    for n in cores:
        sets = {"nic_firmware.cores": n, "nic_firmware.window_frames": frames, "nic_firmware.warmup_frames": frames // 10, "run.duration_ms": 0.025 * frames}
        wall, cpu, out = best_of(lambda: api.run("nic-firmware/duplex-64", sets), repeat)  # noqa: B023 (called at once)
        rows.append(row("NIC firmware (64 B duplex, frame-level)", n, int(out.metrics["nic_firmware_cycles"]) * n, wall, cpu, fast))
    return rows
