"""``probabilities.dense_losses``'s pass over a tile of two-class scores, compiled into one
loop: the clipped log-loss and the Brier term of each score, weighted by how many rows of
each class its distinct row stands for, summed per rule.

In numpy that is a dozen passes over the tile (an exponential, a logarithm, the clipping,
the logistic function, the squares, two products with the counts); here it is one, with one
``exp`` per score (and a ``log`` per 16 rows, ``add_binary_losses``):

    e = exp(-|s|),  -log p(1 | s) = log1p(e) + max(-s, 0),  -log p(0 | s) = log1p(e) + max(s, 0),
    p(1 | s) = 1 / (1 + e) for s >= 0, e / (1 + e) otherwise

(exact identities; ``s = +-inf``, a class of probability 0, gives ``e = 0`` and the clipped
loss ``-log(epsilon)``). The sums are of floats in row order: the same numbers whatever the
chunking of rules, not bit-identical to a numpy pass that sums in another order.
"""

from __future__ import annotations

import math

import numpy as np

from nbvslr.kernels.jit import compiled


@compiled
def _terms(s, low, high):
    """``(loss if y = 1, loss if y = 0, p(1 | s))`` of one score, losses clipped to
    ``[low, high]``."""
    e = math.exp(-abs(s))  # in [0, 1]: no overflow for any s
    lg = math.log1p(e)
    if s >= 0.0:
        l1, l0, p1 = lg, lg + s, 1.0 / (1.0 + e)
    else:
        l1, l0, p1 = lg - s, lg, e / (1.0 + e)
    return min(max(l1, low), high), min(max(l0, low), high), p1


#: Rows whose probabilities are multiplied before one logarithm is taken: each is at least
#: epsilon = 1e-15 (clipped), so a product of 16 is at least 1e-240, far from underflow.
BLOCK = 16


@compiled
def add_binary_losses(tile, n1, n0, low, high, loss, brier):
    """``loss[c] += sum_r n1[r] l1(tile[r, c]) + n0[r] l0(tile[r, c])`` and the same for the
    Brier terms ``(1 - p1)^2`` and ``p1^2``.

    tile : (R, C) float64 scores; n1, n0 : (R,) rows of class 1 and 0 each distinct row
    stands for; low, high : the clipping of the loss (``-log(1 - eps)``, ``-log(eps)``);
    loss, brier : (C,) updated in place.

    A distinct row standing for one row (of either class) multiplies its clipped
    probability of the true class into a running product per rule, whose logarithm is
    taken every ``BLOCK`` such rows: one ``exp`` per score and one ``log`` per ``BLOCK``
    rows (the true class's probability computed without cancellation: ``p(0 | s) =
    e / (1 + e)`` for s >= 0). A row standing for several takes its own logarithms.
    """
    R, C = tile.shape
    p_low = math.exp(-high)  # eps
    p_high = math.exp(-low)  # 1 - eps
    prod = np.ones(C)
    held = 0
    for r in range(R):
        a = n1[r]
        b = n0[r]
        if (a == 1.0 and b == 0.0) or (a == 0.0 and b == 1.0):
            for c in range(C):
                s = tile[r, c]
                e = math.exp(-abs(s))
                q = 1.0 / (1.0 + e)  # the larger probability, >= 1/2
                t = e * q  # the smaller, with no cancellation
                p1 = q if s >= 0.0 else t
                p0 = t if s >= 0.0 else q
                pt = p1 if a == 1.0 else p0  # the true class's
                prod[c] *= min(max(pt, p_low), p_high)
                other = p0 if a == 1.0 else p1
                brier[c] += other * other
            held += 1
            if held == BLOCK:
                for c in range(C):
                    loss[c] -= math.log(prod[c])
                    prod[c] = 1.0
                held = 0
        else:
            for c in range(C):
                l1, l0, p1 = _terms(tile[r, c], low, high)
                loss[c] += a * l1 + b * l0
                brier[c] += a * (1.0 - p1) * (1.0 - p1) + b * p1 * p1
    for c in range(C):
        loss[c] -= math.log(prod[c])


@compiled
def train_binary_losses(tile, rows, labels, low, high, loss, brier):
    """The same sums over each rule's own training rows: ``rows`` (C, m) their distinct
    rows in the tile (every row of the design), ``labels`` (C, m) their classes;
    ``loss``, ``brier`` (C,) set."""
    C, m = rows.shape
    for c in range(C):
        total = 0.0
        squares = 0.0
        for i in range(m):
            l1, l0, p1 = _terms(tile[rows[c, i], c], low, high)
            if labels[c, i] == 1:
                total += l1
                squares += (1.0 - p1) * (1.0 - p1)
            else:
                total += l0
                squares += p1 * p1
        loss[c] = total
        brier[c] = squares


@compiled
def train_binary_losses_direct(Zu, rows, theta, labels, low, high, loss, brier):
    """``train_binary_losses`` with each training row's score made here from its distinct
    row, ``Zu[rows[c, i]] @ theta[c]`` (finite rules only), instead of read from a tile:
    Zu (U, P), rows (C, m), theta (C, P), labels (C, m); loss, brier (C,) set."""
    C, m = rows.shape
    P = Zu.shape[1]
    for c in range(C):
        total = 0.0
        squares = 0.0
        for i in range(m):
            u = rows[c, i]
            s = 0.0
            for p in range(P):
                s += Zu[u, p] * theta[c, p]
            l1, l0, p1 = _terms(s, low, high)
            if labels[c, i] == 1:
                total += l1
                squares += (1.0 - p1) * (1.0 - p1)
            else:
                total += l0
                squares += p1 * p1
        loss[c] = total
        brier[c] = squares
