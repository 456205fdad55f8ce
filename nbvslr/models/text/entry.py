"""The entries of text tasks (``Dataset.kind == "text"``): ``nb`` and ``lr`` on word counts.

The fits are those of ``nbvslr.models.text.fit``, on the task's sparse counts (``SparseDesign``):
each split keeps the words its vocabulary options give (``split_vocabulary`` over its
training documents, or over all of them with ``vocabulary: all``), a word it does not keep
weighs 0 in its hyperplane, and a held-out document's score is a sparse product. No
(S, m, V) stack is made.

- ``nb`` (``event: multinomial`` or ``bernoulli``, Laplace ``smoothing``): two classes by
  ``fit_nb_text``; K > 2 classes by ``fit_nb_text_multi`` here (class prior
  ``(n_c + l) / (m + K l)``, one weight vector per class, the class of highest score
  predicted, ties as ``evaluate_multi`` counts them).
- ``lr`` with ``C``: L2-penalised, by ``fit_lr_text`` (Newton-CG on sparse products, stopped
  at ``GRADIENT_TOL``; ``max_iter`` is the options'); K > 2 classes by ``fit_lr_text_multi``
  (softmax, all K weight vectors penalised, the intercepts not; the class of highest score
  predicted, ties as for nb).
- ``lr`` without ``C`` (the paper's rule: maximum likelihood, hyperplanes sampled on a
  separable training set): only on a vocabulary every split shares (``vocabulary: all``)
  of at most ``PAPER_MAX_FEATURES`` words (``max_features``). Its counts are then one dense
  design (``"text_shared"``) handed to the dense LR of every other task. On a split's own
  vocabulary every training set is separable until m nears the vocabulary's size, and the
  sampled hyperplanes live in thousands of dimensions; the config refuses it
  (``check_text_model``) in one line naming the fix. On K > 2 classes it is refused
  (``MULTICLASS_PAPER_LR``).

Test errors: ``text_errors``: a binary score within ``TIE_RTOL * ||theta||_1`` of 0 is a tie
(the ``ties`` option of nb; half an error for lr), as for every other task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from nbvslr.data.dataset import Dataset
from nbvslr.data.text import split_vocabulary
from nbvslr.errors import ConfigError
from nbvslr.models.budget import DEFAULT_BUDGET, Budget
from nbvslr.models.design import Design, SparseDesign
from nbvslr.models.evaluate import TIE_RTOL
from nbvslr.models.family import Fit, Option, choice, integer, one_of
from nbvslr.models.lr.entry import LR_OPTIONS, fit_lr
from nbvslr.models.nb.entry import TIES
from nbvslr.models.nb.fit import NB_OPTIONS
from nbvslr.models.text.fit import (
    EVENTS,
    GRADIENT_TOL,
    fit_lr_text,
    fit_lr_text_multi,
    fit_nb_text,
    heldout_errors,
    log_absent,
)

#: The most words of the shared vocabulary the paper's unpenalised LR takes on a text task
#: (its separable-set sampler works in that many dimensions).
PAPER_MAX_FEATURES = 1000

#: The options of ``nb`` on text tasks only (added to the ``nb`` table by the registry).
TEXT_NB_OPTIONS: tuple[Option, ...] = (
    Option("event", "multinomial", choice(*EVENTS), one_of(*EVENTS),
           "text tasks: `multinomial` word counts, `bernoulli` word presence (an absent word "
           "counts too); set on another task, refused"),
)

#: The most words ``lr``'s own ``max_features`` may keep.
MAX_WORDS = 1_000_000

#: The options of ``lr`` on text tasks only (added to the ``lr`` table by the registry).
TEXT_LR_OPTIONS: tuple[Option, ...] = (
    Option("max_features", None, integer(1, MAX_WORDS, none_ok=True),
           f"an integer from 1 to {MAX_WORDS}, or null (the task's vocabulary)",
           "text tasks: this model's words are the task's `max_features` most frequent ones "
           "over all its documents, one vocabulary for every split (as `vocabulary: all`); "
           f"with at most {PAPER_MAX_FEATURES} words the paper's rule (`C: null`) runs on "
           "them; set on another task, refused"),
)

#: Bytes per split of a text fit, per word (V) and per document scored (N K): the dense
#: (S, V) sums, masks and weights of a fit, the (S, N K) scores of its test errors.
WORD_BYTES = 8.0 * 14
SCORE_BYTES = 8.0 * 4
#: LR's bytes per training row's stored word (its COO training rows and their copies) and
#: per training row.
NNZ_BYTES = 8.0 * 10
ROW_BYTES = 8.0 * 10
#: K-class fits' bytes per split, class and word: the (K, V + 1) weights of a split and
#: their copy into the (S, K, V + 1) stack the errors read.
CLASS_WORD_BYTES = 8.0 * 2


def vocabulary_of(data: Dataset, cap: int | None = None) -> dict[str, Any]:
    """A model's vocabulary options: the task's, or with a model's own ``max_features``
    ``cap`` the ``cap`` most frequent words over all documents."""
    o = {"vocabulary": "training", "min_df": 1, "max_features": None, **data.text_options}
    if cap is not None:
        o.update(vocabulary="all", max_features=int(cap))
    return o


def keep_words(data: Dataset, idx: np.ndarray, cap: int | None = None) -> np.ndarray:
    """The words each split keeps (S, V), by the task's vocabulary options (``cap``: a
    model's own ``max_features``)."""
    o = vocabulary_of(data, cap)
    return split_vocabulary(data.X, idx, o["vocabulary"], o["min_df"], o["max_features"])


