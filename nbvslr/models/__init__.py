"""The models of the paper, fitted to all splits of one size at once.

Families and their options (defaults in ``options.FAMILIES``; a config sets any of them)
------------------------------------------------------------------------------------
``nb`` -- naive Bayes. Continuous tasks: Gaussian NB; discrete tasks: categorical NB.

* ``smoothing`` (1): Laplace l of the class prior and of every categorical conditional,
  ``p(x_j = v | y) = (count + l) / (count(y) + k_j l)``, ``p(y) = (count(y) + l) / (m + 2 l)``,
  as the paper states.
* ``variance`` ("shared"): the paper's Gaussian NB has one variance per feature, the pooled
  within-class ML variance, so it is linear like LR; "class" is the textbook GNB
  (class-specific variances, quadratic in x) for comparison.
* ``var_smoothing`` (1e-9), ``var_floor`` (1e-12): epsilon added to every variance is
  ``max(var_smoothing * v_max, var_floor)``, ``v_max`` the largest per-feature variance of
  the split's training X. The paper says only "a small epsilon"; scikit-learn's GaussianNB
  uses the same relative 1e-9, which never changes a variance that is not (nearly) zero and
  scales with the data. With it, a feature that is constant within each class but differs
  between class means dominates the rule -- as it must when its estimated variance is 0 --
  and at m = 2 the rule is "nearest class mean". The floor keeps a set of identical training
  points from dividing by zero.
* ``prior`` ("empirical"): the Laplace-smoothed class frequencies, as the paper states;
  "uniform": equal priors (the log prior ratio is 0), for categorical and Gaussian NB;
  "uniform-gaussian": equal priors in Gaussian NB only (the paper states the Laplace prior
  for discrete NB, and says nothing of a prior for continuous NB).
* ``var_estimator`` ("ml"): the Gaussian variances divide the sums of squares by m (or the
  class count); "unbiased" by m - 2 (or the class count - 1).
* ``epsilon_form`` ("relative"): epsilon as above; "absolute": epsilon =
  ``max(var_smoothing, var_floor)`` itself, on the [0, 1] scale of the inputs.
* ``epsilon_mode`` ("add"): the variance is ``var + epsilon``; "floor": ``max(var, epsilon)``.
* ``ties`` ("half"): a test row whose log-odds are exactly 0 (common for categorical NB at
  m = 2, where every attribute seen in both classes or in neither cancels) counts half an
  error; "positive" predicts class 1 there (the rule ``p(y = 1 | x) >= 1/2``), "negative"
  class 0.
* ``rescale`` ("dataset"): continuous inputs as the task gives them (rescaled to [0, 1] over
  all rows); "training": each split's training rows are rescaled again to [0, 1] over
  themselves before the fit (the rule is mapped back to the task's inputs).

``lr`` -- logistic regression by maximum conditional likelihood (Newton / IRLS). Continuous
tasks use the raw attributes; discrete tasks by default one-hot indicators minus one reference
level per attribute (its most frequent level), so that the unpenalised Hessian is not
singular by construction.

Profiles: ``profile: NAME`` in a config (``options.PROFILES``) replaces these defaults for
every model on every task; ``stated`` (the default) is the method as the paper states it.

* ``C`` (null): no penalty, as in the paper; a number fits ``C * loss + ||w||^2 / 2``.
* ``separable`` ("sample"): what an unpenalised fit does when Newton certifies that the
  training set is linearly separable (an iterate with every training margin > 0):
  "sample" -- the paper's rule, the test error averaged over hyperplanes drawn uniformly from
  the separating ones (``hmc.py``); "l2" -- refit that split with ``C = C_separable``
  (1e4, a tiny penalty); "mle" -- keep iterating to ``max_iter`` and use that iterate.
* ``tol`` (1e-10), ``max_iter`` (100): Newton stops when ``max_j |grad_j| / m <= tol``.
* ``coding`` ("reference"): discrete attributes as one-hot indicators minus the reference
  level; "full": every level's indicator (the same fitted rules where the maximum exists,
  another uniform distribution over separating hyperplanes); "ordinal": one column per
  attribute, its level code / (k - 1). Continuous tasks ignore it.
* ``rescale`` ("dataset"): as for ``nb``; an unpenalised fit's predictions do not change under
  a per-feature affine map, so "training" moves only the separable-set rule (and a penalty).
* ``mcmc_method`` ("hmc"): the sampler of separating hyperplanes, exact Hamiltonian Monte
  Carlo (``hmc.py``) or "hit-and-run" (``sampler.py``, slow to mix in narrow cones).
* ``mcmc_chains``, ``mcmc_draws``, ``mcmc_burn_in``, ``mcmc_thin`` (each method's
  ``options.MCMC_DEFAULTS``): a separable split averages ``chains * draws`` hyperplanes.

Outputs per split: ``error`` (test error on every row outside the training set, a tie --
score 0 -- counting one half), ``separable`` (the Newton certificate; always False for NB,
which does not need it), ``n_iter`` (Newton steps, 0 for NB) and ``converged`` (the gradient
criterion was met; True for NB, False for a separable split under "sample" or "mle", whose
likelihood has no maximum).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.models.budget import DEFAULT_BUDGET, Budget
from nbvslr.models.design import Design, get_design
from nbvslr.models.evaluate import count_mistakes, heldout_errors
from nbvslr.models.hmc import sample_separating_hmc
from nbvslr.models.logistic import fit_newton
from nbvslr.models.naive_bayes import (
    fit_categorical_nb,
    fit_gaussian_nb,
    rescale_to_training,
    theta_to_original,
)
from nbvslr.models.options import FAMILIES, resolve_options
from nbvslr.models.sampler import sample_separating
from nbvslr.models.spec import ModelSpec
from nbvslr.models.stacks import check_both_classes, check_distinct, split_chunks
from nbvslr.splits import SplitSeeds, check_size

__all__ = ["FAMILIES", "ModelSpec", "resolve_options", "score_full", "score_splits"]

#: Stacks held per split relative to one (m, D+1) float64 array (fits need a few copies).
STACK_COPIES = 4


# --------------------------------------------------------------------------- fitting
def _nb_design_name(data: Dataset, opts: Mapping[str, Any]) -> str:
    if data.kind == "discrete":
        return "onehot"
    return "x" if opts["variance"] == "shared" else "x_x2"


#: nb ``ties``: the predicted sign of a tied score (0: half an error).
_TIES = {"half": 0.0, "positive": 1.0, "negative": -1.0}

_LR_CODINGS = {"reference": "onehot_ref", "full": "onehot", "ordinal": "ordinal"}


def _lr_design_name(data: Dataset, opts: Mapping[str, Any]) -> str:
    return _LR_CODINGS[opts["coding"]] if data.kind == "discrete" else "x"


def _fit_nb(data: Dataset, idx: np.ndarray, opts: Mapping[str, Any]) -> np.ndarray:
    """NB thetas for training rows ``idx`` (S, m): shape (S, D + 1)."""
    X = data.X[idx]  # (S, m, d)
    y = np.asarray(data.y)[idx]  # (S, m)
    if data.kind == "discrete":
        prior = "uniform" if opts["prior"] == "uniform" else "empirical"
        return fit_categorical_nb(
            X, y, tuple(data.n_values), smoothing=opts["smoothing"], prior=prior
        )
    return fit_gaussian_nb(
        X,
        y,
        smoothing=opts["smoothing"],
        variance=opts["variance"],
        var_smoothing=opts["var_smoothing"],
        var_floor=opts["var_floor"],
        prior="empirical" if opts["prior"] == "empirical" else "uniform",
        var_estimator=opts["var_estimator"],
        epsilon_form=opts["epsilon_form"],
        epsilon_mode=opts["epsilon_mode"],
        rescale=opts["rescale"],
    )


def _fit_lr(
    design: Design,
    idx: np.ndarray,
    opts: Mapping[str, Any],
    seeds: Sequence[np.random.SeedSequence],
    continuous: bool = True,
    budget: Budget = DEFAULT_BUDGET,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Fit LR to the training rows ``idx`` (S, m) with the separable-set rule.

    Returns
    -------
    theta : ndarray of shape (S, D + 1)
        One hyperplane per split (the Newton iterate, or the "l2" refit).
    sampled : ndarray of shape (s,), int64
        The splits whose error is the mean over sampled hyperplanes ("sample" rule).
    draws : ndarray of shape (s, K, D + 1)
        Their K hyperplanes each.
    separable : (S,) bool; n_iter : (S,) int64; converged : (S,) bool

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
    return theta, todo, draws, separable, n_iter, converged


def _fit_lr_scaled(
    Z1: np.ndarray,
    sign: np.ndarray,
    opts: Mapping[str, Any],
    seeds: Sequence[np.random.SeedSequence],
    budget: Budget = DEFAULT_BUDGET,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``_fit_lr`` on the stacked training rows ``Z1`` (S, m, P) and ``sign`` (S, m)."""
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


