"""The text models of an earlier commit against the working tree's, side by side.

Usage::

    python benchmarks/text_before.py --base 5f5fc1a [--splits 100] [--sizes 10 200 2000]

Loads ``nbvslr/models/text.py`` and ``nbvslr/data/text.py`` as they were at ``--base``
(``git show``) beside the current ones and times, in one process with BLAS on one thread,
what a run does for each model at each size on sms-spam's run splits (seed 0): the
vocabularies, the fits and the held-out errors (the base's own way: its ``scores`` and an
(S, N) mask). Prints CPU seconds per 1000 splits of both, their ratio and the largest
difference of the held-out errors.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from nbvslr.data.text import count_matrix, load_sms_spam, split_vocabulary  # noqa: E402
from nbvslr.models import text as now  # noqa: E402
from nbvslr.splits import draw_train_sets, split_seeds  # noqa: E402

CLOCK = time.process_time


def load_at(commit: str, path: str, name: str, folder: Path):
    """The module at ``path`` as it was at ``commit``, imported under ``name``."""
    source = subprocess.run(["git", "-C", str(REPO), "show", f"{commit}:{path}"], check=True,
                            capture_output=True, text=True).stdout
    file = folder / f"{name}.py"
    file.write_text(source)
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the earlier commit")
    ap.add_argument("--splits", type=int, default=100)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 200, 2000])
    args = ap.parse_args()
    task = load_sms_spam()
    X, _ = count_matrix(task.documents)
    y, N = task.y, X.shape[0]
    with tempfile.TemporaryDirectory() as tmp:
        old_models = load_at(args.base, "nbvslr/models/text.py", "base_models_text", Path(tmp))
        old_data = load_at(args.base, "nbvslr/data/text.py", "base_data_text", Path(tmp))

    def before(idx, model):
        keep = old_data.split_vocabulary(X, idx)
        if model == "lr":
            theta, _, _ = old_models.fit_lr_text(X, y, idx, keep, 1.0)
            Z = X
        else:
            theta = old_models.fit_nb_text(X, y, idx, keep, model)
            Z = old_models.design_of(X, model)
        z = old_models.scores(Z, theta)
        test = np.ones((len(idx), N), dtype=bool)
        test[np.arange(len(idx))[:, None], idx] = False
        signed = z * np.where(y == 1, 1.0, -1.0)
        err = np.where(signed < 0, 1.0, np.where(signed == 0, 0.5, 0.0))
        return (err * test).sum(axis=1) / (N - idx.shape[1])

    def after(idx, model):
        keep = split_vocabulary(X, idx)
        if model == "lr":
            theta, _, _ = now.fit_lr_text(X, y, idx, keep, 1.0)
            return now.heldout_errors(X, y, theta, idx)
        theta = now.fit_nb_text(X, y, idx, keep, model)
        return now.heldout_errors(now.design_of(X, model), y, theta, idx)

    print(f"sms-spam, {args.splits} splits per m, CPU seconds per 1000 splits, 1 thread; "
          f"before = {args.base}")
    print("| m | model | before | after | x | max abs err diff |")
    print("|---|---|---|---|---|---|")
    with threadpool_limits(limits=1):
        for model in ("multinomial", "bernoulli", "lr"):  # warm-up: compiled loops loaded
            after(np.array([[0, 2, 3, 4]]), model)
        for m in args.sizes:
            draw, _ = split_seeds(0, "sms-spam", m, range(args.splits))
            idx = draw_train_sets(y, m, draw)
            for model in ("multinomial", "bernoulli", "lr"):
                t0 = CLOCK()
                a = before(idx, model)
                t1 = CLOCK()
                b = after(idx, model)
                t2 = CLOCK()
                per_k = 1000 / args.splits
                name = "lr" if model == "lr" else f"nb-{model}"
                print(f"| {m} | {name} | {(t1 - t0) * per_k:.2f} | {(t2 - t1) * per_k:.3f} "
                      f"| {(t1 - t0) / (t2 - t1):.1f} | {np.abs(a - b).max():.1e} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
