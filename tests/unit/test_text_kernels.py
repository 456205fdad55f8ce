"""The text models' compiled loops: held-out counts, per-split LR, class sums."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from text_corpus import DOCS, Y

from nbvslr.data.text import count_matrix, split_vocabulary
from nbvslr.models.text.fit import (
    GRADIENT_TOL,
    design_of,
    fit_lr_text,
    fit_nb_text,
    heldout_errors,
    scores,
)


def _splits(seed: int, S: int, m: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([np.sort(np.r_[rng.choice(np.flatnonzero(Y == 1), m // 2, replace=False),
                                   rng.choice(np.flatnonzero(Y == 0), m - m // 2, replace=False)])
                     for _ in range(S)])


def test_heldout_errors_count_the_other_rows_and_ties_as_half():
    """heldout_errors = mistakes on the rows outside each training set / (N - m); a score of
    exactly 0 counts one half; the training rows' mistakes are not counted."""
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0], [2.0, 0.0]]))
    y = np.array([1, 0, 1, 0, 0])
    # split 0: w = (1, -1), b = 0: scores 1, -1, 0 (tie), 0 (tie), 2 (wrong: class 0)
    # split 1: w = (-1, 1), b = 0.5: scores -0.5 (wrong), 1.5 (wrong), 0.5, 0.5 (wrong), -1.5
    theta = np.array([[1.0, -1.0, 0.0], [-1.0, 1.0, 0.5]])
    idx = np.array([[0, 4], [1, 3]])
    got = heldout_errors(X, y, theta, idx)
    # split 0 held out: rows 1 (right), 2 (tie), 3 (tie) -> 1 mistake of 3
    # split 1 held out: rows 0 (wrong), 2 (right), 4 (right) -> 1 of 3
    np.testing.assert_array_equal(got, [1 / 3, 1 / 3])
    # the same as counting the held-out scores directly
    z = scores(X, theta) * np.where(y == 1, 1.0, -1.0)
    for s in range(2):
        test = np.setdiff1d(np.arange(5), idx[s])
        direct = np.mean(np.where(z[s, test] < 0, 1.0, np.where(z[s, test] == 0, 0.5, 0.0)))
        assert got[s] == pytest.approx(direct, abs=1e-15)


def test_lr_split_is_the_same_alone_or_in_a_batch():
    """A split's LR fit does not depend on the splits that share the call (bit for bit)."""
    X, _ = count_matrix(DOCS)
    idx = _splits(5, 4, 8)
    keep = split_vocabulary(X, idx)
    theta, n_iter, converged = fit_lr_text(X, Y, idx, keep, C=2.0)
    alone, n_alone, _ = fit_lr_text(X, Y, idx[2:3], keep[2:3], C=2.0)
    assert converged.all()
    np.testing.assert_array_equal(theta[2], alone[0])
    assert n_iter[2] == n_alone[0]
    # words outside the split's vocabulary stay exactly 0
    assert (theta[:, :-1][~keep] == 0).all()


@pytest.mark.parametrize("min_df", [1, 2])
def test_lr_meets_its_gradient_rule_and_matches_sklearn(min_df):
    """The fit's gradient (over the split's words and intercept) is within GRADIENT_TOL, and
    scikit-learn's LogisticRegression on the same vocabulary gives the same probabilities."""
    X, vocab = count_matrix(DOCS)
    idx = _splits(6, 3, 10)
    keep = split_vocabulary(X, idx, min_df=min_df)
    theta, _, converged = fit_lr_text(X, Y, idx, keep, C=1.0)
    assert converged.all()
    for s in range(3):
        cols = np.flatnonzero(keep[s])
        A = X[idx[s]][:, cols]
        t = 2.0 * Y[idx[s]] - 1.0
        w, b = theta[s, cols], theta[s, -1]
        q = -t / (1.0 + np.exp(t * (A @ w + b)))
        grad = np.r_[A.T @ q + w, q.sum()]
        assert np.abs(grad).max() <= GRADIENT_TOL
        Xs = CountVectorizer(vocabulary=[vocab[j] for j in cols]).transform(DOCS)
        lr = LogisticRegression(C=1.0, tol=1e-12, max_iter=10000).fit(Xs[idx[s]], Y[idx[s]])
        np.testing.assert_allclose(1 / (1 + np.exp(-scores(X, theta)[s])),
                                   lr.predict_proba(Xs)[:, 1], atol=1e-6)


@pytest.mark.parametrize("event", ["multinomial", "bernoulli"])
def test_nb_class_sums_are_the_counts_of_each_class(event):
    """NB from the compiled class sums = the module's formulas on sums taken by numpy."""
    X, _ = count_matrix(DOCS)
    idx = _splits(7, 3, 6)
    keep = split_vocabulary(X, idx, min_df=1)
    keep[:, ::3] = False  # a vocabulary narrower than the training words
    theta = fit_nb_text(X, Y, idx, keep, event=event, smoothing=1.0)
    Z = design_of(X, event).toarray()
    for s in range(3):
        rows = idx[s]
        kf = keep[s].astype(float)
        s1 = Z[rows[Y[rows] == 1]].sum(axis=0) * kf
        s0 = Z[rows[Y[rows] == 0]].sum(axis=0) * kf
        n1, n0 = (Y[rows] == 1).sum(), (Y[rows] == 0).sum()
        if event == "multinomial":
            w = (np.log(s1 + 1) - np.log(s1.sum() + kf.sum())
                 - np.log(s0 + 1) + np.log(s0.sum() + kf.sum())) * kf
        else:
            p1, p0 = (s1 + 1) / (n1 + 2), (s0 + 1) / (n0 + 2)
            w = (np.log(p1) - np.log(p0)) * kf - (np.log1p(-p1) - np.log1p(-p0)) * kf
        np.testing.assert_allclose(theta[s, :-1], w, rtol=1e-12, atol=1e-12)
