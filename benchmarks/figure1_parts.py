"""CPU of the parts of Figure 1 outside LR's fits: every task's data load, and NB's
``score_splits`` over each panel's grid (the fit and the held-out counts), in one process.

Usage::

    python benchmarks/figure1_parts.py [--splits 1000] [--repeat 2] [TASK ...]

The nbvslr measured is the one Python imports (``PYTHONPATH=TREE`` measures an older
checkout, ``git archive REV | tar -x -C TREE``, the same way: the first line names it);
alternate the two and compare medians (benchmarks/RESULTS.md, "Figure 1 outside the
quasi-separated sets").
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

import nbvslr
import nbvslr.models as models
from nbvslr.config import load_config
from nbvslr.data import load_task
from nbvslr.splits import draw_train_sets, split_seeds

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "figure1.yaml"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("tasks", nargs="*")
    args = ap.parse_args(argv)
    config = load_config(CONFIG, splits=args.splits)
    picked = [(s, g) for s, g in zip(config.tasks, config.grids, strict=True)
              if not args.tasks or s.name in args.tasks]
    nb = next(m for m in config.models if m.family == "nb")
    print(f"# {Path(nbvslr.__file__).parents[1]}: CPU seconds, median of {args.repeat}")
    with threadpool_limits(limits=1):
        loads, data = [], {}
        for _ in range(args.repeat):
            t0 = time.process_time()
            for spec, _ in picked:  # load_task reads and parses every time (no cache)
                data[spec.name] = load_task(spec, config.data)
            loads.append(time.process_time() - t0)
        print(f"data load, {len(picked)} tasks: {statistics.median(loads):.2f}")
        total = 0.0
        for spec, grid in picked:
            sets = []
            for m in grid:
                draw, seeds = split_seeds(config.seed, spec.name, m, range(args.splits))
                sets.append((draw_train_sets(data[spec.name].y, m, draw), seeds))
            times = []
            for _ in range(args.repeat):
                t0 = time.process_time()
                for idx, seeds in sets:
                    models.score_splits(nb, data[spec.name], idx, seeds)
                times.append(time.process_time() - t0)
            total += statistics.median(times)
            print(f"nb {spec.name:18s} {statistics.median(times):6.2f}", flush=True)
        print(f"nb, all {len(picked)} panels: {total:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
