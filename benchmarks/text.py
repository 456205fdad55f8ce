"""Text models on sms-spam: nbvslr's batched fits against a per-split scikit-learn loop.

Usage::

    python benchmarks/text.py             # full: m = 10 ... 2000, 1000 splits, + a whole run
    python benchmarks/text.py --quick     # smoke run (2 sizes, 50 splits; seconds)
    python benchmarks/text.py --json out.json

For each m of the grid and each model (``nb-multinomial``, ``nb-bernoulli``: naive Bayes with
Laplace l = 1; ``lr``: L2 logistic regression, C = 1) it prints CPU seconds per 1000 splits:

* ``ours``: what a run does for one model at one size, on all splits at once: each split's
  vocabulary (``split_vocabulary``), the fits (``fit_nb_text`` / ``fit_lr_text``) and the
  held-out errors (``heldout_errors``); the run's training sets (``nbvslr.splits``, seed 0);
* ``peer``: per split, ``CountVectorizer(vocabulary=<that split's words>)`` fitted on its
  training messages and transforming the others, then ``MultinomialNB`` / ``BernoulliNB``
  (``alpha = 1``, ``force_alpha``, the same smoothed class prior) or
  ``LogisticRegression(C=1, solver="lbfgs", tol=PEER_LR_TOL)``, and its error on the held-out
  messages; timed on the first splits within a CPU budget and extrapolated (``*``);
* the ratio peer / ours, and how far the peer's held-out errors are from ours on the splits
  it ran (NB: the same model, so 0 up to ties; LR: both at their optimum to their tolerance).

``PEER_LR_TOL``: scikit-learn's default ``tol = 1e-4`` stops lbfgs early enough that its
held-out errors differ from the optimum's on about half the splits at m >= 200; at 1e-6 they
equal ours on every split checked (m = 10 ... 2000), so the peer runs at 1e-6.

Everything runs in one process with BLAS and OpenMP on one thread (CPU time, ``harness.CLOCK``).
In full mode a whole run follows in a fresh process: ``nbvslr.run`` with the three models over
the grid at 1000 splits (loading, counting, vocabularies, fits, errors, the tables), its wall
and CPU seconds and the peak resident memory of the process (sampled, and the kernel's
``ru_maxrss``). Nothing here asserts a timing; a crash exits non-zero.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
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
from nbvslr.data.text import count_matrix, load_sms_spam, split_vocabulary  # noqa: E402
from nbvslr.models.text.fit import (  # noqa: E402
    GRADIENT_TOL,
    design_of,
    fit_lr_text,
    fit_nb_text,
    heldout_errors,
)
from nbvslr.splits import draw_train_sets, split_seeds  # noqa: E402

SEED = 0
TASK = "sms-spam"
#: The log grid of the text targets (1-2-5 steps, as docs/text.md's example run).
GRID = (10, 20, 50, 100, 200, 500, 1000, 2000)
QUICK_GRID = (20, 500)
MODELS: dict[str, dict[str, Any]] = {
    "nb-multinomial": {"model": "nb", "event": "multinomial", "smoothing": 1.0},
    "nb-bernoulli": {"model": "nb", "event": "bernoulli", "smoothing": 1.0},
    "lr": {"model": "lr", "C": 1.0},
}
#: The peer LR's solver and tolerance (see the module's docstring).
PEER_LR_SOLVER = "lbfgs"
PEER_LR_TOL = 1e-6
#: CPU seconds of the peer loop per (m, model) before it is extrapolated.
FULL_BUDGET = 3.0
QUICK_BUDGET = 0.5
#: The text targets: each model at each size this many times the peer, the whole
#: run within this many seconds and this much memory.
TARGET_X = 30.0
TARGET_WHOLE_S = 90.0
TARGET_PEAK_MIB = 2048.0


def training_sets(y: np.ndarray, m: int, n_splits: int) -> np.ndarray:
    """The run's training rows (S, m) at size m (seed 0, as a run draws them)."""
    draw, _ = split_seeds(SEED, TASK, m, range(n_splits))
    return draw_train_sets(y, m, draw)


def ours(X, y: np.ndarray, idx: np.ndarray, spec: dict[str, Any]) -> dict[str, np.ndarray]:
    """One model at one size on all splits: vocabularies, fits, held-out errors."""
    keep = split_vocabulary(X, idx)
    if spec["model"] == "nb":
        theta = fit_nb_text(X, y, idx, keep, spec["event"], spec["smoothing"])
        error = heldout_errors(design_of(X, spec["event"]), y, theta, idx)
        return {"error": error, "n_iter": np.zeros(len(idx)), "converged": np.ones(len(idx), bool)}
    theta, n_iter, converged = fit_lr_text(X, y, idx, keep, spec["C"])
    return {"error": heldout_errors(X, y, theta, idx), "n_iter": n_iter, "converged": converged}


