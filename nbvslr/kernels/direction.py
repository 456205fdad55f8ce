"""The per-split loops of the quasi direction problem, every split in one compiled pass.

``lr.separation.max_margin_direction`` states the problem and its basis; these loops do, for
all splits at once, what its numpy code did one split at a time: the overlap rows' columns,
mean and centred Gram matrix (``overlap_columns``, ``overlap_grams``), the rows ``G`` of the
least-distance problem in the basis (``stack_problems``), the direction from the solver's
point (``directions``), and ``lr.least_distance``'s optimality check (``kkt_check``).
Variable-sized per-split arrays are held flat, split a's from ``off[a]`` (row-major).
Compiled (``jit.compiled``).
"""

from __future__ import annotations

import numpy as np

from nbvslr.kernels.jit import compiled


@compiled
def overlap_columns(U, ids, separated, used, count):
    """``used[a, j]``: some overlap row of split a (``~separated[a]``) is non-zero in weight
    column j; ``count[a]`` its number of overlap rows.

    U (u, P) the distinct rows, the intercept last; ids (S, m) int64 each training row's
    distinct row (split a's row i is ``U[ids[a, i]]``); separated (S, m) bool; used
    (S, P - 1) bool and count (S,) int64, filled.
    """
    S, m = ids.shape
    P = U.shape[1]
    for a in range(S):
        used[a, :] = False
        r = 0
        for i in range(m):
            if separated[a, i]:
                continue
            r += 1
            z = U[ids[a, i]]
            for j in range(P - 1):
                if z[j] != 0.0:
                    used[a, j] = True
        count[a] = r


#: ``overlap_grams`` sums the Gram matrix exactly when every entry is an integer of at most
#: this size and the split has at most ``EXACT_ROWS`` overlap rows (``r^2 B^2 <= 2^52``).
EXACT_ENTRY = 1024.0
EXACT_ROWS = 65536


@compiled
def overlap_grams(U, ids, separated, used, count, c_ptr, mean, g_ptr, gram):
    """Each split's overlap rows on its used columns C (c of them, ascending): their mean
    (``mean[c_ptr[a]:c_ptr[a + 1]]``) and the centred Gram matrix ``(X - xbar)^T (X -
    xbar)`` ((c, c) row-major at ``gram[g_ptr[a]:]``).

    Rows of small integers (a one-hot design's; ``EXACT_ENTRY``, ``EXACT_ROWS``): ``(r S_tu
    - n_t n_u) / r`` with S = X^T X summed over each row's non-zeros and n the column sums,
    the numerator an exact integer, so each entry is the exact value correctly rounded;
    other rows: the centred products summed row by row.

    U (u, P) and ids (S, m) as for ``overlap_columns``; separated (S, m) bool; used
    (S, P - 1) bool and count (S,) from ``overlap_columns``; c_ptr, g_ptr (S + 1,) int64;
    mean, gram flat float64, filled.
    """
    S, m = ids.shape
    P = U.shape[1]
    cols = np.zeros(P, dtype=np.int64)
    d = np.zeros(P)
    nz = np.zeros(P, dtype=np.int64)
    for a in range(S):
        c = 0
        for j in range(P - 1):
            if used[a, j]:
                cols[c] = j
                c += 1
        if c == 0:
            continue
        r = count[a]
        mu = mean[c_ptr[a]:c_ptr[a + 1]]
        mu[:] = 0.0
        exact = r <= EXACT_ROWS
        for i in range(m):
            if not separated[a, i]:
                z = U[ids[a, i]]
                for t in range(c):
                    x = z[cols[t]]
                    mu[t] += x
                    if exact and (abs(x) > EXACT_ENTRY or x != np.floor(x)):
                        exact = False
        g = gram[g_ptr[a]:g_ptr[a + 1]]
        g[:] = 0.0
        if exact:  # mu holds the column sums n, exactly
            for i in range(m):
                if separated[a, i]:
                    continue
                z = U[ids[a, i]]
                q = 0
                for t in range(c):
                    if z[cols[t]] != 0.0:
                        nz[q] = t
                        q += 1
                for p in range(q):
                    t = nz[p]
                    xt = z[cols[t]]
                    for o in range(p, q):
                        g[t * c + nz[o]] += xt * z[cols[nz[o]]]
            for t in range(c):
                for u in range(t, c):
                    g[t * c + u] = (r * g[t * c + u] - mu[t] * mu[u]) / r
            for t in range(c):
                mu[t] /= r
        else:
            for t in range(c):
                mu[t] /= r
            for i in range(m):
                if separated[a, i]:
                    continue
                z = U[ids[a, i]]
                for t in range(c):
                    d[t] = z[cols[t]] - mu[t]
                for t in range(c):
                    dt = d[t]
                    for u in range(t, c):
                        g[t * c + u] += dt * d[u]
        for t in range(c):
            for u in range(t):
                g[t * c + u] = g[u * c + t]


