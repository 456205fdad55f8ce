"""Where the fits of Figure 1 spend their CPU: per panel and per stage, in one process.

Usage::

    python benchmarks/figure1_stages.py [--splits 1000] [TASK ...]

For each panel of ``configs/figure1.yaml`` (or the TASKs named), every size of its grid is
drawn as ``nbvslr run`` draws it and scored by ``score_splits`` for NB and for LR, one BLAS
thread; it prints the CPU seconds of each model and of LR's stages: ``detect`` (telling
overlap, complete and quasi sets apart, ``separation.detect``, with the Newton fits and the
direction problem it runs), ``newton`` (every ``newton.fit_newton``, inside ``detect`` or
not), ``direction`` (``separation.max_margin_direction``, the quasi sets' direction
problem), ``hmc`` (the separable-set sampler) and ``heldout`` (scoring, NB's and LR's).
What it leaves out of a ``nbvslr run``: start-up, the data load, the workers' hand-over
and the calling process's files and figures.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_limits

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script: the tree's nbvslr
    sys.path.insert(0, str(REPO))

import nbvslr.models as models  # noqa: E402
import nbvslr.models.lr.entry as lr  # noqa: E402
import nbvslr.models.lr.separation as separation  # noqa: E402
from nbvslr.config import load_config  # noqa: E402
from nbvslr.runner.units import loaded  # noqa: E402
from nbvslr.splits import draw_train_sets, split_seeds  # noqa: E402

STAGES: collections.Counter[str] = collections.Counter()
STAGE_NAMES = ("detect", "newton", "direction", "hmc", "heldout")


def _timed(module: Any, name: str, stage: str) -> None:
    """Replace ``module.name`` by a wrapper adding its CPU time to ``STAGES[stage]``."""
    fn: Callable[..., Any] = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            STAGES[stage] += time.process_time() - t0

    setattr(module, name, wrapper)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", type=int, default=1000)
    ap.add_argument("tasks", nargs="*")
    args = ap.parse_args(argv)
    # Newton is called by name from the entry and from the detection: both names wrapped
    _timed(lr, "fit_newton", "newton")
    _timed(separation, "fit_newton", "newton")
    _timed(separation, "max_margin_direction", "direction")
    _timed(lr, "detect", "detect")
    _timed(lr, "sample_separating_hmc", "hmc")
    _timed(models, "_heldout", "heldout")
    config = load_config(REPO / "configs" / "figure1.yaml", splits=args.splits)
    totals: collections.Counter[str] = collections.Counter()
    with threadpool_limits(limits=1):
        for spec, grid in zip(config.tasks, config.grids, strict=True):
            if args.tasks and spec.name not in args.tasks:
                continue
            data, _ = loaded(spec, config.data)
            before = dict(STAGES)
            spent = {}
            for model in config.models:
                t0 = time.process_time()
                for m in grid:
                    draw, seeds = split_seeds(config.seed, spec.name, m, range(args.splits))
                    models.score_splits(model, data, draw_train_sets(data.y, m, draw), seeds)
                spent[model.name] = time.process_time() - t0
            stages = {k: STAGES[k] - before.get(k, 0.0) for k in STAGE_NAMES}
            print(f"{spec.name:18s} " + "  ".join(f"{k} {v:6.2f}" for k, v in spent.items())
                  + "   " + "  ".join(f"{k} {v:6.2f}" for k, v in stages.items()), flush=True)
            totals.update(spent)
    print("all panels         " + "  ".join(f"{k} {v:6.2f}" for k, v in totals.items())
          + "   " + "  ".join(f"{k} {STAGES[k]:6.2f}" for k in STAGE_NAMES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
