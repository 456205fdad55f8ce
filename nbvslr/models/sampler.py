"""Uniform random separating hyperplanes: the paper's rule for linearly separable sets.

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

A split averages ``chains * draws`` hyperplanes. Defaults (``options.FAMILIES["lr"]``):
4 chains, 2 draws per chain, burn-in 200, thinning 100, i.e. 400 steps and 8 hyperplanes per
split. Why: each split's average only needs to be unbiased, not precise -- the curve averages
1000 splits, so the Monte Carlo noise of 8 draws is divided by ~30 and is small next to the
split-to-split spread. What must be long enough is the burn-in: the start (the Newton
iterate) is a better-than-typical separator, and a chain that has not forgotten it would bias
the error downwards. On sets like the paper's (m up to 400, up to ~170 parameters) the mean
error stops moving after ~100 steps; 200 leaves a margin, and thinning by 100 makes the two
draws of a chain close to independent. The cost is ``burn_in + draws * thin`` steps, each
one ``(S, m, P) @ (S, P, chains)`` product.

Randomness: each split has its own ``numpy.random.Generator`` built from the SeedSequence
the caller gives for it, consumed in fixed blocks of ``BLOCK_STEPS`` steps, so the draws of a
split do not depend on which other splits share the batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Norm of the starting point of every chain (inside the unit ball).
START_RADIUS = 0.5
#: Steps whose random numbers are drawn at once per split (fixed: determinism).
BLOCK_STEPS = 16
#: Margins are recomputed from theta every this many steps (no rounding drift).
REFRESH_STEPS = 64


def _chord(
    theta: np.ndarray, d: np.ndarray, mu: np.ndarray, ad: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Ends ``lo <= 0 <= hi`` of ``{t : theta + t d in K}``.

    theta, d : (S, P, C); mu, ad : (S, m, C). Returns lo, hi of shape (S, C).
    """
    # ball: ||theta + t d||^2 <= 1, i.e. dd t^2 + 2 td t + (tt - 1) <= 0
    dd = (d * d).sum(axis=1)  # (S, C), > 0 almost surely
    td = (theta * d).sum(axis=1)  # (S, C)
    tt = (theta * theta).sum(axis=1)  # (S, C), < 1
    # guard: 1 - tt >= 0 even if rounding pushed theta onto the sphere
    root = np.sqrt(td * td + dd * np.maximum(1.0 - tt, 0.0))  # (S, C)
    dd = np.maximum(dd, 1e-300)
    lo = (-td - root) / dd  # (S, C)
    hi = (-td + root) / dd  # (S, C)
    # half-spaces: mu_i + t ad_i >= 0; a margin a rounding below 0 counts as 0
    mu = np.maximum(mu, 0.0)  # (S, m, C)
    ratio = -mu / np.where(ad == 0.0, 1.0, ad)  # (S, m, C)
    lo = np.maximum(lo, np.where(ad > 0.0, ratio, -np.inf).max(axis=1))  # (S, C)
    hi = np.minimum(hi, np.where(ad < 0.0, ratio, np.inf).min(axis=1))  # (S, C)
    # guard: the current point is in K, so the chord contains t = 0
    return np.minimum(lo, 0.0), np.maximum(hi, 0.0)


def sample_separating(
    Z1: np.ndarray,
    sign: np.ndarray,
    theta0: np.ndarray,
    seeds: Sequence[np.random.SeedSequence],
    *,
    chains: int = 4,
    draws: int = 2,
    burn_in: int = 200,
    thin: int = 100,
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
        See the module docstring.

    Returns
    -------
    ndarray of shape (S, chains * draws, P)
        The kept points (inside the unit ball, strictly separating), chain-major.

    Raises
    ------
    ValueError
        ``theta0`` does not strictly separate some training set, or the seed count is wrong.
    """
    Z1 = np.asarray(Z1, dtype=np.float64)
    sign = np.asarray(sign, dtype=np.float64)
    S, m, P = Z1.shape
    C = int(chains)
    if len(seeds) != S:
        raise ValueError(f"{len(seeds)} seeds for {S} splits")
    out = np.empty((S, C, draws, P))
    if S == 0:
        return out.reshape(S, C * draws, P)
    A = np.ascontiguousarray(sign[:, :, None] * Z1)  # (S, m, P)
    th0 = np.asarray(theta0, dtype=np.float64)  # (S, P)
    if not (np.matmul(A, th0[:, :, None])[:, :, 0] > 0).all():
        raise ValueError("theta0 must strictly separate every training set")
    th0 = START_RADIUS * th0 / np.linalg.norm(th0, axis=1, keepdims=True)  # (S, P)
    theta = np.repeat(th0[:, :, None], C, axis=2)  # (S, P, C)
    mu = np.matmul(A, theta)  # (S, m, C)
    rngs = [np.random.default_rng(s) for s in seeds]
    n_steps = burn_in + draws * thin
    for start in range(0, n_steps, BLOCK_STEPS):
        # a fixed-size block of each split's own stream: normals, then uniforms
        normals = np.empty((S, BLOCK_STEPS, P, C))  # (S, B, P, C)
        uniforms = np.empty((S, BLOCK_STEPS, C))  # (S, B, C)
        for s, rng in enumerate(rngs):
            normals[s] = rng.standard_normal((BLOCK_STEPS, P, C))
            uniforms[s] = rng.random((BLOCK_STEPS, C))
        for b in range(min(BLOCK_STEPS, n_steps - start)):
            step = start + b + 1
            d = normals[:, b]  # (S, P, C)
            ad = np.matmul(A, d)  # (S, m, C)
            lo, hi = _chord(theta, d, mu, ad)  # (S, C)
            t = lo + uniforms[:, b] * (hi - lo)  # (S, C)
            theta += t[:, None, :] * d
            if step % REFRESH_STEPS == 0:
                mu = np.matmul(A, theta)  # (S, m, C)
            else:
                mu += t[:, None, :] * ad
            kept = step - burn_in
            if kept > 0 and kept % thin == 0:
                out[:, :, kept // thin - 1] = theta.transpose(0, 2, 1)
    return out.reshape(S, C * draws, P)