@compiled
def stack_problems(AQ, ptr, free, used, c_ptr, mean, nt_off, NT, k, g_off, G):
    """The rows ``G_i = (A_iF, (A_iC - s_i xbar) N)`` of each split's least-distance
    problem, (n_a, f_a + k_a) row-major at ``G[g_off[a]:]``.

    AQ (n, P) the separated rows' distinct rows of all splits, split a's in ``ptr[a]:ptr[a
    + 1]`` (their sign: the intercept column); free, used (S, P - 1) bool the columns F and
    C; mean flat by c_ptr (``overlap_grams``); NT flat float64: split a's null-space basis
    transposed, (k_a, c_a) row-major at ``nt_off[a]``; k (S,) int64; g_off (S + 1,) int64;
    G flat float64, filled.
    """
    S = ptr.shape[0] - 1
    P = AQ.shape[1]
    cols = np.zeros(P, dtype=np.int64)
    fcols = np.zeros(P, dtype=np.int64)
    d = np.zeros(P)
    for a in range(S):
        c = 0
        f = 0
        for j in range(P - 1):
            if used[a, j]:
                cols[c] = j
                c += 1
            elif free[a, j]:
                fcols[f] = j
                f += 1
        w = f + k[a]
        mu = mean[c_ptr[a]:c_ptr[a + 1]]
        at = g_off[a]
        for i in range(ptr[a], ptr[a + 1]):
            for t in range(f):
                G[at + t] = AQ[i, fcols[t]]
            s = AQ[i, P - 1]
            for t in range(c):
                d[t] = AQ[i, cols[t]] - s * mu[t]
            for q in range(k[a]):
                row = nt_off[a] + q * c
                acc = 0.0
                for t in range(c):
                    acc += d[t] * NT[row + t]
                G[at + f + q] = acc
            at += w


@compiled
def directions(G, g_off, width, nfree, y, ptr, free, used, c_ptr, mean, nt_off, NT, solved,
               out):
    """Each solved split's direction from its least-distance point: ``x = G^T y / (1 - sum
    y)`` (``-r[:-1] / r[-1]``), ``v_F = x_F``, ``w_C = N x_N``, ``b = -xbar . w_C``.

    G, g_off as ``stack_problems`` wrote them; width, nfree (S,) int64 the columns of each
    split's G and how many are F; y flat (the points, split a's in ``ptr[a]:ptr[a + 1]``);
    free, used, c_ptr, mean, nt_off, NT as for ``stack_problems``; solved (S,) bool, the
    splits to write; out (S, P), their rows filled (the others untouched).
    """
    S = ptr.shape[0] - 1
    P = out.shape[1]
    x = np.zeros(P + 1)
    cols = np.zeros(P, dtype=np.int64)
    for a in range(S):
        if not solved[a]:
            continue
        w = width[a]
        f = nfree[a]
        x[:w] = 0.0
        total = 0.0
        at = g_off[a]
        for i in range(ptr[a], ptr[a + 1]):
            yi = y[i]
            total += yi
            for t in range(w):
                x[t] += G[at + t] * yi
            at += w
        scale = 1.0 - total
        for t in range(w):
            x[t] /= scale
        c = 0
        q = 0
        for j in range(P - 1):
            if used[a, j]:
                cols[c] = j
                c += 1
            elif free[a, j]:
                out[a, j] = x[q]
                q += 1
        mu = mean[c_ptr[a]:c_ptr[a + 1]]
        b = 0.0
        for t in range(c):
            wt = 0.0
            for q in range(w - f):
                wt += NT[nt_off[a] + q * c + t] * x[f + q]
            out[a, cols[t]] = wt
            b -= mu[t] * wt
        out[a, P - 1] = b


@compiled
def kkt_check(G, y, rtol):
    """``lr.least_distance.kkt_violation`` compiled: whether the NNLS point ``y`` (n,) of the
    problem of ``G`` (n, k) says feasible, and its largest violation of the optimality
    conditions (that function's docstring states them), as (bool, float)."""
    n, k = G.shape
    for i in range(n):
        if y[i] < 0.0:
            return False, np.inf
    rx = np.zeros(k)
    total = 0.0
    size = 0.0
    cnorm = np.empty(n)
    for i in range(n):
        gsq = 0.0
        for t in range(k):
            gsq += G[i, t] * G[i, t]
        cnorm[i] = np.sqrt(1.0 + gsq)
        size += y[i] * cnorm[i]
        total += y[i]
        for t in range(k):
            rx[t] += G[i, t] * y[i]
    rk = total - 1.0
    size = max(1.0, size)
    big = abs(rk)
    for t in range(k):
        big = max(big, abs(rx[t]))
    if big <= rtol * size:
        return False, big / size
    if not rk < 0.0:
        return False, np.inf
    xx = 0.0
    for t in range(k):
        rx[t] = -rx[t] / rk
        xx += rx[t] * rx[t]
    worst = 0.0
    for i in range(n):
        s = 0.0
        for t in range(k):
            s += G[i, t] * rx[t]
        s -= 1.0
        viol = abs(s) if y[i] > 0.0 else max(-s, 0.0)
        worst = max(worst, viol / cnorm[i])
    return True, worst / np.sqrt(1.0 + xx)


@compiled
def least_margins(AQ, ptr, v, out):
    """``out[a]``: the smallest margin ``A_i . v_a`` over split a's rows of Q.

    AQ (n, P), ptr (S + 1,) as for ``stack_problems``; v (S, P); out (S,) filled (inf for a
    split without rows).
    """
    S = ptr.shape[0] - 1
    P = AQ.shape[1]
    for a in range(S):
        low = np.inf
        for i in range(ptr[a], ptr[a + 1]):
            acc = 0.0
            for j in range(P):
                acc += AQ[i, j] * v[a, j]
            low = min(low, acc)
        out[a] = low