class Peer:
    """The per-split scikit-learn loop of one model: ``error(train)`` vectorises the split's
    messages over its training words, fits, and returns the held-out error."""

    def __init__(self, documents: tuple[str, ...], y: np.ndarray, vocab: tuple[str, ...], X,
                 spec: dict[str, Any]):
        from sklearn.exceptions import ConvergenceWarning

        self.docs = np.array(documents, dtype=object)
        self.y = y
        self.vocab = np.array(vocab, dtype=object)
        self.X = X
        self.spec = spec
        self._warning = ConvergenceWarning

    def error(self, train: np.ndarray) -> float:
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.naive_bayes import BernoulliNB, MultinomialNB

        y = self.y
        test = np.ones(y.shape[0], dtype=bool)
        test[train] = False
        # that split's words: those of its training messages (sorted, as CountVectorizer
        # numbers them); from the task's counts, as the peer's own vocabulary step
        words = self.vocab[np.unique(self.X[train].indices)].tolist()
        cv = CountVectorizer(vocabulary=words)
        Xtr = cv.fit_transform(self.docs[train])
        Xte = cv.transform(self.docs[test])
        spec = self.spec
        if spec["model"] == "nb":
            l = spec["smoothing"]
            n1 = int(y[train].sum())
            m = len(train)
            prior = [(m - n1 + l) / (m + 2 * l), (n1 + l) / (m + 2 * l)]
            Model = MultinomialNB if spec["event"] == "multinomial" else BernoulliNB
            clf = Model(alpha=l, force_alpha=True, class_prior=prior)
            clf.fit(Xtr, y[train])
        else:
            clf = LogisticRegression(C=spec["C"], solver=PEER_LR_SOLVER, tol=PEER_LR_TOL,
                                     max_iter=10_000)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", self._warning)
                clf.fit(Xtr, y[train])
        return float(np.mean(clf.predict(Xte) != y[test]))


def measure(task, X, vocab, m: int, n_splits: int, name: str, budget: float,
            max_peer: int | None) -> dict[str, Any]:
    """Ours (all splits, median of repeats) and the peer loop (budgeted) at one (m, model)."""
    spec = MODELS[name]
    y = task.y
    idx = training_sets(y, m, n_splits)
    ours(X, y, idx[:2], spec)  # warm-up: compiled loops loaded
    t_first, _, out = harness.time_repeated(lambda: ours(X, y, idx, spec), 1)
    repeats = 3 if t_first < 1.0 else 1
    t_ours, times, out = (harness.time_repeated(lambda: ours(X, y, idx, spec), repeats)
                          if repeats > 1 else (t_first, [t_first], out))
    peer_model = Peer(task.documents, y, vocab, X, spec)
    peer = harness.time_loop(lambda i: peer_model.error(idx[i]), total=n_splits, budget=budget,
                             max_items=max_peer)
    n = peer.done
    diff = np.abs(out["error"][:n] - np.asarray(peer.values))
    per_k = 1000.0 / n_splits
    return {
        "m": m, "model": name, "splits": n_splits,
        "ours_s_per_1000": t_ours * per_k, "ours_times": times,
        "peer_s_per_1000": peer.seconds * per_k, "peer": peer.as_dict(),
        "x_peer": peer.seconds / t_ours,
        "mean_error": float(out["error"].mean()), "peer_mean_error": float(np.mean(peer.values)),
        "max_abs_error_diff": float(diff.max()), "splits_differing": int((diff > 0).sum()),
        "compared": n, "mean_n_iter": float(np.mean(out["n_iter"])),
        "converged": float(np.mean(out["converged"])),
    }


# --------------------------------------------------------------------------- whole run
def whole_child(sizes: tuple[int, ...], n_splits: int) -> None:
    """In a fresh process: ``nbvslr.run`` of sms-spam with the three models over ``sizes``
    (everything ``nbvslr run`` does but write files), then its times and peak RSS as JSON."""
    import nbvslr

    t0, c0 = time.perf_counter(), time.process_time()
    res = nbvslr.run({"tasks": [TASK], "sizes": list(sizes), "splits": n_splits, "seed": SEED,
                      "models": MODELS}, progress=False)
    table = res.splits
    print(json.dumps({"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
                      "rows": len(table), "converged": float(table["converged"].mean()),
                      "max_rss_mib": harness.max_rss_mib()}))


