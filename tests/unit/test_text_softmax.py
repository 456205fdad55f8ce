"""K-class softmax logistic regression with C on word counts (``fit_lr_text_multi``):
scikit-learn's multinomial LogisticRegression on each split's own words, words outside a
split's vocabulary weighing 0, and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression

from nbvslr.data.text import count_matrix, split_vocabulary
from nbvslr.errors import ConfigError
from nbvslr.models.text.fit import GRADIENT_TOL, fit_lr_text_multi

TOPICS = {0: "apple pear plum fig", 1: "car bus train tram", 2: "red blue green pink"}
COMMON = "the of and a to in"


def _corpus(seed: int, n: int = 36):
    """n documents of 3 classes: topic words mixed with other topics' and common words, so
    no class is told by one word alone."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    docs = []
    for c in y:
        own = TOPICS[c].split()
        other = TOPICS[(c + 1) % 3].split() + COMMON.split()
        docs.append(" ".join(np.r_[rng.choice(own, 3), rng.choice(other, 4)]))
    return docs, y


def _splits(y: np.ndarray, seed: int, S: int, m: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(S):
        first = [rng.choice(np.flatnonzero(y == k)) for k in range(3)]
        rest = rng.choice(np.setdiff1d(np.arange(y.size), first), m - 3, replace=False)
        out.append(np.sort(np.r_[first, rest]))
    return np.stack(out)


def _probs(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _gradient(Xs, ys, W, b, C):
    """The largest component of the gradient of C sum loss + |W|^2 / 2 at (W, b)."""
    R = C * (_probs(Xs @ W.T + b) - np.eye(3)[ys])
    return max(np.abs(Xs.T @ R + W.T).max(), np.abs(R.sum(axis=0)).max())


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_softmax_lr_matches_sklearn(C):
    """Each split's fit = LogisticRegression(C) (multinomial) on CountVectorizer(vocabulary=
    the split's training words): the same held-out predictions, probabilities within 1e-6;
    the fit's gradient meets GRADIENT_TOL and every word it does not keep weighs 0."""
    docs, y = _corpus(0)
    X, vocab = count_matrix(docs)
    idx = _splits(y, 1, 4, 12)
    keep = split_vocabulary(X, idx, "training")
    theta, n_iter, converged = fit_lr_text_multi(X, y, idx, keep, 3, C)
    assert theta.shape == (4, 3, X.shape[1] + 1)
    assert converged.all() and (n_iter > 0).all()
    for s in range(4):
        words = np.flatnonzero(keep[s])
        assert not theta[s][:, :-1][:, ~keep[s]].any()
        cv = CountVectorizer(vocabulary=[vocab[j] for j in words])
        Xs = cv.transform(docs)
        lr = LogisticRegression(C=C, tol=1e-12, max_iter=100_000).fit(Xs[idx[s]], y[idx[s]])
        test = np.setdiff1d(np.arange(len(docs)), idx[s])
        z = X[test] @ theta[s][:, :-1].T + theta[s][:, -1]
        np.testing.assert_allclose(_probs(z), lr.predict_proba(Xs[test]), atol=1e-6)
        assert (z.argmax(axis=1) == lr.predict(Xs[test])).all()
        W, b = theta[s][:, words], theta[s][:, -1]
        assert _gradient(Xs[idx[s]], y[idx[s]], W, b, C) <= GRADIENT_TOL


def test_a_word_only_in_test_documents_changes_no_fit():
    """A word added to held-out documents only leaves every split's weights unchanged (the
    new word's weight 0), and so does a word a split's mask drops."""
    docs, y = _corpus(2)
    idx = _splits(y, 3, 3, 15)
    X, vocab = count_matrix(docs)
    held = np.setdiff1d(np.arange(len(docs)), np.unique(idx))
    assert held.size
    extra = [d + " zebra zebra" if i in held else d for i, d in enumerate(docs)]
    X2, vocab2 = count_matrix(extra)
    at = list(vocab2).index("zebra")
    theta, _, _ = fit_lr_text_multi(X, y, idx, split_vocabulary(X, idx, "training"), 3, 1.0)
    theta2, _, _ = fit_lr_text_multi(X2, y, idx, split_vocabulary(X2, idx, "training"), 3, 1.0)
    assert not theta2[:, :, at].any()
    np.testing.assert_array_equal(np.delete(theta2, at, axis=2), theta)
    # keep every word but drop one a training row holds: that word weighs 0, and the fit is
    # the fit of the counts without its column
    keep = np.ones((3, X.shape[1]), dtype=bool)
    j = int(X[idx[0]].indices[0])
    keep[:, j] = False
    theta3, _, _ = fit_lr_text_multi(X, y, idx, keep, 3, 1.0)
    assert not theta3[:, :, j].any() and theta3[:, :, :-1].any()
    others = np.delete(np.arange(X.shape[1]), j)
    X_without = sp.csr_matrix(X[:, others])
    theta4, _, _ = fit_lr_text_multi(X_without, y, idx, np.ones((3, others.size), bool), 3, 1.0)
    np.testing.assert_allclose(np.delete(theta3, j, axis=2), theta4, atol=1e-12)


def test_refusals_are_one_line():
    """No C (the unpenalised fit) and C <= 0 are refused in one line."""
    docs, y = _corpus(0)
    X, _ = count_matrix(docs)
    idx = _splits(y, 1, 2, 9)
    keep = split_vocabulary(X, idx, "training")
    for C, words in ((None, "needs a penalty"), (0.0, "must be > 0")):
        with pytest.raises(ConfigError, match=words) as err:
            fit_lr_text_multi(X, y, idx, keep, 3, C)
        assert "\n" not in str(err.value)
