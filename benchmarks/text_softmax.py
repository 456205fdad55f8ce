"""K-class softmax LR with C on a synthetic 20news-like text task: CPU seconds of the fits
(``fit_lr_text_multi``) and of a whole ``nbvslr.run``, against a per-split scikit-learn loop.

Usage::

    python benchmarks/text_softmax.py                # 20 classes, 100 splits at m = 200
    python benchmarks/text_softmax.py --classes 5 --splits 20

The corpus (seed 0): ``--docs`` documents of ``--classes`` classes over ``--words`` words,
each document 40 to 160 words drawn from a Zipf background (s = 1.1) mixed with its class's
own 200 topic words (one in four draws), written as a CSV with a text column. It prints:

* ``fit``: CPU seconds of ``fit_lr_text_multi`` (C = 1) on the run's training sets at m
  (each split's vocabulary made first, ``split_vocabulary``), and their Newton steps;
* ``run``: CPU seconds of ``nbvslr.run`` of that task with ``lr: {C: 1}`` at m (reading
  the CSV, counting, vocabularies, fits, held-out errors, the tables);
* ``peer``: per split, ``CountVectorizer(vocabulary=<the split's words>)`` and
  ``LogisticRegression(C=1, tol=1e-6)`` (multinomial, lbfgs) with its held-out error, on the
  first ``--peer`` splits, extrapolated to all; and the largest difference of its errors
  from the run's on those splits.

One process, BLAS on one thread, CPU time (``time.process_time``); nothing asserts a timing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import nbvslr  # noqa: E402
from nbvslr.data.text import count_matrix, split_vocabulary  # noqa: E402
from nbvslr.models.text.fit import fit_lr_text_multi  # noqa: E402
from nbvslr.splits import draw_train_sets, split_seeds  # noqa: E402

TASK = "synthetic-news"


def corpus(n_docs: int, n_classes: int, n_words: int, seed: int = 0
           ) -> tuple[list[str], np.ndarray]:
    """The documents and their classes (see the module)."""
    rng = np.random.default_rng(seed)
    words = np.array([f"w{j}" for j in range(n_words)])
    zipf = 1.0 / np.arange(1, n_words + 1) ** 1.1
    zipf /= zipf.sum()
    topics = rng.choice(n_words, (n_classes, 200), replace=False)
    y = np.arange(n_docs) % n_classes
    docs = []
    for c in y:
        n = rng.integers(40, 161)
        own = rng.random(n) < 0.25
        drawn = np.where(own, topics[c][rng.integers(0, 200, n)], rng.choice(n_words, n, p=zipf))
        docs.append(" ".join(words[drawn]))
    return docs, y


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--classes", type=int, default=20)
    ap.add_argument("--docs", type=int, default=4000)
    ap.add_argument("--words", type=int, default=20000)
    ap.add_argument("--m", type=int, default=200)
    ap.add_argument("--splits", type=int, default=100)
    ap.add_argument("--peer", type=int, default=10, help="splits the peer runs")
    a = ap.parse_args(argv)
    docs, y = corpus(a.docs, a.classes, a.words)
    labels = np.array([f"c{k:02d}" for k in range(a.classes)])[y]
    with threadpool_limits(1), tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "news.csv"
        pd.DataFrame({"label": labels, "text": docs}).to_csv(path, index=False)
        X, vocab = count_matrix(docs)
        draw, _ = split_seeds(0, TASK, a.m, range(a.splits))
        idx = draw_train_sets(y, a.m, draw)
        fit_lr_text_multi(X, y, idx[:1], split_vocabulary(X, idx[:1]), a.classes, 1.0)
        t0 = time.process_time()
        keep = split_vocabulary(X, idx)
        _, n_iter, converged = fit_lr_text_multi(X, y, idx, keep, a.classes, 1.0)
        fit_s = time.process_time() - t0
        task = {"name": TASK, "source": {"csv": str(path)}, "target": {"column": "label"},
                "features": {"kind": "text", "column": "text"}}
        cfg = {"tasks": [task], "sizes": [a.m], "splits": a.splits, "models": {"lr": {"C": 1}}}
        t0 = time.process_time()
        res = nbvslr.run(cfg, progress=False)
        run_s = time.process_time() - t0
        errors = res.splits.sort_values("split")["error"].to_numpy()
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.linear_model import LogisticRegression

        D = np.asarray(docs, dtype=object)
        t0 = time.process_time()
        diff = 0.0
        n_peer = min(a.peer, a.splits)
        for s in range(n_peer):
            test = np.setdiff1d(np.arange(len(D)), idx[s])
            cv = CountVectorizer(vocabulary=[vocab[j] for j in np.flatnonzero(keep[s])])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                lr = LogisticRegression(C=1.0, tol=1e-6, max_iter=10_000)
                lr.fit(cv.transform(D[idx[s]]), y[idx[s]])
            err = np.mean(lr.predict(cv.transform(D[test])) != y[test])
            diff = max(diff, abs(err - errors[s]))
        peer_s = (time.process_time() - t0) * a.splits / max(n_peer, 1)
    print(f"{a.classes} classes, {a.docs} documents, {X.shape[1]} words seen, m = {a.m}, "
          f"{a.splits} splits")
    print(f"fit  {fit_s:7.2f} CPU s  (Newton steps mean {n_iter.mean():.1f}, max "
          f"{n_iter.max()}; converged {converged.mean():.0%})")
    print(f"run  {run_s:7.2f} CPU s  (nbvslr.run, lr: {{C: 1}}; mean error {errors.mean():.4f})")
    print(f"peer {peer_s:7.2f} CPU s  (scikit-learn per split, {n_peer} run, extrapolated; "
          f"ratio peer/fit {peer_s / fit_s:.1f}; largest error difference {diff:.4f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
