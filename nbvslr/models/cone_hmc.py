"""Weight matrices drawn uniformly from the K-class separating cone by exact HMC.

The target is the binary sampler's (``nbvslr.models.hmc``) on the cone of a K-class training
set (``multiclass.cone_rows``): ``theta`` in the (K - 1) P coordinates of the reference-class
form with ``s_{i y_i} > s_{i k}`` for every training row i and class k != y_i, drawn from a
standard Gaussian truncated to the cone and normalised (uniform on the cone's part of the
unit sphere). The iterations are the binary sampler's -- a quarter turn of the ellipse per
iteration with a fresh Gaussian velocity, bouncing off every wall met, the same cap on the
bounces -- with the same random numbers drawn the same way from each split's seed
(``sample_separating_hmc`` on ``cone_rows`` gives the same draws up to rounding). The
compiled loop (``nbvslr.kernels.hmc_multi``) works from the training rows and their m x m
Gram matrix instead of the cone's ``m (K - 1)`` rows and their ``(m (K - 1))^2`` Gram matrix:
a split holds ``m^2 + m P`` numbers, not ``m^2 (K - 1)^2 + m (K - 1)^2 P``, and the m x m
Gram matrix only when it fits in the sampler's budget (``budget.hmc``, a few MB: m up to
about 700 by default); above, each bounce makes the one row of it that it needs (O(m P)).
A block holds splits up to that budget, at least ``MIN_CONE_BLOCK``, so the sampler holds
at most ``MIN_CONE_BLOCK`` Gram matrices of at most ``budget.hmc`` bytes each beside the
fit's stacks, whatever m (the fit on all 5,620 rows of optdigits-10 included).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nbvslr.models.budget import DEFAULT_BUDGET, Budget
from nbvslr.models.hmc import MAX_EVENTS
from nbvslr.models.options import MCMC_DEFAULTS
from nbvslr.splits import SplitSeeds, each_generator

_DEFAULTS = MCMC_DEFAULTS["hmc"]


#: Fewest splits per block (as ``hmc.MIN_BLOCK``: blocks of one split took half as long
#: again on optdigits-10 at m = 500).
MIN_CONE_BLOCK = 16


def gram_rows(budget: Budget = DEFAULT_BUDGET) -> int:
    """The largest m whose m x m Gram matrix a split holds (``holds_gram``)."""
    return int(np.sqrt(budget.hmc / 8.0))


def per_row(n_rows: int, K: int, n_params: int, budget: Budget = DEFAULT_BUDGET) -> int:
    """Numbers a split holds per training row while it is sampled, at most (for the memory
    plan): the kernel's work arrays (5 K + 7, and the row itself transposed, ``n_params``)
    and its row of the Gram matrix when held (up to ``gram_rows``, or all ``n_rows`` rows
    of a task smaller than that)."""
    return 5 * K + 7 + n_params + min(n_rows, gram_rows(budget))


def holds_gram(m: int, budget: Budget) -> bool:
    """Whether a split's m x m Gram matrix is held (within ``budget.hmc``) or made row by
    row as the bounces need it."""
    return 8.0 * m * m <= budget.hmc


def split_bytes(m: int, P: int, K: int, n_iter: int, n_kept: int, gram: bool) -> float:
    """Bytes one split holds in a block of the sampler: its rows (and their Gram matrix),
    the velocities of every iteration and chain, the kept draws and the per-row work
    arrays."""
    r = (K - 1) * P
    return 8.0 * (m * P + gram * m * m + (n_iter + n_kept) * r + 5 * m * K)


def sample_cone_hmc(
    Z1: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    theta0: np.ndarray,
    seeds: Sequence[np.random.SeedSequence],
    *,
    chains: int = _DEFAULTS["mcmc_chains"],
    draws: int = _DEFAULTS["mcmc_draws"],
    burn_in: int = _DEFAULTS["mcmc_burn_in"],
    thin: int = _DEFAULTS["mcmc_thin"],
    budget: Budget = DEFAULT_BUDGET,
    bounces: list[np.ndarray] | None = None,
) -> np.ndarray:
    """Draw weight matrices uniformly from the separating cones of S training sets.

    Parameters
    ----------
    Z1 : ndarray of shape (S, m, P)
        Training rows with a trailing column of ones.
    y : ndarray of shape (S, m)
        Labels ``0 .. K - 1``.
    n_classes : int
        K.
    theta0 : ndarray of shape (S, (K - 1) P)
        Per split, the free weight vectors (classes 0 .. K - 2, class-major) of a matrix
        that classifies every training row correctly: the start of every chain.
    seeds : sequence of S SeedSequence
        One per split (``splits.each_generator``).
    chains, draws, burn_in, thin : int
        As for ``hmc.sample_separating_hmc``.
    budget : Budget
        Splits per block: about ``budget.hmc`` bytes (``split_bytes``), at least
        ``MIN_CONE_BLOCK``.
    bounces : list, optional
        If given, one ``(s, chains, n_iter)`` int64 array of bounces per block is appended.

    Returns
    -------
    ndarray of shape (S, chains * draws, (K - 1) P)
        Unit vectors, each classifying its training rows correctly, chain-major.

    Raises
    ------
    ValueError
        ``theta0`` misclassifies a training row (or ties), or the seed count is wrong.
    """
    Z1 = np.asarray(Z1, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    S, m, P = Z1.shape
    K = int(n_classes)
    r = (K - 1) * P
    if len(seeds) != S:
        raise ValueError(f"{len(seeds)} seeds for {S} splits")
    n_kept = int(chains) * int(draws)
    if S == 0:
        return np.empty((0, n_kept, r))
    theta0 = np.asarray(theta0, dtype=np.float64).reshape(S, r)
    if not separates(Z1, y, K, theta0).all():
        raise ValueError("theta0 must classify every training row correctly")
    if not isinstance(seeds, SplitSeeds):
        seeds = list(seeds)
    n_iter = int(burn_in) + int(draws) * int(thin)
    gram = holds_gram(m, budget)
    step = budget.step(budget.hmc, split_bytes(m, P, K, n_iter * int(chains), n_kept, gram),
                       MIN_CONE_BLOCK)
    return np.concatenate([
        _sample_block(Z1[lo : lo + step], y[lo : lo + step], K, theta0[lo : lo + step],
                      seeds[lo : lo + step], int(chains), int(draws), int(burn_in),
                      int(thin), gram, bounces)
        for lo in range(0, S, step)
    ])


def separates(Z1: np.ndarray, y: np.ndarray, K: int, theta: np.ndarray) -> np.ndarray:
    """Whether each free-weight matrix theta (S, (K - 1) P) scores every training row's own
    class strictly highest (S,)."""
    S, m, P = Z1.shape
    W = theta.reshape(S, K - 1, P)
    s = np.concatenate([np.matmul(Z1, W.transpose(0, 2, 1)), np.zeros((S, m, 1))], axis=2)
    own = np.take_along_axis(s, y[:, :, None], axis=2)  # (S, m, 1)
    np.put_along_axis(s, y[:, :, None], -np.inf, axis=2)
    return (own[:, :, 0] > s.max(axis=2)).all(axis=1)


def _sample_block(Z1: np.ndarray, y: np.ndarray, K: int, theta0: np.ndarray,
                  seeds: Sequence[np.random.SeedSequence], chains: int, draws: int,
                  burn_in: int, thin: int, gram: bool,
                  bounces: list[np.ndarray] | None) -> np.ndarray:
    """``sample_cone_hmc`` on one block of splits (arguments as there)."""
    S, m, P = Z1.shape
    r = theta0.shape[1]
    Z = np.ascontiguousarray(Z1)
    Gz = np.matmul(Z, Z.transpose(0, 2, 1)) if gram else np.empty((S, 0, 0))  # (S, m, m)
    # start: the certified matrix, scaled to the Gaussian's typical norm (as hmc does)
    x0 = theta0 * (np.sqrt(r) / np.maximum(np.linalg.norm(theta0, axis=1, keepdims=True),
                                           1e-300))
    n_iter = burn_in + draws * thin
    velocities = np.empty((S, n_iter, chains, r))
    for s, rng in enumerate(each_generator(seeds)):
        rng.standard_normal(out=velocities[s])
    # imported here: numba loads (and compiles, or reads its disk cache) on first use only
    from nbvslr.kernels.hmc_multi import run_cone_chains

    kept = np.empty((S, chains, draws, r))
    events = np.empty((S, chains, n_iter), dtype=np.int64)
    run_cone_chains(Z, np.ascontiguousarray(y), K, Gz, np.ascontiguousarray(x0), velocities,
                    burn_in, thin, MAX_EVENTS, kept, events)
    if bounces is not None:
        bounces.append(events)
    kept = kept.reshape(S, chains * draws, r)
    return kept / np.maximum(np.linalg.norm(kept, axis=2, keepdims=True), 1e-300)
