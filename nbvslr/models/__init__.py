"""The models of the paper, fitted to all splits of one size at once.

Each model family is a folder, its entries (``entry``, what a config's ``model:`` name runs)
beside its mathematics, listed in ``registry.ENTRIES`` (the interface: ``family.Family``;
README.md here is the map): ``nb`` is Gaussian naive Bayes on continuous tasks,
categorical naive Bayes on discrete ones and both at once on mixed ones (``nb.entry``,
``nb.fit``), ``lr`` logistic regression by maximum conditional likelihood (``lr.entry``,
``lr.newton``), ``lda`` and ``qda`` Gaussian discriminant analysis (``discriminant.lda``,
``discriminant.qda``, ``discriminant.gaussian``). Their options -- default, valid
values and meaning of each -- are declared once, in each name's table
(``nb.fit.NB_OPTIONS``, ``lr.entry.LR_OPTIONS``), and listed in docs/options.md;
``profile: NAME`` in a config (``options.PROFILES``) replaces the defaults for every model on
every task, ``stated`` (the default) being the method as the paper states it.

Every model here is linear in some design of the task (``design``): Laplace smoothing l
gives ``p(x_j = v | y) = (count + l) / (count(y) + k_j l)`` and
``p(y) = (count(y) + l) / (m + 2 l)``, as the paper states; the paper's Gaussian NB has one
variance per feature, the pooled within-class ML variance plus a small epsilon, so it is
linear like LR (at m = 2 its rule is "nearest class mean"). When an unpenalised LR fit is
certified linearly separable (an iterate with every training margin > 0) its likelihood has
no maximum; the paper's rule averages the test error over hyperplanes drawn uniformly from
the separating ones (``lr.hmc``, ``lr.hit_and_run``).

A text task (``kind == "text"``, sparse word counts) takes the text entries
(``text.entry``): their designs are held sparse (``design.SparseDesign``), a split's
vocabulary is a mask, and test errors are sparse products (``text.entry.text_errors``);
their memory per split is the entry's ``sparse_bytes``, not an (m, P) stack.

A task of K > 2 classes takes the registry's multiclass entries (each in its family's folder,
e.g. ``nb.entry_multi``, ``lr.entry_multi``): K linear scores per split, the class of
highest score predicted, a tie among t top classes counting (t - 1)/t of an error when the
true class is among them and 1 otherwise (``evaluate_multi``).

Outputs per split: ``error`` (test error on every row outside the training set, a tie --
score 0 -- counting one half unless the family's tie rule says otherwise), ``separable`` (the
Newton certificate; always False for NB, which does not need it), ``n_iter`` (Newton steps, 0
for NB) and ``converged`` (the gradient criterion was met; True for NB, False for a separable
split under "sample" or "mle", whose likelihood has no maximum). With ``metrics``, also
``log_loss`` and ``brier`` (of the class probabilities, ``probabilities``; NaN where the rule
has none, ``no_probabilities``) and ``train_error`` (the error on the split's own training
rows, from the counts the test error already makes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.models import evaluate_zeros
from nbvslr.models.budget import DEFAULT_BUDGET, Budget
from nbvslr.models.design import Design, SparseDesign, get_design
from nbvslr.models.evaluate import count_mistakes, count_mistakes_lex
from nbvslr.models.evaluate_multi import count_mistakes_multi, count_mistakes_multi_lex
from nbvslr.models.evaluate_zeros import has_zeros
from nbvslr.models.family import Fit
from nbvslr.models.lr.separation import NOT_ASSESSED
from nbvslr.models.probabilities import (
    TileSums,
    dense_losses,
    row_brier,
    text_heldout_metrics,
    text_metrics,
)
from nbvslr.models.registry import FAMILIES, lookup, resolve_options
from nbvslr.models.spec import ModelSpec
from nbvslr.models.stacks import check_both_classes, check_distinct, split_chunks
from nbvslr.models.text.entry import text_errors
from nbvslr.results.layout import DEFAULT_METRICS, METRICS
from nbvslr.splits import check_size

__all__ = ["FAMILIES", "ModelSpec", "full_scores", "resolve_options", "score_full",
           "score_splits"]

#: Stacks held per split relative to one (m, D+1) float64 array (fits need a few copies).
STACK_COPIES = 4


def _heldout(design: Design | SparseDesign, fit: Fit, idx: np.ndarray, ties: float,
             data: Dataset | None = None,
             metrics: Sequence[str] = DEFAULT_METRICS) -> dict[str, np.ndarray]:
    """Each of ``metrics`` of each split (S,): ``error`` the test error of its hyperplane, or
    the mean over its draws (with ``data`` of K > 2 classes, of its K-class rule,
    ``evaluate_multi``; on a text task's sparse design, by ``text_errors``);
    ``train_error`` the same on its training rows; ``log_loss`` and ``brier`` from its class
    probabilities (``probabilities``), NaN where it has none (``no_probabilities``)."""
    multi = data is not None and data.multiclass
    losses = any(k in metrics for k in ("log_loss", "brier"))

    def errors(theta: np.ndarray, rows: np.ndarray,
               with_losses: bool = False) -> dict[str, np.ndarray]:
        m = rows.shape[1]
        if isinstance(design, SparseDesign):
            if len(metrics) > 1 and theta.ndim == 2 and ties == 0:
                return text_heldout_metrics(design, theta, rows)  # one pass over the scores
            out = {"error": text_errors(design, theta, rows, ties)}
            if len(metrics) > 1:
                out["log_loss"], out["brier"], out["train_error"] = text_metrics(
                    design, theta, rows, ties)
            return out
        if has_zeros(theta):  # plain ML naive Bayes: levels of probability 0
            all_rows, train_rows = _mistakes(design, theta, rows, ties, data)
        elif multi:
            all_rows, train_rows = count_mistakes_multi(design, data, theta, rows)
        elif with_losses:  # the log-loss summed from the errors' own tiles of scores
            sums = TileSums(design, data, theta.shape[0])
            all_rows, train_rows = count_mistakes(design, theta, rows, ties, on_tile=sums)
            log_loss, brier = sums.finish(design, data, theta, rows)
            return {"error": (all_rows - train_rows) / (design.n_rows - m),
                    "train_error": train_rows / m, "log_loss": log_loss, "brier": brier}
        else:
            all_rows, train_rows = count_mistakes(design, theta, rows, ties)
        return {"error": (all_rows - train_rows) / (design.n_rows - m),
                "train_error": train_rows / m}

    def measured(theta: np.ndarray, rows: np.ndarray) -> dict[str, np.ndarray]:
        """The errors, and the probabilities' metrics when asked."""
        out = errors(theta, rows, with_losses=losses)
        if losses and "log_loss" not in out and not isinstance(design, SparseDesign):
            out["log_loss"], out["brier"] = dense_losses(design, data, theta, rows)
        return out

    S = idx.shape[0]
    todo = fit.sampled
    quasi = fit.quasi if fit.quasi is not None else np.empty(0, dtype=np.int64)
    if not todo.size and not quasi.size:
        out = measured(fit.theta, idx)
    else:
        # splits with one hyperplane
        rest = np.setdiff1d(np.arange(S), np.concatenate([todo, quasi]))
        out = {k: np.full(S, np.nan) for k in METRICS}
        for key, value in measured(fit.theta[rest], idx[rest]).items():
            out[key][rest] = value
        if quasi.size:  # LR's quasi-separation rule (a dense design)
            m = idx.shape[1]
            if multi:
                all_rows, train_rows = count_mistakes_multi_lex(
                    design, data, fit.directions, fit.theta[quasi], idx[quasi])
            else:
                all_rows, train_rows = count_mistakes_lex(design, fit.directions,
                                                          fit.theta[quasi], idx[quasi], ties)
            out["error"][quasi] = (all_rows - train_rows) / (design.n_rows - m)
            out["train_error"][quasi] = train_rows / m
        if todo.size:
            n, K = fit.draws.shape[:2]
            per_draw = errors(
                fit.draws.reshape((n * K,) + fit.draws.shape[2:]),
                np.repeat(idx[todo], K, axis=0),
            )  # (n K,) each
            for key in ("error", "train_error"):
                out[key][todo] = per_draw[key].reshape(n, K).mean(axis=1)
    missing = no_probabilities(fit, S)
    for key in ("log_loss", "brier"):
        if key in out and missing.any():
            out[key] = np.where(missing, np.nan, out[key])
    return {k: out[k] for k in metrics}


def no_probabilities(fit: Fit, S: int) -> np.ndarray:
    """The splits (S,) bool whose rule has no class probabilities: a sampled separable split
    (hyperplanes drawn uniformly from the separating ones: a direction, not a scale), a
    quasi-separated one (the vanishing-penalty limit: the separated rows' probabilities are
    0 or 1, the direction again with no scale) and a fit that did not converge (an
    unpenalised LR capped on a separable set, ``separable: mle``: its probabilities would be
    those of wherever the solver stopped)."""
    missing = ~np.asarray(fit.converged, dtype=bool)
    missing[np.asarray(fit.sampled, dtype=np.int64)] = True
    if fit.quasi is not None:
        missing[np.asarray(fit.quasi, dtype=np.int64)] = True
    return missing


def _mistakes(design: Design, theta: np.ndarray, rows: np.ndarray | None, ties: float,
              data: Dataset | None) -> tuple[np.ndarray, np.ndarray]:
    """Mistakes on all rows and on the training ``rows`` of rules with levels of probability
    0 (``evaluate_zeros``), two-class (n, P) or K-class (n, K, P)."""
    if theta.ndim == 3:
        return evaluate_zeros.count_mistakes_multi(design, data, theta, rows)
    return evaluate_zeros.count_mistakes(design, theta, rows, ties)


# --------------------------------------------------------------------------- public API
def score_splits(
    spec: ModelSpec,
    data: Dataset,
    train_idx: np.ndarray,
    seeds: Sequence[np.random.SeedSequence],
    budget: Budget = DEFAULT_BUDGET,
    metrics: Sequence[str] = DEFAULT_METRICS,
) -> dict[str, np.ndarray]:
    """Fit ``spec`` to S training sets and score each on the rows it did not train on.

    Parameters
    ----------
    spec : ModelSpec
        Its options resolved (``resolve_options``), as a config holds them.
    data : Dataset
    train_idx : ndarray of shape (S, m)
        Distinct row indices of each split's training set (every class present).
    seeds : sequence of S SeedSequence
        The model seed of each split (used by the separable-set sampler only).
    budget : Budget
        The memory budget of every stage (``nbvslr.models.budget``); never changes a result.
    metrics : sequence of str
        What to measure of each split (``results.layout.METRICS``; ``error`` always).

    Returns
    -------
    dict with ``error`` float64 (S,), ``separable`` bool (S,), ``n_iter`` int64 (S,),
    ``converged`` bool (S,), and float64 (S,) for each other metric asked (``log_loss``,
    ``brier``: NaN where ``no_probabilities``); see the module docstring.

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
    check_both_classes(np.asarray(data.y)[train_idx], n_classes=data.n_classes)
    check_size(m, data.n_rows, data.name, n_classes=data.n_classes)  # a test row left
    metrics = tuple(k for k in METRICS if k == "error" or k in metrics)
    out = {
        **{k: np.empty(S) for k in metrics},
        "separable": np.zeros(S, dtype=bool),
        "separation": np.full(S, NOT_ASSESSED, dtype=np.int8),
        "n_iter": np.zeros(S, dtype=np.int64),
        "converged": np.ones(S, dtype=bool),
    }
    entry = lookup(spec.family, data.kind, data.multiclass)
    design = get_design(data, entry.design(data, opts))
    width = entry.width(data, design)
    ties = entry.ties(opts)
    per_split = STACK_COPIES * 8.0 * m * width  # the (m, P) stacks of a split
    sparse = getattr(entry, "sparse_bytes", None)
    sparse_bytes = sparse(data, opts) if sparse is not None else None
    if sparse_bytes is not None:  # a text fit: no stack, its own estimate
        per_split = sparse_bytes[0] + sparse_bytes[1] * m
    for sl in split_chunks(S, per_split, budget.stacks):
        idx = train_idx[sl]  # (s, m)
        fit = entry.fit(data, design, idx, opts, seeds[sl], budget)
        for key, value in _heldout(design, fit, idx, ties, data, metrics).items():
            out[key][sl] = value
        out["separable"][sl] = fit.separable
        if fit.separation is not None:
            out["separation"][sl] = fit.separation
        out["n_iter"][sl] = fit.n_iter
        out["converged"][sl] = fit.converged
    return out


def score_full(spec: ModelSpec, data: Dataset, seed: np.random.SeedSequence) -> float:
    """Fit ``spec`` on all rows and return its error on all rows (a tied score counted by
    the entry's tie rule: half an error unless an option says otherwise).

    The resubstitution error of the model trained on everything: an estimate of its
    asymptotic error. If LR's full data is separable, the separable-set rule applies as for
    any split (under "sample" every drawn hyperplane separates the data: error 0).
    """
    return float(full_scores(spec, data, seed)["error"])


#: Why the all-rows fit has no Brier score (``full_scores``), by ``no_probabilities``' cause.
FULL_NO_PROBABILITIES = {
    "separable": ("all the rows are linearly separable: the rule is a direction (hyperplanes "
                  "drawn from the separating ones, or the capped Newton iterate), not a "
                  "scale, so it gives no class probabilities"),
    "quasi": ("all the rows are quasi-separated: the rule is the limit of the penalised fit "
              "as the penalty vanishes, a direction on the separated rows, so it gives no "
              "class probabilities"),
    "not_converged": ("the fit on all the rows did not converge: its probabilities would be "
                      "those of wherever the solver stopped"),
}


def full_scores(spec: ModelSpec, data: Dataset, seed: np.random.SeedSequence,
                metrics: Sequence[str] = DEFAULT_METRICS) -> dict[str, Any]:
    """Fit ``spec`` on all rows and score it on all rows.

    Returns ``{"error": float}`` (``score_full``), and with ``"brier"`` in ``metrics`` also
    ``"brier"``: ``{"value": the Brier score on all rows, "sem": its standard error over
    the rows (the standard deviation of the rows' Brier terms over sqrt(N),
    ``probabilities.row_brier``)}``, both None with a ``"reason"`` where the rule has no
    class probabilities (``no_probabilities``: LR on separable or quasi-separated rows, a
    fit that did not converge).
    """
    opts = spec.options  # resolved once, when the config was read
    idx = np.arange(data.n_rows)[None, :]  # (1, N)
    entry = lookup(spec.family, data.kind, data.multiclass)
    design = get_design(data, entry.design(data, opts))
    fit = entry.fit(data, design, idx, opts, [seed], DEFAULT_BUDGET)
    out: dict[str, Any] = {"error": _full_error(design, data, fit, idx, entry.ties(opts))}
    if "brier" in metrics:
        out["brier"] = _full_brier(design, data, fit)
    return out


def _full_brier(design: Design | SparseDesign, data: Dataset, fit: Fit) -> dict:
    """``full_scores``' ``brier`` of the all-rows ``fit`` (one rule)."""
    if no_probabilities(fit, 1)[0]:
        if fit.quasi is not None and np.asarray(fit.quasi).size:
            cause = "quasi"
        elif np.asarray(fit.sampled).size or bool(np.asarray(fit.separable).any()):
            cause = "separable"
        else:
            cause = "not_converged"
        return {"value": None, "sem": None, "reason": FULL_NO_PROBABILITIES[cause]}
    terms = row_brier(design, data, fit.theta[0])  # (N,)
    n = terms.size
    sem = float(terms.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0
    return {"value": float(terms.mean()), "sem": sem}


def _full_error(design: Design | SparseDesign, data: Dataset, fit: Fit, idx: np.ndarray,
                ties: float) -> float:
    """The all-rows error of the all-rows ``fit`` (``score_full``)."""
    if isinstance(design, SparseDesign):
        return float(text_errors(design, fit.theta, None, ties)[0])
    if data.multiclass and fit.quasi is not None and fit.quasi.size:  # the quasi rule
        wrong_k, _ = count_mistakes_multi_lex(design, data, fit.directions, fit.theta, None)
        return float(wrong_k[0] / data.n_rows)
    if data.multiclass:
        rules = fit.draws[0] if fit.sampled.size else fit.theta  # (n, K, P)
        if has_zeros(rules):
            wrong_k, _ = _mistakes(design, rules, None, 0.0, data)
        else:
            wrong_k, _ = count_mistakes_multi(design, data, rules, None)  # (n,)
        return float(wrong_k.mean() / data.n_rows)
    if fit.quasi is not None and fit.quasi.size:  # LR's quasi-separation rule
        wrong, _ = count_mistakes_lex(design, fit.directions, fit.theta, idx[:, :0], ties)
        return float(wrong[0] / data.n_rows)
    theta = fit.draws[0] if fit.sampled.size else fit.theta  # (K, P)
    if has_zeros(theta):
        wrong, _ = _mistakes(design, theta, None, ties, data)
    else:
        wrong, _ = count_mistakes(design, theta, None, ties)  # (K,)
    return float(wrong.mean() / data.n_rows)
