"""How much memory a run will use, estimated before the workers start and any model is fitted.

A run holds, in each process, the task's data and its designs, and, while a work unit runs,
the stacks of training sets that ``score_splits`` gathers: ``(S, m, P)`` float64 for S splits
of m rows and P design columns, a few copies at the peak, plus for logistic regression
``(S, P, P)`` Hessians and ``(S, chains * draws, P)`` sampled hyperplanes. ``score_splits``
gathers them in chunks of splits that stay within the models' budget
(``nbvslr.models.budget``), so a unit holds one chunk at a time, whatever its split count.
``plan`` adds it all up for the run's processes and refuses, in one line, a run whose
estimate is above the machine's memory.

The factors below are set above what was measured: the peaks of single units
(``benchmarks/memory_units.py``) and of whole runs (docs/what-happens-when.md gives both,
with their commands).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nbvslr.errors import ConfigError
from nbvslr.models import STACK_COPIES
from nbvslr.models.budget import DEFAULT_BUDGET
from nbvslr.models.lr.hmc import GRAM_ROWS, MIN_BLOCK
from nbvslr.models.registry import lookup
from nbvslr.models.stacks import split_chunks

GiB = 1 << 30
MiB = 1 << 20

BASE = 200 * MiB
"""A process with nbvslr, numpy, pandas (and, in the run's own process, matplotlib) loaded."""
LOAD = 3.5
"""Bytes held while a task loads and after, per byte of its feature matrix."""
UNIT_STACKS = 3.5
"""Peak bytes of a unit per byte of one ``(S, m, P)`` stack."""
ROW_BYTES = 400
"""The run's own process, per row of a task's splits table (checkpoints read back, sorted,
summarised and written)."""
UNIT_OBJECT_BYTES = 600
"""One queued work unit (settings only, no arrays)."""
UNIT_FIXED = 16 * MiB
"""Peak bytes of a unit whatever its size (the tiles of the test-error products, the seeds)."""
SHARE = 0.9
"""The share of the machine's memory a run may plan to use."""


@dataclass(frozen=True)
class TaskShape:
    """What the estimate needs to know of one task.

    rows, features : the data's N and d; width : the widest design a model uses (P, with the
    intercept); grid : the sizes to run; hyperplanes : the most sampled hyperplanes per split
    of an LR model (0 without LR); models : how many models.
    """

    name: str
    rows: int
    features: int
    width: int
    grid: tuple[int, ...]
    hyperplanes: int
    models: int
    sparse: tuple[float, float] = (0.0, 0.0)
    """A text task's sparse fits: their bytes per split, ``(fixed, per training row)``
    (the largest of its models' ``sparse_bytes``)."""
    nbytes: float | None = None
    """The feature matrix's bytes when it is held sparse (a text task), else None."""

    @property
    def data_bytes(self) -> float:
        return self.nbytes if self.nbytes is not None else 8.0 * self.rows * self.features

    def split_bytes(self, m: int) -> float:
        """Peak bytes of a unit, per split, at training-set size ``m``."""
        P = self.width
        stack = UNIT_STACKS * 8.0 * m * P
        sparse = self.sparse[0] + self.sparse[1] * m
        return stack + 8.0 * (4 * P * P + 2 * self.hyperplanes * P) + sparse

    def loaded_bytes(self) -> float:
        """A process's copy of the task: the data, then its designs, kept for the rest of
        the run: at most N x P for a design's distinct rows, and as much again while one
        is built (an upper bound: one-hot adult has 11,382 distinct rows of 48,842)."""
        return LOAD * self.data_bytes + 2 * 8.0 * self.rows * self.width


@dataclass(frozen=True)
class Plan:
    """The estimate of a run: its own process, each worker process, and the budget."""

    total: float
    main: float
    worker: float
    workers: int
    budget: float

    def describe(self) -> str:
        """``about 1.4 GiB (this process 0.6 GiB + 2 workers x 0.4 GiB)``."""
        parts = f"this process {gib(self.main)}"
        if self.workers:
            parts += f" + {self.workers} worker{'s' * (self.workers > 1)} x {gib(self.worker)}"
        return f"about {gib(self.total)} ({parts})"

    def to_dict(self) -> dict[str, float | int]:
        return {"estimate_bytes": int(self.total), "run_process_bytes": int(self.main),
                "worker_bytes": int(self.worker), "workers": self.workers,
                "budget_bytes": int(self.budget)}


def unit_bytes(shape: TaskShape, m: int, splits: int) -> float:
    """The estimated peak of a unit of ``splits`` splits at size ``m``: one chunk of
    ``score_splits`` (its split count as ``score_splits`` chooses it) at a time, and the
    separating-hyperplane sampler's block within it."""
    width = max(STACK_COPIES * 8.0 * m * shape.width, shape.sparse[0] + shape.sparse[1] * m)
    chunk = len(range(splits)[next(split_chunks(splits, width, DEFAULT_BUDGET.stacks))])
    return UNIT_FIXED + chunk * shape.split_bytes(m) + sampler_bytes(shape, m, chunk)


def sampler_bytes(shape: TaskShape, m: int, splits: int) -> float:
    """The peak of the HMC sampler of separable training sets (an LR model that samples):
    a block of at least ``hmc.MIN_BLOCK`` splits, each holding its m x m Gram matrix up to
    ``hmc.GRAM_ROWS`` rows (above, no Gram matrix: a fit on all of a large separable set
    holds its rows and a few numbers per row)."""
    if not shape.hyperplanes:
        return 0.0
    gram = m * m if m <= GRAM_ROWS else 0
    per_split = 8.0 * (gram + m * (shape.width + 4))
    block = min(splits, max(MIN_BLOCK, int(DEFAULT_BUDGET.hmc // per_split)))
    return block * per_split


def gib(n: float) -> str:
    return f"{n / GiB:.1f} GiB"


def plan(
    shapes: Sequence[TaskShape], *, splits: int, block: int, workers: int, threads: int = 1,
    budget: float,
) -> Plan:
    """The run's estimate, for units of ``block`` splits.

    ``workers`` is the number of worker processes on this machine; 0 when the units run in
    this process, ``threads`` at a time (sequential: 1; threading: its jobs), or on a remote
    dask cluster, whose memory is its own. Raises ``ConfigError`` when the estimate is above
    ``budget``.
    """
    per_unit = min(block, splits)
    unit_peak = 0.0
    units = 0
    for shape in shapes:
        units += len(shape.grid) * -(-splits // per_unit)
        unit_peak = max([unit_peak, unit_bytes(shape, shape.rows, 1),  # the fit on all rows
                         *(unit_bytes(shape, m, per_unit) for m in shape.grid)])
    loaded = sum(s.loaded_bytes() for s in shapes)
    rows = max((splits * len(s.grid) * s.models for s in shapes), default=0)
    main = BASE + sum(LOAD * s.data_bytes for s in shapes) + ROW_BYTES * rows
    main += UNIT_OBJECT_BYTES * units
    if workers:
        worker = BASE + loaded + unit_peak
        total = main + workers * worker
    else:
        worker = 0.0
        total = main + loaded + threads * unit_peak
    result = Plan(total, main, worker, workers, budget)
    if total > budget:
        raise ConfigError(_refusal(result, shapes, unit_peak))
    return result


def _refusal(result: Plan, shapes: Sequence[TaskShape], unit_peak: float) -> str:
    big = max(shapes, key=lambda s: s.loaded_bytes())
    if result.workers > 1 and result.main + result.worker <= result.budget:
        fix = f"use fewer workers (--jobs 1 needs {gib(result.main + result.worker)})"
    elif unit_peak > result.budget / 4:
        fix = (f"a fit on all {big.rows} rows of {big.name} alone needs {gib(unit_peak)}: "
               "use fewer rows or features")
    else:
        fix = "use fewer splits, sizes, rows or features, or --jobs 1"
    return (f"memory: the run would need {result.describe()}, more than the "
            f"{gib(result.budget)} it may use here; {fix}")


def machine_bytes() -> float:
    """The memory this process may use: the machine's, or its cgroup's limit if lower."""
    try:
        total = float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        total = float("inf")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, float(text))
    return total * SHARE


def task_shape(name: str, data, grid: Sequence[int], models: Sequence) -> TaskShape:
    """The ``TaskShape`` of a loaded ``Dataset`` and the run's ``ModelSpec``s (each model's
    registry entry says how wide its design may be and how many hyperplanes it keeps)."""
    d = data.n_features
    entries = [(lookup(m.family, data.kind, data.multiclass, model=m.name, task=name),
                m.options) for m in models]
    planned = [entry.planned(data, opts) for entry, opts in entries]
    width = max((w for w, _ in planned), default=d + 1)
    hyperplanes = max((h for _, h in planned), default=0)
    sparse = [entry.sparse_bytes(data, opts) for entry, opts in entries
              if hasattr(entry, "sparse_bytes")]
    sparse = [s for s in sparse if s is not None]
    if data.kind != "text":
        return TaskShape(name, data.n_rows, d, width, tuple(grid), hyperplanes, len(models))
    X = data.X  # csr: values, column indices, row pointers
    nbytes = float(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)
    return TaskShape(name, data.n_rows, d, width, tuple(grid), hyperplanes, len(models),
                     sparse=(max((s[0] for s in sparse), default=0.0),
                             max((s[1] for s in sparse), default=0.0)),
                     nbytes=nbytes)
