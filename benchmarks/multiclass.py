"""Tasks of K > 2 classes: nbvslr against a per-split scikit-learn loop, and the whole
``configs/multiclass.yaml`` run.

Usage::

    python benchmarks/multiclass.py            # full: optdigits-10, 1000 splits, + the run
    python benchmarks/multiclass.py --quick    # one small line (``make bench-quick``)

``benchmarks/bench.py`` calls ``main_section`` (its "Multiclass" section). Per (task, m)
and model, CPU seconds per 1000 splits of this process, BLAS and OpenMP on one thread:

* ``ours``: one ``score_splits`` call on all splits (fit and held-out error);
* ``peer``: scikit-learn fitted and scored split by split on the same training sets
  (``MultiPeer``), timed on the first splits within a budget and extrapolated (``*``):
  ``GaussianNB`` with its variances replaced by ours (one per pixel pooled over the K
  classes, the same epsilon) and our smoothed prior, ``CategoricalNB`` (discrete tasks),
  ``LogisticRegression`` (lbfgs, multinomial) at C = 1 for ``lr-C1`` and unpenalised
  (``C = inf``) for ``lr``, whose separable training sets we average over sampled weight
  matrices (the paper's rule) and the peer leaves where lbfgs stops.

Then, in full mode, ``nbvslr run configs/multiclass.yaml --splits 1000 --jobs 2`` in a
fresh process: its wall time and the peak resident memory of its process tree
(``harness.TreeRSS``, as for Figure 1). Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(REPO))

from benchmarks import harness  # noqa: E402
from nbvslr.data import DataSettings, TaskSpec, load_task  # noqa: E402
from nbvslr.data.dataset import Dataset  # noqa: E402
from nbvslr.models import ModelSpec, resolve_options, score_splits  # noqa: E402
from nbvslr.models.design import get_design  # noqa: E402
from nbvslr.splits import draw_train_sets, split_seeds  # noqa: E402

SEED = 0
CONFIG = REPO / "configs" / "multiclass.yaml"
#: (task, sizes) measured: full, quick.
FULL_PLAN = (("optdigits-10", (50, 200, 500)), ("lymphography-4", (32, 144)))
QUICK_PLAN = (("optdigits-10", (50,)),)
#: Per-split peer loops stop after this many CPU seconds per (task, m, model).
FULL_BUDGET = 3.0
QUICK_BUDGET = 1.0


def specs() -> dict[str, ModelSpec]:
    """The three models of ``configs/multiclass.yaml``."""
    return {
        "nb": ModelSpec("nb", "nb", resolve_options("nb", "nb", {})),
        "lr": ModelSpec("lr", "lr", resolve_options("lr", "lr", {})),
        "lr-C1": ModelSpec("lr-C1", "lr", resolve_options("lr-C1", "lr", {"C": 1.0})),
    }


def like_for_like() -> dict[str, ModelSpec]:
    """``lr-C1`` stopped where the peer's lbfgs stops (``tol`` = 1e-4 on the largest
    gradient component of the mean loss, scikit-learn's default ``tol``), not at the 1e-10
    the runs use: the same work on both sides."""
    opts = resolve_options("lr-C1-tol4", "lr", {"C": 1.0, "tol": 1e-4})
    return {"lr-C1-tol4": ModelSpec("lr-C1-tol4", "lr", opts)}


class MultiPeer:
    """scikit-learn's fit and score of one K-class model on one task, one split at a time."""

    def __init__(self, data: Dataset, spec: ModelSpec):
        from sklearn.linear_model import LogisticRegression
        from sklearn.naive_bayes import CategoricalNB, GaussianNB

        self.y = np.asarray(data.y).astype(np.int64)
        self.K = data.n_classes
        self.opts = dict(spec.options)
        self.family = spec.family
        self.discrete = data.kind == "discrete"
        if spec.family == "lr":
            C = self.opts["C"]
            # the core's design (one reference level per attribute on a discrete task)
            self.X = get_design(data, "onehot_ref" if self.discrete else "x").Z1[:, :-1]
            self._make = lambda: LogisticRegression(C=np.inf if C is None else C,
                                                    max_iter=100)
        elif self.discrete:
            self.X = np.asarray(data.X)
            self._make = lambda: CategoricalNB(alpha=self.opts["smoothing"],
                                               min_categories=np.asarray(data.n_values))
        else:
            self.X = np.asarray(data.X, dtype=np.float64)
            self._make = GaussianNB

    def error(self, train: np.ndarray) -> float:
        """Fit on rows ``train`` (m,) and return the error on every other row."""
        from sklearn.exceptions import ConvergenceWarning

        X, y = self.X, self.y
        Xtr, ytr = X[train], y[train]
        test = np.ones(y.shape[0], dtype=bool)
        test[train] = False
        clf = self._make()
        if self.family == "lr":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                clf.fit(Xtr, ytr)
            return 1.0 - clf.score(X[test], y[test])
        l = self.opts["smoothing"]
        counts = np.bincount(ytr, minlength=self.K).astype(np.float64)
        prior = (counts + l) / (counts.sum() + self.K * l)
        if self.discrete:
            clf.set_params(class_prior=prior)
            clf.fit(Xtr, ytr)
        else:
            clf.fit(Xtr, ytr)
            var_c = clf.var_ - clf.epsilon_  # (K, d) per-class ML variances
            pooled = (counts @ var_c) / counts.sum()  # (d,) within-class ML variance
            eps = max(self.opts["var_smoothing"] * Xtr.var(axis=0).max(), self.opts["var_floor"])
            clf.var_ = np.broadcast_to(pooled + eps, var_c.shape).copy()
            clf.class_prior_ = prior
        return 1.0 - clf.score(X[test], y[test])


