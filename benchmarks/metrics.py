"""The cost of measuring every metric: a run with ``metrics: [error, log_loss, brier,
train_error]`` against the same run with the default ``[error]``, side by side.

Usage::

    python benchmarks/metrics.py             # full: the plan below, 5 repeats
    python benchmarks/metrics.py --quick     # pima alone, 100 splits, 3 repeats

``benchmarks/bench.py`` calls ``main_section`` (its "Metrics" section). Per config: the CPU
time (``harness.CLOCK``) of ``nbvslr.run(config, out=<new folder>)`` in this process (one
job: fits, checkpoints, files and curve.png), the two variants alternating, each repeat in
a fresh folder; the ratio of each repeat's pair, and their median. The two variants share
the machine's load within a repeat, so the ratio holds on a busy machine better than either
time. Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(REPO))

import nbvslr  # noqa: E402
from benchmarks import harness  # noqa: E402

ALL = ["error", "log_loss", "brier", "train_error"]
#: (label, config): continuous and discrete panels of Figure 1 at the paper's grid and 1000
#: splits, a K-class task and a text task.
FULL_PLAN: tuple[tuple[str, dict[str, Any]], ...] = (
    ("pima (continuous), nb + lr", {"tasks": ["pima"], "splits": 1000}),
    ("ionosphere (continuous), nb + lr", {"tasks": ["ionosphere"], "splits": 1000}),
    ("breast-cancer (discrete), nb + lr", {"tasks": ["breast-cancer"], "splits": 1000}),
    ("lymphography-4 (4 classes), nb + lr C=1",
     {"tasks": ["lymphography-4"], "splits": 200,
      "models": {"nb": {}, "lr-C1": {"model": "lr", "C": 1.0}}}),
    ("sms-spam (text), nb + lr C=1, m <= 300",
     {"tasks": ["sms-spam"], "splits": 100, "sizes": [10, 30, 100, 300],
      "models": {"nb": {}, "lr-C1": {"model": "lr", "C": 1.0}}}),
)
QUICK_PLAN = (("pima (continuous), nb + lr", {"tasks": ["pima"], "splits": 100}),)
REPEATS = 5


def one_run(config: dict[str, Any], metrics: list[str] | None) -> float:
    """CPU seconds of one run of ``config`` writing to a new folder."""
    with tempfile.TemporaryDirectory() as folder:
        seconds, _, _ = harness.time_repeated(
            lambda: nbvslr.run(config, out=folder, progress=False, metrics=metrics), 1)
    return seconds


def measure(label: str, config: dict[str, Any], repeats: int) -> dict[str, Any]:
    """The two variants of ``config``, alternating, ``repeats`` times each (after one small
    run of each: the data, the designs and the compiled loops loaded)."""
    nbvslr.run(config, splits=10, progress=False)
    nbvslr.run(config, splits=10, progress=False, metrics=ALL)
    base, every = [], []
    for k in range(repeats):
        order = ((None, base), (ALL, every)) if k % 2 == 0 else ((ALL, every), (None, base))
        for metrics, times in order:
            times.append(one_run(config, metrics))
    ratios = [e / b for b, e in zip(base, every, strict=True)]
    return {"config": label, "base_s": base, "all_s": every,
            "median_ratio": statistics.median(ratios),
            "ratio_of_medians": statistics.median(every) / statistics.median(base)}


def table(rows: list[dict[str, Any]]) -> str:
    """The rows in Markdown."""
    lines = ["| config | [error] s (median) | all four s (median) | ratio (median of pairs) "
             "| ratios |", "|" + "---|" * 5]
    for r in rows:
        each = ", ".join(f"{e / b:.2f}" for b, e in zip(r["base_s"], r["all_s"], strict=True))
        lines.append(
            f"| {r['config']} | {statistics.median(r['base_s']):.2f} "
            f"| {statistics.median(r['all_s']):.2f} | {r['median_ratio']:.3f} | {each} |")
    return "\n".join(lines)


def main_section(quick: bool) -> dict[str, Any]:
    """Measure and print the metrics section; return its numbers."""
    repeats = 3 if quick else REPEATS
    print(f"\n## Metrics: a run measuring all four against [error], CPU seconds of this "
          f"process, one job ({repeats} repeats, alternating)", flush=True)
    rows = []
    for label, config in (QUICK_PLAN if quick else FULL_PLAN):
        row = measure(label, config, repeats)
        rows.append(row)
        print(f"  {label}: x{row['median_ratio']:.3f}", flush=True)
    print()
    print(table(rows))
    return {"rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", type=Path, help="also write the numbers here")
    args = ap.parse_args(argv)
    report = main_section(args.quick)
    if args.json:
        harness.write_json(args.json, report)
    return 0


if __name__ == "__main__":
    harness.one_openmp_thread()
    sys.exit(main())
