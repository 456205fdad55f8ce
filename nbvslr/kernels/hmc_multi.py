"""The compiled inner loop of ``nbvslr.models.lr.cone_hmc``: exact HMC on the K-class cone,
one chain at a time, without the cone's rows or their Gram matrix.

The chain runs on the K weight vectors of a rule, ``x = vec(W)`` (K blocks of P numbers),
in the subspace ``sum_k w_k = 0`` (``nbvslr.models.lr.sum_zero``): its start and its fresh
velocities lie there, and every reflection keeps it there. The cone of a training set has
a wall per training row i and class k != y_i, with normal ``(e_{y_i} - e_k) (x) z_i``
(``+z_i`` in the block of y_i, ``-z_i`` in the block of k), which lies in the subspace. Held
as a matrix it would have ``m (K - 1)`` rows of ``(K - 1) P`` numbers in the subspace's
coordinates and a Gram matrix of ``(m (K - 1))^2`` entries (162 MB a split for
optdigits-10 at m = 500). This kernel runs the binary sampler's iterations
(``nbvslr.kernels.hmc``: the same travel, the same bounces, the same cap) on that cone from
the training rows alone:

* ``F x`` is the score difference ``s_{i y_i} - s_{i k}`` with ``s = Z W^T`` (O(m P K));
* a reflection off wall (j, l) changes v by ``alpha z_j`` in two blocks (O(P));
* the Gram entry of walls (j, l) and (i, k) is ``(z_j . z_i) c`` with
  ``c = d(y_j, y_i) - d(y_j, k) - d(l, y_i) + d(l, k)`` (``d(a, b)`` is 1 when a = b), so a
  bounce updates the m (K - 1) velocities' margins from one row of the m x m Gram matrix of
  the training rows; every wall's squared norm is ``2 z_i . z_i``.

The kernel holds a split's training rows sorted by class (stably: ``order``), and the
margins class-major, ``(K, m)``: entry (k, p) is the wall (order[p], k). The entries
(y_p, p), no wall, are never met: class k's own rows are one stretch
``start[k] .. start[k + 1]``, which a bounce skips (their values are not read).

A bounce makes one pass over the K m margins (``_rotate``, a class at a time, which
compiles to vector instructions): it moves and reflects them and keeps, per training row,
only the smallest ratio ``fv / fx`` over the classes; the next wall is then the smallest of
those m numbers, and among the walls that have it the first in the training set's own
order (class-major), as in the binary sampler on the cone's rows (``_first_wall``): the
sorting changes no draw. The scores at the start of an iteration and a Gram row not held
are summed for all training rows at once from the transpose of Z, each sum over the
features in order (vector instructions again, the same sums).
"""

from __future__ import annotations

import numpy as np

from nbvslr.kernels.hmc import TINY, TRAVEL, add_scaled, stop_short, turn, wall_time
from nbvslr.kernels.jit import compiled


