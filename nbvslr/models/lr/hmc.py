"""Uniform random separating hyperplanes by exact Hamiltonian Monte Carlo (the default).

The target is the same as ``nbvslr.models.hit_and_run``'s: a direction ``theta = (w, b)`` drawn
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

Compiled, one chain at a time. With ``fx = F x`` and ``fv = F v`` (F the constraint rows)
the trajectory meets constraint i where ``fx_i cos t + fv_i sin t = 0``; only constraints with
``fv_i < 0`` can be met within pi/2, at ``t_i = arctan(fx_i / -fv_i)``, so the next wall is
an argmin of a ratio (no trigonometry per constraint). Moving rotates ``(fx, fv)`` like
``(x, v)``; a reflection off wall j changes ``fv`` by a multiple of column j of the Gram
matrix ``F F^T``, so an event costs O(m + r) and only the start of an iteration needs a
matrix-vector product. The Gram matrix is held for m up to ``GRAM_ROWS``; above, a bounce
makes its column (O(m r)), and the fit on all rows of a large separable set never holds
m x m numbers. The events of a chain are a short sequential loop, so each chain runs
in machine code (numba, ``nbvslr.kernels.hmc.run_chains``), compiled on first use and cached
on disk.

Which coordinates. By default the chain runs in all P coordinates of theta. When m < P the
constraints see only ``a = Q^T theta`` (``A^T = Q R``), and that chain is exactly the
reduced one (``reduce=True``): the Gaussian splits into ``a ~ N(0, I_m)`` truncated to
``R^T a > 0`` and an independent untruncated Gaussian on the orthogonal complement of Q. In
the full chain a reflection changes only the velocity's part along the rows of A, so ``a``
moves as the reduced chain does, and the rest of theta turns freely: after a quarter turn it
is the velocity's own fresh Gaussian part, an exact draw. Same law, same mixing; the full
chain needs no QR and no separate draw of the rest, and was the faster one (docs/samplers.md).
``reduce=True`` stays as a check (the two agree in distribution in the tests).

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
from nbvslr.models.lr.hit_and_run import in_split_blocks
from nbvslr.models.options import MCMC_DEFAULTS
from nbvslr.splits import each_generator

_DEFAULTS = MCMC_DEFAULTS["hmc"]

#: Splits per block: about ``budget.hmc`` bytes of constraint stacks and Gram matrices (a
#: few MB: the chains run one at a time, and fresh large temporaries page-fault), and at
#: least this many splits.
MIN_BLOCK = 16
#: Events (bounces) per chain and iteration at most; a chain still moving then stops where
#: it is for this iteration (a valid point of the cone): near-degenerate corners make some
#: trajectories bounce without end (what the cap changes: docs/samplers.md).
MAX_EVENTS = 1000
#: The most rows whose m x m Gram matrix a split holds (32 MiB); above, each bounce makes
#: the one row it needs (O(m P) instead of O(m)), so a fit on tens of thousands of
#: separable rows (the fit on all rows of a set with a leaked label) never forms N x N. A
#: function of m alone: the draws of a split never depend on the memory of the machine.
GRAM_ROWS = 2048


def holds_gram(m: int) -> bool:
    """Whether a split of m constraint rows holds their m x m Gram matrix (``GRAM_ROWS``)."""
    return m <= GRAM_ROWS


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
    reduce: bool = False,
    budget: Budget = DEFAULT_BUDGET,
    bounces: list[np.ndarray] | None = None,
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
        One per split; split s uses only ``default_rng(seeds[s])`` (made by
        ``splits.each_generator``: the same stream).
    chains, draws, burn_in, thin : int
        Chains per split; kept draws per chain; iterations before the first kept draw;
        iterations between kept draws (defaults: ``options.MCMC_DEFAULTS["hmc"]``).
    reduce : bool
        When ``m < P``, sample the row space of the constraints and draw the rest exactly
        (the same law, see the module docstring); False (default) samples all P coordinates.
    bounces : list, optional
        If given, the bounces of every chain and iteration are appended to it, one
        ``(s, chains, n_iter)`` int64 array per block of splits (what the sampler's cost
        scales with; ``benchmarks/bench.py`` reads it).

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
              reduce=reduce, bounces=bounces)

    def split_bytes(m: int, P: int) -> float:
        # per split: constraints, Gram matrix, velocities and kept positions
        r = min(m, P) if reduce else P
        n_iter = int(burn_in) + int(draws) * int(thin)
        gram = m * m if holds_gram(m) else 0
        return 8.0 * (m * r + gram + 4 * m + int(chains) * (n_iter + int(draws)) * r)

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
    bounces: list[np.ndarray] | None,
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
    F = np.ascontiguousarray(F)  # (S, m, r)
    if holds_gram(m):
        G = np.matmul(F, F.transpose(0, 2, 1))  # (S, m, m) Gram matrix of the constraint rows
        g_diag = np.maximum(np.einsum("sii->si", G), 1e-300)  # (S, m) squared row norms
    else:  # made row by row as the bounces need it (GRAM_ROWS)
        G = np.empty((S, 0, 0))
        g_diag = np.maximum(np.einsum("sij,sij->si", F, F), 1e-300)  # (S, m)
    # start: the certified separator, scaled to the Gaussian's typical norm
    x0 = x0 * (np.sqrt(r) / np.maximum(np.linalg.norm(x0, axis=1, keepdims=True), 1e-300))
    n_iter = burn_in + draws * thin
    # each split's stream: its velocities, then (with Q) the free part's normals
    velocities = np.empty((S, n_iter, C, r))
    free = np.empty((S, C * draws, P)) if Q is not None else None
    for s, rng in enumerate(each_generator(seeds)):
        rng.standard_normal(out=velocities[s])
        if free is not None:
            rng.standard_normal(out=free[s])
    # imported here: numba loads (and compiles, or reads its disk cache) on first use only
    from nbvslr.kernels.hmc import run_chains

    kept = np.empty((S, C, draws, r))
    events = np.empty((S, C, n_iter), dtype=np.int64)  # bounces per chain and iteration
    run_chains(F, G, g_diag, np.ascontiguousarray(x0), velocities, burn_in, thin,
               MAX_EVENTS, kept, events)
    if bounces is not None:
        bounces.append(events)
    kept = kept.reshape(S, C * draws, r)
    if Q is None:
        theta = kept
    else:
        # the free part: a standard Gaussian on the orthogonal complement of Q's columns
        g = free  # (S, K, P)
        g -= np.matmul(np.matmul(g, Q), Q.transpose(0, 2, 1))
        theta = np.matmul(kept, Q.transpose(0, 2, 1)) + g
    return theta / np.maximum(np.linalg.norm(theta, axis=2, keepdims=True), 1e-300)
