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
2 chains, 1 draw per chain, burn-in 150, thinning 50, i.e. 200 steps and 2 hyperplanes per
split. Why: each split's average only needs to be unbiased, not precise -- a curve averages
1000 splits, so the Monte Carlo noise of the draws shrinks by ~30 and is small next to the
split-to-split spread (more draws per split mostly cost test-set evaluations: every kept
hyperplane is scored on every row of the dataset). What matters is the burn-in: the start (the Newton iterate) is a
better-than-typical separator, and a chain that has not forgotten it biases the error. We
measured the mean test error of 200 separable splits against the step count on synthetic
sets shaped like the paper's (95 one-hot parameters with m = 22 and 102; 61 continuous
parameters with m = 30): from step 200 to step 1000 it moved by at most 0.004 (0.001 for the
continuous set), small next to the NB-LR gaps the figure is about, while every step costs
one ``(S, C, P) @ (S, P, m)`` product and S * C * P normal draws: at 1000 splits, 200 steps
keep a whole 15-panel run within a few minutes on 2 cores. Hit-and-run mixes slowly in
narrow cones (m close to the separability limit); raise ``mcmc_burn_in`` for a closer
approximation of the uniform law.

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

    theta, d : (S, C, P); mu, ad : (S, C, m). Returns lo, hi of shape (S, C).
    """
    # ball: ||theta + t d||^2 <= 1, i.e. dd t^2 + 2 td t + (tt - 1) <= 0
    dd = (d * d).sum(axis=2)  # (S, C), > 0 almost surely
    td = (theta * d).sum(axis=2)  # (S, C)
    tt = (theta * theta).sum(axis=2)  # (S, C), < 1
    # guard: 1 - tt >= 0 even if rounding pushed theta onto the sphere
    root = np.sqrt(td * td + dd * np.maximum(1.0 - tt, 0.0))  # (S, C)
    dd = np.maximum(dd, 1e-300)
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
    AT = A.transpose(0, 2, 1)  # (S, P, m), a view: matmul reads it transposed
    th0 = np.asarray(theta0, dtype=np.float64)  # (S, P)
    if not (np.matmul(A, th0[:, :, None])[:, :, 0] > 0).all():
        raise ValueError("theta0 must strictly separate every training set")
    th0 = START_RADIUS * th0 / np.linalg.norm(th0, axis=1, keepdims=True)  # (S, P)
    theta = np.repeat(th0[:, None, :], C, axis=1)  # (S, C, P)
    mu = np.matmul(theta, AT)  # (S, C, m)
    rngs = [np.random.default_rng(s) for s in seeds]
    n_steps = burn_in + draws * thin
    normals = np.empty((S, BLOCK_STEPS, C, P), dtype=np.float32)  # (S, B, C, P)
    uniforms = np.empty((S, BLOCK_STEPS, C))  # (S, B, C)
    for start in range(0, n_steps, BLOCK_STEPS):
        # a fixed-size block of each split's own stream: normals, then uniforms. Single
        # precision is enough for a random direction (isotropy is all hit-and-run needs).
        for s, rng in enumerate(rngs):
            rng.standard_normal(out=normals[s], dtype=np.float32)
            rng.random(out=uniforms[s])
        for b in range(min(BLOCK_STEPS, n_steps - start)):
            step = start + b + 1
            d = normals[:, b].astype(np.float64)  # (S, C, P)
            ad = np.matmul(d, AT)  # (S, C, m)
            lo, hi = _chord(theta, d, mu, ad)  # (S, C)
            t = (lo + uniforms[:, b] * (hi - lo))[:, :, None]  # (S, C, 1)
            theta += t * d
            if step % REFRESH_STEPS == 0:
                mu = np.matmul(theta, AT)  # (S, C, m)
            else:
                mu += t * ad
            kept = step - burn_in
            if kept > 0 and kept % thin == 0:
                out[:, :, kept // thin - 1] = theta
    return out.reshape(S, C * draws, P)
