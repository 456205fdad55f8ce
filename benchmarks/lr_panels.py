"""LR on whole Figure 1 panels: this tree against a reference tree, CPU and bit-identity.

The reference is another checkout (e.g. ``git archive main | tar -x -C /tmp/base``). For each
panel of ``configs/figure1.yaml`` (or the TASKs named), each tree scores every size of the
panel's grid with the stated ``lr`` fit (``score_splits``, ``--splits`` splits per size, BLAS
on one thread) in a fresh process; the two trees alternate, ``--repeat`` times. It prints the
median CPU seconds of each tree, their ratio, and whether the two trees gave the same bits:
a sha256 over every array ``score_splits`` returns and every field of every LR ``Fit``
(hyperplanes, sampled hyperplanes, quasi directions, step counts) at every size.

    python benchmarks/lr_panels.py --reference /tmp/base --splits 1000 --repeat 2 [TASK ...]
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

#: Run in a fresh process inside one tree: CPU seconds of a panel's LR and its outputs' hash.
CHILD = r"""
import dataclasses, hashlib, json, sys, time
import numpy as np
from threadpoolctl import threadpool_limits
from nbvslr.api import read_config
from nbvslr.config import load_config
from nbvslr.data import load_task
from nbvslr.models import score_splits
from nbvslr.splits import draw_train_sets, split_seeds
import nbvslr.models.lr.entry as entry

task, S = sys.argv[1], int(sys.argv[2])
cfg = read_config({"tasks": [task], "splits": S, "models": {"lr": {}}})
data = load_task(cfg.tasks[0], cfg.data)
fig = load_config("configs/figure1.yaml", splits=S)
sizes = [list(g) for t, g in zip(fig.tasks, fig.grids) if t.name == task][0]
digest = hashlib.sha256()

def update(a):
    a = np.ascontiguousarray(a)
    digest.update(f"{a.dtype}{a.shape}".encode())
    digest.update(a.tobytes())

inner = entry.fit_lr
def hashed(*args, **kwargs):
    fit = inner(*args, **kwargs)
    for value in dataclasses.astuple(fit):
        update(value)
    return fit
entry.fit_lr = hashed
cpu = 0.0
with threadpool_limits(1):
    draw, model = split_seeds(0, task, sizes[-1], range(8))
    score_splits(cfg.models[0], data, draw_train_sets(data.y, sizes[-1], draw), model)  # warm
    digest = hashlib.sha256()
    for m in sizes:
        draw, model = split_seeds(0, task, m, range(S))
        idx = draw_train_sets(data.y, m, draw)
        t0 = time.process_time()
        out = score_splits(cfg.models[0], data, idx, model)
        cpu += time.process_time() - t0
        for key in sorted(out):
            update(out[key])
print(json.dumps({"cpu": cpu, "sha256": digest.hexdigest()}))
"""


def run(tree: Path, task: str, splits: int) -> dict:
    return harness.run_in_tree(tree, CHILD, task, splits)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path, required=True, help="the reference tree")
    ap.add_argument("--splits", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("tasks", nargs="*", help="panels (default: every Figure 1 panel)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from nbvslr.config import load_config

    names = [t.name for t in load_config(ROOT / "configs" / "figure1.yaml").tasks]
    print(f"{'task':<18}{'ours s':>8}{'ref s':>8}{'ratio':>7}  identical", flush=True)
    total = {"ours": 0.0, "ref": 0.0}
    same_all = True
    for task in args.tasks or names:
        ours, ref = [], []
        for _ in range(args.repeat):  # interleaved: both see the same load
            ours.append(run(ROOT, task, args.splits))
            ref.append(run(args.reference, task, args.splits))
        a = statistics.median(r["cpu"] for r in ours)
        b = statistics.median(r["cpu"] for r in ref)
        same = {r["sha256"] for r in ours + ref}
        same_all &= len(same) == 1
        total["ours"] += a
        total["ref"] += b
        print(f"{task:<18}{a:>8.2f}{b:>8.2f}{a / b:>7.2f}  {len(same) == 1}", flush=True)
    print(f"{'all':<18}{total['ours']:>8.2f}{total['ref']:>8.2f}"
          f"{total['ours'] / total['ref']:>7.2f}  {same_all}")


if __name__ == "__main__":
    main()