@compiled
def run_cone_chains(Z, y, n_classes, Gz, x0, velocities, burn_in, thin, max_events, kept,
                    events):
    """Every chain of every split, one after the other: ``n_iter`` HMC iterations each.

    Z : (S, m, P) training rows; y : (S, m) int64 labels ``0 .. K - 1``; Gz : (S, m, m)
    ``Z Z^T``, or (S, 0, 0) to make each row of it when a bounce needs it (O(m P)); x0 :
    (S, K P) the start of every chain of a split, K weight vectors summing to 0 and
    classifying every training row correctly; velocities : (S, n_iter, C, K P), each
    summing to 0 over the K blocks. Fills kept : (S, C, draws, K P), the positions after
    iterations ``burn_in + thin``, ``burn_in + 2 thin``, ..., and events : (S, C, n_iter),
    the bounces of every iteration.

    Each split's rows are sorted by class first, see the module docstring; its Gram matrix
    is sorted alike in place (Gz is overwritten).
    """
    S, m, P = Z.shape
    K = n_classes
    n_iter, C = velocities.shape[1], velocities.shape[2]
    r = x0.shape[1]
    x = np.empty(r)
    v = np.empty(r)
    fx = np.empty((K, m))
    fv = np.empty((K, m))
    sx = np.empty((2, K, m))  # the scores of x and v
    # a split's rows sorted by class (stable): row p is the training row order[p]
    order = np.empty(m, dtype=np.int64)
    start = np.empty(K + 1, dtype=np.int64)  # class k's rows are start[k] .. start[k + 1]
    ZT = np.empty((P, m))  # the split's rows sorted by class, transposed
    ys = np.empty(m, dtype=np.int64)
    seen = np.empty(m, dtype=np.bool_)
    scratch = np.empty((5, m))  # a bounce's factors, a Gram row, the smallest ratios (two)
    g_diag = np.empty(m)  # the walls' squared norms, 2 z_p . z_p for each class
    for s in range(S):
        n = 0
        for k in range(K):
            start[k] = n
            for i in range(m):
                if y[s, i] == k:
                    order[n] = i
                    n += 1
        start[K] = n
        if n != m:
            raise ValueError("the labels must be 0 .. n_classes - 1")
        for p in range(m):
            ys[p] = y[s, order[p]]
            for q in range(P):
                ZT[q, p] = Z[s, order[p], q]
        if Gz.shape[1] == m:
            _sort_gram(Gz[s], order, scratch[0], seen)
        for i in range(m):
            zz = 0.0
            for p in range(P):
                zz += ZT[p, i] * ZT[p, i]
            g_diag[i] = max(2.0 * zz, 1e-300)
        for c in range(C):
            x[:] = x0[s]
            for it in range(n_iter):
                v[:] = velocities[s, it, c]
                events[s, c, it] = _travel(ZT, ys, order, start, K, Gz[s], g_diag, x, v,
                                           fx, fv, sx, scratch, max_events)
                done = it + 1 - burn_in
                if done > 0 and done % thin == 0:
                    kept[s, c, done // thin - 1] = x


@compiled
def _sort_gram(G, order, buf, seen):
    """``G[p, q] <- G[order[p], order[q]]`` in place (buf, seen : (m,) scratch): each row's
    entries, then the rows along the cycles of the permutation."""
    m = G.shape[0]
    for i in range(m):
        for q in range(m):
            buf[q] = G[i, order[q]]
        for q in range(m):
            G[i, q] = buf[q]
    for p in range(m):
        seen[p] = False
    for p0 in range(m):
        if seen[p0]:
            continue
        for q in range(m):
            buf[q] = G[p0, q]
        p = p0
        while True:
            seen[p] = True
            src = order[p]
            if src == p0:
                for q in range(m):
                    G[p, q] = buf[q]
                break
            for q in range(m):
                G[p, q] = G[src, q]
            p = src


@compiled
def _first_wall(fx, fv, y, order, low):
    """The next wall: ``(k m + p, fv[k, p] / fx[k, p])`` for the most negative ratio over
    the rows (p, k), k != y_p, the first such in the training set's own order (class-major:
    k, then the training row ``order[p]``); ``(0, 0.0)`` if no ratio is negative (no wall
    ahead). low : (m,) the smallest of 0 and row p's ratios over k."""
    K, m = fx.shape
    k_min = 0.0
    for p in range(m):
        k_min = min(k_min, low[p])
    if not k_min < 0.0:
        return 0, 0.0
    first, best = K * m, 0
    for p in range(m):
        if low[p] == k_min:
            for k in range(K):
                jq = k * m + order[p]
                if jq >= first:
                    break
                if k != y[p] and fv[k, p] / fx[k, p] == k_min:
                    first, best = jq, k * m + p
                    break
    return best, k_min


@compiled
def _margins(ZT, y, K, x, v, sx, fx, fv, low):
    """``fx = F x`` (at least TINY) and ``fv = F v``, (K, m), from the scores (ZT : (P, m)
    the training rows' transpose; x, v : (K P,) K weight vectors; sx : (2, K, m) the
    scores), the entries (y_i, i) at 1 and 0; low : (m,) the smallest of 0 and the ratios
    ``fv / fx`` of row i of the training set."""
    P, m = ZT.shape
    for k in range(K):
        for i in range(m):
            sx[0, k, i] = 0.0
            sx[1, k, i] = 0.0
    for k in range(K):
        # the scores of class k, z_i . x_k and z_i . v_k, summed over p in order for every
        # row i at once
        for p in range(P):
            add_scaled(sx[0, k], sx[1, k], ZT[p], x[k * P + p], v[k * P + p])
    for i in range(m):
        low[i] = 0.0
    for k in range(K):
        for i in range(m):
            if k == y[i]:
                fx[k, i] = 1.0
                fv[k, i] = 0.0
            else:
                a = sx[0, y[i], i] - sx[0, k, i]
                fx[k, i] = a if a >= TINY else TINY
                fv[k, i] = sx[1, y[i], i] - sx[1, k, i]
                q = fv[k, i] / fx[k, i]
                low[i] = min(low[i], q)


@compiled
def _add_scaled1(a, z, c):
    """``a += z c`` elementwise."""
    for i in range(z.shape[0]):
        a[i] += z[i] * c


@compiled
def _rotate(fxk, fvk, low, lower, ag, at, ek, cs, sn, lo, hi):
    """One class's margins moved along the ellipse by (cs, sn) and reflected: the walls
    (p, k) for p in ``lo .. hi`` (unsigned: no index wraparound, the loop vectorises);
    ``lower[p] = min(low[p], ratio of (p, k))``. (low and lower are distinct arrays: a
    minimum kept in place compiles to masked stores, which are slow.)"""
    for i in range(lo, hi):
        fxi = fxk[i] * cs + fvk[i] * sn
        fvi = fvk[i] * cs - fxk[i] * sn - ag[i] * (ek - at[i])
        fxi = fxi if fxi >= TINY else TINY
        fxk[i] = fxi
        fvk[i] = fvi
        lower[i] = min(low[i], fvi / fxi)


@compiled
def _travel(ZT, y, order, start, K, Gz, g_diag, x, v, fx, fv, sx, scratch,
            max_events):
    """One HMC iteration of one chain (``nbvslr.kernels.hmc._travel`` on the K-class cone):
    travel for ``TRAVEL`` from x with velocity v, both updated in place; returns the
    bounces.

    ZT : (P, m) the split's rows sorted by class, transposed; y their labels, order : (m,)
    their rows in the training set, start : (K + 1,) where each class's rows start; Gz
    : (m, m) their Gram matrix or (0, 0); g_diag : (m,) the squared norm of each row's
    walls; x, v : (K P,) K weight vectors summing to 0. A bounce
    rotates and reflects the K m margins in one pass (``_rotate``, class by class), keeping
    per row only the smallest ratio over the classes (``low``); ``_first_wall`` then finds
    the smallest of those m and the first wall that has it.
    """
    P, m = ZT.shape
    ag, at, row = scratch[0], scratch[1], scratch[2]
    low = scratch[3]
    e = np.zeros(K)
    _margins(ZT, y, K, x, v, sx, fx, fv, low)
    jq, k_min = _first_wall(fx, fv, y, order, low)
    left = TRAVEL
    n_events = 0
    while True:
        t_hit = wall_time(k_min)
        if n_events == max_events:
            stop_short(x, v, t_hit, left)
            return n_events
        hit = t_hit < left
        dt = min(t_hit, left)
        cs, sn = np.cos(dt), np.sin(dt)
        turn(x, v, cs, sn)
        left -= dt
        if not hit:
            return n_events
        n_events += 1
        # the wall met: row a of the training set, against class l
        l, a = jq // m, jq % m
        ya = y[a]
        # specular reflection: v -= alpha (e_ya - e_l) (x) z_a, which sums to 0 over the
        # classes (v stays in the subspace)
        alpha = 2.0 * (fv[l, a] * cs - fx[l, a] * sn) / g_diag[a]
        for p in range(P):
            v[ya * P + p] -= alpha * ZT[p, a]
            v[l * P + p] += alpha * ZT[p, a]
        # the Gram entry of walls (a, l) and (i, k) is (z_a . z_i) (e_k - e_{y_i}) with
        # e = e_l - e_ya
        e[:] = 0.0
        e[ya] = -1.0
        e[l] = 1.0
        if Gz.shape[0] == m:
            Ga = Gz[a]
        else:  # the Gram matrix not held: its row a, z_i . z_a summed over p in order
            for i in range(m):
                row[i] = 0.0
            for p in range(P):
                _add_scaled1(row, ZT[p], ZT[p, a])
            Ga = row
        el, eya = e[l], e[ya]
        low0 = scratch[3]
        for i in range(m):  # at_i = e[y_i], l != ya
            yi = y[i]
            ag[i] = alpha * Ga[i]
            at[i] = el if yi == l else (eya if yi == ya else 0.0)
            low0[i] = 0.0
        for k in range(K):
            src, dst = scratch[3 + k % 2], scratch[4 - k % 2]
            # the rows of class k (entries (y_p, p), no walls) are skipped
            lo, hi = start[k], start[k + 1]
            _rotate(fx[k], fv[k], src, dst, ag, at, e[k], cs, sn, np.uint64(0),
                    np.uint64(lo))
            for p in range(lo, hi):
                dst[p] = src[p]
            _rotate(fx[k], fv[k], src, dst, ag, at, e[k], cs, sn, np.uint64(hi),
                    np.uint64(m))
            if k == l:
                # the wall just met: the particle is on it (rounding aside)
                fx[l, a] = TINY
                dst[a] = min(src[a], fv[l, a] / TINY)
        low = scratch[3 + K % 2]
        jq, k_min = _first_wall(fx, fv, y, order, low)
