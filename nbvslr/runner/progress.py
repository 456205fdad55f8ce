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
  notebook where ipywidgets is installed, else tqdm's text bar (without tqdm's warning).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from tqdm import tqdm

from nbvslr.runner.costs import reference_costs
from nbvslr.runner.eta import Estimator, UnitShape

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
    units: tuple[tuple[int, int], ...] = ()  # (m, splits) of each unit still to do
    features: int = 1  # the task's features, for the cost model of the time left

    def unit_shapes(self) -> list[UnitShape]:
        """The units still to do (without ``units``: one per size left, its m unknown)."""
        units = self.units or ((0, self.splits),) * (self.sizes - self.resumed)
        return [UnitShape(self.name, m, s, self.features) for m, s in units]


class Progress(Protocol):
    """What the runner calls while the work finishes."""

    def start(self, plan: Sequence[TaskPlan], workers: int = 1) -> None: ...

    def splits_done(self, task: str, m: int, n: int, seconds: float | None = None) -> None: ...

    def size_done(self, task: str, m: int) -> None: ...

    def task_done(self, task: str, seconds: float) -> None: ...

    def finish(self) -> None: ...


class NoProgress:
    """Reports nothing (``--quiet``)."""

    def start(self, plan: Sequence[TaskPlan], workers: int = 1) -> None:
        pass

    def splits_done(self, task: str, m: int, n: int, seconds: float | None = None) -> None:
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

    The time left comes from a cost model of the units still to do, refined by every unit
    that finishes (``nbvslr.runner.eta``); "estimating…" until it means something.
    """

    def __init__(self) -> None:
        self.plan: dict[str, TaskPlan] = {}
        self.sizes = self.sizes_done = 0
        self.splits = self.splits_done = 0
        self.tasks = self.tasks_done = 0
        self.resumed_splits = 0
        self.eta = Estimator()
        self.t0 = time.monotonic()

    def start(self, plan: Sequence[TaskPlan], workers: int = 1) -> None:
        self.plan = {p.name: p for p in plan}
        self.tasks, self.tasks_done = len(plan), 0
        self.sizes = sum(p.sizes for p in plan)
        self.sizes_done = sum(p.resumed for p in plan)
        self.splits = sum(p.sizes * p.splits for p in plan)
        self.resumed_splits = self.splits_done = sum(p.resumed * p.splits for p in plan)
        self.eta = Estimator([u for p in plan for u in p.unit_shapes()], workers,
                             reference_costs())
        self.t0 = time.monotonic()

    def unit_done(self, task: str, m: int, n: int, seconds: float | None) -> None:
        """A unit of ``n`` splits of (task, m) finished in ``seconds`` of its worker's time."""
        self.splits_done += n
        self.eta.done(task, m, n, seconds)

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def left(self) -> float | None:
        """Seconds still to go, or None while there is no estimate yet."""
        return self.eta.left()

    def counts(self) -> dict[str, str]:
        """The display's parts, each a short phrase."""
        left = self.left()
        return {
            "sizes": f"sizes {self.sizes_done}/{self.sizes}",
            "splits": f"splits {_thousands(self.splits_done)}/{_thousands(self.splits)}",
            "tasks": f"tasks {self.tasks_done}/{self.tasks}",
            "time": f"{clock(self.elapsed())} elapsed" + (
                ", estimating…" if left is None and self.splits_done < self.splits
                else f", {clock(left)} left" if left is not None and left >= 0.5 else ""),
        }

    def summary(self) -> str:
        """``sizes 7/20, splits 7,000/20,000, tasks 1/2, 0:07 elapsed, 0:16 left``."""
        return ", ".join(self.counts().values())


SEP = "  "
SHORT_LABEL = 12
"""The shortest label worth showing ("adult-con… m=382")."""
MAX_BAR = 24
"""The widest bar: room beyond it goes to the counts."""
TIME_WIDTH = len("12:34 elapsed, estimating…")
"""Columns kept for the times, so the bar keeps its width as they change."""


def _longest_label(tally: Tally, label: str) -> int:
    """The widest label of the run ("task m=largest size"), so the bar never moves."""
    widths = [len(label)]
    for p in tally.plan.values():
        top = max((m for m, _ in p.units), default=0)
        widths.append(len(f"{p.name} m={top}") if top else len(p.name))
    return max(widths)


def _maximal(tally: Tally) -> dict[str, str]:
    """The counts at their widest in this run (every count at its total)."""
    return {"sizes": f"sizes {tally.sizes}/{tally.sizes}",
            "splits": f"splits {_thousands(tally.splits)}/{_thousands(tally.splits)}",
            "tasks": f"tasks {tally.tasks}/{tally.tasks}"}


