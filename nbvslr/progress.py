"""A one-line progress bar on stderr, for runs that take minutes.

The runner reports through any object with ``start(total)``, ``advance(label)`` and
``finish()``; ``ProgressBar`` draws that on a terminal and ``NoProgress`` ignores it.
"""

from __future__ import annotations

import sys
import time
from typing import Protocol, TextIO


class Progress(Protocol):
    """What the runner calls while work units finish."""

    def start(self, total: int, label: str = "starting") -> None: ...

    def advance(self, label: str) -> None: ...

    def finish(self) -> None: ...


class NoProgress:
    """Reports nothing (``--quiet``, or stderr is not a terminal)."""

    def start(self, total: int, label: str = "starting") -> None:
        pass

    def advance(self, label: str) -> None:
        pass

    def finish(self) -> None:
        pass


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class ProgressBar:
    """``[#####.....]  12/40 units  0:07 elapsed  ~0:16 left  pima m=26``, redrawn in place."""

    def __init__(self, stream: TextIO | None = None, width: int = 24) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.total = 0
        self.done = 0
        self.t0 = 0.0

    def start(self, total: int, label: str = "starting") -> None:
        self.total, self.done, self.t0 = total, 0, time.monotonic()
        self._draw(label)

    def advance(self, label: str) -> None:
        self.done += 1
        self._draw(label)

    def finish(self) -> None:
        if self.total:
            self.stream.write("\n")
            self.stream.flush()

    def _draw(self, label: str) -> None:
        if not self.total:
            return
        frac = self.done / self.total
        filled = int(frac * self.width)
        elapsed = time.monotonic() - self.t0
        left = f"  ~{_clock(elapsed / frac * (1 - frac))} left" if self.done else ""
        line = (
            f"[{'#' * filled}{'.' * (self.width - filled)}] {self.done:>{len(str(self.total))}}"
            f"/{self.total} units  {_clock(elapsed)} elapsed{left}  {label}"
        )
        self.stream.write("\r" + line[:119].ljust(119))
        self.stream.flush()


def progress_for(stream: TextIO | None = None, *, quiet: bool = False) -> Progress:
    """A bar on ``stream`` (stderr) when it is a terminal and not ``quiet``, else nothing."""
    stream = stream if stream is not None else sys.stderr
    if quiet or not getattr(stream, "isatty", lambda: False)():
        return NoProgress()
    return ProgressBar(stream)
