"""Uniform random separating hyperplanes by exact Hamiltonian Monte Carlo (the default).

The target is the same as ``nbvslr.models.sampler``'s: a direction ``theta = (w, b)`` drawn
uniformly from the separating cone ``{theta : A theta > 0}``, ``A = sign * Z1``. A standard
Gaussian is rotation invariant, so the direction of ``theta ~ N(0, I_P)`` conditioned on the
cone is uniform on the cone's part of the unit sphere; this module samples that truncated
Gaussian and returns unit vectors.

Why not hit-and-run: it mixes slowly in the narrow cones of barely separable sets (m near
the number of parameters P; docs/samplers.md has the measurements). Exact HMC (Pakman &
Paninski, "Exact Hamiltonian Monte Carlo for truncated multivariate Gaussians", 2014)
follows the walls instead: a particle moves on the ellipse
``x(t) = x cos t + v sin t`` for a time of pi/2 with a fresh Gaussian velocity ``v`` per
iteration, and bounces (specular reflection) off every constraint it meets. Each move is
exact, the chain leaves the truncated Gaussian invariant, and it needs no tuning.

Vectorised over splits x chains. With ``fx = F x`` and ``fv = F v`` (F the constraint rows)
the trajectory meets constraint i where ``fx_i cos t + fv_i sin t = 0``; only constraints with
``fv_i < 0`` can be met within pi/2, at ``t_i = arctan(fx_i / -fv_i)``, so the next wall is
an argmin of a ratio (no trigonometry per constraint). Moving rotates ``(fx, fv)`` like
``(x, v)``; a reflection off wall j changes ``fv`` by a multiple of column j of the Gram
matrix ``F F^T``, so an event costs O(m + r) per chain and only the start of an iteration
needs a matrix product. Every chain takes its events in lockstep; a chain whose time is
spent waits (its moves are zero) until the slowest chain of its block is done.

The reduced chain (m < P) is exact and simpler than hit-and-run's: with ``A^T = Q R``, the
Gaussian splits into ``a = Q^T theta ~ N(0, I_m)`` truncated to ``R^T a > 0`` and an
independent untruncated Gaussian on the orthogonal complement of Q, drawn directly.

Defaults: ``options.MCMC_DEFAULTS["hmc"]`` (a few iterations: the chain forgets its start
quickly); why these, and what a chain costs: docs/samplers.md.

Randomness: each split has its own ``numpy.random.Generator`` built from its SeedSequence;
its velocities are drawn for all its iterations at once, so a split's draws do not depend
on which other splits share its block.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nbvslr.models.budget import DEFAULT_BUDGET, Budget
from nbvslr.models.options import MCMC_DEFAULTS
from nbvslr.models.sampler import in_split_blocks

_DEFAULTS = MCMC_DEFAULTS["hmc"]

#: Travel time per iteration (a quarter turn of the ellipse: x and v swap roles).
TRAVEL = np.pi / 2
#: Splits per block: about ``budget.hmc`` bytes of constraint stacks and Gram matrices, and
#: at least this many splits.
MIN_BLOCK = 16
#: Events (bounces) per chain and iteration at most; a chain still moving then stops where
#: it is for this iteration (a valid point of the cone): near-degenerate corners make some
#: trajectories bounce without end (what the cap changes: docs/samplers.md).
MAX_EVENTS = 1000
#: Margins are kept >= TINY (a particle on a wall, or pushed past it by rounding).
TINY = 1e-300


def sample_separating_hmc(
    Z1: np.ndarray,
    sign: np.ndarray,
    theta0: np.ndarray,
    seeds: Sequence[np.random.SeedSequence],
    *,
    chains: int = _DEFAULTS["mcmc_chains"],
    draws: int = _DEFAULTS["mcmc_draws"],
    burn_in: int = _DEFAULTS["mcmc_burn_in"],
    thin: int = _DEFAULTS["mcmc_thin"],
    reduce: bool = True,
    budget: Budget = DEFAULT_BUDGET,
) -> np.ndarray:
    """Draw separating hyperplanes uniformly for S separable training sets.

    Parameters
    ----------
    Z1 : ndarray of shape (S, m, P)
        Training rows with a trailing column of ones (``P = D + 1``).
    sign : ndarray of shape (S, m)
        ``2 y - 1`` in {-1, +1}.
    theta0 : ndarray of shape (S, P)
        A strictly separating theta per split (the start of every chain).
    seeds : sequence of S SeedSequence
        One per split; split s uses only ``default_rng(seeds[s])``.
    chains, draws, burn_in, thin : int
        Chains per split; kept draws per chain; iterations before the first kept draw;
        iterations between kept draws (defaults: ``options.MCMC_DEFAULTS["hmc"]``).
    reduce : bool
        When ``m < P``, sample the row space of the constraints and draw the rest exactly
        (see the module docstring); False samples all P coordinates (a reference for tests).

    Returns
    -------
    ndarray of shape (S, chains * draws, P)
        Unit vectors, each strictly separating its training set, chain-major.

    Raises
    ------
    ValueError
        ``theta0`` does not strictly separate some training set, or the seed count is wrong.
    """
    kw = dict(chains=int(chains), draws=int(draws), burn_in=int(burn_in), thin=int(thin),
              reduce=reduce)

    def split_bytes(m: int, P: int) -> float:
        # per split: constraints, Gram matrix and the chains' margins and positions
        r = min(m, P) if reduce else P
        return 8.0 * (m * r + m * m + 4 * int(chains) * (m + r))

    return in_split_blocks(_sample_block, Z1, sign, theta0, seeds, int(chains) * int(draws),
                           split_bytes, budget, budget.hmc, MIN_BLOCK, **kw)


def _sample_block(
    Z1: np.ndarray,
    sign: np.ndarray,
    theta0: np.ndarray,
    seeds: Sequence[np.random.SeedSequence],
    *,
    chains: int,
    draws: int,
    burn_in: int,
    thin: int,
    reduce: bool,
) -> np.ndarray:
    """``sample_separating_hmc`` on one block of splits (arguments as there)."""
    S, m, P = Z1.shape
    C = chains
    A = sign[:, :, None] * Z1  # (S, m, P)
    if reduce and m < P:
        # A^T = Q R: a = Q^T theta is constrained by R^T a > 0; the rest is free
        Q, R = np.linalg.qr(A.transpose(0, 2, 1))  # (S, P, m), (S, m, m)
        F = R.transpose(0, 2, 1)  # (S, m, r) with r = m
        x0 = np.matmul(theta0[:, None, :], Q)[:, 0, :]  # (S, r)
    else:
        Q, F, x0 = None, A, theta0
    r = F.shape[2]
    FT = np.ascontiguousarray(F.transpose(0, 2, 1))  # (S, r, m)
    G = np.matmul(F, FT)  # (S, m, m) Gram matrix of the constraint rows
    g_diag = np.maximum(np.einsum("sii->si", G), 1e-300)  # (S, m) squared row norms
    # start: the certified separator, scaled to the Gaussian's typical norm
    x0 = x0 * (np.sqrt(r) / np.maximum(np.linalg.norm(x0, axis=1, keepdims=True), 1e-300))
    x = np.repeat(x0, C, axis=0)  # (S C, r), chain-major within a split
    chain_split = np.repeat(np.arange(S), C)  # (S C,) the split of every chain
    n_iter = burn_in + draws * thin
    rngs = [np.random.default_rng(s) for s in seeds]
    velocities = np.stack([rng.standard_normal((n_iter, C, r)) for rng in rngs], axis=1)
    velocities = velocities.reshape(n_iter, S * C, r)
    kept = np.empty((S * C, draws, r))
    for it in range(n_iter):
        x = _travel(x, velocities[it], chain_split, F, FT, G, g_diag)
        done = it + 1 - burn_in
        if done > 0 and done % thin == 0:
            kept[:, done // thin - 1] = x
    kept = kept.reshape(S, C * draws, r)
    if Q is None:
        theta = kept
    else:
        # the free part: a standard Gaussian on the orthogonal complement of Q's columns
        g = np.stack([rng.standard_normal((C * draws, P)) for rng in rngs])  # (S, K, P)
        g -= np.matmul(np.matmul(g, Q), Q.transpose(0, 2, 1))
        theta = np.matmul(kept, Q.transpose(0, 2, 1)) + g
    return theta / np.maximum(np.linalg.norm(theta, axis=2, keepdims=True), 1e-300)


def _next_wall(fx: np.ndarray, fv: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The wall each chain meets first, and when: (j, t) of shape (n,), ``t = inf`` if none.

    Wall i is met at ``t_i = arctan(fx_i / -fv_i)`` when ``fv_i < 0`` (never within pi/2
    otherwise): the first is the most negative ``fv_i / fx_i`` (``fx >= TINY > 0``, no 0 / 0).
    ``out`` (n, m) receives the ratios.
    """
    np.divide(fv, fx, out=out)
    j = out.argmin(axis=1)  # (n,)
    k = out[np.arange(len(j)), j]  # (n,)
    return j, np.where(k < 0, np.arctan(-1.0 / np.minimum(k, -TINY)), np.inf)