def whole_run(sizes: tuple[int, ...], n_splits: int) -> dict[str, Any]:
    """Time ``whole_child`` in a subprocess (BLAS and numba on their defaults, the machine's
    cores); the process's peak RSS, sampled and as the kernel counts it."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--whole-child",
           "--splits", str(n_splits), "--sizes", *map(str, sizes)]
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    t0 = time.perf_counter()
    c0 = harness.child_cpu_seconds()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    with harness.TreeRSS(proc.pid) as mon:
        stdout, _ = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"the whole text run failed (exit {proc.returncode})")
    child = json.loads(stdout.strip().splitlines()[-1])
    return {"sizes": list(sizes), "splits": n_splits, "process_wall_s": time.perf_counter() - t0,
            "process_cpu_s": harness.child_cpu_seconds() - c0, **child,
            "peak_rss_sampled_mib": mon.peak_total}


# --------------------------------------------------------------------------- printing
def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| m | model | ours s/1000 | peer s/1000 | x peer | err ours / peer "
             "| max abs err diff (n) | LR steps |", "|" + "---|" * 8]
    for r in rows:
        star = "*" if r["peer"]["extrapolated"] else ""
        steps = f"{r['mean_n_iter']:.1f}" if r["model"] == "lr" else ""
        lines.append(
            f"| {r['m']} | {r['model']} | {r['ours_s_per_1000']:.3f} "
            f"| {r['peer_s_per_1000']:.1f}{star} ({r['peer']['done']}) | {r['x_peer']:.0f} "
            f"| {r['mean_error']:.4f} / {r['peer_mean_error']:.4f} "
            f"| {r['max_abs_error_diff']:.4f} ({r['compared']}) | {steps} |")
    return "\n".join(lines)


def verdict(rows: list[dict[str, Any]], whole: dict[str, Any] | None) -> str:
    lines = []
    for name in MODELS:
        mine = [r for r in rows if r["model"] == name]
        worst = min(mine, key=lambda r: r["x_peer"])
        ok = "met" if worst["x_peer"] >= TARGET_X else "NOT met"
        lines.append(f"{name}: x peer min {worst['x_peer']:.0f} (m={worst['m']}), median "
                     f"{np.median([r['x_peer'] for r in mine]):.0f}: >= {TARGET_X:.0f}x {ok}")
    if whole is not None:
        peak = np.nanmax([whole["max_rss_mib"], whole["peak_rss_sampled_mib"]])
        fast = "met" if whole["wall_s"] <= TARGET_WHOLE_S else "NOT met"
        small = "met" if peak <= TARGET_PEAK_MIB else "NOT met"
        lines.append(
            f"whole run: {whole['wall_s']:.1f} s wall ({whole['cpu_s']:.1f} s CPU) "
            f"[<= {TARGET_WHOLE_S:.0f} s: {fast}], peak RSS {peak:.0f} MiB "
            f"[<= {TARGET_PEAK_MIB:.0f} MiB: {small}]")
    return "\n".join(lines)


# --------------------------------------------------------------------------- main
def run(quick: bool, n_splits: int | None = None, whole: bool = True) -> dict[str, Any]:
    """Measure and print; return every number (``bench.py`` calls this too)."""
    n_splits = n_splits or (50 if quick else 1000)
    grid = QUICK_GRID if quick else GRID
    task = load_sms_spam()
    X, vocab = count_matrix(task.documents)
    print(f"\n## Text: {TASK} ({len(task.documents)} messages, {X.shape[1]} words), "
          f"{n_splits} splits per m, CPU seconds per 1000 splits, 1 thread")
    print(f"ours: split_vocabulary + fit + heldout_errors on all splits; peer: per split "
          f"CountVectorizer(vocabulary=split's words) + MultinomialNB / BernoulliNB / "
          f"LogisticRegression(C=1, {PEER_LR_SOLVER}, tol={PEER_LR_TOL:g}); our LR stops at "
          f"max |grad| <= {GRADIENT_TOL:g}; * = extrapolated from the first (n) splits",
          flush=True)
    rows = []
    t0 = time.perf_counter()
    with threadpool_limits(limits=1):
        for m in grid:
            for name in MODELS:
                rows.append(measure(task, X, vocab, m, n_splits, name,
                                    QUICK_BUDGET if quick else FULL_BUDGET,
                                    5 if quick else None))
                r = rows[-1]
                print(f"  m={m} {name}: ours {r['ours_s_per_1000']:.3f} s/1000, "
                      f"x{r['x_peer']:.0f} vs peer", flush=True)
    report: dict[str, Any] = {"task": TASK, "splits": n_splits, "grid": list(grid), "rows": rows,
                              "peer_lr": {"solver": PEER_LR_SOLVER, "tol": PEER_LR_TOL},
                              "measure_seconds": time.perf_counter() - t0}
    print()
    print(table(rows))
    done = None
    if whole and not quick:
        done = whole_run(GRID, 1000)
        report["whole"] = done
        print(f"\nwhole run (fresh process: nbvslr.run, 3 models, m = {GRID[0]} ... {GRID[-1]}, "
              f"1000 splits): {done['wall_s']:.1f} s wall, {done['cpu_s']:.1f} s CPU, "
              f"{done['rows']} rows; peak RSS {done['max_rss_mib']:.0f} MiB (sampled "
              f"{done['peak_rss_sampled_mib']:.0f} MiB)")
    print()
    if quick:
        print("(quick: 2 sizes, 50 splits; the targets are judged on the full run)")
    print(verdict(rows, done))
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 2 sizes, 50 splits")
    ap.add_argument("--splits", type=int, help="splits per m (1000; quick 50)")
    ap.add_argument("--json", type=Path, help="write every number to this JSON file")
    ap.add_argument("--no-whole", action="store_true", help="skip the whole run")
    ap.add_argument("--whole-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--sizes", type=int, nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.whole_child:
        whole_child(tuple(args.sizes), args.splits)
        return 0
    report = run(args.quick, args.splits, whole=not args.no_whole)
    if args.json:
        harness.write_json(args.json, report)
    return 0


if __name__ == "__main__":
    harness.one_openmp_thread()
    sys.exit(main())
