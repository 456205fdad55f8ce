"""Synthetic binary tasks with a known truth: no data files needed.

``source: {synthetic: {...}}`` in a config. Two generators, each continuous or discrete:

``generator: nb``
    Drawn from a naive Bayes model: features independent given the class, so NB is the
    right model and both NB and LR tend to the Bayes error.
    Continuous: ``x_j | y ~ N(mu_yj, 1)``, one shared variance, class means ``+-delta/2``
    along a random direction whose length ``|delta|`` is ``separation`` (the Mahalanobis
    distance between the classes, so the Bayes error at prior 1/2 is ``Phi(-separation/2)``).
    Discrete: ``x_j | y ~ Categorical(softmax(a_j + (y - 1/2) s b_j))`` over ``levels``
    values, ``a, b ~ N(0, 1)``, with ``s`` scaled from ``separation`` so that the total
    class information is about the same as in the continuous case.

``generator: dependent``
    A few latent factors, copied into many features with noise, so the features are
    strongly dependent given the class. Factor 0 is copied into ``features - factors + 1``
    features, every other factor into one; every factor carries the same class signal.
    NB counts factor 0's evidence once per copy, so it over-weights it and its asymptotic
    error stays well above the Bayes error, which LR reaches: LR wins at large m.
    Continuous: ``z_f | y ~ N(+-delta/2, 1)``, ``x_j = z_f(j) + noise * eps_j``; ``delta`` is
    scaled so that the Bayes error at prior 1/2 is again ``Phi(-separation/2)``.
    Discrete: ``z_f | y`` categorical as above; ``x_j`` is a copy of ``z_f(j)``, replaced with
    probability ``noise`` by a uniformly drawn level.

Parameters (``source.synthetic`` keys) and defaults are in ``DEFAULTS``. The class counts
are fixed at ``round(prior * rows)`` positives, in shuffled order. Randomness comes from
``SeedSequence([seed, stream])``: stream 0 draws the model's parameters, stream 1 the
rows, stream 2 the Monte Carlo sample of discrete error rates; so the model does not depend
on ``rows``. The Bayes error and NB's asymptotic error are recorded in ``Dataset.notes``
(exact for continuous data; for discrete data a Monte Carlo estimate over
``MC_ROWS`` rows, averaging the true posterior's error probability).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

import nbvslr.data.symmetric as symmetric
from nbvslr.data.dataset import Dataset
from nbvslr.data.draws import drawn_dataset, phi, stream
from nbvslr.data.symmetric import SymmetricParams
from nbvslr.errors import check_known_keys, setting_error, with_hint

GENERATORS = ("nb", "dependent", "symmetric")  # symmetric: nbvslr.data.symmetric
KINDS = ("continuous", "discrete")
DEFAULTS: Mapping[str, Any] = {
    "generator": "nb",
    "rows": 1000,
    "features": 10,
    "kind": "continuous",
    "separation": 2.5,  # Bayes error Phi(-1.25) = 0.106 at prior 1/2 (continuous)
    "prior": 0.5,
    "seed": 0,
    "levels": 3,  # discrete only
    "factors": 3,  # dependent only
    "noise": None,  # dependent only: 0.5 (continuous, a standard deviation) or 0.2 (discrete)
}
NOISE_DEFAULT = {"continuous": 0.5, "discrete": 0.2}
MC_ROWS = 50_000
MAX_ROWS, MAX_FEATURES, MAX_CELLS = 10_000_000, 10_000, 100_000_000  # memory
MAX_LEVELS = 1000
MAX_DRAWS = 500_000_000
"""Discrete data: at most this many rows x features x levels, the rows being the task's or
the error estimate's ``MC_ROWS``, whichever is more (the inverse-CDF draw compares each
row's uniform with every level's cumulative probability)."""
_DRAW_CHUNK = 1 << 22
"""Entries (rows x features x levels) of one chunk of that draw: 32 MB of float64."""
STREAM_PARAMS, STREAM_ROWS, STREAM_MC = 0, 1, 2


@dataclass(frozen=True)
class SyntheticParams:
    """The resolved ``source.synthetic`` mapping (see the module docstring)."""

    generator: str = "nb"
    rows: int = 1000
    features: int = 10
    kind: str = "continuous"
    separation: float = 2.5
    prior: float = 0.5
    seed: int = 0
    levels: int = 3
    factors: int = 3
    noise: float = 0.5


# --------------------------------------------------------------------------- validation


_error = setting_error


def parse_params(raw: Any, key: str = "source.synthetic") -> SyntheticParams | SymmetricParams:
    """Check a ``source.synthetic`` mapping and fill in the defaults."""
    if raw is None:
        raw = {}
    if isinstance(raw, Mapping) and raw.get("generator") == symmetric.GENERATOR:
        return symmetric.parse_params(raw, key)
    if not isinstance(raw, Mapping):
        raise _error(key, "must be a mapping", raw, "write synthetic: {generator: nb, rows: 1000}")
    check_known_keys(key, raw, DEFAULTS)
    value = {**DEFAULTS, **raw}

    def choice(name: str, options: tuple[str, ...]) -> str:
        if value[name] not in options:
            raise _error(
                f"{key}.{name}", with_hint(f"unknown {name}", value[name], options),
                value[name],
                f"use one of: {', '.join(options)}",
            )
        return str(value[name])

    def integer(name: str, low: int, high: int | None = None, rule: str = "") -> int:
        v = value[name]
        rule = rule or f">= {low}"
        if isinstance(v, bool) or not isinstance(v, int):
            raise _error(f"{key}.{name}", "not an integer", v, f"give an integer {rule}")
        if v < low or (high is not None and v > high):
            raise _error(f"{key}.{name}", f"must be {rule}", v, f"give an integer {rule}")
        return int(v)

    def real(name: str, ok, rule: str) -> float:
        v = value[name]
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise _error(f"{key}.{name}", "not a number", v, f"give a number {rule}")
        if not ok(v):
            raise _error(f"{key}.{name}", f"must be {rule}", v, f"give a number {rule}")
        return float(v)

    generator = choice("generator", GENERATORS)
    kind = choice("kind", KINDS)
    rows = integer("rows", 3)
    features = integer("features", 1)
    for name, top in (("rows", MAX_ROWS), ("features", MAX_FEATURES)):
        if value[name] > top:
            raise _error(f"{key}.{name}", f"more than {top}", value[name], f"give at most {top}")
    if rows * features > MAX_CELLS:
        raise _error(
            f"{key}.rows", f"rows x features is more than {MAX_CELLS}", rows * features,
            "ask for fewer rows or features",
        )
    # Beyond 100 the Bayes error Phi(-separation / 2) is below 1e-300: nothing left to see.
    separation = real("separation", lambda v: 0 < v <= 100, "in (0, 100]")
    prior = real("prior", lambda v: 0 < v < 1, "strictly between 0 and 1")
    seed = integer("seed", 0)
    for name, applies, what in (
        ("levels", kind == "discrete", "kind: discrete"),
        ("factors", generator == "dependent", "generator: dependent"),
        ("noise", generator == "dependent", "generator: dependent"),
    ):
        if name in raw and not applies:
            raise _error(
                f"{key}.{name}", f"only used with {what}", raw[name], f"remove {name}:"
            )
    levels = integer("levels", 2, MAX_LEVELS, f"between 2 and {MAX_LEVELS}")
    draws = max(rows, MC_ROWS) * features * levels
    if kind == "discrete" and draws > MAX_DRAWS:
        raise _error(
            f"{key}.levels", f"rows x features x levels is more than {MAX_DRAWS} (rows: at "
            f"least the {MC_ROWS} of the error estimate)", draws,
            "ask for fewer rows, features or levels",
        )
    if generator == "dependent":
        factors = integer("factors", 1, features, f"between 1 and features ({features})")
    else:
        factors = 0  # not used by generator: nb
    if value["noise"] is None:
        noise = NOISE_DEFAULT[kind]
    elif kind == "continuous":
        noise = real("noise", lambda v: v > 0, "> 0 (a standard deviation)")
    else:
        noise = real("noise", lambda v: 0 <= v < 1, "in [0, 1) (a probability)")
    return SyntheticParams(
        generator=generator, rows=rows, features=features, kind=kind, separation=separation,
        prior=prior, seed=seed, levels=levels, factors=factors, noise=noise,
    )


# --------------------------------------------------------------------------- the truth


@dataclass(frozen=True)
class Truth:
    """The generating model's parameters.

    Attributes
    ----------
    params : SyntheticParams
    copy_of : ndarray of shape (d,)
        The latent factor each feature copies (``dependent``); ``arange(d)`` for ``nb``.
    means : ndarray of shape (2, r)
        Continuous: class means of the latent variables (the features themselves for ``nb``).
    log_probs : ndarray of shape (2, r, k)
        Discrete: log p(z_f = v | y) of each latent variable.
    """

    params: SyntheticParams
    copy_of: np.ndarray
    means: np.ndarray | None = None
    log_probs: np.ndarray | None = None

    @property
    def latent(self) -> int:
        return int(self.copy_of.max()) + 1


def _log_softmax(a: np.ndarray) -> np.ndarray:
    # Subtract the log-sum-exp of the last axis: stable for any logits.
    return a - np.logaddexp.reduce(a, axis=-1, keepdims=True)


def _copy_map(p: SyntheticParams, rng: np.random.Generator) -> np.ndarray:
    if p.generator == "nb":
        return np.arange(p.features)
    crowd = p.features - p.factors + 1  # copies of factor 0
    copy_of = np.concatenate([np.zeros(crowd, dtype=np.int64), np.arange(1, p.factors)])
    return rng.permutation(copy_of)  # the copies sit at random columns


def _copy_matrix(copy_of: np.ndarray) -> np.ndarray:
    """L[j, f] = 1 when feature j copies factor f; shape (d, r)."""
    return (copy_of[:, None] == np.arange(int(copy_of.max()) + 1)).astype(np.float64)


def make_truth(p: SyntheticParams) -> Truth:
    """Draw the model's parameters from stream 0 of the seed."""
    rng = stream(p.seed, STREAM_PARAMS)
    copy_of = _copy_map(p, rng)
    r = int(copy_of.max()) + 1
    if p.kind == "continuous":
        if p.generator == "nb":
            delta = rng.normal(size=r)  # (d,)
        else:
            delta = np.ones(r)  # every factor carries the same signal
        delta *= p.separation / _bayes_distance(delta, copy_of, p)
        return Truth(p, copy_of, means=np.stack([-delta / 2, delta / 2]))
    if p.generator == "nb":
        base = rng.normal(size=(r, p.levels))  # (r, k)
        shift = rng.normal(size=(r, p.levels))  # (r, k)
    else:
        # Every factor alike, its levels ordered from "class 0" to "class 1": the same
        # signal in each, so over-counting factor 0 can only hurt.
        ramp = np.arange(p.levels) - (p.levels - 1) / 2
        base = np.zeros((r, p.levels))
        shift = np.tile(ramp / ramp.std(), (r, 1))
    # A logit shift s*b moves each latent variable by about s^2 (k-1)/k in squared
    # Mahalanobis units; sum over r variables and match separation^2.
    s = p.separation / math.sqrt(r * (p.levels - 1) / p.levels)
    logits = np.stack([base - s * shift / 2, base + s * shift / 2])  # (2, r, k)
    return Truth(p, copy_of, log_probs=_log_softmax(logits))


