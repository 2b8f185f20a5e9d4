"""irqsim: a fast, configurable simulator of interrupt and event handling for network I/O.

>>> import irqsim
>>> r = irqsim.run("scenarios/mt-interrupts/driver-rx-single.toml")   # doctest: +SKIP
>>> r.metrics["rx_throughput_mbps"]                                     # doctest: +SKIP
"""

from irqsim._core import ConfigError, InputError, InvariantError, IrqsimError, TraceError, __version__
from irqsim.api import Result, parts, run, scenario_path, validate

__all__ = [
    "ConfigError",
    "InputError",
    "InvariantError",
    "IrqsimError",
    "Result",
    "TraceError",
    "__version__",
    "parts",
    "run",
    "scenario_path",
    "validate",
]
