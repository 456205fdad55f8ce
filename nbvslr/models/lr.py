"""The ``lr`` entry: logistic regression by maximum conditional likelihood, with the paper's
rule for separable training sets.

Newton / IRLS (``logistic.fit_newton``). Continuous tasks use the raw attributes; discrete
tasks by default one-hot indicators minus one reference level per attribute (its most
frequent level), so that the unpenalised Hessian is not singular by construction. When
Newton certifies that a training set is linearly separable (an iterate with every training
margin > 0) the likelihood has no maximum; the ``separable`` option says what to do then
(``sample``: the test error averaged over hyperplanes drawn uniformly from the separating
ones, by ``hmc`` or ``hit_and_run``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.errors import ConfigError
from nbvslr.models.budget import DEFAULT_BUDGET, Budget
from nbvslr.models.design import Design
from nbvslr.models.family import Fit, Option, choice, integer, number, one_of
from nbvslr.models.hit_and_run import sample_separating
from nbvslr.models.hmc import sample_separating_hmc
from nbvslr.models.logistic import fit_newton
from nbvslr.models.naive_bayes import rescale_to_training, theta_to_original
from nbvslr.models.options import (
    MAX_BURN_IN,
    MAX_CHAINS,
    MAX_DRAWS,
    MAX_HYPERPLANES,
    MAX_ITER,
    MAX_MCMC_ITERATIONS,
    MAX_THIN,
    MCMC_DEFAULTS,
)
from nbvslr.splits import SplitSeeds


def _count(lo: int, hi: int) -> str:
    return f"an integer from {lo} to {hi}, or null (the default)"


#: The options of the ``lr`` model name.
LR_OPTIONS: tuple[Option, ...] = (
    Option("C", None, number(0.0, strict=True, none_ok=True),
           "a number > 0, or null (no penalty)",
           "null: maximum likelihood, as in the paper; a number: L2 penalty `C·loss + ‖w‖²/2` "
           "(intercept unpenalised)"),
    Option("separable", "sample", choice("sample", "l2", "mle"), one_of("sample", "l2", "mle"),
           "a linearly separable training set: `sample` averages the test error of "
           "hyperplanes drawn uniformly from the separating ones (the paper's rule); `l2` "
           "refits with `C = C_separable`; `mle` keeps the capped Newton iterate"),
    Option("C_separable", 1e4, number(0.0, strict=True), "a number > 0",
           "the penalty of `separable: l2`"),
    Option("tol", 1e-10, number(0.0, strict=True), "a number > 0",
           "Newton stops when the largest absolute gradient component over m is ≤ tol"),
    Option("max_iter", 100, integer(1, MAX_ITER), f"an integer from 1 to {MAX_ITER}",
           "at most this many Newton steps"),
    Option("mcmc_method", "hmc", choice("hmc", "hit-and-run"), one_of("hmc", "hit-and-run"),
           "the sampler of separating hyperplanes: `hmc` (exact Hamiltonian Monte Carlo) or "
           "`hit-and-run`"),
    Option("mcmc_chains", None, integer(1, MAX_CHAINS, none_ok=True), _count(1, MAX_CHAINS),
           "chains per separable split"),
    Option("mcmc_draws", None, integer(1, MAX_DRAWS, none_ok=True), _count(1, MAX_DRAWS),
           "hyperplanes kept per chain (a split averages chains × draws)"),
    Option("mcmc_burn_in", None, integer(0, MAX_BURN_IN, none_ok=True), _count(0, MAX_BURN_IN),
           "HMC iterations or hit-and-run steps before the first kept draw"),
    Option("mcmc_thin", None, integer(1, MAX_THIN, none_ok=True), _count(1, MAX_THIN),
           "iterations or steps between kept draws"),
    Option("coding", "reference", choice("reference", "full", "ordinal"),
           one_of("reference", "full", "ordinal"),
           "discrete attributes: `reference` one-hot minus the most frequent level; `full`: "
           "every level's indicator; `ordinal`: one column, level code / (k − 1)"),
    Option("rescale", "dataset", choice("dataset", "training"), one_of("dataset", "training"),
           "as for nb; for LR `training` moves only the separable-set rule and a penalty"),
)

_CODINGS = {"reference": "onehot_ref", "full": "onehot", "ordinal": "ordinal"}


class LogisticRegression:
    """Logistic regression on continuous, discrete and mixed tasks (a mixed task: its
    continuous columns, then its discrete ones coded by ``coding``)."""

    name = "lr"
    kinds = ("continuous", "discrete", "mixed")
    options = LR_OPTIONS
    multiclass = False

    def finish(self, model: str, resolved: dict[str, Any]) -> None:
        """The ``mcmc_*`` counts left null take the method's ``MCMC_DEFAULTS``; a split's
        hyperplanes and a chain's iterations are bounded."""
        for key, value in MCMC_DEFAULTS[resolved["mcmc_method"]].items():
            if resolved[key] is None:
                resolved[key] = value
        kept = resolved["mcmc_chains"] * resolved["mcmc_draws"]
        if kept > MAX_HYPERPLANES:
            raise ConfigError(
                f"model '{model}': mcmc_chains x mcmc_draws = {kept} hyperplanes per split is "
                f"more than {MAX_HYPERPLANES}; use fewer chains or draws"
            )
        steps = resolved["mcmc_burn_in"] + resolved["mcmc_draws"] * resolved["mcmc_thin"]
        if steps > MAX_MCMC_ITERATIONS:
            raise ConfigError(
                f"model '{model}': mcmc_burn_in + mcmc_draws x mcmc_thin = {steps} iterations "
                f"per chain is more than {MAX_MCMC_ITERATIONS}; use fewer draws, a smaller "
                "thinning or a shorter burn-in"
            )

    def design(self, data: Dataset, opts: Mapping[str, Any]) -> str:
        if data.kind == "mixed":
            return "x_" + _CODINGS[opts["coding"]]
        return _CODINGS[opts["coding"]] if data.kind == "discrete" else "x"

    def width(self, data: Dataset, design: Design) -> int:
        return design.n_params

    def fit(
        self,
        data: Dataset,
        design: Design,
        idx: np.ndarray,
        opts: Mapping[str, Any],
        seeds: Sequence[np.random.SeedSequence],
        budget: Budget = DEFAULT_BUDGET,
    ) -> Fit:
        return fit_lr(design, idx, opts, seeds, data.kind == "continuous", budget)

    def ties(self, opts: Mapping[str, Any]) -> float:
        return 0.0

    def planned(self, data: Dataset, opts: Mapping[str, Any]) -> tuple[int, int]:
        # the widest coding (every level's indicator) on a discrete task
        width = (int(sum(data.n_values)) + data.n_continuous + 1 if data.kind != "continuous"
                 else data.n_features + 1)
        sampled = opts["separable"] == "sample" and opts["C"] is None  # only unpenalised fits
        return width, int(opts["mcmc_chains"]) * int(opts["mcmc_draws"]) if sampled else 0


