"""Model options: the defaults of each family and their validation.

``resolve_options`` is called once per model when a config is read; the fitting code then
receives a plain dict that holds every option of its family.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from nbvslr.errors import ConfigError, did_you_mean

#: Default options of each model family. Documented in ``nbvslr/models/__init__.py``.
FAMILIES: dict[str, dict[str, Any]] = {
    "nb": {
        # Laplace smoothing l of the class prior and of every categorical conditional.
        "smoothing": 1.0,
        # "shared": the paper's Gaussian NB, one variance per feature pooled over classes;
        # "class": textbook Gaussian NB with class-specific variances.
        "variance": "shared",
        # epsilon added to every Gaussian variance:
        # max(var_smoothing * (largest per-feature variance of the training X), var_floor)
        "var_smoothing": 1e-9,
        "var_floor": 1e-12,
        # the class prior: "empirical" (Laplace-smoothed class frequencies, as the paper
        # states), "uniform" (equal priors: the log prior ratio is 0) or "uniform-gaussian"
        # (equal priors in Gaussian NB, the Laplace prior in categorical NB).
        "prior": "empirical",
        # the Gaussian variances: "ml" (divide by m, or by the class count) or "unbiased"
        # (divide by m - 2, or by the class count - 1).
        "var_estimator": "ml",
        # the form of epsilon: "relative" (the formula above) or "absolute"
        # (epsilon = var_smoothing itself, on the [0, 1] scale of the inputs).
        "epsilon_form": "relative",
        # where epsilon enters: "add" (variance + epsilon) or "floor" (max(variance, epsilon)).
        "epsilon_mode": "add",
        # what the [0, 1] rescaling of continuous inputs is computed over: "dataset" (all
        # rows, done once when the task is built) or "training" (each split's training rows
        # are rescaled again to [0, 1] before the fit).
        "rescale": "dataset",
        # a test row with log-odds exactly 0: "half" an error, or predict class 1
        # ("positive", the rule p(y=1|x) >= 1/2) or class 0 ("negative").
        "ties": "half",
    },
    "lr": {
        # L2 penalty: minimise C * sum(log-loss) + ||w||^2 / 2 (intercept unpenalised);
        # None: plain maximum conditional likelihood, as in the paper.
        "C": None,
        # what an unpenalised fit does on a linearly separable training set:
        # "sample" (uniform separating hyperplanes by MCMC, the paper's rule),
        # "l2" (refit with C = C_separable) or "mle" (keep the capped Newton iterate).
        "separable": "sample",
        "C_separable": 1e4,
        # Newton: stop when max_j |d(loss/m)/d theta_j| <= tol, at most max_iter steps.
        "tol": 1e-10,
        "max_iter": 100,
        # the sampler of separating hyperplanes: "hmc" (exact Hamiltonian Monte Carlo) or
        # "hit-and-run"; chains per split, draws kept per chain, iterations before the first
        # kept draw, iterations between kept draws (None: the method's MCMC_DEFAULTS).
        # A split averages chains * draws hyperplanes.
        "mcmc_method": "hmc",
        "mcmc_chains": None,
        "mcmc_draws": None,
        "mcmc_burn_in": None,
        "mcmc_thin": None,
        # discrete attributes: "reference" (one-hot minus one reference level per attribute,
        # its most frequent level), "full" (every level's indicator) or "ordinal" (one column
        # per attribute, its level code divided by k - 1). Continuous tasks ignore it.
        "coding": "reference",
        # as for nb: "dataset" or "training" (moves only the separable-set rule and a
        # penalty: an unpenalised fit's predictions do not change under a per-feature
        # affine map).
        "rescale": "dataset",
    },
}

#: Named profiles: ``profile: NAME`` in a config changes these defaults for every model of
#: the family, on every task (options the config sets explicitly still win).
#: ``stated`` is the method as the paper states it; ``as-published`` the one setting for
#: all panels that comes closest to the published curves (docs/fidelity.md).
DEFAULT_PROFILE = "stated"
PROFILES: dict[str, dict[str, dict[str, Any]]] = {
    "stated": {"nb": {}, "lr": {}},
    "as-published": {
        "nb": {
            "prior": "uniform-gaussian",
            "epsilon_form": "absolute",
            "var_smoothing": 0.01,
            "ties": "positive",
        },
        "lr": {"coding": "full"},
    },
}


#: Each sampler's defaults of the ``mcmc_*`` counts (nbvslr.models.hmc and
#: nbvslr.models.sampler say why).
MCMC_DEFAULTS = {
    "hmc": {"mcmc_chains": 1, "mcmc_draws": 2, "mcmc_burn_in": 5, "mcmc_thin": 1},
    "hit-and-run": {"mcmc_chains": 2, "mcmc_draws": 1, "mcmc_burn_in": 150, "mcmc_thin": 50},
}


def _number(lo: float, *, strict: bool, none_ok: bool = False) -> Callable[[Any], Any]:
    """A validator for a real number ``> lo`` (strict) or ``>= lo``; returns a float."""

    def check(value: Any) -> Any:
        if value is None and none_ok:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError
        v = float(value)
        if v != v or v in (float("inf"), float("-inf")) or (v <= lo if strict else v < lo):
            raise ValueError
        return v

    return check


def _integer(lo: int, hi: int, *, none_ok: bool = False) -> Callable[[Any], int | None]:
    """A validator for an integer in ``lo .. hi`` (a float with an integral value is
    accepted)."""

    def check(value: Any) -> int | None:
        if value is None and none_ok:
            return None
        if isinstance(value, bool):
            raise ValueError
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or not lo <= value <= hi:
            raise ValueError
        return int(value)

    return check


def _choice(*options: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in options:
            raise ValueError
        return str(value)

    return check


#: Upper bounds of the counts: each is far above any useful value, and keeps a typo (an extra
#: zero or three) from running for days or filling the memory. A split keeps
#: ``mcmc_chains * mcmc_draws`` hyperplanes of P numbers each (MAX_HYPERPLANES bounds that).
MAX_ITER = 10_000
MAX_CHAINS = 1_000
MAX_DRAWS = 10_000
MAX_HYPERPLANES = 10_000
MAX_BURN_IN = 1_000_000
MAX_THIN = 10_000
MAX_MCMC_ITERATIONS = 1_000_000  # burn_in + draws * thin, per chain

# option -> (validator, description of the valid range for the error message)
_RULES: dict[str, dict[str, tuple[Callable[[Any], Any], str]]] = {
    "nb": {
        "smoothing": (_number(0.0, strict=True), "a number > 0"),
        "variance": (_choice("shared", "class"), "one of 'shared', 'class'"),
        "var_smoothing": (_number(0.0, strict=False), "a number >= 0"),
        "var_floor": (_number(0.0, strict=True), "a number > 0"),
        "prior": (
            _choice("empirical", "uniform", "uniform-gaussian"),
            "one of 'empirical', 'uniform', 'uniform-gaussian'",
        ),
        "var_estimator": (_choice("ml", "unbiased"), "one of 'ml', 'unbiased'"),
        "epsilon_form": (_choice("relative", "absolute"), "one of 'relative', 'absolute'"),
        "epsilon_mode": (_choice("add", "floor"), "one of 'add', 'floor'"),
        "rescale": (_choice("dataset", "training"), "one of 'dataset', 'training'"),
        "ties": (_choice("half", "positive", "negative"), "one of 'half', 'positive', 'negative'"),
    },
    "lr": {
        "C": (_number(0.0, strict=True, none_ok=True), "a number > 0, or null (no penalty)"),
        "separable": (_choice("sample", "l2", "mle"), "one of 'sample', 'l2', 'mle'"),
        "C_separable": (_number(0.0, strict=True), "a number > 0"),
        "tol": (_number(0.0, strict=True), "a number > 0"),
        "max_iter": (_integer(1, MAX_ITER), f"an integer from 1 to {MAX_ITER}"),
        "mcmc_chains": (_integer(1, MAX_CHAINS, none_ok=True),
                        f"an integer from 1 to {MAX_CHAINS}, or null (the default)"),
        "mcmc_draws": (_integer(1, MAX_DRAWS, none_ok=True),
                       f"an integer from 1 to {MAX_DRAWS}, or null (the default)"),
        "mcmc_method": (_choice("hmc", "hit-and-run"), "one of 'hmc', 'hit-and-run'"),
        "mcmc_burn_in": (_integer(0, MAX_BURN_IN, none_ok=True),
                         f"an integer from 0 to {MAX_BURN_IN}, or null (the default)"),
        "mcmc_thin": (_integer(1, MAX_THIN, none_ok=True),
                      f"an integer from 1 to {MAX_THIN}, or null (the default)"),
        "coding": (
            _choice("reference", "full", "ordinal"), "one of 'reference', 'full', 'ordinal'"
        ),
        "rescale": (_choice("dataset", "training"), "one of 'dataset', 'training'"),
    },
}


def resolve_options(
    name: str, family: str, options: Mapping[str, Any], profile: str = DEFAULT_PROFILE
) -> dict[str, Any]:
    """Validate a model's options and fill in the family defaults.

    Parameters
    ----------
    name : str
        The model's name in the config (used in error messages).
    family : {"nb", "lr"}
    options : mapping
        The options the config sets; every other option takes its default.
    profile : str
        A key of ``PROFILES``: its settings replace the family defaults first.

    Returns
    -------
    dict
        Every option of the family, validated and normalised (floats, ints, None).

    Raises
    ------
    ConfigError
        Unknown family or option (with a "did you mean" hint), or a value out of range.
    """
    if family not in FAMILIES:
        raise ConfigError(
            f"model '{name}': unknown family '{family}'{did_you_mean(family, FAMILIES)}; "
            f"valid families: {', '.join(FAMILIES)}"
        )
    if profile not in PROFILES:
        raise ConfigError(
            f"unknown profile '{profile}'{did_you_mean(profile, PROFILES)}; "
            f"valid profiles: {', '.join(PROFILES)}"
        )
    rules = _RULES[family]
    resolved = dict(FAMILIES[family])
    for key, value in {**PROFILES[profile][family], **dict(options)}.items():
        if key not in rules:
            raise ConfigError(
                f"model '{name}': unknown {family} option '{key}'{did_you_mean(key, rules)}; "
                f"valid options: {', '.join(rules)}"
            )
        check, valid = rules[key]
        try:
            resolved[key] = check(value)
        except (ValueError, TypeError, OverflowError):
            raise ConfigError(
                f"model '{name}': option '{key}' = {value!r} is invalid; it must be {valid}"
            ) from None
    if family == "lr":
        for key, value in MCMC_DEFAULTS[resolved["mcmc_method"]].items():
            if resolved[key] is None:
                resolved[key] = value
        kept = resolved["mcmc_chains"] * resolved["mcmc_draws"]
        if kept > MAX_HYPERPLANES:
            raise ConfigError(
                f"model '{name}': mcmc_chains x mcmc_draws = {kept} hyperplanes per split is "
                f"more than {MAX_HYPERPLANES}; use fewer chains or draws"
            )
        steps = resolved["mcmc_burn_in"] + resolved["mcmc_draws"] * resolved["mcmc_thin"]
        if steps > MAX_MCMC_ITERATIONS:
            raise ConfigError(
                f"model '{name}': mcmc_burn_in + mcmc_draws x mcmc_thin = {steps} iterations "
                f"per chain is more than {MAX_MCMC_ITERATIONS}; use fewer draws, a smaller "
                "thinning or a shorter burn-in"
            )
    return resolved
