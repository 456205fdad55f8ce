"""LDA and QDA: nbvslr against a per-split scikit-learn loop.

Usage::

    python benchmarks/discriminant.py            # full: four tasks, 1000 splits
    python benchmarks/discriminant.py --quick    # one small line per model

``benchmarks/bench.py`` calls ``main_section`` (its "LDA and QDA" section). Per (task, m)
and model, CPU seconds per 1000 splits of this process, BLAS and OpenMP on one thread:

* ``ours``: one ``score_splits`` call on all splits (fit and held-out error), median of
  ``REPEATS``;
* ``peer``: scikit-learn's ``LinearDiscriminantAnalysis`` (solver ``lsqr``, which fits the
  same maximum-likelihood pooled covariance) or ``QuadraticDiscriminantAnalysis`` fitted
  and scored split by split on the same training sets, timed on the first splits within a
  budget and extrapolated (``*``). Where a QDA class covariance is singular (a constant
  pixel of optdigits, any class of at most d rows) scikit-learn refuses the fit; the peer
  then shrinks it (solver ``eigen``, ``shrinkage = 0.01``: the same work, another rule),
  and its error column is marked ``reg``; a class of one row it cannot fit at all (``refused``:
  the split is timed but left out of the errors compared).

``--arithmetic`` prints instead where the time goes, per (task, m) and model: ours split
into the fit and the held-out count, the count's product (the U distinct rows' design
against every split's rule: ``2 U P`` FLOPs a split, times K for K classes) and its rate;
the peer's time split into ``fit`` and ``predict``, its prediction's products (LDA
``2 n_test d`` a split, times K for K classes; QDA ``2 n_test d^2`` a class) and their
rate; and the machine's float64 matmul rate on one core (``harness.matmul_peak``).

``--float32`` measures whether scoring in float32 could stand in for float64: per row, the
share of the held-out scores (row, split; K classes: row, rule, certified when one class
is above every other by more than the bounds and the tie band) whose float64 prediction a
float32 product certifies, by the rigorous bound ``|s32 - s64| <= ((P + 3) u32 + (P + 1)
u64) sum_j |z_j theta_j|`` (exact, costing a second product as large as the scores') and by
a cheap one (``max |z_j|`` times ``sum |theta_j|`` over groups of 8 columns).

Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import sys
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
from nbvslr.splits import draw_train_sets, split_seeds  # noqa: E402

SEED = 0
#: (task, sizes) measured: full, quick.
FULL_PLAN = (("pima", (20, 59)), ("ionosphere", (50, 200)), ("optdigits-0v1", (50, 300)),
             ("optdigits-10", (200,)))
QUICK_PLAN = (("pima", (40,)),)
FULL_BUDGET = 3.0
QUICK_BUDGET = 1.0
REPEATS = 3
QDA_REG = 0.01


def specs() -> dict[str, ModelSpec]:
    """lda and qda with their defaults."""
    return {name: ModelSpec(name, name, resolve_options(name, name, {}))
            for name in ("lda", "qda")}


class Peer:
    """scikit-learn's LDA or QDA fitted and scored on one split at a time, with our prior."""

    def __init__(self, data: Dataset, spec: ModelSpec):
        self.X = np.asarray(data.X, dtype=np.float64)
        self.y = np.asarray(data.y).astype(np.int64)
        self.K = max(data.n_classes, 2)
        self.family = spec.family
        self.smoothing = spec.options["smoothing"]
        self.regularised = 0
        self.refused = 0

    def error(self, train: np.ndarray) -> float:
        """Fit on rows ``train`` (m,) and return the error on every other row."""
        from numpy.linalg import LinAlgError
        from sklearn.discriminant_analysis import (
            LinearDiscriminantAnalysis,
            QuadraticDiscriminantAnalysis,
        )

        Xtr, ytr = self.X[train], self.y[train]
        test = np.ones(self.y.shape[0], dtype=bool)
        test[train] = False
        counts = np.bincount(ytr, minlength=self.K).astype(np.float64)
        prior = (counts + self.smoothing) / (counts.sum() + self.K * self.smoothing)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if self.family == "lda":
                clf = LinearDiscriminantAnalysis(solver="lsqr", priors=prior).fit(Xtr, ytr)
            else:
                try:
                    clf = QuadraticDiscriminantAnalysis(priors=prior).fit(Xtr, ytr)
                except LinAlgError:  # a singular class covariance
                    self.regularised += 1
                    clf = QuadraticDiscriminantAnalysis(priors=prior, solver="eigen",
                                                        shrinkage=QDA_REG, tol=0.0).fit(Xtr, ytr)
                except ValueError:  # a class of one row: no fit at all
                    self.refused += 1
                    return float("nan")
            return 1.0 - clf.score(self.X[test], self.y[test])


