"""What loading a task, building its designs and drawing its training sets cost.

Usage::

    python benchmarks/data_memory.py [TASK ...]      # default: adult-discrete adult-continuous

For each built-in task, in a fresh interpreter state as far as it goes (one task after
another): the peak of the traced allocations (``tracemalloc``, which sees numpy's arrays)
and the time of ``load_task`` from the shipped files; the same for building each model
design and what the design keeps; and the time per split of drawing 1000 training sets at
the task's largest paper size, by numpy's per-split path (a plain list of seeds) and by the
compiled one (``SplitSeeds``), which must draw the same rows.

It uses only functions that older versions have too, so running it with ``PYTHONPATH``
set to an older checkout measures that version (the compiled draw is then reported as
absent).
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from nbvslr.config import load_config
from nbvslr.data import load_task
from nbvslr.models.design import get_design
from nbvslr.splits import draw_train_sets, split_seeds

REPO = Path(__file__).resolve().parent.parent

DESIGNS = {"discrete": ("onehot", "onehot_ref"), "continuous": ("x",)}
SPLITS = 1000


def traced(fn):
    """``(result, peak MB, held MB, seconds)`` of one call, allocations traced."""
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - t0
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, peak / 1e6, held / 1e6, seconds


def held_mb(design) -> float:
    return sum(v.nbytes for v in vars(design).values() if isinstance(v, np.ndarray)) / 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tasks", nargs="*", default=["adult-discrete", "adult-continuous"])
    args = ap.parse_args(argv)
    for task in args.tasks:
        config = load_config(REPO / "configs" / f"{task}.yaml")
        spec, m = config.tasks[0], max(config.grids[0])
        data, peak, _, seconds = traced(lambda: load_task(spec, config.data))  # noqa: B023
        print(f"{task}: load {seconds:.2f} s, peak {peak:.0f} MB "
              f"({data.n_rows} rows, {data.n_features} features)")
        for name in DESIGNS[data.kind]:
            design, peak, _, seconds = traced(lambda: get_design(data, name))  # noqa: B023
            print(f"  design {name}: build {seconds:.2f} s, peak {peak:.0f} MB, "
                  f"keeps {held_mb(design):.0f} MB")
        draw, _ = split_seeds(config.seed, task, m, range(SPLITS))
        draw_train_sets(data.y, m, draw[:2])  # the compiled loop loaded (or compiled)
        t0 = time.process_time()
        numpy_sets = draw_train_sets(data.y, m, list(draw))
        numpy_us = (time.process_time() - t0) / SPLITS * 1e6
        t0 = time.process_time()
        sets = draw_train_sets(data.y, m, draw)
        ours_us = (time.process_time() - t0) / SPLITS * 1e6
        # nbvslr.kernels.draws; nbvslr.draw_kernel in versions before the kernels package
        compiled = any(k in sys.modules for k in ("nbvslr.kernels.draws", "nbvslr.draw_kernel"))
        same = "same rows" if np.array_equal(sets, numpy_sets) else "DIFFERENT ROWS"
        print(f"  draws at m = {m}: numpy {numpy_us:.1f} us a split; "
              + (f"compiled {ours_us:.1f} us a split ({same})" if compiled
                 else "no compiled draw in this version"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
