"""Naive Bayes data whose features are all equally informative: the Bayes error is exact.

``source: {synthetic: {generator: symmetric, ...}}`` in a config. Made for sweeping the
number of features n with everything else fixed (``sweep: {features: [...]}``).

The model
---------
Features are independent given the class (a naive Bayes model) and each carries the same
evidence; a random sign ``s_j = +-1`` per feature (stream 0 of the seed) decides which
class it points to, so no feature looks like another.

- ``kind: continuous``: ``x_j | y ~ N(s_j (y - 1/2) g, 1)``, one shared variance, so the
  class means are ``g`` apart in every feature and the Bayes rule is linear: both Gaussian
  NB (shared variance) and LR hold it.
- ``kind: discrete``: binary features, ``p(x_j = a_j | y) = q`` when ``y = 1`` and ``1 - q``
  when ``y = 0``, ``a_j = (1 + s_j) / 2``; the log-odds are linear in the indicators, so
  both categorical NB and LR hold the Bayes rule.

The strength of a feature is its own Bayes error with the classes equally likely,
``feature_error``: ``Phi(-g / 2)`` (continuous) or ``1 - q`` (discrete). Give exactly one of

``bayes_error``
    The Bayes error of the whole task, at the task's ``prior``: ``g`` or ``q`` is solved
    for (bisection) so that it holds for every n; the per-feature separation shrinks like
    ``1 / sqrt(n)``.
``feature_error``
    Each feature's own strength, fixed for every n; the Bayes error falls with n.

Exact error rates
-----------------
With ``k`` the number of features that agree with their sign, the log-odds depend on the
features only through ``T = sum_j s_j (x_j - 1/2)`` (continuous, ``T | y ~ N(+-n g / 2, n)``)
or ``k`` (discrete, ``k | y ~ Binomial(n, q)`` or ``Binomial(n, 1 - q)``), so the Bayes
error is a normal CDF or a finite binomial sum, both computed exactly (``bayes_error_of``).
As both models' families hold the Bayes rule, both tend to it: the asymptotic error of NB
and of LR is the Bayes error (``notes``: ``bayes_error``, ``nb_limit_error``,
``lr_limit_error``).

Randomness: ``SeedSequence([seed, stream])``, stream 0 the signs, stream 1 the rows (a
fixed count ``round(prior * rows)`` of positives in shuffled order), as in
``nbvslr.data.synthetic``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.data.draws import drawn_dataset, phi, stream
from nbvslr.errors import check_known_keys, setting_error, with_hint

GENERATOR = "symmetric"
KINDS = ("continuous", "discrete")
KEYS = ("generator", "kind", "rows", "features", "bayes_error", "feature_error", "prior", "seed")
DEFAULTS: Mapping[str, Any] = {
    "generator": GENERATOR, "kind": "continuous", "rows": 1000, "features": 10,
    "prior": 0.5, "seed": 0,
}
MAX_ROWS, MAX_FEATURES, MAX_CELLS = 10_000_000, 10_000, 100_000_000  # memory
STREAM_SIGNS, STREAM_ROWS = 0, 1
BISECTION_STEPS = 200  # far more than double precision needs; each step halves the bracket


@dataclass(frozen=True)
class SymmetricParams:
    """The resolved ``source.synthetic`` mapping of ``generator: symmetric``.

    ``bayes_error`` or ``feature_error`` is None: the one the config did not give.
    """

    kind: str = "continuous"
    rows: int = 1000
    features: int = 10
    bayes_error: float | None = None
    feature_error: float | None = None
    prior: float = 0.5
    seed: int = 0
    generator: str = GENERATOR


_error = setting_error


def parse_params(raw: Mapping[str, Any], key: str = "source.synthetic") -> SymmetricParams:
    """Check a ``generator: symmetric`` mapping and fill in the defaults."""
    check_known_keys(key, raw, KEYS)
    value = {**DEFAULTS, **raw}

    def integer(name: str, low: int, high: int) -> int:
        v = value[name]
        if isinstance(v, bool) or not isinstance(v, int):
            raise _error(f"{key}.{name}", "not an integer", v, f"give an integer >= {low}")
        if not low <= v <= high:
            raise _error(f"{key}.{name}", f"must be between {low} and {high}", v,
                         f"give an integer between {low} and {high}")
        return int(v)

    def real(name: str, high: float, rule: str) -> float:
        v = value[name]
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise _error(f"{key}.{name}", "not a number", v, f"give a number {rule}")
        if not 0 < v < high:
            raise _error(f"{key}.{name}", f"must be {rule}", v, f"give a number {rule}")
        return float(v)

    kind = value["kind"]
    if kind not in KINDS:
        raise _error(f"{key}.kind", with_hint("unknown kind", kind, KINDS), kind,
                     "use continuous or discrete (binary features)")
    rows = integer("rows", 3, MAX_ROWS)
    features = integer("features", 1, MAX_FEATURES)
    if rows * features > MAX_CELLS:
        raise _error(f"{key}.rows", f"rows x features is more than {MAX_CELLS}", rows * features,
                     "ask for fewer rows or features")
    prior = real("prior", 1.0, "strictly between 0 and 1")
    seed = value["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise _error(f"{key}.seed", "not an integer >= 0", seed, "give an integer >= 0")
    given = [name for name in ("bayes_error", "feature_error") if name in raw]
    if len(given) != 1:
        raise _error(
            key, "give exactly one of bayes_error (held for every n) and feature_error "
            "(each feature's own error)", ", ".join(given) or "neither",
            "e.g. bayes_error: 0.1 or feature_error: 0.35",
        )
    top = min(prior, 1 - prior)
    bayes = real("bayes_error", top, f"in (0, {top:g}), below the smaller class's share") if (
        given[0] == "bayes_error") else None
    feature = real("feature_error", 0.5, "in (0, 0.5)") if given[0] == "feature_error" else None
    return SymmetricParams(kind=kind, rows=rows, features=features, bayes_error=bayes,
                           feature_error=feature, prior=prior, seed=int(seed))


# --------------------------------------------------------------------------- exact errors


def _log_binom_pmf(n: int, p: float) -> np.ndarray:
    """log P(k) of Binomial(n, p) for k = 0..n, shape (n + 1,); 0 < p < 1."""
    k = np.arange(n + 1)
    log_choose = (math.lgamma(n + 1) - np.array([math.lgamma(i + 1) for i in k])
                  - np.array([math.lgamma(n - i + 1) for i in k]))
    return log_choose + k * math.log(p) + (n - k) * math.log1p(-p)


def bayes_error_of(kind: str, n: int, strength: float, prior: float = 0.5) -> float:
    """The Bayes error of the task with ``n`` features of separation ``strength``.

    ``strength`` is ``g``, the gap between the class means in standard deviations
    (continuous), or ``q``, the probability that a feature agrees with its sign under
    class 1 (discrete, ``1/2 <= q < 1``).
    """
    log_odds = math.log((1 - prior) / prior)  # the rule says 1 when the evidence exceeds it
    if kind == "continuous":
        if strength == 0:
            return min(prior, 1 - prior)
        # T = sum_j s_j (x_j - 1/2 ...) has mean +-n g / 2 and variance n; the log-likelihood
        # ratio is g T, so the rule is T > log_odds / g.
        sd = math.sqrt(n)
        cut = log_odds / strength
        mean = n * strength / 2
        return prior * phi((cut - mean) / sd) + (1 - prior) * phi((-cut - mean) / sd)
    q = strength
    if q == 0.5:
        return min(prior, 1 - prior)
    # k agreeing features: class 1 ~ Binomial(n, q), class 0 ~ Binomial(n, 1 - q); the
    # Bayes rule errs by the smaller of the two weighted probabilities at each k
    # (a tie errs by either, the same amount).
    one = math.log(prior) + _log_binom_pmf(n, q)  # (n + 1,)
    zero = math.log(1 - prior) + _log_binom_pmf(n, 1 - q)  # (n + 1,)
    return float(np.exp(np.minimum(one, zero)).sum())


def feature_strength(kind: str, feature_error: float) -> float:
    """``g`` or ``q`` of a feature whose own Bayes error (classes equally likely) is given."""
    if kind == "continuous":
        # Phi(-g / 2) = e  <=>  g = -2 Phi^{-1}(e); invert Phi by bisection on erfc.
        return _solve(lambda g: phi(-g / 2), feature_error, 0.0, 80.0)
    return 1.0 - feature_error


def _solve(error, target: float, low: float, high: float) -> float:
    """The strength in [low, high] whose (decreasing) error is ``target``, by bisection."""
    for _ in range(BISECTION_STEPS):
        mid = (low + high) / 2
        if error(mid) > target:
            low = mid
        else:
            high = mid
        if high - low <= 1e-15 * max(1.0, high):
            break
    return (low + high) / 2


def strength_for(p: SymmetricParams) -> float:
    """The per-feature ``g`` or ``q`` of the task (solved from ``bayes_error`` if given)."""
    if p.feature_error is not None:
        return feature_strength(p.kind, p.feature_error)
    assert p.bayes_error is not None
    if p.kind == "continuous":
        return _solve(lambda g: bayes_error_of("continuous", p.features, g, p.prior),
                      p.bayes_error, 0.0, 80.0)
    return _solve(lambda q: bayes_error_of("discrete", p.features, q, p.prior),
                  p.bayes_error, 0.5, 1.0)


# --------------------------------------------------------------------------- the task


def sample(p: SymmetricParams, y: np.ndarray, signs: np.ndarray, strength: float,
           rng: np.random.Generator) -> np.ndarray:
    """Raw features of labels ``y`` (n_rows,): shape (n_rows, d), float64 or int64 codes."""
    n_rows, d = y.shape[0], p.features
    if p.kind == "continuous":
        centre = (y[:, None] - 0.5) * strength * signs[None, :]  # (N, d)
        return centre + rng.standard_normal((n_rows, d))
    agree_p = np.where(y == 1, strength, 1 - strength)[:, None]  # (N, 1)
    agree = rng.random((n_rows, d)) < agree_p  # (N, d)
    toward_one = signs[None, :] > 0  # a feature of sign +1 agrees by being 1
    return (agree == toward_one).astype(np.int64)


def load(name: str, p: SymmetricParams) -> Dataset:
    """Draw the task: continuous features rescaled to [0, 1] over all rows."""
    signs = np.where(stream(p.seed, STREAM_SIGNS).random(p.features) < 0.5, -1.0, 1.0)  # (d,)
    strength = strength_for(p)
    rng = stream(p.seed, STREAM_ROWS)
    n_pos = min(max(round(p.prior * p.rows), 1), p.rows - 1)
    y = rng.permutation(np.repeat(np.array([1, 0], dtype=np.int8), [n_pos, p.rows - n_pos]))
    X = sample(p, y, signs, strength, rng)
    bayes = bayes_error_of(p.kind, p.features, strength, p.prior)
    feature = phi(-strength / 2) if p.kind == "continuous" else 1.0 - strength
    return drawn_dataset(
        name, f"{name} (synthetic {GENERATOR}, {p.kind}, n = {p.features})", X, y, p.kind, 2,
        {
            "source": "synthetic",
            **asdict(p),
            "held": "bayes_error" if p.bayes_error is not None else "feature_error",
            "separation_per_feature": strength if p.kind == "continuous" else None,
            "agree_probability": strength if p.kind == "discrete" else None,
            "feature_error_exact": feature,
            "bayes_error": bayes,
            "nb_limit_error": bayes,
            "lr_limit_error": bayes,
            "error_method": "exact",
        },
    )