def measure(data: Dataset, m: int, n_splits: int, spec: ModelSpec, budget: float,
            peer_max: int, repeats: int) -> dict[str, Any]:
    """CPU seconds per 1000 splits of ours (all splits at once) and of the peer loop."""
    draw, seeds = split_seeds(SEED, data.name, m, range(n_splits))
    idx = draw_train_sets(np.asarray(data.y), m, draw)
    score_splits(spec, data, idx[:2], seeds[:2])  # warm-up: the design, compiled loops
    t_ours, times, out = harness.time_repeated(lambda: score_splits(spec, data, idx, seeds),
                                               repeats)
    peer_model = Peer(data, spec)
    peer = harness.time_loop(lambda i: peer_model.error(idx[i]), total=n_splits,
                             budget=budget, max_items=peer_max)
    n = peer.done
    per_k = 1000.0 / n_splits
    return {
        "task": data.name, "m": m, "model": spec.name, "splits": n_splits,
        "ours_s_per_1000": t_ours * per_k, "ours_times": times,
        "peer_s_per_1000": peer.seconds * per_k, "peer": peer.as_dict(),
        "x_peer": peer.seconds / t_ours, "peer_regularised": peer_model.regularised,
        "peer_refused": peer_model.refused,
        "mean_error_same_splits": float(out["error"][:n][~np.isnan(peer.values)].mean()),
        "peer_mean_error": float(np.nanmean(peer.values)),
    }


def table(rows: list[dict[str, Any]]) -> str:
    """The rows in Markdown."""
    lines = ["| task | m | model | ours s/1000 | peer s/1000 | x peer "
             "| err ours / peer (same splits) |", "|" + "---|" * 7]
    for r in rows:
        star = "*" if r["peer"]["extrapolated"] else ""
        reg = f" (reg {r['peer_regularised']})" if r["peer_regularised"] else ""
        reg += f" (refused {r['peer_refused']})" if r["peer_refused"] else ""
        lines.append(
            f"| {r['task']} | {r['m']} | {r['model']} | {r['ours_s_per_1000']:.3f} "
            f"| {r['peer_s_per_1000']:.2f}{star} ({r['peer']['done']}) | {r['x_peer']:.0f} "
            f"| {r['mean_error_same_splits']:.3f} / {r['peer_mean_error']:.3f}{reg} |")
    return "\n".join(lines)


def main_section(quick: bool, n_splits: int | None = None) -> dict[str, Any]:
    """Measure and print the LDA and QDA section; return its numbers."""
    n = n_splits or (50 if quick else 1000)
    budget = QUICK_BUDGET if quick else FULL_BUDGET
    rows: list[dict[str, Any]] = []
    print(f"\n## LDA and QDA: ours vs a per-split scikit-learn loop, CPU seconds per 1000 "
          f"splits, 1 core ({n} splits)", flush=True)
    with threadpool_limits(limits=1):
        for task, sizes in (QUICK_PLAN if quick else FULL_PLAN):
            data = load_task(TaskSpec(task), DataSettings())
            for m in sizes:
                for spec in specs().values():
                    row = measure(data, m, n, spec, budget, 10 if quick else n,
                                  1 if quick else REPEATS)
                    rows.append(row)
                    print(f"  {task} m={m} {spec.name}: ours {row['ours_s_per_1000']:.3f} "
                          f"s/1000, x{row['x_peer']:.0f} vs peer", flush=True)
    print("peer: * = extrapolated from the first (n) splits; reg n: n splits where "
          "scikit-learn's QDA refused a singular covariance and the peer shrank it by "
          f"{QDA_REG}")
    print()
    print(table(rows))
    return {"rows": rows}