def fit_lr(
    design: Design,
    idx: np.ndarray,
    opts: Mapping[str, Any],
    seeds: Sequence[np.random.SeedSequence],
    continuous: bool = True,
    budget: Budget = DEFAULT_BUDGET,
) -> Fit:
    """Fit LR to the training rows ``idx`` (S, m) with the separable-set rule.

    ``theta`` holds one hyperplane per split (the Newton iterate, or the "l2" refit);
    ``sampled`` the splits whose error is the mean over sampled hyperplanes ("sample" rule)
    and ``draws`` their K hyperplanes each.

    With ``rescale="training"`` on a continuous task the fit (and the sampler) sees each
    split's training rows rescaled to [0, 1], and the hyperplanes are mapped back.
    """
    Z1 = design.rows(idx)  # (S, m, P)
    sign = design.sign[idx]  # (S, m)
    scale = None
    if opts["rescale"] == "training" and continuous:
        U, lo, r = rescale_to_training(Z1[:, :, :-1])
        Z1 = np.concatenate([U, Z1[:, :, -1:]], axis=2)  # (S, m, P), intercept column kept
        scale = (lo, r)
    theta, todo, draws, separable, n_iter, converged = _fit_lr_scaled(Z1, sign, opts, seeds,
                                                                      budget)
    if scale is not None:
        lo, r = scale
        theta = theta_to_original(theta, lo, r)
        if todo.size:
            draws = theta_to_original(draws, lo[todo][:, None, :], r[todo][:, None, :])
    return Fit(theta, todo, draws, separable, n_iter, converged)


def _fit_lr_scaled(
    Z1: np.ndarray,
    sign: np.ndarray,
    opts: Mapping[str, Any],
    seeds: Sequence[np.random.SeedSequence],
    budget: Budget = DEFAULT_BUDGET,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``fit_lr`` on the stacked training rows ``Z1`` (S, m, P) and ``sign`` (S, m): theta,
    sampled, draws, separable, n_iter, converged."""
    C, rule = opts["C"], opts["separable"]
    newton = dict(tol=opts["tol"], max_iter=opts["max_iter"], budget=budget)
    res = fit_newton(Z1, sign, C=C, stop_when_separable=C is None and rule != "mle", **newton)
    theta = res.theta.copy()  # (S, P)
    n_iter, converged = res.n_iter.copy(), res.converged.copy()
    todo = np.flatnonzero(res.separable) if C is None else np.empty(0, dtype=np.int64)
    draws = np.empty((0, 1, theta.shape[1]))
    if todo.size and rule == "sample":
        sampler = sample_separating_hmc if opts["mcmc_method"] == "hmc" else sample_separating
        draws = sampler(
            Z1[todo],
            sign[todo],
            res.theta[todo],
            seeds.take(todo) if isinstance(seeds, SplitSeeds) else [seeds[i] for i in todo],
            chains=opts["mcmc_chains"],
            draws=opts["mcmc_draws"],
            burn_in=opts["mcmc_burn_in"],
            thin=opts["mcmc_thin"],
            budget=budget,
        )  # (s, K, P)
        converged[todo] = False
    elif todo.size and rule == "l2":
        refit = fit_newton(Z1[todo], sign[todo], C=opts["C_separable"], **newton)
        theta[todo] = refit.theta
        n_iter[todo] += refit.n_iter
        converged[todo] = refit.converged
        todo = np.empty(0, dtype=np.int64)
    else:
        todo = np.empty(0, dtype=np.int64)
    return theta, todo, draws, res.separable, n_iter, converged