def compose(label: str, tally: Tally, width: int) -> tuple[str, str, bool]:
    """The text left and right of the bar, and whether a bar is drawn, in ``width`` columns.

    What goes first: the label (the current task and size, padded to the run's widest so
    the bar does not move), then the times, then a bar of ``MIN_BAR`` to ``MAX_BAR`` cells,
    then the counts that still fit at their widest (sizes, tasks, then splits). As every
    part is padded to its widest, ``left + right`` has the same length on every redraw and
    the bar keeps its width. A label too long for a bar beside it is shortened
    ("adult-con… m=382", at least ``SHORT_LABEL`` columns) to keep a bar of ``MIN_BAR``;
    too narrow even for that: the bar goes, then the counts, then the label is shortened;
    the times always stay (cut to the width on a terminal too narrow even for them).
    """
    parts = tally.counts()
    time_text = parts.pop("time")
    label_w = max(_longest_label(tally, label), len(label))
    time_w = max(TIME_WIDTH, len(time_text))
    widest = _maximal(tally)
    decor = 4  # " |" bar "| "
    room = width - label_w - decor - time_w
    short_w = width - decor - time_w - MIN_BAR
    if label and room < MIN_BAR and short_w >= SHORT_LABEL:
        # a task name too long for a bar beside it: shortened, so that the bar stays
        label = _shorten(label, short_w) if len(label) > short_w else label
        label_w, room = short_w, MIN_BAR
    if label and room >= MIN_BAR:
        shown = []
        for key in ("sizes", "tasks", "splits"):
            need = len(widest[key]) + len(SEP)
            if room - need >= MIN_BAR:
                shown.append(key)
                room -= need
        counts = "".join(parts[k].ljust(len(widest[k])) + SEP
                         for k in ("sizes", "splits", "tasks") if k in shown)
        pad = max(0, room - MAX_BAR)
        return (label.ljust(label_w + pad) + " ",
                " " + counts + time_text.ljust(time_w), True)
    # No room for the label, a bar and the times at their widest: no bar, the label
    # shortened if need be, then the counts that fit.
    # room kept for the label: whole if it fits beside the times, else shortened
    whole = len(label) + len(SEP) if label else 0
    keep = whole if width - len(time_text) >= whole else SHORT_LABEL + len(SEP) if label else 0
    shown: list[str] = []
    for key in ("sizes", "tasks", "splits"):
        trial = shown + [key]
        if width - len(SEP.join([*(parts[k] for k in parts if k in trial), time_text])) >= keep:
            shown = trial
    tail = SEP.join([*(parts[k] for k in parts if k in shown), time_text])
    room = width - len(tail)
    if label and room >= len(label) + len(SEP):
        return label + SEP, tail, False
    if label and room - len(SEP) >= SHORT_LABEL:  # "adult-con… m=382": still a hint
        return _shorten(label, room - len(SEP)) + SEP, tail, False
    if room >= 0:
        return "", tail, False
    return "", time_text[:width], False


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

    def start(self, plan: Sequence[TaskPlan], workers: int = 1) -> None:
        self.tally.start(plan, workers)
        if plan:
            self.label = plan[0].name
        self.bar = _Bar(self, total=max(1, self.tally.splits), initial=self.tally.splits_done,
                        file=self.stream, leave=True, mininterval=self.mininterval)

    def splits_done(self, task: str, m: int, n: int, seconds: float | None = None) -> None:
        self.tally.unit_done(task, m, n, seconds)
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

    def start(self, plan: Sequence[TaskPlan], workers: int = 1) -> None:
        self.tally.start(plan, workers)
        t = self.tally
        resumed = t.sizes_done
        again = f" ({resumed} done before, from checkpoints)" if resumed else ""
        self._say(f"run: {_count(t.tasks, 'task')}, {_count(t.sizes, 'size')}{again}, "
                  f"{_count(t.splits, 'split')}")

    def splits_done(self, task: str, m: int, n: int, seconds: float | None = None) -> None:
        self.tally.unit_done(task, m, n, seconds)

    def size_done(self, task: str, m: int) -> None:
        self.tally.sizes_done += 1
        self._say(f"{task} m={m}: done; {self.tally.summary()}")

    def task_done(self, task: str, seconds: float) -> None:
        self.tally.tasks_done += 1
        self._say(f"{task}: done in {clock(seconds)}; {self.tally.summary()}")

    def finish(self) -> None:
        pass


def _auto_bar() -> type:
    """``tqdm.auto``'s bar (a widget in a notebook) where ipywidgets is installed; else
    tqdm's text bar, which a notebook shows as well, without ``tqdm.auto``'s warning that
    the widget is missing."""
    if importlib.util.find_spec("ipywidgets") is None:
        return tqdm
    from tqdm.auto import tqdm as auto  # the notebook's widget, imported when used

    return auto


class NotebookProgress:
    """A ``tqdm.auto`` bar: a widget in a Jupyter notebook (when ipywidgets is there), a
    text bar elsewhere (``_auto_bar``); a line per finished task above it (``nbvslr.run``'s
    default)."""

    def __init__(self) -> None:
        self.tally = Tally()
        self.bar: Any = None

    def start(self, plan: Sequence[TaskPlan], workers: int = 1) -> None:
        self.tally.start(plan)
        self.bar = _auto_bar()(total=max(1, self.tally.splits), initial=self.tally.splits_done,
                               desc=plan[0].name if plan else "nbvslr", unit="split",
                               leave=True)

    def splits_done(self, task: str, m: int, n: int, seconds: float | None = None) -> None:
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
