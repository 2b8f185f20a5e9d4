"""Progress on stderr: one line for a long run, a bar for a sweep (plain
lines when stderr is not a terminal), steps for ``irqsim reproduce``.

A run's progress comes from the core's monitor, which calls back with
``(now_cycle, end_cycle)`` every 65,536 events; :class:`RunProgress` turns
that into simulated time, wall time and an ETA, drawn only once the run has
taken a second (short runs print nothing) and at most a few times a second.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from irqsim import api


def clock(seconds: float) -> str:
    """``seconds`` as h:mm:ss."""
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class RunProgress:
    """``progress(now_cycle, end_cycle)`` callback that draws one line (rich.progress, transient)."""

    def __init__(self, clock_mhz: float, stream: TextIO, delay: float = 1.0, every: float = 0.2):
        self.clock_mhz = clock_mhz
        self.stream = stream
        self.delay = delay
        self.every = every
        self.start = time.monotonic()
        self.last = 0.0
        self.bar = None  # a rich Progress, made on the first draw

    @classmethod
    def for_terminal(cls, scenario: str, sets: list[str]) -> RunProgress | None:
        """A drawer for ``scenario`` when stderr is a terminal, else None."""
        if not sys.stderr.isatty():
            return None
        return cls(api.validate(scenario, sets, _label="--set")["cpu"]["clock_mhz"], sys.stderr)

    def line(self, now: int, end: int, wall: float) -> str:
        done = now / end if end else 1.0
        eta = wall * (1 - done) / done if done > 0 else float("nan")
        sim = now / self.clock_mhz / 1e6
        total = end / self.clock_mhz / 1e6
        eta_text = clock(eta) if eta == eta else "?"
        return f"simulated {sim:.3f} s of {total:.3f} s ({100 * done:.0f}%), wall {clock(wall)}, ETA {eta_text}"

    def __call__(self, now: int, end: int) -> None:
        t = time.monotonic()
        wall = t - self.start
        if wall < self.delay or t - self.last < self.every:
            return
        self.last = t
        if self.bar is None:
            from rich.console import Console
            from rich.progress import Progress, TextColumn

            self.bar = Progress(TextColumn("{task.description}"), console=Console(file=self.stream), transient=True, auto_refresh=False)
            self.task = self.bar.add_task("")
            self.bar.start()
        self.bar.update(self.task, description=self.line(now, end, wall))
        self.bar.refresh()

    def close(self) -> None:
        """Clears the line, if one was drawn."""
        if self.bar is not None:
            self.bar.stop()


class SweepProgress:
    """Finished runs, failures, elapsed time and ETA on stderr: a rich bar on
    a terminal, else a plain line every ``every`` seconds and at the end (logs)."""

    def __init__(self, total: int, done: int, enabled: bool = True, stream: TextIO | None = None, every: float = 5.0):
        self.total, self.done, self.failed = total, done, 0
        self.stream = stream or sys.stderr
        self.every = every
        self.enabled = enabled
        self.start = self.last = time.monotonic()
        self.computed = 0
        self.bar = None
        if enabled and self.stream.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self.bar = Progress(
                TextColumn("sweep"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("runs, {task.fields[failed]} failed"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
            )
            self.task = self.bar.add_task("sweep", total=total, completed=done, failed=0)

    def __enter__(self) -> SweepProgress:
        if self.bar:
            self.bar.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.bar:
            self.bar.stop()
        elif self.enabled and self.computed:
            self.line()

    def line(self) -> None:
        wall = time.monotonic() - self.start
        left = self.total - self.done
        eta = clock(wall / self.computed * left) if self.computed else "?"
        print(f"sweep: {self.done} of {self.total} runs, {self.failed} failed, {clock(wall)} elapsed, ETA {eta}", file=self.stream, flush=True)

    def advance(self, ok: bool) -> None:
        self.done += 1
        self.computed += 1
        self.failed += not ok
        if self.bar:
            self.bar.update(self.task, advance=1, failed=self.failed)
        elif self.enabled and time.monotonic() - self.last >= self.every:
            self.last = time.monotonic()
            self.line()


class Steps:
    """Progress through named steps on stderr: a transient rich bar on a
    terminal, else a plain line as each step finishes (for logs and CI; a
    step that fails prints nothing, so its error stays the only line)."""

    def __init__(self, verb: str, done: str, steps: list[str], stream: TextIO | None = None):
        self.verb, self.done_verb = verb, done
        self.total = len(steps)
        self.stream = stream or sys.stderr
        self.done = 0
        self.current: str | None = None
        self.t0 = time.monotonic()
        self.bar = None
        if self.stream.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=Console(file=self.stream), transient=True)
            self.task = self.bar.add_task(verb, total=self.total)

    def __enter__(self) -> Steps:
        if self.bar:
            self.bar.start()
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is None:
            self._finish()
        if self.bar:
            self.bar.stop()

    def _finish(self) -> None:
        if self.current is None:
            return
        self.done += 1
        if not self.bar:
            print(f"{self.done_verb} {self.current} ({self.done} of {self.total}, {clock(time.monotonic() - self.t0)} so far)", file=self.stream, flush=True)
        self.current = None

    def start(self, name: str) -> None:
        """Marks the previous step done and ``name`` started."""
        self._finish()
        self.current = name
        if self.bar:
            self.bar.update(self.task, completed=self.done, description=f"{self.verb} {name}")
