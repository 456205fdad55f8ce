"""Uniform random separating hyperplanes by hit-and-run (``mcmc_method: hit-and-run``).

The default sampler is exact HMC (``nbvslr.models.hmc``): hit-and-run mixes slowly in the
narrow cones of barely separable sets (docs/samplers.md). It stays as an option and a
reference.

When a training set is linearly separable the logistic likelihood has no maximum. The rule
is then to draw hyperplanes uniformly from the set of separating hyperplanes and average
their test errors. In the space of ``theta = (w, b)`` (intercept last) that set is the open
cone ``{theta : sign_i * Z1_i @ theta > 0 for every training row i}``; a hyperplane is a
direction, so "uniform" means uniform on the part of the unit sphere inside the cone. A point
uniform on ``K = {||theta|| <= 1} cap cone`` has a uniformly distributed direction (the
radial law ``r^(P-1)`` is the same in every direction), so we sample K and keep the point:
its predictions depend on the direction only.

Hit-and-run on K, vectorised over splits x chains (only the MCMC steps are a loop):

1. start every chain of a split at the Newton iterate that certified separability (all
   training margins > 0), scaled to norm ``START_RADIUS``, strictly inside K;
2. each step draws a Gaussian direction ``d``, intersects the line ``theta + t d`` with the
   ball (a quadratic in t) and with every half-space ``mu_i + t (A d)_i >= 0`` (with
   ``A = sign * Z1`` and margins ``mu = A theta`` kept up to date as ``mu += t A d``), and
   moves to a uniform point of that chord;
3. after ``burn_in`` steps, keep every ``thin``-th point until ``draws`` are kept per chain.

The reduced chain (``m < P``, every high-dimensional separable set). The constraints see
only ``a = Q^T theta``, where ``A^T = Q R`` (a batched QR, ``Q`` of shape (P, m)), since
``A theta = R^T a``; the rest ``theta_perp`` (dimension ``k = P - m``) matters only through
its norm ``rho``, in the ball constraint. Split a Gaussian direction ``d`` the same way:
``d_a = Q^T d`` is an m-dimensional Gaussian, and ``d_perp`` has a component ``z ~ N(0, 1)``
along ``theta_perp`` and an orthogonal rest of squared norm ``chi2(k - 1)``, all independent.
Then ``||d||^2 = ||d_a||^2 + z^2 + chi2``, ``theta . d = a . d_a + rho z`` and the step moves
``rho`` to ``sqrt((rho + t z)^2 + t^2 chi2)``: the pair ``(a, rho)`` is a Markov chain with
exactly the law of the full chain's ``(Q^T theta, ||theta_perp||)``, run with m + 1 normals
and an ``(m, m)`` constraint matrix per step instead of P and ``(m, P)``. By the symmetry of
the target, the direction of ``theta_perp`` given ``(a, rho)`` is uniform on the unit sphere
of ``Q``'s orthogonal complement; each kept point draws it afresh, which is exact.
``reduce=False`` runs the full P-dimensional chain (a reference for tests).

A split averages ``chains * draws`` hyperplanes; defaults ``options.MCMC_DEFAULTS``. Each
split's average only needs to be unbiased, not precise (a curve averages 1000 splits); what
matters is the burn-in, since the start (the Newton iterate) is a better-than-typical
separator.

Cost: splits are sampled in blocks of about ``budget.hit_and_run`` bytes (cache sized). The
directions of ``BLOCK_STEPS`` steps are drawn ahead, so one ``(BLOCK_STEPS * C, r) @ (r, m)``
product per split and block gives every ``A d`` (``r = min(m, P)``); a step is then
elementwise work on (S, C, m) arrays. Measurements: docs/samplers.md.

Randomness: each split has its own ``numpy.random.Generator`` built from the SeedSequence
the caller gives for it, consumed in fixed blocks of ``BLOCK_STEPS`` steps, so the draws of a
split do not depend on which other splits share the batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from nbvslr.models.budget import DEFAULT_BUDGET, Budget
from nbvslr.models.options import MCMC_DEFAULTS
from nbvslr.splits import SplitSeeds

_DEFAULTS = MCMC_DEFAULTS["hit-and-run"]

#: Norm of the starting point of every chain (inside the unit ball).
START_RADIUS = 0.5
#: Steps whose random numbers are drawn at once per split (fixed: determinism).
BLOCK_STEPS = 16
#: Margins are recomputed from theta every this many steps (no rounding drift).
REFRESH_STEPS = 64
#: Splits are sampled in blocks whose constraint stacks and products total about this many
#: bytes (at least ``MIN_BLOCK`` splits): stacks that stay in cache make every step faster.
MIN_BLOCK = 32


def _chord(
    dd: np.ndarray, td: np.ndarray, tt: np.ndarray, mu: np.ndarray, ad: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Ends ``lo <= 0 <= hi`` of ``{t : theta + t d in K}``.

    dd, td, tt : (S, C), ``||d||^2``, ``theta . d`` and ``||theta||^2``; mu, ad : (S, C, m),
    the margins ``A theta`` and ``A d``. Returns lo, hi of shape (S, C).
    """
    # ball: ||theta + t d||^2 <= 1, i.e. dd t^2 + 2 td t + (tt - 1) <= 0
    # guard: 1 - tt >= 0 even if rounding pushed theta onto the sphere
    root = np.sqrt(td * td + dd * np.maximum(1.0 - tt, 0.0))  # (S, C)
    dd = np.maximum(dd, 1e-300)  # > 0 almost surely
    lo = (-td - root) / dd  # (S, C)
    hi = (-td + root) / dd  # (S, C)
    # half-spaces: mu_i + t ad_i >= 0 with mu_i > 0, i.e. t q_i >= -1 for q = ad / mu:
    # t >= -1 / max(q) when max(q) > 0 and t <= -1 / min(q) when min(q) < 0.
    # guard: a margin that rounding took to (or below) 0 is read as 1e-200, which pins the
    # chord to t = 0 in the directions that would cross it (q stays finite: |ad| < 1e100)
    q = ad / np.maximum(mu, 1e-200)  # (S, C, m)
    q_max = q.max(axis=2)  # (S, C)
    q_min = q.min(axis=2)  # (S, C)
    lo = np.maximum(lo, -1.0 / np.maximum(q_max, 1e-300))  # (S, C)
    hi = np.minimum(hi, 1.0 / np.maximum(-q_min, 1e-300))  # (S, C)
    # guard: the current point is in K, so the chord contains t = 0
    return np.minimum(lo, 0.0), np.maximum(hi, 0.0)


