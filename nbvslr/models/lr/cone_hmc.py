"""Weight matrices drawn from the K-class separating cone by exact HMC, symmetric in the
classes.

The target: K weight vectors W (K, P) with ``s_{i y_i} > s_{i k}`` for every training row i
and class k != y_i (``s = Z1 W^T``), drawn from the isotropic Gaussian on the weight
matrices that sum to 0 over the classes, truncated to that cone, and normalised
(``lr.sum_zero``: no class is a reference, so relabelling the classes relabels
the draws). In the subspace's Helmert coordinates (``sum_zero.basis``) the cone is
``lr.entry_multi.cone_rows`` and the Gaussian the standard one; the iterations are the binary
sampler's (``lr.hmc``) on those rows -- a quarter turn of the ellipse per
iteration with a fresh Gaussian velocity, bouncing off every wall met, the same cap on the
bounces -- with the same random numbers drawn the same way from each split's seed
(``sample_separating_hmc`` on ``cone_rows`` gives the same draws, mapped by the basis, up to
rounding; with K = 2, ``w_1 - w_0`` is the binary sampler's draw on the two-class problem).
The compiled loop (``nbvslr.kernels.hmc_multi``) runs on the K weight vectors themselves
(the velocities mapped from the coordinates by the basis), from the training rows and their
m x m Gram matrix instead of the cone's ``m (K - 1)`` rows and their ``(m (K - 1))^2`` Gram
matrix: a split holds ``m^2 + m P`` numbers, not ``m^2 (K - 1)^2 + m (K - 1)^2 P``, and the
m x m Gram matrix only when it fits in the sampler's budget (``budget.hmc``, a few MB: m up
to about 700 by default); above, each bounce makes the one row of it that it needs
(O(m P)). A block holds splits up to that budget, at least ``MIN_CONE_BLOCK``, so the
sampler holds at most ``MIN_CONE_BLOCK`` Gram matrices of at most ``budget.hmc`` bytes each
beside the fit's stacks, whatever m (the fit on all 5,620 rows of optdigits-10 included).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nbvslr.models.budget import DEFAULT_BUDGET, Budget
from nbvslr.models.lr.hmc import MAX_EVENTS
from nbvslr.models.lr.sum_zero import basis, centred
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
    plan): the kernel's work arrays (4 K + 9: margins and scores of x and v, five rows of
    scratch, the sorted order, labels and marks, the walls' norms; and the row itself
    transposed, ``n_params``) and its row of the Gram matrix when held (up to
    ``gram_rows``, or all ``n_rows`` rows of a task smaller than that)."""
    return 4 * K + 9 + n_params + min(n_rows, gram_rows(budget))


def holds_gram(m: int, budget: Budget) -> bool:
    """Whether a split's m x m Gram matrix is held (within ``budget.hmc``) or made row by
    row as the bounces need it."""
    return 8.0 * m * m <= budget.hmc


def split_bytes(m: int, P: int, K: int, n_iter: int, n_kept: int, gram: bool) -> float:
    """Bytes one split holds in a block of the sampler: its rows (and their Gram matrix),
    the velocities of every iteration and chain (drawn in the (K - 1) P coordinates, held
    as K P weights), the kept draws (K P each) and the kernel's per-row work arrays."""
    return 8.0 * (m * P + gram * m * m + n_iter * (2 * K - 1) * P + n_kept * K * P
                  + (4 * K + 9) * m)


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
    """Draw weight matrices from the separating cones of S training sets (the module
    docstring's law).

    Parameters
    ----------
    Z1 : ndarray of shape (S, m, P)
        Training rows with a trailing column of ones.
    y : ndarray of shape (S, m)
        Labels ``0 .. K - 1``.
    n_classes : int
        K.
    theta0 : ndarray of shape (S, K, P)
        Per split, K weight vectors that classify every training row correctly (any
        representative of the rule, such as the reference-class form's): the start of
        every chain, once made to sum to 0.
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
    ndarray of shape (S, chains * draws, K, P)
        Weight matrices summing to 0 over the classes, of unit norm, each classifying its
        training rows correctly, chain-major.

    Raises
    ------
    ValueError
        ``theta0`` misclassifies a training row (or ties), or the seed count is wrong.
    """
    Z1 = np.asarray(Z1, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    S, m, P = Z1.shape
    K = int(n_classes)
    if len(seeds) != S:
        raise ValueError(f"{len(seeds)} seeds for {S} splits")
    n_kept = int(chains) * int(draws)
    if S == 0:
        return np.empty((0, n_kept, K, P))
    theta0 = np.asarray(theta0, dtype=np.float64).reshape(S, K, P)
    if not separates(Z1, y, theta0).all():
        raise ValueError("theta0 must classify every training row correctly")
    # the same rule (the kernel keeps a margin that rounding made <= 0 at TINY)
    theta0 = centred(theta0)
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


def separates(Z1: np.ndarray, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Whether each weight matrix theta (S, K, P) scores every training row's own class
    strictly highest (S,)."""
    s = np.matmul(Z1, theta.transpose(0, 2, 1))  # (S, m, K)
    own = np.take_along_axis(s, y[:, :, None], axis=2)  # (S, m, 1)
    np.put_along_axis(s, y[:, :, None], -np.inf, axis=2)
    return (own[:, :, 0] > s.max(axis=2)).all(axis=1)


def _sample_block(Z1: np.ndarray, y: np.ndarray, K: int, theta0: np.ndarray,
                  seeds: Sequence[np.random.SeedSequence], chains: int, draws: int,
                  burn_in: int, thin: int, gram: bool,
                  bounces: list[np.ndarray] | None) -> np.ndarray:
    """``sample_cone_hmc`` on one block of splits (arguments as there)."""
    S, m, P = Z1.shape
    r = (K - 1) * P  # the subspace's dimension
    Z = np.ascontiguousarray(Z1)
    Gz = np.matmul(Z, Z.transpose(0, 2, 1)) if gram else np.empty((S, 0, 0))  # (S, m, m)
    # start: the certified matrix (summing to 0), scaled to the Gaussian's typical norm (as
    # hmc does)
    x0 = theta0.reshape(S, K * P)
    x0 = x0 * (np.sqrt(r) / np.maximum(np.linalg.norm(x0, axis=1, keepdims=True), 1e-300))
    n_iter = burn_in + draws * thin
    # each split's velocities: standard normals in the (K - 1) P coordinates, as the binary
    # sampler draws them, then the K weight vectors they are (H phi, summing to 0)
    phi = np.empty((S, n_iter, chains, K - 1, P))
    for s, rng in enumerate(each_generator(seeds)):
        rng.standard_normal(out=phi[s].reshape(n_iter, chains, r))
    velocities = np.matmul(basis(K), phi).reshape(S, n_iter, chains, K * P)
    del phi
    # imported here: numba loads (and compiles, or reads its disk cache) on first use only
    from nbvslr.kernels.hmc_multi import run_cone_chains

    kept = np.empty((S, chains, draws, K * P))
    events = np.empty((S, chains, n_iter), dtype=np.int64)
    run_cone_chains(Z, np.ascontiguousarray(y), K, Gz, np.ascontiguousarray(x0), velocities,
                    burn_in, thin, MAX_EVENTS, kept, events)
    if bounces is not None:
        bounces.append(events)
    # the sum over the classes drifts from 0 by rounding: its mean removed, then normalised
    kept = kept.reshape(S, chains * draws, K, P)
    kept -= kept.mean(axis=2, keepdims=True)
    kept /= np.maximum(np.linalg.norm(kept, axis=(2, 3), keepdims=True), 1e-300)
    return kept
