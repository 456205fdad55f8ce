"""The compiled inner loop of ``nbvslr.models.lr.hmc``: exact HMC, one chain at a time.

``run_chains`` runs every HMC iteration of every chain of a block of splits (the
mathematics is in ``nbvslr.models.lr.hmc``'s docstring). It is plain numba: the functions
compile on first use (how long: ``benchmarks/RESULTS.md``) and the machine code is cached on
disk for later processes (``jit.compiled``). The random velocities come in as an array
(drawn by each split's own Generator in ``nbvslr.models.lr.hmc``), so the kernel itself is
deterministic.
"""

from __future__ import annotations

import numpy as np

from nbvslr.kernels.jit import compiled

#: Travel time per iteration (a quarter turn of the ellipse: x and v swap roles).
TRAVEL = np.pi / 2
#: Margins are kept >= TINY (a particle on a wall, or pushed past it by rounding).
TINY = 1e-300


@compiled
def run_chains(F, G, g_diag, x0, velocities, burn_in, thin, max_events, kept, events):
    """Every chain of every split, one after the other: ``n_iter`` HMC iterations each.

    F : (S, m, r) constraint rows; G : (S, m, m) their Gram matrix, or (S, 0, 0) when it is
    not held (each bounce then makes the one row it needs, O(m r)), g_diag : (S, m) its
    diagonal; x0 : (S, r) the start of every chain of a split; velocities : (S, n_iter, C, r)
    the fresh velocity of every iteration. Fills kept : (S, C, draws, r), the positions after
    iterations ``burn_in + thin``, ``burn_in + 2 thin``, ..., and events : (S, C, n_iter), the
    bounces of every iteration.
    """
    S, m, r = F.shape
    n_iter, C = velocities.shape[1], velocities.shape[2]
    x = np.empty(r)
    v = np.empty(r)
    work = np.empty((4, m))
    FT = np.empty((r, m))  # a split's constraint rows, transposed
    for s in range(S):
        for i in range(m):
            for q in range(r):
                FT[q, i] = F[s, i, q]
        for c in range(C):
            x[:] = x0[s]
            for it in range(n_iter):
                v[:] = velocities[s, it, c]
                events[s, c, it] = _travel(F[s], FT, G[s], g_diag[s], x, v, work,
                                           max_events)
                done = it + 1 - burn_in
                if done > 0 and done % thin == 0:
                    kept[s, c, done // thin - 1] = x


@compiled
def _first_wall(ratio):
    """``(j, ratio[j])`` for the smallest ``ratio[j]`` (the first such j; (0, inf) if none).

    The scan of ``for i: if ratio[i] < k: j, k = i, ratio[i]``, in four interleaved lanes
    (index i mod 4, the tail in lane 0) whose independent comparisons the processor
    overlaps; the lanes' results are then combined, the smallest value first and among equal
    values the smallest index: the same j and value as the single scan, in less time (a
    chain's events call it once each; benchmarks/RESULTS.md).
    """
    n = ratio.shape[0]
    k0 = k1 = k2 = k3 = np.inf
    j0 = j1 = j2 = j3 = 0
    i = 0
    while i + 4 <= n:
        a0, a1, a2, a3 = ratio[i], ratio[i + 1], ratio[i + 2], ratio[i + 3]
        if a0 < k0:
            k0, j0 = a0, i
        if a1 < k1:
            k1, j1 = a1, i + 1
        if a2 < k2:
            k2, j2 = a2, i + 2
        if a3 < k3:
            k3, j3 = a3, i + 3
        i += 4
    while i < n:
        if ratio[i] < k0:
            k0, j0 = ratio[i], i
        i += 1
    j, k = 0, np.inf
    for kl, jl in ((k0, j0), (k1, j1), (k2, j2), (k3, j3)):
        if kl < k or (kl == k and kl < np.inf and jl < j):
            j, k = jl, kl
    return (j, ratio[j]) if k < np.inf else (0, np.inf)


@compiled
def add_scaled(a, b, z, xq, vq):
    """``a += z xq``, ``b += z vq`` elementwise."""
    for i in range(z.shape[0]):
        a[i] += z[i] * xq
        b[i] += z[i] * vq


@compiled
def wall_time(k_min):
    """When the next wall is met: ``arctan(-1 / k_min)`` for the smallest ratio
    ``k_min = fv_j / fx_j`` if negative, else never (inf)."""
    return np.arctan(-1.0 / min(k_min, -TINY)) if k_min < 0 else np.inf


@compiled
def turn(x, v, cs, sn):
    """(x, v) moved along the ellipse, in place: ``(x c + v s, v c - x s)``."""
    for q in range(x.shape[0]):
        xq = x[q]
        x[q] = xq * cs + v[q] * sn
        v[q] = v[q] * cs - xq * sn


@compiled
def stop_short(x, v, t_hit, left):
    """The cap's last move: x half way to the next wall met at ``t_hit`` (or to the end of
    the ``left`` time), strictly inside the cone; v is not needed after it."""
    dt = min(0.5 * t_hit, left)
    cs, sn = np.cos(dt), np.sin(dt)
    for q in range(x.shape[0]):
        x[q] = x[q] * cs + v[q] * sn


@compiled
def _travel(F, FT, G, g_diag, x, v, work, max_events):
    """One HMC iteration of one chain: travel for ``TRAVEL`` from x with velocity v.

    F : (m, r), G : (m, m) or (0, 0), g_diag : (m,) as in ``run_chains``; FT : (r, m) F's
    transpose; x, v : (r,) updated in place; work : (4, m) scratch (``fx = F x``, ``fv = F
    v``, their ratios, and the row of the Gram matrix a bounce needs when G is not held).
    Returns the bounces.

    The next wall is the most negative ``fv_i / fx_i`` (``fx >= TINY > 0``), met at
    ``arctan(fx_i / -fv_i)``. An event moves (x, v) and (fx, fv) along the ellipse by the
    same rotation and reflects v off the wall j met: ``v -= alpha F_j``, ``fv -= alpha G_j``
    with ``alpha = 2 fv_j / |F_j|^2``: O(m + r) per event, in two passes over the m
    constraints (the update and the ratios, which compile to vector instructions, then the
    smallest ratio; one pass doing both does not vectorise and was slower). After
    ``max_events`` bounces the chain moves half way to its next wall and stops (a point
    strictly inside the cone). ``F x`` and ``F v`` at the start are summed for all rows at
    once from FT, each sum over q in order (vector instructions, the same sums).
    """
    m, r = F.shape
    fx, fv, ratio, row = work[0], work[1], work[2], work[3]
    held = G.shape[0] == m
    # F x and F v: the sums over q in order, for every row at once
    for i in range(m):
        fx[i] = 0.0
        fv[i] = 0.0
    for q in range(r):
        add_scaled(fx, fv, FT[q], x[q], v[q])
    for i in range(m):
        fx[i] = max(fx[i], TINY)  # rounding never puts the particle outside
        ratio[i] = fv[i] / fx[i]
    j, k_min = _first_wall(ratio)
    left = TRAVEL
    n_events = 0
    while True:
        t_hit = wall_time(k_min)
        if n_events == max_events:
            # the cap: the chain sits on the wall it just left
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
        # specular reflection off wall j: v -= 2 (f_j . v / |f_j|^2) f_j
        alpha = 2.0 * (fv[j] * cs - fx[j] * sn) / g_diag[j]
        for q in range(r):
            v[q] -= alpha * F[j, q]
        # (fx, fv) rotated like (x, v) and fv reflected like v; the particle is on wall j
        # (rounding aside)
        if held:
            Gj = G[j]
        else:  # the row F F_j, summed over q in order for every row at once
            for i in range(m):
                row[i] = 0.0
            for q in range(r):
                fjq = F[j, q]
                for i in range(m):
                    row[i] += FT[q, i] * fjq
            Gj = row
        for i in range(m):
            fxi = fx[i] * cs + fv[i] * sn
            fvi = fv[i] * cs - fx[i] * sn - alpha * Gj[i]
            fxi = fxi if fxi >= TINY else TINY
            fx[i] = fxi
            fv[i] = fvi
            ratio[i] = fvi / fxi
        fx[j] = TINY
        ratio[j] = fv[j] / TINY
        j, k_min = _first_wall(ratio)