def measure(data: Dataset, m: int, n_splits: int, spec: ModelSpec, budget: float,
            peer_max: int) -> dict[str, Any]:
    """CPU seconds per 1000 splits of ours (all splits at once) and of the peer loop."""
    draw, seeds = split_seeds(SEED, data.name, m, range(n_splits))
    idx = draw_train_sets(np.asarray(data.y), m, draw)
    score_splits(spec, data, idx[:2], seeds[:2])  # warm-up: design, compiled loops
    t_ours, _, out = harness.time_repeated(lambda: score_splits(spec, data, idx, seeds), 1)
    peer_model = MultiPeer(data, spec)
    peer = harness.time_loop(lambda i: peer_model.error(idx[i]), total=n_splits,
                             budget=budget, max_items=peer_max)
    n = peer.done
    per_k = 1000.0 / n_splits
    return {
        "task": data.name, "m": m, "model": spec.name, "splits": n_splits,
        "ours_s_per_1000": t_ours * per_k, "peer_s_per_1000": peer.seconds * per_k,
        "peer": peer.as_dict(), "x_peer": peer.seconds / t_ours,
        "separable": float(out["separable"].mean()),
        "mean_error": float(out["error"].mean()),
        "mean_error_same_splits": float(out["error"][:n].mean()),
        "peer_mean_error": float(np.mean(peer.values)),
    }


def config_run(n_splits: int, jobs: int) -> dict[str, Any]:
    """``nbvslr run configs/multiclass.yaml`` in a fresh process: wall time, CPU time of the
    process tree and its peak resident memory."""
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    with tempfile.TemporaryDirectory(prefix="nbvslr-bench-mc-") as tmp:
        cmd = [sys.executable, "-m", "nbvslr", "run", str(CONFIG), "--splits", str(n_splits),
               "--jobs", str(jobs), "--out", tmp, "--force", "-q"]
        c0, t0 = harness.child_cpu_seconds(), time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
        with harness.TreeRSS(proc.pid) as mon:
            proc.wait()
        wall = time.perf_counter() - t0
        cpu = harness.child_cpu_seconds() - c0
    if proc.returncode != 0:
        raise RuntimeError(f"the multiclass run failed (exit {proc.returncode})")
    return {"splits": n_splits, "jobs": jobs, "wall_seconds": wall, "cpu_seconds": cpu,
            "peak_rss_total_mib": mon.peak_total, "peak_rss_single_mib": mon.peak_single}


def table(rows: list[dict[str, Any]]) -> str:
    """The rows in Markdown."""
    lines = ["| task | m | model | ours s/1000 | peer s/1000 | x peer | sep % "
             "| err ours / peer (same splits) |", "|" + "---|" * 8]
    for r in rows:
        star = "*" if r["peer"]["extrapolated"] else ""
        lines.append(
            f"| {r['task']} | {r['m']} | {r['model']} | {r['ours_s_per_1000']:.2f} "
            f"| {r['peer_s_per_1000']:.1f}{star} ({r['peer']['done']}) | {r['x_peer']:.1f} "
            f"| {100 * r['separable']:.0f} "
            f"| {r['mean_error_same_splits']:.3f} / {r['peer_mean_error']:.3f} |")
    return "\n".join(lines)


def main_section(quick: bool, n_splits: int | None = None, jobs: int = 2,
                 run: bool = True) -> dict[str, Any]:
    """Measure and print the multiclass section; return its numbers."""
    n = n_splits or (50 if quick else 1000)
    budget = QUICK_BUDGET if quick else FULL_BUDGET
    rows: list[dict[str, Any]] = []
    print(f"\n## Multiclass: ours vs a per-split scikit-learn loop, CPU seconds per 1000 "
          f"splits, 1 core ({n} splits)", flush=True)
    models = specs() if quick else {**specs(), **like_for_like()}
    with threadpool_limits(limits=1):
        for task, sizes in (QUICK_PLAN if quick else FULL_PLAN):
            data = load_task(TaskSpec(task), DataSettings())
            for m in sizes:
                for name, spec in models.items():
                    if quick and name == "lr":
                        continue  # the sampler's compile alone is seconds
                    row = measure(data, m, n, spec, budget, 10 if quick else n)
                    rows.append(row)
                    print(f"  {task} m={m} {name}: ours {row['ours_s_per_1000']:.2f} s/1000, "
                          f"x{row['x_peer']:.1f} vs peer", flush=True)
    print("peer: * = extrapolated from the first (n) splits; lr: the paper's rule (ours "
          "samples the separable sets' weight matrices), the peer is unpenalised lbfgs; "
          "lr-C1-tol4: lr-C1 stopped at the peer's tolerance (1e-4), the peer as for lr-C1")
    print()
    print(table(rows))
    out: dict[str, Any] = {"rows": rows}
    if run and not quick:
        whole = config_run(1000, jobs)
        out["run"] = whole
        print(f"\n`nbvslr run configs/multiclass.yaml --splits 1000 --jobs {jobs}` (fresh "
              f"process): wall {whole['wall_seconds']:.1f} s, CPU {whole['cpu_seconds']:.1f} s;"
              f" peak RSS of the process tree {whole['peak_rss_total_mib']:.0f} MiB (largest "
              f"process {whole['peak_rss_single_mib']:.0f} MiB)")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--splits", type=int)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-run", action="store_true", help="skip the whole config run")
    args = ap.parse_args(argv)
    main_section(args.quick, args.splits, args.jobs, run=not args.no_run)
    return 0


if __name__ == "__main__":
    harness.one_openmp_thread()
    sys.exit(main())