def _travel(
    x: np.ndarray,
    v: np.ndarray,
    chain_split: np.ndarray,
    F: np.ndarray,
    FT: np.ndarray,
    G: np.ndarray,
    g_diag: np.ndarray,
) -> np.ndarray:
    """One HMC iteration of every chain: travel for ``TRAVEL`` from x with velocity v.

    x, v : (n, r) the chains' positions and velocities; chain_split : (n,) their splits;
    F : (S, m, r) constraint rows, FT its transpose, G : (S, m, m) their Gram matrix, g_diag :
    (S, m) its diagonal. Returns the new positions (n, r). A chain that meets no wall before
    its time is spent is done; the others continue, and the working arrays are compacted to
    the chains still moving whenever they drop below half of them.
    """
    x = x.copy()
    S, r, m = FT.shape
    n = len(x)
    work = np.arange(n)  # which chains the working arrays hold
    sp = chain_split
    F_rows = F.reshape(S * m, r)  # row s m + i: constraint i of split s
    G_rows = G.reshape(S * m, m)
    g_rows = g_diag.reshape(S * m)
    xa, va = x, v.copy()  # xa is x until the first compaction; v is the caller's
    fx = np.matmul(x.reshape(S, -1, r), FT).reshape(n, m)  # chains are split-major
    np.maximum(fx, TINY, out=fx)  # rounding never puts the particle outside
    fv = np.matmul(v.reshape(S, -1, r), FT).reshape(n, m)
    left = np.full(n, TRAVEL)
    # work buffers (their first rows are used once the arrays are compacted): no large
    # temporaries are allocated per event
    buffers = (np.empty((n, m)), np.empty((n, m)), np.empty((n, r)), np.empty((n, r)))
    for _ in range(MAX_EVENTS):
        k_m, t_m, k_r, t_r = (b[: len(xa)] for b in buffers)
        j, t_hit = _next_wall(fx, fv, k_m)
        lanes = np.arange(len(j))
        hit = t_hit < left
        dt = np.minimum(t_hit, left)
        c, s = np.cos(dt)[:, None], np.sin(dt)[:, None]
        # (x, v) <- (x c + v s, v c - x s), and the same for (fx, fv), in place
        for p_, q_, t_, k_ in ((xa, va, t_r, k_r), (fx, fv, t_m, k_m)):
            np.multiply(p_, s, out=t_)
            p_ *= c
            np.multiply(q_, s, out=k_)
            p_ += k_
            q_ *= c
            q_ -= t_
        left -= dt
        if not hit.any():
            break
        # specular reflection off wall j: v -= 2 (f_j . v / |f_j|^2) f_j, where hit
        row = sp * m + j  # (n,)
        alpha = np.where(hit, 2.0 * fv[lanes, j] / g_rows[row], 0.0)  # (n,)
        np.take(F_rows, row, axis=0, out=t_r)
        t_r *= alpha[:, None]
        va -= t_r
        np.take(G_rows, row, axis=0, out=t_m)
        t_m *= alpha[:, None]
        fv -= t_m
        fx[lanes[hit], j[hit]] = TINY  # on the wall (rounding aside)
        np.maximum(fx, TINY, out=fx)
        if hit.sum() * 2 < len(hit):
            # the finished chains are done: keep their positions, work on the others
            x[work] = xa
            work, xa, va, fx, fv, left, sp = (
                work[hit], xa[hit], va[hit], fx[hit], fv[hit], left[hit], sp[hit])
    else:
        # the cap: chains still moving sit on the wall they just left; move them half way
        # to the next wall, so every returned point is strictly inside the cone
        _, t_hit = _next_wall(fx, fv, buffers[0][: len(xa)])
        dt = np.minimum(0.5 * t_hit, left)[:, None]
        xa = xa * np.cos(dt) + va * np.sin(dt)
    x[work] = xa
    return x