def sample_separating(
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
        A strictly separating theta per split (every ``sign_i * Z1_i @ theta0 > 0``).
    seeds : sequence of S SeedSequence
        One per split; split s uses only ``default_rng(seeds[s])``.
    chains, draws, burn_in, thin : int
        See the module docstring (defaults: ``options.MCMC_DEFAULTS["hit-and-run"]``).
    reduce : bool
        When ``m < P``, run the chain in the row space of the constraints plus the scalar
        norm of the rest (exact, see the module docstring); False runs it in all P
        dimensions (the plain algorithm, kept as a reference).

    Returns
    -------
    ndarray of shape (S, chains * draws, P)
        The kept points (inside the unit ball, strictly separating), chain-major.

    Raises
    ------
    ValueError
        ``theta0`` does not strictly separate some training set, or the seed count is wrong.
    """
    kw = dict(chains=int(chains), draws=int(draws), burn_in=int(burn_in), thin=int(thin),
              reduce=reduce)

    def split_bytes(m: int, P: int) -> float:
        # per split: the (r, m) constraints and a block's (BLOCK_STEPS * chains, m) products
        r = min(m, P) if reduce else P
        return 8.0 * m * (r + BLOCK_STEPS * int(chains))

    return in_split_blocks(_sample_block, Z1, sign, theta0, seeds, int(chains) * int(draws),
                           split_bytes, budget, budget.hit_and_run, MIN_BLOCK, **kw)


def in_split_blocks(
    sample_block: Callable[..., np.ndarray],
    Z1: np.ndarray,
    sign: np.ndarray,
    theta0: np.ndarray,
    seeds: Sequence[np.random.SeedSequence],
    n_kept: int,
    split_bytes: Callable[[int, int], float],
    budget: Budget,
    block_bytes: float,
    min_block: int,
    **kw: object,
) -> np.ndarray:
    """Check a sampler's inputs (seed count, ``theta0`` strictly separating) and run
    ``sample_block`` on blocks of splits.

    Blocks hold about ``block_bytes`` (``split_bytes(m, P)`` per split, at least
    ``min_block`` splits); ``sample_block(Z1, sign, theta0, seeds, **kw)`` returns the
    ``(s, n_kept, P)`` draws of a block. Shared by the HMC and hit-and-run samplers.
    """
    Z1 = np.asarray(Z1, dtype=np.float64)
    sign = np.asarray(sign, dtype=np.float64)
    S, m, P = Z1.shape
    if len(seeds) != S:
        raise ValueError(f"{len(seeds)} seeds for {S} splits")
    if S == 0:
        return np.empty((S, n_kept, P))
    theta0 = np.asarray(theta0, dtype=np.float64)  # (S, P)
    if not (sign * np.matmul(Z1, theta0[:, :, None])[:, :, 0] > 0).all():  # (S, m) margins
        raise ValueError("theta0 must strictly separate every training set")
    if not isinstance(seeds, SplitSeeds):  # SplitSeeds slice lazily, and seed generators
        seeds = list(seeds)  # in compiled code (splits.each_generator)
    step = budget.step(block_bytes, split_bytes(m, P), min_block)
    return np.concatenate([
        sample_block(Z1[lo : lo + step], sign[lo : lo + step], theta0[lo : lo + step],
                     seeds[lo : lo + step], **kw)
        for lo in range(0, S, step)
    ])


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
    """``sample_separating`` on one block of splits (arguments as there)."""
    S, m, P = Z1.shape
    C = chains
    A = sign[:, :, None] * Z1  # (S, m, P)
    th0 = np.asarray(theta0, dtype=np.float64)  # (S, P)
    th0 = START_RADIUS * th0 / np.linalg.norm(th0, axis=1, keepdims=True)  # (S, P)
    if reduce and m < P:
        # A^T = Q R: theta = Q a + (a part orthogonal to every row of A), A theta = R^T a
        Q, BT = np.linalg.qr(A.transpose(0, 2, 1))  # (S, P, r), (S, r, m) with r = m
        a0 = np.matmul(th0[:, None, :], Q)[:, 0, :]  # (S, r)
        rho0 = np.sqrt(np.maximum((th0 * th0).sum(axis=1) - (a0 * a0).sum(axis=1), 0.0))
    else:
        Q, BT = None, np.ascontiguousarray(A.transpose(0, 2, 1))  # (S, P, m)
        a0, rho0 = th0, np.zeros(S)
    r = BT.shape[1]
    k = P - r  # dimension of the part the constraints do not see
    a = np.repeat(a0[:, None, :], C, axis=1)  # (S, C, r)
    rho = np.repeat(rho0[:, None], C, axis=1)  # (S, C)
    mu = np.matmul(a, BT)  # (S, C, m)
    rngs = [np.random.default_rng(s) for s in seeds]
    n_steps = burn_in + draws * thin
    kept_a = np.empty((S, C, draws, r))
    kept_rho = np.empty((S, C, draws))
    # per split and block: r normals (the direction's part in the row space) plus one (its
    # component along the current null-space part), a chi-square (the squared norm of the
    # rest of its null-space part) and a uniform per chain and step
    normals = np.empty((S, BLOCK_STEPS, C, r + 1), dtype=np.float32)
    chi2 = np.zeros((S, BLOCK_STEPS, C))
    uniforms = np.empty((S, BLOCK_STEPS, C))
    for start in range(0, n_steps, BLOCK_STEPS):
        # a fixed-size block of each split's own stream. Single precision is enough for a
        # random direction (isotropy is all hit-and-run needs).
        for s, rng in enumerate(rngs):
            rng.standard_normal(out=normals[s], dtype=np.float32)
            if k > 1:
                chi2[s] = 2.0 * rng.standard_gamma(0.5 * (k - 1), size=(BLOCK_STEPS, C))
            rng.random(out=uniforms[s])
        if k == 0:
            normals[:, :, :, r] = 0.0
        # the block's directions do not depend on the chain's state: one product per split
        # gives A d for all of its steps (cheaper than a tiny product per step)
        dirs = normals[:, :, :, :r].astype(np.float64)  # (S, B, C, r)
        z1s = normals[:, :, :, r].astype(np.float64)  # (S, B, C)
        ads = np.matmul(dirs.reshape(S, BLOCK_STEPS * C, r), BT)  # (S, B C, m)
        ads = ads.reshape(S, BLOCK_STEPS, C, m)
        # the full directions' squared norms
        dds = (dirs * dirs).sum(axis=3) + z1s * z1s + chi2  # (S, B, C)
        for b in range(min(BLOCK_STEPS, n_steps - start)):
            step = start + b + 1
            d, z1, ad = dirs[:, b], z1s[:, b], ads[:, b]  # (S, C, r), (S, C), (S, C, m)
            # the full direction's inner products with theta
            dd = dds[:, b]  # (S, C)
            td = (a * d).sum(axis=2) + rho * z1  # (S, C)
            tt = (a * a).sum(axis=2) + rho * rho  # (S, C)
            lo, hi = _chord(dd, td, tt, mu, ad)  # (S, C)
            t = lo + uniforms[:, b] * (hi - lo)  # (S, C)
            a += t[:, :, None] * d
            rho = np.sqrt((rho + t * z1) ** 2 + t * t * chi2[:, b])
            if step % REFRESH_STEPS == 0:
                mu = np.matmul(a, BT)  # (S, C, m)
            else:
                mu += t[:, :, None] * ad
            kept = step - burn_in
            if kept > 0 and kept % thin == 0:
                kept_a[:, :, kept // thin - 1] = a
                kept_rho[:, :, kept // thin - 1] = rho
    kept_a = kept_a.reshape(S, C * draws, r)
    if Q is None:
        return kept_a
    # the null-space part: norm rho, direction uniform on the unit sphere of that space
    g = np.stack([rng.standard_normal((C * draws, P)) for rng in rngs])  # (S, K, P)
    g -= np.matmul(np.matmul(g, Q), Q.transpose(0, 2, 1))  # (S, K, P) orthogonal to A's rows
    g /= np.maximum(np.linalg.norm(g, axis=2, keepdims=True), 1e-300)
    return np.matmul(kept_a, Q.transpose(0, 2, 1)) + kept_rho.reshape(S, C * draws, 1) * g