def arithmetic(data: Dataset, m: int, n_splits: int, spec: ModelSpec,
               peer_splits: int) -> dict[str, Any]:
    """Where the time goes: ours (fit, count, the count's product) and the peer's (fit,
    predict, the prediction's products), CPU seconds per 1000 splits and GFLOP/s."""
    from nbvslr.models.design import get_design
    from nbvslr.models.evaluate import count_mistakes
    from nbvslr.models.evaluate_multi import count_mistakes_multi
    from nbvslr.models.registry import lookup

    draw, seeds = split_seeds(SEED, data.name, m, range(n_splits))
    idx = draw_train_sets(np.asarray(data.y), m, draw)
    entry = lookup(spec.family, data.kind, data.multiclass)
    design = get_design(data, entry.design(data, spec.options))
    entry.fit(data, design, idx[:2], spec.options, seeds[:2])  # warm-up
    t_fit, _, fit = harness.time_repeated(
        lambda: entry.fit(data, design, idx, spec.options, seeds), REPEATS)
    if data.multiclass:
        t_count, _, _ = harness.time_repeated(
            lambda: count_mistakes_multi(design, data, fit.theta, idx), REPEATS)
    else:
        t_count, _, _ = harness.time_repeated(
            lambda: count_mistakes(design, fit.theta, idx, 0.0), REPEATS)
    U, P = design.unique_Z1.shape
    K = max(data.n_classes, 2)
    per = 1000.0 / n_splits
    ours_flops = 2.0 * U * P * (K if data.multiclass else 1) * 1000  # per 1000 splits
    # the peer, one split at a time: its fit and its prediction timed apart
    from sklearn.discriminant_analysis import (
        LinearDiscriminantAnalysis,
        QuadraticDiscriminantAnalysis,
    )

    X = np.asarray(data.X, dtype=np.float64)
    y = np.asarray(data.y).astype(np.int64)
    d = X.shape[1]
    fit_s = pred_s = 0.0
    done = 0
    for i in range(min(peer_splits, n_splits)):
        train = idx[i]
        test = np.ones(y.shape[0], dtype=bool)
        test[train] = False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = harness.CLOCK()
            try:
                if spec.family == "lda":
                    clf = LinearDiscriminantAnalysis(solver="lsqr").fit(X[train], y[train])
                else:
                    clf = QuadraticDiscriminantAnalysis().fit(X[train], y[train])
            except Exception:  # a singular class covariance: shrunk, the same work
                clf = QuadraticDiscriminantAnalysis(solver="eigen", shrinkage=QDA_REG,
                                                    tol=0.0).fit(X[train], y[train])
            t1 = harness.CLOCK()
            clf.predict(X[test])
            t2 = harness.CLOCK()
        fit_s += t1 - t0
        pred_s += t2 - t1
        done += 1
    n_test = y.shape[0] - m
    coef = 1 if (spec.family == "lda" and K == 2) else K
    peer_flops = 2.0 * n_test * (d if spec.family == "lda" else d * d) * coef * 1000
    peer_fit = fit_s * 1000.0 / done
    peer_pred = pred_s * 1000.0 / done
    return {
        "task": data.name, "m": m, "model": spec.name,
        "ours_fit": t_fit * per, "ours_count": t_count * per,
        "ours_count_gflop": ours_flops / 1e9,
        "ours_count_rate": ours_flops / (t_count * per) / 1e9,
        "peer_fit": peer_fit, "peer_predict": peer_pred, "peer_splits": done,
        "peer_predict_gflop": peer_flops / 1e9,
        "peer_predict_rate": peer_flops / peer_pred / 1e9,
    }


def arithmetic_section(n_splits: int, peer_splits: int) -> list[dict[str, Any]]:
    """Measure and print ``--arithmetic``'s table on the full plan."""
    rows = []
    with threadpool_limits(limits=1):
        peak = harness.matmul_peak(1)
        for task, sizes in FULL_PLAN:
            data = load_task(TaskSpec(task), DataSettings())
            for m in sizes:
                for spec in specs().values():
                    rows.append(arithmetic(data, m, n_splits, spec, peer_splits))
                    print(f"  {task} m={m} {spec.name} done", flush=True)
    print(f"\nfloat64 matmul, one core: {peak['blas']:.1f} GFLOP/s (n = {peak['n']})\n")
    print("| task | m | model | ours fit | ours count | count product GFLOP (GFLOP/s) "
          "| peer fit | peer predict | predict GFLOP (GFLOP/s) |")
    print("|" + "---|" * 9)
    for r in rows:
        print(f"| {r['task']} | {r['m']} | {r['model']} | {r['ours_fit']:.3f} "
              f"| {r['ours_count']:.3f} | {r['ours_count_gflop']:.1f} "
              f"({r['ours_count_rate']:.0f}) | {r['peer_fit']:.2f} | {r['peer_predict']:.2f} "
              f"| {r['peer_predict_gflop']:.1f} ({r['peer_predict_rate']:.1f}) |")
    print(f"CPU seconds per 1000 splits; ours on {n_splits} splits (median of {REPEATS}), "
          f"the peer on its first {peer_splits}")
    return rows


