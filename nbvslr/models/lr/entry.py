"""The ``lr`` entry: logistic regression by maximum conditional likelihood, with the paper's
rule for separable training sets.

Newton / IRLS (``newton.fit_newton``). Continuous tasks use the raw attributes; discrete
tasks by default one-hot indicators minus one reference level per attribute (its most
frequent level), so that the unpenalised Hessian is not singular by construction.

Unpenalised, each training set is first classified (``separation.detect``): ``overlap`` (the
maximum-likelihood fit exists: Newton's), ``complete`` (linearly separable: the likelihood
has no maximum; the ``separable`` option says what to do, by default ``sample``: the test
error averaged over hyperplanes drawn uniformly from the separating ones, by ``hmc`` or
``hit_and_run``) or ``quasi`` (some rows Q separable by a direction along which no other
row's margin moves, the rest R overlapping: no maximum either, yet no separating
hyperplane). The ``quasi`` option says what a quasi set gets:

- ``limit`` (the default): the limit of the L2-penalised fit as the penalty vanishes. Its
  weights grow without bound along ``v*``, the max-margin direction of the rows Q within
  the recession cone (``separation.max_margin_direction``; Rosset, Zhu & Hastie 2004), and
  converge, orthogonally to it, to the maximum-likelihood fit of R (Newton on R, from 0: in
  the row space of R). A row is classified by the sign of ``x . v*`` where it is not 0, else
  by the fit of R: lexicographically, as the penalised fit does for a penalty small enough.
  Nothing in it reads a step count or a tolerance of the path.
- ``newton``: Newton's iterate on all rows where its gradient criterion (or ``max_iter``)
  stops it, as nbvslr did before it told quasi sets apart: its weights along the separated
  directions are wherever the stop left them, which decides the test rows that carry
  separated levels of both classes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.errors import ConfigError
from nbvslr.models.budget import DEFAULT_BUDGET, Budget
from nbvslr.models.design import Design, level_directions
from nbvslr.models.family import Fit, Option, choice, integer, number, one_of
from nbvslr.models.lr.hit_and_run import sample_separating
from nbvslr.models.lr.hmc import sample_separating_hmc
from nbvslr.models.lr.newton import fit_newton
from nbvslr.models.lr.separation import (
    COMPLETE,
    NOT_ASSESSED,
    QUASI,
    detect,
)
from nbvslr.models.nb.fit import rescale_to_training, theta_to_original
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
    Option("quasi", "limit", choice("limit", "newton"), one_of("limit", "newton"),
           "a quasi-separated training set (some rows separable, the rest overlapping): "
           "`limit` the vanishing-penalty limit (max-margin direction of the separated rows, "
           "then the fit of the rest); `newton` Newton's iterate on all rows where it stops"),
    Option("C_separable", 1e4, number(0.0, strict=True), "a number > 0",
           "the penalty of `separable: l2`"),
    Option("tol", 1e-10, number(0.0, strict=True), "a number > 0",
           "Newton stops when the largest absolute gradient component over m is ≤ tol "
           "(unpenalised: the detection of separated rows fits to at most 1e-10)"),
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
           "as for nb; for LR `training` moves only what is not scale invariant: the "
           "separable-set rule, the quasi-separated sets' max-margin direction and a penalty"),
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
        return fit_lr(design, idx, opts, seeds, data.kind == "continuous", budget,
                      level_directions(data, self.design(data, opts)))

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
    levels: np.ndarray | None = None,
) -> Fit:
    """Fit LR to the training rows ``idx`` (S, m) with the separable-set rule.

    ``theta`` holds one hyperplane per split (the Newton iterate, or the "l2" refit);
    ``sampled`` the splits whose error is the mean over sampled hyperplanes ("sample" rule)
    and ``draws`` their K hyperplanes each.

    ``levels`` (P, L): directions the separation check tries besides the columns
    (``design.level_directions``).

    With ``rescale="training"`` on a continuous task the fit (and the sampler) sees each
    split's training rows rescaled to [0, 1], and the hyperplanes are mapped back.
    """
    sign = design.sign[idx]  # (S, m)
    Z1, scale = None, None
    if opts["rescale"] == "training" and continuous:
        Z1 = design.rows(idx)  # (S, m, P)
        U, lo, r = rescale_to_training(Z1[:, :, :-1])
        Z1 = np.concatenate([U, Z1[:, :, -1:]], axis=2)  # (S, m, P), intercept column kept
        scale = (lo, r)
    # else the stack is gathered only for the splits a step reads it of
    rows = None if scale is not None else (design.unique_Z1, design.row_to_unique[idx])
    fit = _fit_lr_scaled(Z1, sign, opts, seeds, budget, levels, rows)
    if scale is None:
        return fit
    lo, r = scale
    todo, quasi = fit.sampled, fit.quasi
    return Fit(
        theta_to_original(fit.theta, lo, r),
        todo,
        theta_to_original(fit.draws, lo[todo][:, None, :], r[todo][:, None, :])
        if todo.size else fit.draws,
        fit.separable,
        fit.n_iter,
        fit.converged,
        fit.separation,
        quasi,
        theta_to_original(fit.directions, lo[quasi], r[quasi]) if quasi.size
        else fit.directions,
    )


def _fit_lr_scaled(
    Z1: np.ndarray | None,
    sign: np.ndarray,
    opts: Mapping[str, Any],
    seeds: Sequence[np.random.SeedSequence],
    budget: Budget = DEFAULT_BUDGET,
    levels: np.ndarray | None = None,
    rows: tuple[np.ndarray, np.ndarray] | None = None,
) -> Fit:
    """``fit_lr`` on the stacked training rows ``Z1`` (S, m, P) and ``sign`` (S, m);
    ``rows`` (the distinct rows and each training row's index in them) as for
    ``separation.detect``; with ``rows``, Z1 may be None (gathered where read)."""

    def stack(splits=None):  # Z1[splits] (all splits: None)
        if Z1 is not None:
            return Z1 if splits is None else Z1[splits]
        return rows[0][rows[1] if splits is None else rows[1][splits]]

    C, rule = opts["C"], opts["separable"]
    newton = dict(tol=opts["tol"], max_iter=opts["max_iter"], budget=budget)
    S, P = sign.shape[0], (Z1.shape[2] if Z1 is not None else rows[0].shape[1])
    none = np.empty(0, dtype=np.int64)
    if C is not None:  # penalised: the minimum exists, nothing to tell apart
        res = fit_newton(stack(), sign, C=C, **newton)
        return Fit(res.theta, none, np.empty((0, 1, P)), res.separable, res.n_iter,
                   res.converged, np.full(S, NOT_ASSESSED, dtype=np.int8), none,
                   np.empty((0, P)))
    found = detect(Z1, sign, extra=levels, rows=rows, **newton)
    code = found.code
    separable = code == COMPLETE
    theta, n_iter, converged = found.theta.copy(), found.n_iter.copy(), found.converged.copy()
    quasi = np.flatnonzero(code == QUASI)
    if rule == "mle" or (quasi.size and opts["quasi"] == "newton"):
        # Newton's iterate on all rows, run on as the likelihood lets it (no stop at a
        # separating iterate under "mle"): what such sets got before they were told apart
        redo = (np.arange(S) if rule == "mle" else quasi)
        res = fit_newton(stack(redo), sign[redo], stop_when_separable=rule != "mle", **newton)
        keep = code[redo] != COMPLETE if rule != "mle" else np.ones(redo.size, dtype=bool)
        theta[redo[keep]] = res.theta[keep]
        n_iter[redo[keep]] = res.n_iter[keep]
        converged[redo[keep]] = res.converged[keep]
        quasi = none
    directions = found.direction[quasi]  # (q, P)
    converged[quasi] = False  # no maximum: a limit, not a converged fit
    todo = np.flatnonzero(separable) if rule != "mle" else none
    draws = np.empty((0, 1, P))
    if todo.size and rule == "sample":
        sampler = sample_separating_hmc if opts["mcmc_method"] == "hmc" else sample_separating
        every = todo.size == S  # every split separable (the rule's usual case at small m):
        draws = sampler(  # the stacks as they are, without a copy of each
            stack(None if every else todo),
            sign if every else sign[todo],
            theta if every else theta[todo],
            seeds.take(todo) if isinstance(seeds, SplitSeeds) else [seeds[i] for i in todo],
            chains=opts["mcmc_chains"],
            draws=opts["mcmc_draws"],
            burn_in=opts["mcmc_burn_in"],
            thin=opts["mcmc_thin"],
            budget=budget,
        )  # (s, K, P)
        converged[todo] = False
    elif todo.size and rule == "l2":
        refit = fit_newton(stack(todo), sign[todo], C=opts["C_separable"], **newton)
        theta[todo] = refit.theta
        n_iter[todo] += refit.n_iter
        converged[todo] = refit.converged
        todo = none
    else:
        todo = none
    return Fit(theta, todo, draws, separable, n_iter, converged, code, quasi, directions)
