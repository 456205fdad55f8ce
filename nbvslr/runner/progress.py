"""What a run shows on stderr while it works: a bar on a terminal, plain lines in a log.

The runner reports through any object with the methods of ``Progress``: the plan of the
run, then every block of finished splits, every finished size and every finished task.

- ``TerminalProgress`` (stderr is a terminal): one line redrawn in place by tqdm, as wide as
  the terminal and never wider (the current task and size, a bar, sizes, splits and tasks
  done, elapsed and remaining time; the least useful parts go first on a narrow terminal),
  and one line per finished task above it.
- ``LogProgress`` (stderr is a file or a pipe: CI, nohup, ``2> run.log``): one plain line per
  finished size and per finished task, flushed at once, so a log shows how far a run got.
- ``NoProgress`` (``--quiet``): nothing.
- ``NotebookProgress`` (``nbvslr.run`` from Python): a ``tqdm.auto`` bar, a widget in a
  notebook.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from tqdm import tqdm

DEFAULT_WIDTH = 80
"""Columns assumed when neither the stream nor ``COLUMNS`` tells the terminal's width."""
MIN_BAR = 6
"""The narrowest bar worth drawing (between its two ``|``); below it the bar is left out."""


@dataclass(frozen=True)
class TaskPlan:
    """What a run has to do for one task."""

    name: str
    sizes: int  # training-set sizes in the task's grid
    resumed: int  # of which already done (checkpoints of an earlier run)
    splits: int  # splits per size


class Progress(Protocol):
    """What the runner calls while the work finishes."""

    def start(self, plan: Sequence[TaskPlan]) -> None: ...

    def splits_done(self, task: str, m: int, n: int) -> None: ...

    def size_done(self, task: str, m: int) -> None: ...

    def task_done(self, task: str, seconds: float) -> None: ...

    def finish(self) -> None: ...


class NoProgress:
    """Reports nothing (``--quiet``)."""

    def start(self, plan: Sequence[TaskPlan]) -> None:
        pass

    def splits_done(self, task: str, m: int, n: int) -> None:
        pass

    def size_done(self, task: str, m: int) -> None:
        pass

    def task_done(self, task: str, seconds: float) -> None:
        pass

    def finish(self) -> None:
        pass