# --------------------------------------------------------------------------- public API
def score_splits(
    spec: ModelSpec,
    data: Dataset,
    train_idx: np.ndarray,
    seeds: Sequence[np.random.SeedSequence],
    budget: Budget = DEFAULT_BUDGET,
) -> dict[str, np.ndarray]:
    """Fit ``spec`` to S training sets and score each on the rows it did not train on.

    Parameters
    ----------
    spec : ModelSpec
        Its options resolved (``resolve_options``), as a config holds them.
    data : Dataset
    train_idx : ndarray of shape (S, m)
        Distinct row indices of each split's training set (both classes present).
    seeds : sequence of S SeedSequence
        The model seed of each split (used by the separable-set sampler only).
    budget : Budget
        The memory budget of every stage (``nbvslr.models.budget``); never changes a result.

    Returns
    -------
    dict with ``error`` float64 (S,), ``separable`` bool (S,), ``n_iter`` int64 (S,),
    ``converged`` bool (S,); see the module docstring.

    Raises
    ------
    DataError
        Invalid or repeated row indices, or a one-class training set.
    SizeError
        No test row left (``splits.check_size``).
    """
    opts = spec.options  # resolved once, when the config was read
    train_idx = np.asarray(train_idx, dtype=np.int64)
    check_distinct(train_idx, data.n_rows)
    S, m = train_idx.shape
    if not isinstance(seeds, Sequence):
        seeds = list(seeds)  # read lazily otherwise (splits.SplitSeeds: made on access)
    if len(seeds) != S:
        raise ValueError(f"{len(seeds)} seeds for {S} splits")
    check_both_classes(np.asarray(data.y)[train_idx])
    check_size(m, data.n_rows, data.name)  # at least one test row
    out = {
        "error": np.empty(S),
        "separable": np.zeros(S, dtype=bool),
        "n_iter": np.zeros(S, dtype=np.int64),
        "converged": np.ones(S, dtype=bool),
    }
    if spec.family == "nb":
        design = get_design(data, _nb_design_name(data, opts))
        width = max(design.n_params, data.n_features + 1)
    else:
        design = get_design(data, _lr_design_name(data, opts))
        width = design.n_params
    for sl in split_chunks(S, STACK_COPIES * 8.0 * m * width, budget.stacks):
        idx = train_idx[sl]  # (s, m)
        if spec.family == "nb":
            theta = _fit_nb(data, idx, opts)  # (s, D+1)
            out["error"][sl] = heldout_errors(design, theta, idx, _TIES[opts["ties"]])
            continue
        theta, todo, draws, sep, n_iter, conv = _fit_lr(
            design, idx, opts, seeds[sl], data.kind == "continuous", budget
        )
        rest = np.setdiff1d(np.arange(idx.shape[0]), todo)  # splits with one hyperplane
        err = np.empty(idx.shape[0])  # (s,)
        err[rest] = heldout_errors(design, theta[rest], idx[rest])
        if todo.size:
            n, K, P = draws.shape
            per_draw = heldout_errors(
                design, draws.reshape(n * K, P), np.repeat(idx[todo], K, axis=0)
            )  # (n K,)
            err[todo] = per_draw.reshape(n, K).mean(axis=1)
        out["error"][sl] = err
        out["separable"][sl] = sep
        out["n_iter"][sl] = n_iter
        out["converged"][sl] = conv
    return out


def score_full(spec: ModelSpec, data: Dataset, seed: np.random.SeedSequence) -> float:
    """Fit ``spec`` on all rows and return its error on all rows (ties count one half).

    The resubstitution error of the model trained on everything: an estimate of its
    asymptotic error. If LR's full data is separable, the separable-set rule applies as for
    any split (under "sample" every drawn hyperplane separates the data: error 0).
    """
    opts = spec.options  # resolved once, when the config was read
    idx = np.arange(data.n_rows)[None, :]  # (1, N)
    if spec.family == "nb":
        design = get_design(data, _nb_design_name(data, opts))
        theta = _fit_nb(data, idx, opts)  # (1, D+1)
    else:
        design = get_design(data, _lr_design_name(data, opts))
        theta, todo, draws = _fit_lr(design, idx, opts, [seed], data.kind == "continuous")[:3]
        theta = draws[0] if todo.size else theta  # (K, P)
    ties = _TIES[opts["ties"]] if spec.family == "nb" else 0.0
    wrong, _ = count_mistakes(design, theta, None, ties)  # (K,)
    return float(wrong.mean() / data.n_rows)
