"""Weighted Gram matrices ``Z^T diag(w) Z`` and products ``Z x``, ``Z^T r`` of sparse stacks,
for LR's Newton steps.

A discrete task's LR design is one-hot with a reference level dropped per attribute: a row
of adult (discrete) has at most 9 non-zeros among its 95 columns (4.6 on average). The
Hessian ``sum_i w_i z_i z_i^T`` then needs, per row, only the products of its non-zeros
(~k^2 / 2 of them) instead of the dense rank-k update's ``P^2 / 2`` (the measurements:
``benchmarks/RESULTS.md``, ``python benchmarks/hessian_forms.py``). ``sparse_rows`` lists
each row's non-zeros once per block of splits; ``weighted_gram`` is then called at every
Newton step (``lr.newton`` picks it when at most ``newton.SPARSE_DENSITY`` of a block's
entries are non-zero), and so are the margins' and the gradient's products
(``sparse_matvec``, ``sparse_rmatvec``). All are compiled (``jit.compiled``); each split's
sums run over its rows in order, so a split's Hessian does not depend on the block it
shares.
"""

from __future__ import annotations

import numpy as np

from nbvslr.kernels.jit import compiled


@compiled
def sparse_rows(Z):
    """The non-zeros of every row of a stack Z (A, m, P).

    Returns ``(cols, vals, nnz)``: cols (A, m, K) int64 column indices (increasing within a
    row), vals (A, m, K) their values, nnz (A, m) how many of the K slots each row uses
    (K = the largest count of the stack).
    """
    A, m, P = Z.shape
    nnz = np.zeros((A, m), dtype=np.int64)
    for a in range(A):
        for i in range(m):
            for q in range(P):
                if Z[a, i, q] != 0.0:
                    nnz[a, i] += 1
    K = max(1, nnz.max()) if nnz.size else 1
    cols = np.zeros((A, m, K), dtype=np.int64)
    vals = np.zeros((A, m, K))
    for a in range(A):
        for i in range(m):
            k = 0
            for q in range(P):
                z = Z[a, i, q]
                if z != 0.0:
                    cols[a, i, k] = q
                    vals[a, i, k] = z
                    k += 1
    return cols, vals, nnz


@compiled
def weighted_gram(cols, vals, nnz, w, out):
    """``out[a] = sum_i w[a, i] z_ai z_ai^T`` from the non-zeros of ``sparse_rows``.

    cols, vals : (A, m, K); nnz : (A, m); w : (A, m) row weights; out : (A, P, P), filled.
    """
    A, m, _ = cols.shape
    P = out.shape[1]
    for a in range(A):
        H = out[a]
        for u in range(P):
            for t in range(P):
                H[u, t] = 0.0
        for i in range(m):
            wi = w[a, i]
            for u in range(nnz[a, i]):
                cu = cols[a, i, u]
                vu = wi * vals[a, i, u]
                for t in range(u + 1):
                    H[cu, cols[a, i, t]] += vu * vals[a, i, t]
        # the sums are in the lower triangle (columns increase within a row): mirror them
        for u in range(P):
            for t in range(u):
                H[t, u] = H[u, t]


@compiled
def sparse_matvec(cols, vals, nnz, x):
    """``Z x`` per split from the non-zeros of ``sparse_rows``: x (A, P) -> (A, m)."""
    A, m, _ = cols.shape
    out = np.empty((A, m))
    for a in range(A):
        for i in range(m):
            acc = 0.0
            for u in range(nnz[a, i]):
                acc += vals[a, i, u] * x[a, cols[a, i, u]]
            out[a, i] = acc
    return out


@compiled
def sparse_rmatvec(cols, vals, nnz, r, P):
    """``Z^T r`` per split from the non-zeros of ``sparse_rows``: r (A, m) -> (A, P)."""
    A, m, _ = cols.shape
    out = np.zeros((A, P))
    for a in range(A):
        for i in range(m):
            ri = r[a, i]
            for u in range(nnz[a, i]):
                out[a, cols[a, i, u]] += vals[a, i, u] * ri
    return out


@compiled
def listed_rows(ptr, cols, vals, ids, skip):
    """The non-zeros of a stack given by its distinct rows, as ``sparse_rows`` lists them.

    ptr (u + 1,), cols (nnz,) int64 and vals (nnz,): the distinct rows' non-zeros (row r's
    in ``ptr[r]:ptr[r + 1]``, columns increasing); ids (A, m) int64 each row's distinct
    row; skip (A, m) bool the rows read as zero. Returns ``(cols, vals, nnz)``, (A, m, K)
    with K the largest count (at least 1), the unused slots 0: ``sparse_rows`` of the stack
    ``U[ids]`` with the skipped rows zeroed, without the stack.
    """
    A, m = ids.shape
    nnz = np.zeros((A, m), dtype=np.int64)
    K = 1
    for a in range(A):
        for i in range(m):
            if not skip[a, i]:
                r = ids[a, i]
                nnz[a, i] = ptr[r + 1] - ptr[r]
                K = max(K, nnz[a, i])
    out_cols = np.zeros((A, m, K), dtype=np.int64)
    out_vals = np.zeros((A, m, K))
    for a in range(A):
        for i in range(m):
            start = ptr[ids[a, i]]
            for k in range(nnz[a, i]):
                out_cols[a, i, k] = cols[start + k]
                out_vals[a, i, k] = vals[start + k]
    return out_cols, out_vals, nnz


@compiled
def pack_columns(cols, nnz, P):
    """The columns each split's rows use, packed (``lr.newton._packed``): cols (A, m, K)
    and nnz (A, m) as ``sparse_rows`` lists them, P the stack's width.

    Returns ``(packed, pos)``: packed (A, m, K) int64 each slot's column renumbered among
    its split's used columns (in their order; a slot past a row's nnz: the renumbered index
    of the column it holds, clipped at 0, any index will do), pos (A, W) int64 the column
    of each packed one (P for the padding of splits that use fewer than W = the most used).
    """
    A, m, K = cols.shape
    slot = np.empty((A, P), dtype=np.int64)  # number of used columns up to j, minus 1
    used = np.zeros(P, dtype=np.bool_)
    W = 1
    for a in range(A):
        used[:] = False
        for i in range(m):
            for k in range(nnz[a, i]):
                used[cols[a, i, k]] = True
        c = 0
        for j in range(P):
            if used[j]:
                c += 1
            slot[a, j] = c - 1
        W = max(W, c)
    pos = np.full((A, W), P, dtype=np.int64)
    for a in range(A):
        prev = -1
        for j in range(P):
            if slot[a, j] != prev:  # column j is used: the next packed index
                pos[a, slot[a, j]] = j
                prev = slot[a, j]
    packed = np.empty((A, m, K), dtype=np.int64)
    for a in range(A):
        for i in range(m):
            for k in range(K):
                packed[a, i, k] = max(slot[a, cols[a, i, k]], 0)
    return packed, pos
