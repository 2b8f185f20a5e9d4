"""irqsim: a fast, configurable simulator of interrupt and event handling for network I/O.

>>> import irqsim
>>> r = irqsim.run("scenarios/mt-interrupts/driver-rx-single.toml")   # doctest: +SKIP
>>> r.metrics["rx_throughput_mbps"]                                     # doctest: +SKIP
>>> df = irqsim.sweep("sweep.toml", out="results/")                    # doctest: +SKIP
"""

from irqsim._core import ConfigError, InputError, InvariantError, IrqsimError, ProgramError, TraceError, __version__
from irqsim.api import ArgumentError, OutputError, Result, inputs, parts, run, scenario_path, validate


def sweep(spec, out, **options):
    """Runs a sweep into directory ``out``; returns a pandas DataFrame, one row
    per run. See :func:`irqsim.sweeps.sweep` and docs/sweeps.md."""
    from irqsim.sweeps import sweep as run_sweep

    return run_sweep(spec, out, **options)


__all__ = [
    "ArgumentError",
    "ConfigError",
    "InputError",
    "InvariantError",
    "IrqsimError",
    "OutputError",
    "ProgramError",
    "Result",
    "TraceError",
    "__version__",
    "inputs",
    "parts",
    "run",
    "scenario_path",
    "sweep",
    "validate",
]
