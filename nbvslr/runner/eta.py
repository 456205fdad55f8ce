"""The time a run has left: a cost model of its work units, refined as units finish.

A unit is a block of ``s`` splits of one task at one training-set size ``m``; its cost
is not the same for every size (it grows with ``m``), nor for every task (its data's
number of features, and the models: logistic regression on a separable training set samples
hyperplanes instead of running Newton). So the estimate predicts each unit still to do
from the units of the same kind that finished:

- per split, a task's cost at a size already measured is the median of its units there;
  between two measured sizes it is interpolated linearly in ``m``; beyond them it scales
  with the work of a split,

  .. math:: w(m) = d \\, (m + m_0),

  at the median cost per unit of work of the ``NEAREST`` nearest measured sizes (one slow
  unit does not set the cost of every larger size; ``d`` features, ``m_0`` the fixed cost
  of a split: in the reference run's timings the cost per split grows about linearly in
  ``m`` from sonar's 208 rows to adult's 32,561, and the rows left for the test hardly
  count);
- beyond a task's measured sizes, and for a task with no measured unit yet, a task whose
  per-size costs the committed runs measured (``nbvslr.runner.costs``: every built-in task
  of Figure 1, the K-class and the text runs) takes those costs times this run's speed
  against them: the median, over the measured units of the task (at least ``MIN_MEASURED``
  of them) or else of every task, of measured / prior cost per split. The relative costs of
  the tasks and sizes are then the reference's (adult-discrete's sizes cost ten times
  pima's, which no cost model of ``d`` and ``m`` foresees), the machine's speed and load
  this run's;
- otherwise a task with no measured unit yet takes the median cost per unit of work ``w``
  over every measured unit of the other tasks.

The first unit each worker finishes of a task carries the compilation of the compiled
loops and the load of the data (seconds, against milliseconds for the next ones): the first
``workers`` units of each task to finish count as done but are not measured, and there is
no estimate ("estimating…") until ``MIN_MEASURED`` units after them have been measured.
With ``W`` workers the time
left is

.. math:: \\max\\Big(\\frac{1}{W} \\sum_u \\hat t_u, \\; \\max_u \\hat t_u\\Big),

the work shared by the workers, but never less than the longest unit left (at the end of a
run one worker finishes the last big size alone).

``time_left`` is a pure function of the units' shapes and timings (tested on synthetic
timings); ``Estimator`` keeps them as a run reports its units.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

M0 = 40
"""The fixed cost of a split in the cost model, in training rows."""
MIN_MEASURED = 2
"""Units measured (after each worker's first) before any estimate is shown."""


@dataclass(frozen=True)
class UnitShape:
    """What the cost model knows of a unit before it runs."""

    task: str
    m: int  # training-set size
    splits: int  # splits in the unit
    features: int = 1  # d, the task's features


@dataclass(frozen=True)
class Timing:
    """A measured unit: its shape and the seconds its worker spent on it."""

    unit: UnitShape
    seconds: float


def work(unit: UnitShape) -> float:
    """``w(m)`` of one split of the unit (module docstring), in arbitrary units."""
    return max(1, unit.features) * (unit.m + M0)


def _per_split(timings: Sequence[Timing]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per task: the measured sizes (sorted) and the median seconds per split at each."""
    by: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for t in timings:
        by[t.unit.task][t.unit.m].append(t.seconds / max(1, t.unit.splits))
    out = {}
    for task, sizes in by.items():
        ms = np.array(sorted(sizes), dtype=float)
        out[task] = ms, np.array([np.median(sizes[int(m)]) for m in ms])
    return out


NEAREST = 5
"""Measured sizes of a task (the nearest) whose median cost per unit of work scales a
prediction beyond them: one slow unit does not set the cost of every larger size."""


Prior = Mapping[str, Sequence[tuple[int, float]]]
"""Per task: (m, seconds per split) measured before, by increasing m (``runner.costs``)."""


def _prior_table(prior: Prior) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return {task: (np.array([x[0] for x in sizes], dtype=float),
                   np.array([x[1] for x in sizes], dtype=float))
            for task, sizes in prior.items() if sizes}


def _prior_at(table: Mapping[str, tuple[np.ndarray, np.ndarray]], task: str, m: int
              ) -> float | None:
    got = table.get(task)
    if got is None:
        return None
    ms, secs = got
    if m < ms[0]:
        return float(secs[0] * (m + M0) / (ms[0] + M0))
    if m > ms[-1]:
        return float(secs[-1] * (m + M0) / (ms[-1] + M0))
    return float(np.interp(m, ms, secs))


def prior_cost(prior: Prior, task: str, m: int) -> float | None:
    """The prior's seconds per split of ``task`` at ``m``: interpolated between its sizes,
    scaled by ``m + M0`` beyond them; None for a task it does not hold."""
    return _prior_at(_prior_table({task: prior.get(task, ())}), task, m)


class _Model:
    """The measured costs of a run, tabulated once for every prediction of one estimate."""

    def __init__(self, timings: Sequence[Timing], prior: Prior | None) -> None:
        self.timings = timings
        self.prior = _prior_table(prior or {})
        self.per_split = _per_split(timings)
        self.ratios: dict[str, list[float]] = defaultdict(list)
        for t in timings:
            base = _prior_at(self.prior, t.unit.task, t.unit.m)
            if base:
                self.ratios[t.unit.task].append(t.seconds / max(1, t.unit.splits) / base)
        every = [r for rs in self.ratios.values() for r in rs]
        self.every = float(np.median(every)) if every else None
        self.rates = [t.seconds / max(1, t.unit.splits) / work(t.unit) for t in timings]

    def speed(self, task: str) -> float | None:
        """This run's seconds per prior second: the median ratio of measured to prior cost
        per split over the task's measured units (at least ``MIN_MEASURED``), else over
        every measured unit the prior knows; None when it knows none."""
        own = self.ratios.get(task, [])
        return float(np.median(own)) if len(own) >= MIN_MEASURED else self.every

    def predict(self, unit: UnitShape) -> float:
        measured = self.per_split.get(unit.task)
        if measured is not None:
            ms, secs = measured
            if ms[0] <= unit.m <= ms[-1]:
                return float(np.interp(unit.m, ms, secs)) * unit.splits
        base = _prior_at(self.prior, unit.task, unit.m)
        factor = self.speed(unit.task) if base is not None else None
        if base is not None and factor is not None:
            return base * factor * unit.splits
        if measured is not None:
            ms, secs = measured
            near = np.argsort(np.abs(ms - unit.m), kind="stable")[:NEAREST]
            rates = [secs[i] / work(UnitShape(unit.task, int(ms[i]), 1, unit.features))
                     for i in near]
        else:
            rates = self.rates
        return float(np.median(rates)) * work(unit) * unit.splits


def predict(unit: UnitShape, timings: Sequence[Timing], prior: Prior | None = None
            ) -> float | None:
    """Predicted seconds of ``unit`` from the measured ``timings`` and the ``prior`` costs
    (module docstring); None without any timing."""
    if not timings:
        return None
    return _Model(timings, prior).predict(unit)


def time_left(todo: Sequence[UnitShape], timings: Sequence[Timing], workers: int = 1,
              prior: Prior | None = None) -> float | None:
    """Seconds until the units ``todo`` are done by ``workers`` workers, from the measured
    ``timings`` (each worker's first unit already left out) and the ``prior`` costs; None
    while fewer than ``MIN_MEASURED`` units are measured."""
    if len(timings) < MIN_MEASURED:
        return None
    if not todo:
        return 0.0
    model = _Model(timings, prior)
    costs = [model.predict(u) for u in todo]
    return max(sum(costs) / max(1, workers), max(costs))


class Estimator:
    """The units of a run still to do and those measured, as the run reports them."""

    def __init__(self, todo: Sequence[UnitShape] = (), workers: int = 1,
                 prior: Prior | None = None) -> None:
        self.todo: list[UnitShape] = list(todo)
        self.workers = max(1, workers)
        self.prior: Prior = prior or {}
        self.timings: list[Timing] = []
        self.finished = 0  # units finished, measured or not
        self.per_task: dict[str, int] = {}  # units finished per task

    def done(self, task: str, m: int, splits: int, seconds: float | None) -> None:
        """A unit of ``splits`` splits of (task, m) finished in ``seconds`` (None: not
        timed, counted as done only). The first ``workers`` units of each task are not
        measured: a task of another kind of data compiles loops of its own."""
        shape = self._take(task, m, splits)
        self.finished += 1
        self.per_task[task] = self.per_task.get(task, 0) + 1
        if seconds is not None and self.per_task[task] > self.workers:
            self.timings.append(Timing(shape, seconds))

    def _take(self, task: str, m: int, splits: int) -> UnitShape:
        """Remove the unit from those to do (the first of its task and size, else of its
        task); its shape."""
        for same_size in (True, False):
            for i, u in enumerate(self.todo):
                if u.task == task and (u.m == m or not same_size):
                    self.todo.pop(i)
                    return UnitShape(task, m, splits, u.features)
        return UnitShape(task, m, splits)

    def left(self) -> float | None:
        """Seconds left (``time_left``), None while there is no estimate yet."""
        return time_left(self.todo, self.timings, self.workers, self.prior)