def float32_certified(data: Dataset, m: int, n_splits: int, spec: ModelSpec
                      ) -> dict[str, Any]:
    """The share of held-out scores whose float64 prediction float32 certifies (exact and
    grouped bound)."""
    from nbvslr.models.design import get_design
    from nbvslr.models.evaluate import TIE_RTOL
    from nbvslr.models.registry import lookup

    draw, seeds = split_seeds(SEED, data.name, m, range(n_splits))
    idx = draw_train_sets(np.asarray(data.y), m, draw)
    entry = lookup(spec.family, data.kind, data.multiclass)
    design = get_design(data, entry.design(data, spec.options))
    theta = entry.fit(data, design, idx, spec.options, seeds).theta
    Z = design.unique_Z1  # (U, P)
    U, P = Z.shape
    flat = theta.reshape(-1, P)  # (n or n K, P)
    s64 = Z @ flat.T
    s32 = (Z.astype(np.float32) @ flat.T.astype(np.float32)).astype(np.float64)
    c = (P + 3) * 2.0**-24 / (1 - (P + 3) * 2.0**-24) + (P + 1) * 2.0**-53
    exact = np.abs(Z) @ np.abs(flat).T
    g = 8
    G = -(-P // g)
    pad = G * g - P
    zmax = np.pad(np.abs(Z), ((0, 0), (0, pad))).reshape(U, G, g).max(axis=2)
    tsum = np.pad(np.abs(flat), ((0, 0), (0, pad))).reshape(-1, G, g).sum(axis=2)
    out = {"task": data.name, "m": m, "model": spec.name, "splits": n_splits,
           "err_over_bound": float((np.abs(s64 - s32) / np.maximum(c * exact, 1e-300)).max())}
    for name, bound in (("exact", c * exact), ("grouped", c * (zmax @ tsum.T))):
        B = 1.01 * bound
        if theta.ndim == 2:  # two classes: the sign against the tie band tau
            tau = TIE_RTOL * np.abs(theta).sum(axis=1)
            sure = np.abs(np.abs(s32) - tau) > B + 1e-12 * tau
        else:  # K classes: one class surely above every other by more than the band
            K = theta.shape[1]
            tau = (TIE_RTOL * np.abs(theta).sum(axis=(1, 2)))[None, :]
            S3, B3 = s32.reshape(U, -1, K), B.reshape(U, -1, K)
            top = S3.argmax(axis=2)[..., None]  # (U, n, 1)
            lo_top = np.take_along_axis(S3 - B3, top, axis=2)[..., 0]
            hi = S3 + B3
            np.put_along_axis(hi, top, -np.inf, axis=2)
            sure = lo_top > hi.max(axis=2) + tau * (1 + 1e-12)
        out[name] = float(sure.mean())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--splits", type=int)
    ap.add_argument("--arithmetic", action="store_true",
                    help="where the time goes (fit, count, products and their rates)")
    ap.add_argument("--float32", action="store_true",
                    help="the share of scores whose prediction a float32 product certifies")
    args = ap.parse_args(argv)
    if args.float32:
        print("| task | m | model | certified, exact bound | certified, grouped bound "
              "| max error / bound |\n|---|---|---|---|---|---|")
        for task, sizes in FULL_PLAN:
            data = load_task(TaskSpec(task), DataSettings())
            for m in sizes:
                for spec in specs().values():
                    r = float32_certified(data, m, args.splits or 200, spec)
                    print(f"| {task} | {m} | {spec.name} | {r['exact']:.4f} "
                          f"| {r['grouped']:.4f} | {r['err_over_bound']:.3f} |", flush=True)
        return 0
    if args.arithmetic:
        arithmetic_section(args.splits or 1000, 20)
        return 0
    main_section(args.quick, args.splits)
    return 0


if __name__ == "__main__":
    harness.one_openmp_thread()
    sys.exit(main())
