"""Every curve of Figure 1 and of configs/synthetic.yaml, rerun with few splits, against the
committed reference in results/reference/ (made by ``make refresh-reference`` at 1000 splits).

The whole set of tasks is run once (``SPLITS`` splits per size) and compared in one
``compare.compare`` call, so the false-alarm budget is shared by every point of every task
(see ``nbvslr.analysis.compare``); each task is then one test. A change that bends a curve fails its
task's test with the table of what moved; ``make compare`` prints the whole table.

Deselect locally with ``-m "not curves"``; CI runs it. It reads the shipped UCI files and is
skipped only when results/reference/ holds no reference at all.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from nbvslr.analysis import compare
from nbvslr.config import load_config
from nbvslr.data.dataset import DataSettings
from nbvslr.runner import run_experiment

pytestmark = pytest.mark.curves

REPO = Path(__file__).resolve().parents[2]
REFERENCE = Path(os.environ.get("NBVSLR_GUARD_REFERENCE") or REPO / "results" / "reference")
"""The committed reference; ``NBVSLR_GUARD_REFERENCE`` points the check at another one."""
CONFIGS = (REPO / "configs" / "figure1.yaml", REPO / "configs" / "synthetic.yaml")
SPLITS = 300
"""Splits per size of the rerun. Measured on 2 cores (jobs = 2): Figure 1 + synthetic take
18 s at 100 splits and about 45 s at 300; the tolerance is ~5 combined sems, ~0.03 in error
for a per-split sd of 0.1 at 300 splits (0.05 at 100) (nbvslr.analysis.compare)."""
JOBS = 2


def _task_names(config: Path) -> list[str]:
    raw = yaml.safe_load(config.read_text("utf-8"))
    return [t if isinstance(t, str) else t["name"] for t in raw["tasks"]]


TASKS = [name for config in CONFIGS for name in _task_names(config)]


@pytest.fixture(scope="session")
def report(tmp_path_factory: pytest.TempPathFactory) -> compare.Report:
    """The rerun of every task, compared with the committed reference."""
    if not any((REFERENCE / task / "summary.csv").is_file() for task in TASKS):
        pytest.skip(f"no committed reference in {REFERENCE}: run `make refresh-reference` "
                    f"and commit results/reference/")
    out = tmp_path_factory.mktemp("curves")
    data = DataSettings(cache_dir=out / "cache", mirror=None, download=False)
    for config in CONFIGS:
        run_experiment(load_config(config, splits=SPLITS, out=out / "runs", data=data,
                                   jobs=JOBS))
    return compare.compare(REFERENCE, out / "runs", tasks=TASKS)


def test_every_task_is_compared(report: compare.Report) -> None:
    """The rerun covers every task on its whole grid; prints the table of what moved."""
    print()
    print(report.table(largest=20))
    assert report.tasks == tuple(TASKS)
    points = [c for c in report.checks if c.kind == "point"]
    assert {c.task for c in points} == set(TASKS)
    assert report.z > 4  # the Bonferroni multiplier over all points of all tasks


@pytest.mark.parametrize("task", TASKS)
def test_curve_holds(report: compare.Report, task: str) -> None:
    """The task's curves, winners at both ends and crossovers match the reference."""
    mine = report.only(task)
    assert mine.ok, (
        f"{task}: the curves moved beyond their noise. If the change is deliberate, "
        f"review the table, run `make refresh-reference` and commit results/reference/.\n"
        + mine.table())
