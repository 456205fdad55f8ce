"""Plain maximum-likelihood naive Bayes (smoothing: 0): a level unseen in a class has
probability 0 there, a class of probability 0 loses, and a row of probability 0 in every
class is a tie among them; checked against exact rational arithmetic, split by split."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from nbvslr import models
from nbvslr.config import parse_config
from nbvslr.data.dataset import Dataset
from nbvslr.errors import ConfigError
from nbvslr.models import ModelSpec, resolve_options
from nbvslr.splits import split_seeds


def _task(K: int, seed: int = 0, n: int = 120) -> Dataset:
    """A discrete task of 4 attributes with rare levels (many unseen in small training sets)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    y[:K] = np.arange(K)
    k = (3, 5, 2, 6)
    X = np.stack([np.minimum(rng.geometric(0.5, n) - 1 + (y if j % 2 else 0), kj - 1)
                  for j, kj in enumerate(k)], axis=1)
    return Dataset(name="rare", title="rare", X=X.astype(np.int64), y=y.astype(np.int8),
                   kind="discrete", n_values=k,
                   classes=tuple(str(c) for c in range(K)) if K > 2 else ())


def _exact_error(data: Dataset, train: np.ndarray, K: int) -> float:
    """Held-out error of plain ML naive Bayes, probabilities as exact fractions: the
    classes of largest p(x, y) are the top ones; t of them tie: (t - 1)/t of an error when
    the true class is among them, else 1."""
    X, y = data.X, np.asarray(data.y, dtype=int)
    Xt, yt = X[train], y[train]
    m = len(train)
    test = np.setdiff1d(np.arange(len(y)), train)
    wrong = Fraction(0)
    for i in test:
        p = []
        for c in range(K):
            rows = Xt[yt == c]
            prob = Fraction(len(rows), m)
            for j in range(X.shape[1]):
                prob *= Fraction(int((rows[:, j] == X[i, j]).sum()), len(rows))
            p.append(prob)
        top = [c for c in range(K) if p[c] == max(p)]
        wrong += Fraction(len(top) - 1, len(top)) if y[i] in top else 1
    return float(wrong / len(test))


def _draw(data: Dataset, m: int, S: int, K: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = np.asarray(data.y)
    out = []
    while len(out) < S:
        idx = np.sort(rng.choice(len(y), m, replace=False))
        if len(np.unique(y[idx])) == K:
            out.append(idx)
    return np.stack(out)


@pytest.mark.parametrize("K, m", [(2, 6), (2, 20), (3, 9), (3, 30)])
def test_plain_ml_naive_bayes_is_the_exact_rule(K, m):
    """score_splits with smoothing 0 gives each split the error of the exact rule (zero
    probabilities, ties among equal ones, a row of probability 0 everywhere a tie of all K)."""
    data = _task(K)
    idx = _draw(data, m, 12, K)
    _, seeds = split_seeds(0, "rare", m, range(12))
    spec = ModelSpec("nb0", "nb", resolve_options("nb0", "nb", {"smoothing": 0}))
    got = models.score_splits(spec, data, idx, seeds)["error"]
    want = [_exact_error(data, idx[s], K) for s in range(12)]
    np.testing.assert_allclose(got, want, atol=1e-12)
    theta = models.lookup("nb", "discrete", K > 2).fit(
        data, models.get_design(data, "onehot"), idx, spec.options).theta
    assert not np.isfinite(theta).all()  # the zero path was taken, not a smoothed one


def test_a_row_of_probability_zero_in_both_classes_counts_by_the_ties_option():
    """A test row holding a level no training row held, in either class: half an error by
    default, class 1 with ties: positive."""
    X = np.array([[0], [0], [1], [1], [2]])
    y = np.array([0, 1, 0, 1, 1], dtype=np.int8)
    data = Dataset(name="t", title="t", X=X, y=y, kind="discrete", n_values=(3,))
    idx = np.array([[0, 1, 2, 3]])  # level 2 unseen; p(x | y) equal for levels 0 and 1
    _, seeds = split_seeds(0, "t", 4, range(1))
    half = ModelSpec("a", "nb", resolve_options("a", "nb", {"smoothing": 0}))
    assert models.score_splits(half, data, idx, seeds)["error"][0] == 0.5
    pos = ModelSpec("b", "nb", resolve_options("b", "nb", {"smoothing": 0, "ties": "positive"}))
    assert models.score_splits(pos, data, idx, seeds)["error"][0] == 0.0


def test_smoothing_zero_is_refused_on_text_tasks_only():
    """A text task would give every document a word unseen in some class: one line."""
    cfg = parse_config({"tasks": ["pima"], "models": {"nb": {"smoothing": 0}, "lr": {}}},
                       source="c.yaml")
    assert cfg.models[0].options["smoothing"] == 0.0
    with pytest.raises(ConfigError, match="smoothing: 0"):
        parse_config({"tasks": ["sms-spam"], "sizes": [10, 20],
                      "models": {"nb": {"smoothing": 0}}},
                     source="c.yaml")