def _covariance(copy_of: np.ndarray, p: SyntheticParams) -> np.ndarray:
    """Within-class covariance of continuous features, shape (d, d)."""
    if p.generator == "nb":
        return np.eye(p.features)
    L = _copy_matrix(copy_of)  # (d, r)
    return L @ L.T + p.noise**2 * np.eye(p.features)


def _bayes_distance(delta: np.ndarray, copy_of: np.ndarray, p: SyntheticParams) -> float:
    """Mahalanobis distance between the classes' feature means."""
    mu = delta[copy_of]  # (d,)
    return float(math.sqrt(mu @ np.linalg.solve(_covariance(copy_of, p), mu)))


# --------------------------------------------------------------------------- sampling


def sample(truth: Truth, n: int, rng: np.random.Generator, y: np.ndarray | None = None):
    """Draw ``n`` rows: raw features (not rescaled) and labels.

    Returns
    -------
    X : ndarray of shape (n, d)
        float64 (continuous) or int64 codes (discrete).
    y : ndarray of shape (n,)
        int8; drawn from the prior unless given.
    """
    p = truth.params
    if y is None:
        y = (rng.random(n) < p.prior).astype(np.int8)
    r, d = truth.latent, p.features
    if p.kind == "continuous":
        assert truth.means is not None
        z = truth.means[y] + rng.standard_normal((n, r))  # (n, r)
        if p.generator == "nb":
            return z, y
        return z[:, truth.copy_of] + p.noise * rng.standard_normal((n, d)), y
    assert truth.log_probs is not None
    cdf = np.cumsum(np.exp(truth.log_probs), axis=-1)  # (2, r, k), per class
    # Inverse-CDF draw, in chunks of rows (the same uniforms, in the same order, as one
    # draw of (n, r, 1)); min() guards a last cumulative sum that rounds below u.
    z = np.empty((n, r), dtype=np.int64)
    step = max(1, _DRAW_CHUNK // (r * p.levels))
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        u = rng.random((hi - lo, r, 1))
        z[lo:hi] = np.minimum((u > cdf[y[lo:hi]]).sum(-1), p.levels - 1)
    if p.generator == "nb":
        return z.astype(np.int64), y
    x = z[:, truth.copy_of]  # (n, d)
    flip = rng.random((n, d)) < p.noise
    x = np.where(flip, rng.integers(0, p.levels, size=(n, d)), x)
    return x.astype(np.int64), y


def _fixed_labels(p: SyntheticParams, rng: np.random.Generator) -> np.ndarray:
    n_pos = min(max(round(p.prior * p.rows), 1), p.rows - 1)
    y = np.zeros(p.rows, dtype=np.int8)
    y[:n_pos] = 1
    return rng.permutation(y)


# --------------------------------------------------------------------------- error rates


def _gaussian_error(w: np.ndarray, mu: np.ndarray, cov: np.ndarray, prior: float) -> float:
    """Error of the rule ``w . (x - midpoint) + log(prior odds) > 0`` on Gaussian classes
    with means ``+-mu/2`` and a shared covariance."""
    log_odds = math.log(prior / (1 - prior))
    gap = float(w @ mu) / 2  # mean of w . (x - midpoint) under y = 1
    sd = math.sqrt(float(w @ cov @ w))
    return float(
        prior * phi((-gap - log_odds) / sd) + (1 - prior) * phi((-gap + log_odds) / sd)
    )


def _discrete_log_lik(truth: Truth, x: np.ndarray, naive: bool) -> np.ndarray:
    """log p(x | y) for y = 0, 1: shape (n, 2). ``naive``: NB's limit, the product of each
    feature's true marginal given y."""
    p = truth.params
    lp = truth.log_probs  # (2, r, k)
    assert lp is not None
    if p.generator == "nb":
        cols = np.arange(p.features)
        return np.stack([lp[c][cols, x].sum(axis=1) for c in (0, 1)], axis=1)
    k = p.levels
    # q(x_j = u | z = v) = (1 - noise) [u == v] + noise / k, shape (k, k) indexed [v, u].
    log_q = np.log((1 - p.noise) * np.eye(k) + p.noise / k)
    out = np.zeros((x.shape[0], 2))
    for c in (0, 1):
        if naive:  # p(x_j | y) = sum_v p(v | y) q(x_j | v)
            marg = np.logaddexp.reduce(lp[c][:, :, None] + log_q[None], axis=1)  # (r, k)
            out[:, c] = marg[truth.copy_of, x].sum(axis=1)
            continue
        for f in range(truth.latent):
            cols = np.flatnonzero(truth.copy_of == f)
            # sum over v of p(v | y) prod_{j copies f} q(x_j | v), in log space.
            per_v = lp[c, f][None, :] + log_q[:, x[:, cols]].sum(axis=2).T  # (n, k)
            out[:, c] += np.logaddexp.reduce(per_v, axis=1)
    return out


def error_rates(truth: Truth) -> dict[str, float]:
    """The Bayes error and the error NB tends to with infinitely many rows."""
    p = truth.params
    if p.kind == "continuous":
        assert truth.means is not None
        cov = _covariance(truth.copy_of, p)
        mu = (truth.means[1] - truth.means[0])[truth.copy_of]  # (d,)
        bayes = _gaussian_error(np.linalg.solve(cov, mu), mu, cov, p.prior)
        nb = _gaussian_error(mu / np.diag(cov), mu, cov, p.prior)
        return {"bayes_error": bayes, "nb_limit_error": nb, "error_method": "exact"}
    x, y = sample(truth, MC_ROWS, stream(p.seed, STREAM_MC))
    log_prior = np.log([1 - p.prior, p.prior])
    out = {}
    for label, naive in (("bayes_error", False), ("nb_limit_error", True)):
        score = _discrete_log_lik(truth, x, naive) + log_prior  # (n, 2)
        pred = score[:, 1] > score[:, 0]
        true = _discrete_log_lik(truth, x, False) + log_prior if naive else score
        post1 = np.exp(true[:, 1] - np.logaddexp(true[:, 0], true[:, 1]))  # p(y=1 | x)
        # Error probability of the rule at x, under the true posterior.
        out[label] = float(np.mean(np.where(pred, 1 - post1, post1)))
    return {**out, "error_method": f"Monte Carlo, {MC_ROWS} rows"}


# --------------------------------------------------------------------------- the task


def load(name: str, params: SyntheticParams | SymmetricParams) -> Dataset:
    """Draw the task: continuous features rescaled to [0, 1] over all rows."""
    if isinstance(params, SymmetricParams):
        return symmetric.load(name, params)
    truth = make_truth(params)
    rng = stream(params.seed, STREAM_ROWS)
    y = _fixed_labels(params, rng)
    X, y = sample(truth, params.rows, rng, y=y)
    return drawn_dataset(
        name, f"{name} (synthetic {params.generator}, {params.kind})", X, y, params.kind,
        params.levels,
        {
            "source": "synthetic",
            **asdict(params),
            "copies": [int(c) for c in truth.copy_of],
            **error_rates(truth),
        },
    )