def fit_nb_text_multi(
    X, y: np.ndarray, idx: np.ndarray, keep: np.ndarray, n_classes: int,
    event: str = "multinomial", smoothing: float = 1.0,
) -> np.ndarray:
    """Naive Bayes of K classes on S training sets: theta (S, K, V + 1), class k's score
    ``z(x) @ theta[s, k, :-1] + theta[s, k, -1]`` (its log-joint up to a term common to the
    classes).

    Class prior ``(n_k + l) / (m + K l)``. Multinomial: ``log p_kj``, ``p_kj = (N_kj + l) /
    (N_k + l V_s)`` on the counts. Bernoulli: ``log p_kj - log(1 - p_kj)`` on presence, the
    intercept adding ``sum_j log(1 - p_kj)`` over the split's words, ``p_kj = (d_kj + l) /
    (n_k + 2 l)``.
    """
    if event not in EVENTS:
        raise ConfigError(f"nb option 'event' = {event!r} is invalid; it must be one of "
                          "'multinomial', 'bernoulli'")
    S, m = idx.shape
    K = int(n_classes)
    V = X.shape[1]
    l = float(smoothing)
    Z = X
    if event == "bernoulli":
        Z = X.copy()
        Z.data[:] = 1.0
    lab = np.asarray(y, dtype=np.int64)[idx]  # (S, m)
    kf = keep.astype(np.float64)  # (S, V)
    theta = np.zeros((S, K, V + 1))
    for k in range(K):
        n_k = (lab == k).sum(axis=1)  # (S,)
        rows = idx[lab == k]  # split-major
        indptr = np.zeros(S + 1, dtype=np.int64)
        np.cumsum(n_k, out=indptr[1:])
        sel = sp.csr_matrix((np.ones(rows.shape[0]), rows, indptr), shape=(S, X.shape[0]))
        total = np.asarray((sel @ Z).todense()) * kf  # (S, V)
        prior = np.log((n_k + l) / (m + K * l))
        if event == "multinomial":
            V_s = kf.sum(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                lp = np.log(total + l) - np.log(total.sum(axis=1) + l * V_s)[:, None]
            lp[V_s == 0] = 0.0  # a split keeping no word (log(0) there): its prior alone
            theta[:, k, :-1] = lp * kf
            theta[:, k, -1] = prior
        else:
            p = (total + l) / (n_k + 2 * l)[:, None]
            absent = log_absent(p, total, n_k, l) * kf
            theta[:, k, :-1] = np.log(p) * kf - absent
            theta[:, k, -1] = prior + absent.sum(axis=1)
    return theta


def text_errors(design: SparseDesign, theta: np.ndarray, train_idx: np.ndarray | None,
                ties: float = 0.0) -> np.ndarray:
    """The 0-1 error of each rule on the rows outside its training set (all rows when
    ``train_idx`` is None).

    ``theta`` (n, V + 1): a binary hyperplane, class 1 where its score is positive, a score
    within ``TIE_RTOL * ||theta||_1`` of 0 predicting ``ties`` (0: half an error).
    ``theta`` (n, K, V + 1): the class of highest score, a tie among t top classes (within
    ``TIE_RTOL * ||theta||_1`` of the top) counting (t - 1)/t when the true class is one of
    them and 1 otherwise. Returns (n,).
    """
    theta = np.asarray(theta, dtype=np.float64)
    if theta.ndim == 2 and ties == 0 and train_idx is not None:
        # the binary rule with ties counted half: compiled, no (n, N) matrix
        return heldout_errors(design.Z, design.y, theta, np.asarray(train_idx, dtype=np.int64))
    n = theta.shape[0]
    N = design.n_rows
    test = np.ones((n, N), dtype=bool)
    if train_idx is not None:
        test[np.arange(n)[:, None], np.asarray(train_idx, dtype=np.int64)] = False
    if theta.ndim == 2:
        tau = np.maximum(TIE_RTOL * np.abs(theta).sum(axis=1), 1e-300)  # (n,)
        z = (design.Z @ theta[:, :-1].T).T + theta[:, -1:]  # (n, N)
        pred = np.where(np.abs(z) <= tau[:, None], ties, np.sign(z))
        wrong = np.where(pred == 0, 0.5, (pred != design.sign[None, :]).astype(np.float64))
    else:
        _, K, P = theta.shape
        tau = np.maximum(TIE_RTOL * np.abs(theta).sum(axis=(1, 2)), 1e-300)  # (n,)
        z = (design.Z @ theta[:, :, :-1].reshape(n * K, P - 1).T).T.reshape(n, K, N)
        z += theta[:, :, -1:]
        top = z >= z.max(axis=1, keepdims=True) - tau[:, None, None]  # (n, K, N)
        t = top.sum(axis=1)  # (n, N)
        hit = np.take_along_axis(top, np.broadcast_to(design.y, (n, N))[:, None, :], axis=1)
        wrong = 1.0 - hit[:, 0, :] / t
    return (wrong * test).sum(axis=1) / test.sum(axis=1)


def _sparse_bytes(data: Dataset, lr: bool) -> tuple[float, float]:
    """A text fit's bytes per split: ``(fixed, per training row)``."""
    V, N, K = data.n_features, data.n_rows, data.n_classes
    fixed = WORD_BYTES * V + SCORE_BYTES * N * K
    if not lr:
        return fixed, 0.0
    nnz = float(data.X.nnz) / max(N, 1)
    return fixed, NNZ_BYTES * nnz + ROW_BYTES


class TextNB:
    """Multinomial or Bernoulli naive Bayes on a text task's counts (two classes)."""

    name = "nb"
    kinds = ("text",)
    options = NB_OPTIONS
    multiclass = False

    def finish(self, model: str, resolved: dict[str, Any]) -> None:
        pass

    def design(self, data: Dataset, opts: Mapping[str, Any]) -> str:
        return "text_presence" if opts["event"] == "bernoulli" else "text_counts"

    def width(self, data: Dataset, design: Design | SparseDesign) -> int:
        return design.n_params

    def planned(self, data: Dataset, opts: Mapping[str, Any]) -> tuple[int, int]:
        return 1, 0  # no dense stack: its memory is ``sparse_bytes``

    def sparse_bytes(self, data: Dataset, opts: Mapping[str, Any]) -> tuple[float, float] | None:
        return _sparse_bytes(data, lr=False)

    def fit(self, data: Dataset, design: Design | SparseDesign, idx: np.ndarray,
            opts: Mapping[str, Any], seeds: Sequence[np.random.SeedSequence] = (),
            budget: Budget = DEFAULT_BUDGET) -> Fit:
        theta = fit_nb_text(data.X, np.asarray(data.y, dtype=np.int64), idx,
                            keep_words(data, idx), opts["event"], opts["smoothing"])
        return Fit.closed_form(theta)

    def ties(self, opts: Mapping[str, Any]) -> float:
        return TIES[opts["ties"]]


class TextLR:
    """Logistic regression on a text task's counts (two classes): L2 with ``C`` on the
    sparse counts, or the paper's unpenalised rule on a shared, capped vocabulary."""

    name = "lr"
    kinds = ("text",)
    options = LR_OPTIONS
    multiclass = False

    def finish(self, model: str, resolved: dict[str, Any]) -> None:
        pass  # the options are completed by the dense entry of the same name

    def design(self, data: Dataset, opts: Mapping[str, Any]) -> str:
        if opts["C"] is not None:
            return "text_counts"
        cap = opts.get("max_features")
        return "text_shared" if cap is None else f"text_shared_{int(cap)}"

    def width(self, data: Dataset, design: Design | SparseDesign) -> int:
        return design.n_params

    def planned(self, data: Dataset, opts: Mapping[str, Any]) -> tuple[int, int]:
        if opts["C"] is not None:
            return 1, 0  # no dense stack: its memory is ``sparse_bytes``
        words = vocabulary_of(data, opts.get("max_features"))["max_features"]
        width = int(min(words or data.n_features, data.n_features)) + 1
        sampled = opts["separable"] == "sample"
        return width, int(opts["mcmc_chains"]) * int(opts["mcmc_draws"]) if sampled else 0

    def sparse_bytes(self, data: Dataset, opts: Mapping[str, Any]) -> tuple[float, float] | None:
        return _sparse_bytes(data, lr=True) if opts["C"] is not None else None

    def fit(self, data: Dataset, design: Design | SparseDesign, idx: np.ndarray,
            opts: Mapping[str, Any], seeds: Sequence[np.random.SeedSequence],
            budget: Budget = DEFAULT_BUDGET) -> Fit:
        if opts["C"] is None:
            assert isinstance(design, Design)
            return fit_lr(design, idx, opts, seeds, continuous=False, budget=budget)
        theta, n_iter, converged = fit_lr_text(
            data.X, np.asarray(data.y, dtype=np.int64), idx,
            keep_words(data, idx, opts.get("max_features")), opts["C"], tol=GRADIENT_TOL,
            max_iter=opts["max_iter"])
        S, P = theta.shape
        return Fit(theta, np.empty(0, dtype=np.int64), np.empty((0, 1, P)),
                   np.zeros(S, dtype=bool), n_iter, converged)

    def ties(self, opts: Mapping[str, Any]) -> float:
        return 0.0


class MulticlassTextNB(TextNB):
    """Naive Bayes of K > 2 classes on a text task's counts."""

    multiclass = True

    def sparse_bytes(self, data: Dataset, opts: Mapping[str, Any]) -> tuple[float, float] | None:
        fixed, per_row = _sparse_bytes(data, lr=False)  # and the (K, V + 1) weights a split
        return fixed + CLASS_WORD_BYTES * data.n_classes * data.n_features, per_row

    def fit(self, data: Dataset, design: Design | SparseDesign, idx: np.ndarray,
            opts: Mapping[str, Any], seeds: Sequence[np.random.SeedSequence] = (),
            budget: Budget = DEFAULT_BUDGET) -> Fit:
        theta = fit_nb_text_multi(data.X, data.y, idx, keep_words(data, idx), data.n_classes,
                                  opts["event"], opts["smoothing"])
        S, K, P = theta.shape
        return Fit(theta, np.empty(0, dtype=np.int64), np.empty((0, 1, K, P)),
                   np.zeros(S, dtype=bool), np.zeros(S, dtype=np.int64), np.ones(S, dtype=bool))


MULTICLASS_PAPER_LR = (
    "the paper's unpenalised lr is not run on a text task of more than two classes (its "
    "training sets are separable until m nears the vocabulary's size, and the separable-set "
    "rule would sample hyperplanes in K (V + 1) dimensions, 20 020 for 20 classes on 1000 "
    "words); set C: (e.g. C: 1), or use a two-class target (target: {positive: [...]})")


class MulticlassTextLR(TextLR):
    """Softmax logistic regression of K > 2 classes on a text task's counts, L2 with ``C``
    (``fit_lr_text_multi``); the paper's unpenalised rule is refused in one line."""

    multiclass = True

    def planned(self, data: Dataset, opts: Mapping[str, Any]) -> tuple[int, int]:
        if opts["C"] is None:
            raise ConfigError(f"{data.name}: {MULTICLASS_PAPER_LR}")
        return 1, 0  # no dense stack: its memory is ``sparse_bytes``

    def sparse_bytes(self, data: Dataset, opts: Mapping[str, Any]) -> tuple[float, float] | None:
        fixed, per_row = _sparse_bytes(data, lr=True)
        return fixed + CLASS_WORD_BYTES * data.n_classes * data.n_features, per_row

    def fit(self, data: Dataset, design: Design | SparseDesign, idx: np.ndarray,
            opts: Mapping[str, Any], seeds: Sequence[np.random.SeedSequence],
            budget: Budget = DEFAULT_BUDGET) -> Fit:
        if opts["C"] is None:
            raise ConfigError(f"{data.name}: {MULTICLASS_PAPER_LR}")
        theta, n_iter, converged = fit_lr_text_multi(
            data.X, np.asarray(data.y, dtype=np.int64), idx,
            keep_words(data, idx, opts.get("max_features")), data.n_classes, opts["C"],
            tol=GRADIENT_TOL, max_iter=opts["max_iter"])
        S, K, P = theta.shape
        return Fit(theta, np.empty(0, dtype=np.int64), np.empty((0, 1, K, P)),
                   np.zeros(S, dtype=bool), n_iter, converged)


def check_text_model(model: str, family: str, opts: Mapping[str, Any],
                     features: Mapping[str, Any]) -> None:
    """``ConfigError`` (one line) for a model a text task with these ``features:`` cannot
    fit: the paper's unpenalised LR on a vocabulary the splits do not share, or of more than
    ``PAPER_MAX_FEATURES`` words; naive Bayes without smoothing (a word unseen in a class
    would give every document holding it probability 0 there)."""
    if family == "nb" and opts.get("smoothing") == 0:
        raise ConfigError(
            f"model '{model}': smoothing: 0 (plain maximum likelihood) is for discrete and "
            "continuous tasks; on a text task every document would hold a word unseen in "
            "some class: give smoothing > 0 (e.g. 1)")
    if family != "lr" or opts.get("C") is not None:
        return
    cap = opts.get("max_features")
    if cap is None and features.get("vocabulary", "training") == "all":
        cap = features.get("max_features")
    if cap is None or cap > PAPER_MAX_FEATURES:
        raise ConfigError(
            f"model '{model}': the paper's unpenalised lr on a text task needs one vocabulary "
            f"shared by every split, of at most {PAPER_MAX_FEATURES} words (every training set "
            "is separable until m nears the vocabulary's size); set C: (e.g. C: 1), or, on a "
            "task of two classes, max_features: 200 on this model (or the task's features: "
            "{vocabulary: all, max_features: 200})")
