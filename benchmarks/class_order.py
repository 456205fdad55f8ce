"""Does the order of the classes move a K-class model's test error? Paired differences.

Usage::

    python benchmarks/class_order.py [--splits 1000] [--models lr nb lr-C1] [--draws 2]
                                     [--plan lenses-3:3,8,15 lymphography-4:4,32]

For each task and size m: the run's training sets and model seeds (seed 0, as ``nbvslr run``
draws them), each model fitted and scored twice on the same splits -- the task as shipped,
and the same task with its classes listed in another order (the codes relabelled, the rows,
splits and seeds unchanged) -- for every cyclic shift and the reversal of the classes. It
prints, per (task, m, order, model), both mean test errors, the mean paired difference
(other order minus shipped) with its standard error, and z = difference / se. A rule that
does not depend on the order gives NB and LR with a penalty exactly equal errors, and the
paper's rule for separable sets (lr: its sampled weight matrices) differences within the
noise of the sampling (|z| of about 2 or less, most of the time; the rows of one (task, m)
share the shipped order's errors, so their z move together). ``--draws`` sets lr's
``mcmc_draws`` (weight matrices kept per split: more of them, less noise per split).
Nothing here asserts.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script: make ``nbvslr`` importable
    sys.path.insert(0, str(REPO))

from nbvslr.data import DataSettings, TaskSpec, load_task  # noqa: E402
from nbvslr.data.dataset import Dataset  # noqa: E402
from nbvslr.models import ModelSpec, resolve_options, score_splits  # noqa: E402
from nbvslr.splits import draw_train_sets, split_seeds  # noqa: E402

SEED = 0
#: The models: name -> (family, options), as configs/multiclass.yaml writes them.
MODELS = {"lr": ("lr", {}), "nb": ("nb", {}), "lr-C1": ("lr", {"C": 1.0})}
PLAN = "lenses-3:3,8,15 lymphography-4:4,32"


def relabelled(data: Dataset, order: np.ndarray) -> Dataset:
    """``data`` with its classes listed in ``order`` (old codes, new code first): the same
    rows, the same name (so the same seeds), class ``order[j]`` coded j."""
    code = np.empty_like(order)
    code[order] = np.arange(order.size)
    return dataclasses.replace(data, y=code[np.asarray(data.y)].astype(data.y.dtype),
                               classes=tuple(data.classes[k] for k in order))


def orders(K: int) -> list[np.ndarray]:
    """The other orders measured: every cyclic shift, then the reversal."""
    out = [np.roll(np.arange(K), -s) for s in range(1, K)]
    return out + [np.arange(K)[::-1]]


def paired(data: Dataset, m: int, order: np.ndarray, model: str, n_splits: int,
           draws: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per split (n_splits,), the test error of ``model`` on the task as shipped and with
    its classes in ``order``, on the same training sets with the same model seeds
    (``draws``: lr's ``mcmc_draws``, default the option's)."""
    draw, seeds = split_seeds(SEED, data.name, m, range(n_splits))
    idx = draw_train_sets(np.asarray(data.y), m, draw)
    family, options = MODELS[model]
    if draws is not None and model == "lr":
        options = {**options, "mcmc_draws": draws}
    spec = ModelSpec(model, family, resolve_options(model, family, options))
    first = score_splits(spec, data, idx, seeds)["error"]
    other = score_splits(spec, relabelled(data, order), idx, seeds)["error"]
    return first, other


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", type=int, default=1000)
    ap.add_argument("--models", nargs="+", default=["lr", "nb", "lr-C1"], choices=MODELS)
    ap.add_argument("--draws", type=int, default=None, help="lr's mcmc_draws")
    ap.add_argument("--plan", nargs="+", default=PLAN.split(),
                    help="TASK:m,m,... (default: %(default)s)")
    args = ap.parse_args()
    draws = "" if args.draws is None else f", lr keeping {args.draws} draws per split"
    print(f"{args.splits} splits (seed {SEED}){draws}; the classes in another order minus "
          "as shipped")
    print(f"{'task':15s} {'m':>4s} {'order':10s} {'model':6s} {'shipped':>8s} {'other':>8s} "
          f"{'diff':>9s} {'se':>8s} {'z':>6s}")
    for item in args.plan:
        task, sizes = item.split(":")
        data = load_task(TaskSpec(task), DataSettings())
        for m in (int(s) for s in sizes.split(",")):
            for order in orders(data.n_classes):
                for model in args.models:
                    a, b = paired(data, m, order, model, args.splits, args.draws)
                    d = b - a
                    se = d.std(ddof=1) / np.sqrt(d.size)
                    z = d.mean() / se if se > 0 else 0.0
                    label = "".join(str(k) for k in order)
                    print(f"{task:15s} {m:4d} {label:10s} {model:6s} {a.mean():8.4f} "
                          f"{b.mean():8.4f} {d.mean():+9.4f} {se:8.4f} {z:+6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
