"""Test log-loss and Brier score of many rules at once, from their class probabilities.

Every rule here scores a row by its log posterior odds (two classes: ``s = Z1 @ theta``,
``p(1 | x) = 1 / (1 + exp(-s))``) or by K class scores equal to ``log p(k | x)`` up to a
constant per row (``p(k | x) = softmax(s)_k``): naive Bayes, LDA and QDA by Bayes' rule,
logistic and softmax regression by their model. So the class probabilities come from the
fitted parameters alone, where the errors are counted.

Definitions (over the n_test rows outside a split's training set; y the true class):

- log-loss ``mean(-log clip(p(y | x), EPSILON, 1 - EPSILON))``, natural log, the
  probabilities clipped at ``EPSILON`` as scikit-learn's ``log_loss`` clips them: a row
  whose true class has probability 0 (plain maximum-likelihood naive Bayes, ``smoothing:
  0``, on a level unseen in that class) counts ``-log(EPSILON) = 34.5``, finite by the
  clipping alone;
- Brier score, two classes: ``mean((p(1 | x) - y)^2)`` in [0, 1] (scikit-learn's
  ``brier_score_loss``); K > 2 classes: ``mean(sum_k (p(k | x) - [y = k])^2)`` in [0, 2], the
  squared distance to the one-hot label (scikit-learn's ``brier_score_loss`` of K classes
  with ``scale_by_half=False``; for two classes that sum is twice the binary score). The
  probabilities are not clipped for the Brier score.

Computed as the errors are (``evaluate``): the sum over all N rows, from the U distinct rows
of the design and how many rows of each class each stands for, minus the sum over the
split's own training rows, divided by ``N - m``. Two-class text rules whose ties count half
(``text_heldout_metrics``): summed over the test rows in the errors' own pass.

A rule with probability 0 in some classes (``evaluate_zeros``): those classes get
probability exactly 0; a row of probability 0 in every class (the posterior 0 / 0) gets
the uniform 1 / K, as the error counts it a tie of all the classes.
"""

from __future__ import annotations

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.models.design import Design, SparseDesign
from nbvslr.models.evaluate import TIE_RTOL, count_mistakes
from nbvslr.models.evaluate_multi import class_counts
from nbvslr.models.evaluate_zeros import class_scores

#: The clipping of the log-loss: probabilities are taken in [EPSILON, 1 - EPSILON].
EPSILON = 1e-15
_LOSS_LOW = -np.log1p(-EPSILON)  # -log(1 - eps): the loss of a probability clipped at 1 - eps
_LOSS_HIGH = -np.log(EPSILON)  # -log(eps) = 34.54

#: Entries of one tile of scores (rows x rules x classes): 8 MB.
TILE = 1 << 20


