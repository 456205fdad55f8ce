"""LR's Newton systems solved by Cholesky factorisation, one split at a time, compiled.

A Newton system is a Hessian (symmetric positive semi-definite) plus a small ridge, so
positive definite: ``H + r I = L L^T`` (about half the work of the LU factorisation of a
general solve), then ``L y = b`` and ``L^T x = y``. Each split's system is the leading
``k x k`` block of its matrix in the stack, so a split whose training rows use fewer columns
than the others of its block (``lr.newton``'s packed one-hot columns) factors only its own
block, and its numbers never depend on the block it is in; the ridge comes from a sum of
that block's diagonal in order, for the same reason. The factorisation is the row-by-row
(Cholesky-Crout) form, whose inner products are contiguous rows of L; they are compiled
with reassociation (``jit.compiled``), so they run on vector registers, always in the same
order for a system of a given size.
"""

from __future__ import annotations

import numpy as np

from nbvslr.kernels.jit import compiled


def _cholesky_solve(H, k, n_params, b, out):
    """``out[a, :k[a]] = (H[a, :k, :k] + r_a I)^-1 b[a, :k]`` with
    ``r_a = 1e-10 trace(H[a, :k, :k]) / n_params + 1e-30``; ``out[a, k[a]:] = 0``.

    H : (A, W, W) symmetric (only the lower triangle of each leading block is read);
    k : (A,) int64; n_params : the ridge's divisor; b : (A, W); out : (A, W), filled.
    Returns ok (A,) bool: False where the system is not numerically positive definite
    (``out[a]`` then undefined; the caller solves it otherwise).
    """
    A, W, _ = H.shape
    L = np.empty((W, W))
    y = np.empty(W)
    ok = np.ones(A, dtype=np.bool_)
    for a in range(A):
        n = k[a]
        trace = 0.0
        for i in range(n):
            trace += H[a, i, i]
        r = 1e-10 * trace / n_params + 1e-30
        for i in range(n, W):
            out[a, i] = 0.0
        # H + r I = L L^T, row j of L from the rows above it
        for j in range(n):
            Lj = L[j]
            for i in range(j):
                Li = L[i]
                t = H[a, j, i]
                for q in range(i):
                    t -= Lj[q] * Li[q]
                Lj[i] = t / Li[i]
            t = H[a, j, j] + r
            for q in range(j):
                t -= Lj[q] * Lj[q]
            if not t > 0.0:  # not positive definite (or nan)
                ok[a] = False
                break
            Lj[j] = np.sqrt(t)
        if not ok[a]:
            continue
        # L y = b, row by row
        for i in range(n):
            Li = L[i]
            t = b[a, i]
            for q in range(i):
                t -= Li[q] * y[q]
            y[i] = t / Li[i]
        # L^T x = y, last unknown first; each solved unknown's row of L updates the rest
        for q in range(n - 1, -1, -1):
            Lq = L[q]
            xq = y[q] / Lq[q]
            out[a, q] = xq
            for i in range(q):
                y[i] -= Lq[i] * xq
    return ok


cholesky_solve = compiled(_cholesky_solve, reassociate=True)


@compiled
def row_dots(x, y):
    """``sum_j x[a, j] y[a, j]`` per row a, summed in order: x, y (A, W) -> (A,).

    In order, so a split's trailing zero columns (the packing's padding) never change it."""
    A, W = x.shape
    out = np.empty(A)
    for a in range(A):
        acc = 0.0
        for j in range(W):
            acc += x[a, j] * y[a, j]
        out[a] = acc
    return out