def clock(seconds: float) -> str:
    """``0:07``, ``12:05``, ``1:02:03``."""
    h, rest = divmod(int(round(max(0.0, seconds))), 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _thousands(n: int) -> str:
    return f"{n:,}"


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


class Tally:
    """The counts behind every display: sizes, splits and tasks done, time elapsed and left.

    The time left assumes the splits still to do go as fast, on average, as those done so
    far in this run (sizes resumed from checkpoints count as done, not as fast).
    """

    def __init__(self) -> None:
        self.plan: dict[str, TaskPlan] = {}
        self.sizes = self.sizes_done = 0
        self.splits = self.splits_done = 0
        self.tasks = self.tasks_done = 0
        self.resumed_splits = 0
        self.t0 = time.monotonic()

    def start(self, plan: Sequence[TaskPlan]) -> None:
        self.plan = {p.name: p for p in plan}
        self.tasks, self.tasks_done = len(plan), 0
        self.sizes = sum(p.sizes for p in plan)
        self.sizes_done = sum(p.resumed for p in plan)
        self.splits = sum(p.sizes * p.splits for p in plan)
        self.resumed_splits = self.splits_done = sum(p.resumed * p.splits for p in plan)
        self.t0 = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def left(self) -> float | None:
        """Seconds still to go, or None before the first split has finished."""
        done = self.splits_done - self.resumed_splits
        if done <= 0:
            return None
        return self.elapsed() / done * (self.splits - self.splits_done)

    def counts(self) -> dict[str, str]:
        """The display's parts, each a short phrase."""
        left = self.left()
        return {
            "sizes": f"sizes {self.sizes_done}/{self.sizes}",
            "splits": f"splits {_thousands(self.splits_done)}/{_thousands(self.splits)}",
            "tasks": f"tasks {self.tasks_done}/{self.tasks}",
            "time": f"{clock(self.elapsed())} elapsed"
                    + (f", {clock(left)} left" if left is not None and left > 0 else ""),
        }

    def summary(self) -> str:
        """``sizes 7/20, splits 7,000/20,000, tasks 1/2, 0:07 elapsed, 0:16 left``."""
        return ", ".join(self.counts().values())


SEP = "  "


def compose(label: str, tally: Tally, width: int) -> tuple[str, str, bool]:
    """The text left and right of the bar, and whether a bar fits, in ``width`` columns.

    The counts and times come first; the label (the current task and size) and the bar get
    the room left: both, or the label alone, even if the splits count has to give way to
    it; else the bar alone, or the label shortened. When
    even the counts do not fit, the splits go, then the tasks, then the sizes; the times
    always stay (cut to the width on a terminal too narrow even for them).
    """
    parts = tally.counts()
    drop = ["splits", "tasks", "sizes"]
    bar = MIN_BAR + 4  # " |" bar "| "
    if label:  # which task and size run matters more than the splits count (sizes stay)
        for gone in ((), ("splits",)):
            tail = SEP.join(v for k, v in parts.items() if k not in gone)
            room = width - len(tail)
            if len(label) + bar <= room:
                return label + " ", " " + tail, True
            if len(label) + len(SEP) <= room:
                return label + SEP, tail, False
    while True:
        tail = SEP.join(parts.values())
        room = width - len(tail)  # for the label, the bar and their separators
        if label and len(label) + bar <= room:
            return label + " ", " " + tail, True
        if bar - 1 <= room:
            return "", " " + tail, True
        if label and len(label) + len(SEP) <= room:
            return label + SEP, tail, False
        if label and room - len(SEP) >= 12:  # "adult-con… m=382": shortened, still a hint
            return _shorten(label, room - len(SEP)) + SEP, tail, False
        if room >= 0:
            return "", tail, False
        if drop:
            parts.pop(drop.pop(0))
            continue
        return "", tail[:width], False


def _shorten(label: str, room: int) -> str:
    name, _, size = label.rpartition(" ")
    keep = room - len(size) - 2
    if not name or keep < 3:
        return label[:room]
    return f"{name[:keep]}… {size}"


def terminal_width(stream: TextIO) -> int:
    """The width of the stream's terminal (read at every redraw, so a resize is followed),
    else ``COLUMNS``, else 80."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):  # no file descriptor, or not a terminal
        columns = 0
    env = os.environ.get("COLUMNS", "")
    if not columns and env.isdigit():
        columns = int(env)
    return columns if columns > 0 else DEFAULT_WIDTH


class _Bar(tqdm):
    """tqdm, with the line composed by ``compose`` for the terminal's current width."""

    monitor_interval = 0  # no tqdm monitor thread beside the run; it redraws on updates

    def __init__(self, owner: TerminalProgress, **kwargs: Any) -> None:
        self.owner = owner
        super().__init__(**kwargs)

    @property
    def format_dict(self) -> dict[str, Any]:
        d = super().format_dict
        owner = self.owner
        # One column short of the width, as tqdm does: a line that fills the last column
        # makes some terminals wrap.
        width = terminal_width(owner.stream) - 1
        left, right, bar = compose(owner.label, owner.tally, width)
        escape = str.maketrans({"{": "{{", "}": "}}"})
        d["ncols"] = width
        d["bar_format"] = (left.translate(escape) + ("|{bar}|" if bar else "")
                           + right.translate(escape))
        return d


class TerminalProgress:
    """A bar redrawn in place on a terminal, and a line per finished task above it."""

    def __init__(self, stream: TextIO, *, mininterval: float = 0.1) -> None:
        self.stream = stream
        self.mininterval = mininterval  # seconds between redraws at most
        self.tally = Tally()
        self.label = "starting"
        self.bar: _Bar | None = None

    def start(self, plan: Sequence[TaskPlan]) -> None:
        self.tally.start(plan)
        if plan:
            self.label = plan[0].name
        self.bar = _Bar(self, total=max(1, self.tally.splits), initial=self.tally.splits_done,
                        file=self.stream, leave=True, mininterval=self.mininterval)

    def splits_done(self, task: str, m: int, n: int) -> None:
        self.tally.splits_done += n
        self.label = f"{task} m={m}"
        if self.bar is not None:
            self.bar.update(n)

    def size_done(self, task: str, m: int) -> None:
        self.tally.sizes_done += 1
        self._refresh()

    def task_done(self, task: str, seconds: float) -> None:
        self.tally.tasks_done += 1
        plan = self.tally.plan.get(task)
        sizes = f"{plan.sizes} sizes, " if plan is not None else ""
        line = f"{task}: done ({sizes}{clock(seconds)})"
        if self.bar is not None:
            self.bar.write(line[: terminal_width(self.stream) - 1], file=self.stream)
        self._refresh()

    def finish(self) -> None:
        if self.bar is not None:
            self.label = "done" if self.tally.tasks_done == self.tally.tasks else self.label
            self.bar.refresh()
            self.bar.close()
            self.bar = None

    def _refresh(self) -> None:
        if self.bar is not None:
            self.bar.refresh()


class LogProgress:
    """One plain line per finished size and per finished task, for a log file or a pipe."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tally = Tally()

    def _say(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    def start(self, plan: Sequence[TaskPlan]) -> None:
        self.tally.start(plan)
        t = self.tally
        resumed = t.sizes_done
        again = f" ({resumed} done before, from checkpoints)" if resumed else ""
        self._say(f"run: {_count(t.tasks, 'task')}, {_count(t.sizes, 'size')}{again}, "
                  f"{_count(t.splits, 'split')}")

    def splits_done(self, task: str, m: int, n: int) -> None:
        self.tally.splits_done += n

    def size_done(self, task: str, m: int) -> None:
        self.tally.sizes_done += 1
        self._say(f"{task} m={m}: done; {self.tally.summary()}")

    def task_done(self, task: str, seconds: float) -> None:
        self.tally.tasks_done += 1
        self._say(f"{task}: done in {clock(seconds)}; {self.tally.summary()}")

    def finish(self) -> None:
        pass


class NotebookProgress:
    """A ``tqdm.auto`` bar: a widget in a Jupyter notebook (when ipywidgets is there), a
    text bar elsewhere; a line per finished task above it (``nbvslr.run``'s default)."""

    def __init__(self) -> None:
        self.tally = Tally()
        self.bar: Any = None

    def start(self, plan: Sequence[TaskPlan]) -> None:
        from tqdm.auto import tqdm as auto  # the notebook's widget, imported when used

        self.tally.start(plan)
        self.bar = auto(total=max(1, self.tally.splits), initial=self.tally.splits_done,
                        desc=plan[0].name if plan else "nbvslr", unit="split", leave=True)

    def splits_done(self, task: str, m: int, n: int) -> None:
        self.tally.splits_done += n
        if self.bar is not None:
            self.bar.set_description(f"{task} m={m}", refresh=False)
            self.bar.update(n)

    def size_done(self, task: str, m: int) -> None:
        self.tally.sizes_done += 1

    def task_done(self, task: str, seconds: float) -> None:
        self.tally.tasks_done += 1
        if self.bar is not None:
            self.bar.write(f"{task}: done ({clock(seconds)})")

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def progress_for(stream: TextIO | None = None, *, quiet: bool = False) -> Progress:
    """A bar on a terminal, lines in a file or a pipe, nothing when ``quiet``."""
    stream = stream if stream is not None else sys.stderr
    if quiet:
        return NoProgress()
    if getattr(stream, "isatty", lambda: False)():
        return TerminalProgress(stream)
    return LogProgress(stream)