# --------------------------------------------------------------------------- per entry
def class_terms(score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Clipped log-losses and Brier terms of K-class scores (..., K) (``-inf``: probability
    0; a row of ``-inf`` only is uniform): each (..., K), entry k the value if y = k."""
    top = score.max(axis=-1, keepdims=True)  # (..., 1)
    none = ~np.isfinite(top)  # -inf in every class: the posterior 0 / 0, taken uniform
    shifted = np.where(none, 0.0, score - np.where(none, 0.0, top))  # <= 0, the top at 0
    # log p_k = s_k - logsumexp(s): the sum of exp(s - max) is in [1, K], no overflow
    log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    loss = np.clip(-log_p, _LOSS_LOW, _LOSS_HIGH)
    p = np.exp(log_p)
    brier = (p ** 2).sum(axis=-1, keepdims=True) - 2.0 * p + 1.0  # sum_j (p_j - [j = k])^2
    return loss, np.maximum(brier, 0.0)  # rounding may leave -1e-17 for p = one-hot


# --------------------------------------------------------------------------- dense designs
def _binary_scores(design: Design, theta: np.ndarray) -> np.ndarray:
    """Scores (U, n) of two-class rules (n, P); with zero-probability levels
    (``evaluate_zeros``) +inf (probability 0 in class 0 only), -inf (in class 1 only) or
    0 (in both: uniform)."""
    if np.isfinite(theta).all():
        return design.unique_Z1 @ theta.T
    Zu = design.unique_Z1
    score = Zu @ np.where(np.isfinite(theta), theta, 0.0).T  # (U, n)
    out0 = (Zu @ ((theta == np.inf) | np.isnan(theta)).T.astype(np.float64)) > 0
    out1 = (Zu @ ((theta == -np.inf) | np.isnan(theta)).T.astype(np.float64)) > 0
    score = np.where(out0 & ~out1, np.inf, np.where(out1 & ~out0, -np.inf, score))
    return np.where(out0 & out1, 0.0, score)


def _class_scores(design: Design, theta: np.ndarray) -> np.ndarray:
    """Scores (U, n, K) of K-class rules (n, K, P), ``-inf`` where a row has probability 0
    in a class."""
    n, K, P = theta.shape
    if np.isfinite(theta).all():
        return (design.unique_Z1 @ theta.reshape(-1, P).T).reshape(-1, n, K)
    return class_scores(design, theta)


def dense_losses(design: Design, data: Dataset, theta: np.ndarray,
                 train_idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Test log-loss and Brier score of each rule on the rows outside its training set.

    Parameters
    ----------
    design : Design
    data : Dataset
        Its labels ``0 .. K - 1``.
    theta : ndarray of shape (n, P) or (n, K, P)
        Two-class rules (log-odds of class 1) or K-class rules.
    train_idx : ndarray of shape (n, m)

    Returns
    -------
    log_loss, brier : ndarray of shape (n,)
    """
    theta = np.asarray(theta, dtype=np.float64)
    idx = np.asarray(train_idx, dtype=np.int64)  # (n, m)
    n, m = idx.shape
    K = 2 if theta.ndim == 2 else theta.shape[1]
    counts = class_counts(design, data.y, K)  # (U, K)
    U = counts.shape[0]
    rows = design.row_to_unique[idx].astype(np.int64)  # (n, m) among the U rows
    labels = np.asarray(data.y, dtype=np.int64)[idx]  # (n, m)
    loss = np.empty(n)
    brier = np.empty(n)
    if theta.ndim == 2:
        n1, n0 = np.ascontiguousarray(counts[:, 1]), np.ascontiguousarray(counts[:, 0])
        if np.isfinite(theta).all():  # the sums in cache-sized tiles, as the errors'
            sums = TileSums(design, data, n)
            count_mistakes(design, theta, None, on_tile=sums)
            return sums.finish(design, data, theta, idx)
        # compiled (numba) where it runs: a process that only plans and writes never loads it
        from nbvslr.kernels.losses import add_binary_losses, train_binary_losses
    cols = max(1, min(n, TILE // max(1, U * K)))
    for lo in range(0, n, cols):
        hi = min(n, lo + cols)
        own = np.arange(hi - lo)[:, None]  # (c, 1)
        if theta.ndim == 2:
            s = np.ascontiguousarray(_binary_scores(design, theta[lo:hi]))  # (U, c)
            all_loss, all_brier = np.zeros(hi - lo), np.zeros(hi - lo)
            add_binary_losses(s, n1, n0, _LOSS_LOW, _LOSS_HIGH, all_loss, all_brier)
            tr_loss, tr_brier = np.empty(hi - lo), np.empty(hi - lo)
            train_binary_losses(s, rows[lo:hi], labels[lo:hi], _LOSS_LOW, _LOSS_HIGH,
                                tr_loss, tr_brier)
        else:
            s = _class_scores(design, theta[lo:hi])  # (U, c, K)
            lk, bk = class_terms(s)  # (U, c, K) each
            all_loss = np.einsum("uk,uck->c", counts, lk)
            all_brier = np.einsum("uk,uck->c", counts, bk)
            at = (rows[lo:hi], own, labels[lo:hi])  # (c, m) each
            tr_loss = lk[at].sum(axis=1)
            tr_brier = bk[at].sum(axis=1)
        loss[lo:hi] = (all_loss - tr_loss) / (design.n_rows - m)
        brier[lo:hi] = (all_brier - tr_brier) / (design.n_rows - m)
    return loss, brier


class TileSums:
    """The all-rows log-loss and Brier sums of finite two-class rules (n, P), made from the
    tiles of scores ``evaluate.count_mistakes`` makes for the errors (its ``on_tile``): no
    second product; then ``finish`` subtracts each rule's training rows (their scores made
    from their distinct rows in the compiled loop)."""

    def __init__(self, design: Design, data: Dataset, n: int) -> None:
        counts = class_counts(design, data.y, 2)  # (U, 2)
        self.n1 = np.ascontiguousarray(counts[:, 1])
        self.n0 = np.ascontiguousarray(counts[:, 0])
        self.loss = np.zeros(n)
        self.brier = np.zeros(n)

    def __call__(self, tile: np.ndarray, r0: int, r1: int, lo: int, hi: int) -> None:
        # compiled (numba) where it runs: a process that only plans and writes never loads it
        from nbvslr.kernels.losses import add_binary_losses

        add_binary_losses(tile, self.n1[r0:r1], self.n0[r0:r1], _LOSS_LOW, _LOSS_HIGH,
                          self.loss[lo:hi], self.brier[lo:hi])

    def finish(self, design: Design, data: Dataset, theta: np.ndarray,
               train_idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Test log-loss and Brier score (n,) of the rules ``theta`` (n, P) whose tiles were
        summed, with training rows ``train_idx`` (n, m)."""
        from nbvslr.kernels.losses import train_binary_losses_direct

        idx = np.asarray(train_idx, dtype=np.int64)
        n, m = idx.shape
        rows = design.row_to_unique[idx].astype(np.int64)  # (n, m)
        labels = np.asarray(data.y, dtype=np.int64)[idx]
        tr_loss, tr_brier = np.empty(n), np.empty(n)
        train_binary_losses_direct(design.unique_Z1, rows, np.ascontiguousarray(theta),
                                   labels, _LOSS_LOW, _LOSS_HIGH, tr_loss, tr_brier)
        N = design.n_rows
        return (self.loss - tr_loss) / (N - m), (self.brier - tr_brier) / (N - m)


# --------------------------------------------------------------------------- text designs
def text_scores(design: SparseDesign, theta: np.ndarray) -> np.ndarray:
    """Scores of every document under text rules: (n, N) for (n, V + 1), (n, N, K) for
    (n, K, V + 1)."""
    theta = np.asarray(theta, dtype=np.float64)
    if theta.ndim == 2:
        return (design.Z @ theta[:, :-1].T).T + theta[:, -1:]  # (n, N)
    n, K, P = theta.shape
    z = (design.Z @ theta[:, :, :-1].reshape(n * K, P - 1).T).T.reshape(n, K, -1)
    return np.moveaxis(z + theta[:, :, -1:], 1, 2)  # (n, N, K)


def text_heldout_metrics(design: SparseDesign, theta: np.ndarray, train_idx: np.ndarray
                         ) -> dict[str, np.ndarray]:
    """Test 0-1 error, test log-loss, test Brier score and training 0-1 error of two-class
    text rules (n, V + 1) whose ties count half an error, each (n,), from one pass over the
    scores (``kernels.text.heldout_metrics``): the error is ``text.entry.text_errors``'
    own (the same scores, the same counts), the log-loss and Brier score summed over the
    test rows alone."""
    from nbvslr.kernels.text import heldout_metrics  # compiled: imported where it runs

    theta = np.ascontiguousarray(theta, dtype=np.float64)
    idx = np.ascontiguousarray(train_idx, dtype=np.int64)
    m = idx.shape[1]
    test = design.n_rows - m
    Z = design.Z
    tau = np.maximum(TIE_RTOL * np.abs(theta).sum(axis=1), 1e-300)
    sign = np.where(np.asarray(design.y) == 1, 1.0, -1.0)
    out = np.empty((theta.shape[0], 4))
    heldout_metrics(Z.indptr.astype(np.int64, copy=False),
                    Z.indices.astype(np.int64, copy=False),
                    Z.data.astype(np.float64, copy=False), sign, theta, tau, idx,
                    EPSILON, 1.0 - EPSILON, out)
    return {"error": out[:, 0] / test, "log_loss": out[:, 1] / test, "brier": out[:, 2] / test,
            "train_error": out[:, 3] / m}


def text_metrics(design: SparseDesign, theta: np.ndarray, train_idx: np.ndarray,
                 ties: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Test log-loss, test Brier score and training 0-1 error of text rules (n, V + 1) or
    (n, K, V + 1) with training rows (n, m); each (n,). The training error counts a tie as
    the test error does (``text.entry.text_errors``). (Two-class rules whose ties count
    half: ``text_heldout_metrics``, the error with them in one pass.)"""
    theta = np.asarray(theta, dtype=np.float64)
    idx = np.asarray(train_idx, dtype=np.int64)
    n, m = idx.shape
    N = design.n_rows
    y = np.asarray(design.y, dtype=np.int64)
    labels = y[idx]  # (n, m)
    if theta.ndim == 2:
        # compiled (numba) where it runs: a process that only plans and writes never loads it
        from nbvslr.kernels.losses import add_binary_losses, train_binary_losses

        z = np.ascontiguousarray(design.Z @ theta[:, :-1].T + theta[:, -1])  # (N, n)
        n1 = (y == 1).astype(np.float64)
        all_loss, all_brier = np.zeros(n), np.zeros(n)
        add_binary_losses(z, n1, 1.0 - n1, _LOSS_LOW, _LOSS_HIGH, all_loss, all_brier)
        tr_loss, tr_brier = np.empty(n), np.empty(n)
        train_binary_losses(z, idx, labels, _LOSS_LOW, _LOSS_HIGH, tr_loss, tr_brier)
        tau = np.maximum(TIE_RTOL * np.abs(theta).sum(axis=1), 1e-300)[:, None]
        zt = z[idx, np.arange(n)[:, None]]  # (n, m) each rule's training scores
        pred = np.where(np.abs(zt) <= tau, ties, np.sign(zt))
        wrong = np.where(pred == 0, 0.5, (pred != design.sign[idx]).astype(np.float64))
        return ((all_loss - tr_loss) / (N - m), (all_brier - tr_brier) / (N - m),
                wrong.sum(axis=1) / m)
    K = theta.shape[1]
    cols = max(1, TILE // max(1, N * K))  # rules per pass: (c, N, K) arrays of ~8 MB
    if n > cols:
        parts = [text_metrics(design, theta[lo:lo + cols], idx[lo:lo + cols], ties)
                 for lo in range(0, n, cols)]
        return tuple(np.concatenate(x) for x in zip(*parts, strict=True))  # type: ignore
    test = np.ones((n, N), dtype=bool)
    test[np.arange(n)[:, None], idx] = False
    z = text_scores(design, theta)  # (n, N, K)
    lk, bk = class_terms(z)  # (n, N, K)
    loss = np.take_along_axis(lk, np.broadcast_to(y, (n, N))[..., None], axis=2)[..., 0]
    brier = np.take_along_axis(bk, np.broadcast_to(y, (n, N))[..., None], axis=2)[..., 0]
    tau = np.maximum(TIE_RTOL * np.abs(theta).sum(axis=(1, 2)), 1e-300)[:, None, None]
    zt = np.take_along_axis(z, idx[..., None], axis=1)  # (n, m, K)
    top = zt >= zt.max(axis=2, keepdims=True) - tau
    hit = np.take_along_axis(top, labels[..., None], axis=2)[..., 0]
    wrong = 1.0 - hit / top.sum(axis=2)
    return ((loss * test).sum(axis=1) / (N - m), (brier * test).sum(axis=1) / (N - m),
            wrong.sum(axis=1) / m)


# --------------------------------------------------------------------------- one rule, all rows
def row_brier(design: Design | SparseDesign, data: Dataset, theta: np.ndarray) -> np.ndarray:
    """The Brier term of every row under one rule, trained on whatever it was: shape (N,).

    ``theta`` is one two-class rule (P,) (log-odds of class 1; a text rule (V + 1,)) or one
    K-class rule (K, P). Two classes: ``(p(1 | x) - y)^2`` in [0, 1]; K classes:
    ``sum_k (p(k | x) - [y = k])^2`` in [0, 2] (the module docstring). Their mean is the
    rule's Brier score on all N rows, their standard deviation over sqrt(N) its standard
    error over the rows (run.json's ``asymptotic_brier``)."""
    theta = np.asarray(theta, dtype=np.float64)[None]  # (1, P) or (1, K, P)
    y = np.asarray(data.y, dtype=np.int64)  # (N,)
    N = y.size
    if isinstance(design, SparseDesign):
        z = text_scores(design, theta)[0]  # (N,) or (N, K)
        if theta.ndim == 2:
            p1 = 1.0 / (1.0 + np.exp(-np.clip(z, -700.0, 700.0)))
            return (p1 - y) ** 2
        _, bk = class_terms(z)  # (N, K)
        return bk[np.arange(N), y]
    u = np.asarray(design.row_to_unique, dtype=np.int64)  # (N,)
    if theta.ndim == 2:
        s = _binary_scores(design, theta)[:, 0]  # (U,), +-inf: probability 0 in a class
        with np.errstate(over="ignore"):
            p1 = np.where(np.isposinf(s), 1.0, np.where(np.isneginf(s), 0.0,
                                                        1.0 / (1.0 + np.exp(-s))))
        return (p1[u] - y) ** 2
    _, bk = class_terms(_class_scores(design, theta)[:, 0])  # (U, K)
    return bk[u, y]
