"""LR on the panels with quasi-separated training sets: this tree against a reference tree.

The reference is another checkout (e.g. ``git archive <commit> | tar -x -C /tmp/base``),
the code before quasi-separated sets were told apart (Newton's iterate on all rows, run
until its gradient criterion stops it). For each (task, m) both trees' ``score_splits`` of
the stated ``lr`` fit the same splits, each in a fresh process with BLAS on one thread,
interleaved, ``--repeat`` times; it prints the median CPU seconds per 1000 splits of each,
their ratio, the CPU seconds of the quasi direction problem within them
(``separation.max_margin_direction``, timed by a wrapper, both trees' own), the share of
quasi splits and the mean test errors of both.

    python benchmarks/quasi.py --reference /tmp/base --splits 200 --repeat 3 [--quick]

With ``--panels``, each case is instead a whole panel: every size of its Figure 1 grid
(``configs/figure1.yaml``), the CPU seconds of all its ``score_splits`` calls at
``--splits`` splits (the three panels with quasi-separated sets):

    python benchmarks/quasi.py --reference /tmp/base --splits 1000 --repeat 2 --panels
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(ROOT))

from benchmarks import harness  # noqa: E402

CASES = [("adult-discrete", 22), ("adult-discrete", 102), ("adult-discrete", 202),
         ("adult-discrete", 382), ("sick", 56), ("breast-cancer", 128),
         ("adult-continuous", 26)]
QUICK = [("adult-discrete", 102), ("adult-discrete", 382), ("sick", 56)]
PANELS = [("adult-discrete", 0), ("breast-cancer", 0), ("sick", 0)]

#: Run in a fresh process inside one tree: the CPU seconds of one score_splits call.
CHILD = r"""
import json, sys, time
import numpy as np
from threadpoolctl import threadpool_limits
from nbvslr.api import read_config
from nbvslr.data import load_task
from nbvslr.models import score_splits
from nbvslr.splits import draw_train_sets, split_seeds
from nbvslr.config import load_config
spent = [0.0]  # CPU seconds in the direction problem (nan: a tree without one)
try:
    import nbvslr.models.lr.separation as separation
    inner = separation.max_margin_direction
    def timed(*args, **kwargs):
        t = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[0] += time.process_time() - t
    separation.max_margin_direction = timed
except (ImportError, AttributeError):
    spent[0] = float("nan")
task, m, S = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cfg = read_config({"tasks": [task], "splits": S, "models": {"lr": {}}})
data = load_task(cfg.tasks[0], cfg.data)
if m:  # one size
    sizes = [m]
else:  # m = 0: every size of the panel's Figure 1 grid
    fig = load_config("configs/figure1.yaml", splits=S)
    sizes = [list(g) for t, g in zip(fig.tasks, fig.grids) if t.name == task][0]
cpu, errors, quasi = 0.0, [], []
with threadpool_limits(1):
    draw, model = split_seeds(0, task, sizes[-1], range(8))
    score_splits(cfg.models[0], data, draw_train_sets(data.y, sizes[-1], draw), model)  # warm
    spent[0] *= 0.0  # nan stays nan
    for m in sizes:
        draw, model = split_seeds(0, task, m, range(S))
        idx = draw_train_sets(data.y, m, draw)
        t0 = time.process_time()
        out = score_splits(cfg.models[0], data, idx, model)
        cpu += time.process_time() - t0
        errors.append(float(out["error"].mean()))
        quasi.append(float(np.mean(out["separation"] == 2)) if "separation" in out
                     else float("nan"))
print(json.dumps({"cpu": cpu, "direction": spent[0], "error": float(np.mean(errors)),
                  "quasi": float(np.mean(quasi))}))
"""


def run(tree: Path, task: str, m: int, splits: int) -> dict:
    return harness.run_in_tree(tree, CHILD, task, m, splits)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path, required=True, help="the reference tree")
    ap.add_argument("--splits", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="three cases only")
    ap.add_argument("--panels", action="store_true",
                    help="the three panels' whole Figure 1 grids (m = 0 in the table)")
    args = ap.parse_args()
    print(f"{'task':<18}{'m':>5}{'quasi':>7}{'ours s/1000':>13}{'ref s/1000':>12}"
          f"{'ratio':>7}{'dir ours':>10}{'dir ref':>9}{'err ours':>10}{'err ref':>9}")
    total = {"ours": 0.0, "ref": 0.0, "dir ours": 0.0, "dir ref": 0.0}
    for task, m in PANELS if args.panels else QUICK if args.quick else CASES:
        ours, ref = [], []
        for _ in range(args.repeat):  # interleaved: both see the same load
            ours.append(run(ROOT, task, m, args.splits))
            ref.append(run(args.reference, task, m, args.splits))
        k = 1000 / args.splits
        a = statistics.median(r["cpu"] for r in ours) * k
        b = statistics.median(r["cpu"] for r in ref) * k
        da = statistics.median(r.get("direction", float("nan")) for r in ours) * k
        db = statistics.median(r.get("direction", float("nan")) for r in ref) * k
        total["ours"] += a
        total["ref"] += b
        total["dir ours"] += da
        total["dir ref"] += db
        print(f"{task:<18}{m:>5}{ours[0]['quasi']:>7.2f}{a:>13.2f}{b:>12.2f}{a / b:>7.2f}"
              f"{da:>10.2f}{db:>9.2f}{ours[0]['error']:>10.4f}{ref[0]['error']:>9.4f}",
              flush=True)
    print(f"{'all':<30}{total['ours']:>13.2f}{total['ref']:>12.2f}"
          f"{total['ours'] / total['ref']:>7.2f}{total['dir ours']:>10.2f}"
          f"{total['dir ref']:>9.2f}")


if __name__ == "__main__":
    main()
