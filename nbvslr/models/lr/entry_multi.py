"""The K-class entry of ``lr`` (softmax logistic regression, ``lr.softmax``), for tasks of
K > 2 classes.

It answers to the same ``model:`` name and options table as the two-class entry
(``lr.entry``); a fit returns ``theta`` of shape (S, K, P), one weight vector per class, and
a split's rule predicts the class of highest score (``evaluate_multi`` scores it, ties as
stated there).

Unpenalised, softmax LR first tells each training set apart (``separation_multi.detect_multi``:
``overlap``, ``complete`` or ``quasi`` by (row, class) pairs, the splits table's
``separation``). An overlap set keeps Newton-CG's fit. A quasi set gets, by default
(``quasi: limit``), the vanishing-penalty limit: the multiclass max-margin direction of its
separated pairs (``Fit.directions``) and the symmetric fit of its overlap pairs, a test row
classified among the classes of its largest score under the direction by that fit
(``evaluate_multi.count_mistakes_multi_lex``); ``quasi: newton`` keeps Newton-CG's iterate
on all rows where it stops.

The paper's rule for separable training sets (``separable: sample``, the default), K
classes: when the training set is ``complete`` (an unpenalised fit certifies that it
classifies every training row correctly, or detection finds every pair separated),
the split's error is the mean test error of weight matrices drawn from the cone
``(w_y - w_k) . z > 0`` (every training row, every k != y) under the isotropic Gaussian on
the K weight vectors that sum to 0 (``lr.sum_zero``: no class is a reference, so the errors
do not depend on the order of the classes). In the (K - 1) P Helmert coordinates of that
subspace each constraint is linear (``(h_y - h_k) (x) z``), so the cone is ``{A phi > 0}``
with ``m (K - 1)`` rows. Exact HMC (the default) runs the binary sampler's steps on that
cone from the training rows alone (``lr.cone_hmc``: never the cone's rows nor their
``(m (K - 1))^2`` Gram matrix); hit-and-run (``mcmc_method``) draws from ``cone_rows``.
``separable: l2`` refits the split with ``C = C_separable`` instead, ``mle`` keeps the
capped Newton iterate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.models.budget import DEFAULT_BUDGET, Budget
from nbvslr.models.design import Design, level_directions
from nbvslr.models.family import Fit
from nbvslr.models.lr.cone_hmc import per_row, sample_cone_hmc
from nbvslr.models.lr.entry import LR_OPTIONS, LogisticRegression
from nbvslr.models.lr.hit_and_run import sample_separating
from nbvslr.models.lr.separation import COMPLETE, NOT_ASSESSED, QUASI
from nbvslr.models.lr.separation_multi import detect_multi
from nbvslr.models.lr.softmax import fit_softmax
from nbvslr.models.lr.sum_zero import basis, to_coordinates, to_weights
from nbvslr.models.nb.fit import rescale_to_training, theta_to_original
from nbvslr.splits import SplitSeeds


def cone_rows(Z1: np.ndarray, y: np.ndarray, n_classes: int) -> np.ndarray:
    """The rows of the separating cone of S training sets in the sum-zero coordinates.

    Parameters
    ----------
    Z1 : ndarray of shape (S, m, P)
    y : ndarray of shape (S, m)
        Labels ``0 .. K - 1``.

    Returns
    -------
    A : ndarray of shape (S, m (K - 1), (K - 1) P)
        Row (i, k) for each k != y_i (class-major within a training row) is
        ``(h_{y_i} - h_k) (x) z_i``, h_k row k of ``sum_zero.basis(K)``: ``A phi > 0`` iff
        the weight matrix ``sum_zero.to_weights(phi)`` classifies every training row
        correctly.
    """
    S, m, P = Z1.shape
    K = int(n_classes)
    y = np.asarray(y, dtype=np.int64)
    H = basis(K)  # (K, K - 1)
    diff = H[y][:, :, None, :] - H[None, None, :, :]  # (S, m, k, K - 1): h_y - h_k
    rows = diff[:, :, :, :, None] * Z1[:, :, None, None, :]  # (S, m, k, K - 1, P)
    keep = np.arange(K)[None, None, :] != y[:, :, None]  # (S, m, K): k != y
    return rows[keep].reshape(S, m * (K - 1), (K - 1) * P)


class SoftmaxRegression:
    """Softmax logistic regression on continuous and discrete tasks of K > 2 classes."""

    name = "lr"
    kinds = ("continuous", "discrete")
    options = LR_OPTIONS
    multiclass = True

    def finish(self, model: str, resolved: dict[str, Any]) -> None:
        pass  # the two-class entry completes the shared table's options

    #: The two-class entry: its design, and its memory plan before the class terms.
    binary = LogisticRegression()

    def design(self, data: Dataset, opts: Mapping[str, Any]) -> str:
        return self.binary.design(data, opts)

    def width(self, data: Dataset, design: Design) -> int:
        return design.n_params + 4 * data.n_classes  # the rows, scores, probabilities

    def ties(self, opts: Mapping[str, Any]) -> float:
        return 0.0

    def planned(self, data: Dataset, opts: Mapping[str, Any]) -> tuple[int, int]:
        width, kept = self.binary.planned(data, opts)
        n_params = width  # the widest design's columns, the intercept's included
        width += 4 * data.n_classes  # the fit's scores and probabilities
        if kept and opts["mcmc_method"] == "hmc":
            # the K-class sampler (cone_hmc): per training row its work arrays and its row
            # of the Gram matrix, as columns of the width, whose plan counts each row's
            # width about 3.5 times (a few copies of the stacks)
            width += -(-per_row(data.n_rows, data.n_classes, n_params) // 3)
        elif kept:
            # hit-and-run on the cone's m (K - 1) rows of (K - 1) P numbers each
            width += (data.n_classes - 1) ** 2 * width
        return width, kept

    def fit(self, data: Dataset, design: Design, idx: np.ndarray, opts: Mapping[str, Any],
            seeds: Sequence[np.random.SeedSequence] = (),
            budget: Budget = DEFAULT_BUDGET) -> Fit:
        """Fit the training rows ``idx`` (S, m): theta (S, K, P), the separable-set rule of
        the module docstring."""
        Z1 = design.rows(idx)  # (S, m, P)
        y = np.asarray(data.y)[idx]  # (S, m)
        K = data.n_classes
        scale = None
        if opts["rescale"] == "training" and data.kind == "continuous":
            U, lo, r = rescale_to_training(Z1[:, :, :-1])
            Z1 = np.concatenate([U, Z1[:, :, -1:]], axis=2)
            scale = (lo[:, None, :], r[:, None, :])
        C, rule = opts["C"], opts["separable"]
        stop = dict(tol=opts["tol"], max_iter=opts["max_iter"])
        S, P = Z1.shape[0], Z1.shape[2]
        none = np.empty(0, dtype=np.int64)
        if C is not None:  # penalised: the minimum exists, nothing to tell apart
            res = fit_softmax(Z1, y, K, C=C, **stop)
            theta = res.theta if scale is None else theta_to_original(res.theta, *scale)
            return Fit(theta, none, np.empty((0, 1, K, P)), res.separable, res.n_iter,
                       res.converged, np.full(S, NOT_ASSESSED, dtype=np.int8), none,
                       np.empty((0, K, P)))
        found = detect_multi(Z1, y, K, extra=level_directions(data, self.design(data, opts)),
                             **stop)
        code = found.code
        separable = code == COMPLETE
        theta, n_iter, converged = found.theta.copy(), found.n_iter.copy(), found.converged.copy()
        quasi = np.flatnonzero(code == QUASI)
        if rule == "mle" or (quasi.size and opts["quasi"] == "newton"):
            # Newton-CG's iterate on all rows, run on as the likelihood lets it (no stop at
            # a separating iterate under "mle"): what such sets got before they were told
            # apart
            redo = np.arange(S) if rule == "mle" else quasi
            res = fit_softmax(Z1[redo], y[redo], K, stop_when_separable=rule != "mle", **stop)
            keep = code[redo] != COMPLETE if rule != "mle" else np.ones(redo.size, dtype=bool)
            theta[redo[keep]] = res.theta[keep]
            n_iter[redo[keep]] = res.n_iter[keep]
            converged[redo[keep]] = res.converged[keep]
            quasi = none
        directions = found.direction[quasi]  # (q, K, P)
        converged[quasi] = False  # no maximum: a limit, not a converged fit
        todo = np.flatnonzero(separable) if rule != "mle" else none
        draws = np.empty((0, 1, K, P))
        if todo.size and rule == "sample":
            start = theta[todo]  # (s, K, P): Newton-CG's certified iterate, any form
            picked = seeds.take(todo) if isinstance(seeds, SplitSeeds) else [seeds[i] for i in todo]
            mcmc = dict(chains=opts["mcmc_chains"], draws=opts["mcmc_draws"],
                        burn_in=opts["mcmc_burn_in"], thin=opts["mcmc_thin"], budget=budget)
            if opts["mcmc_method"] == "hmc":  # from the rows, never the cone's Gram matrix
                draws = sample_cone_hmc(Z1[todo], y[todo], K, start, picked, **mcmc)
            else:
                A = cone_rows(Z1[todo], y[todo], K)  # (s, m (K - 1), (K - 1) P)
                phi = sample_separating(A, np.ones(A.shape[:2]), to_coordinates(start),
                                        picked, **mcmc)  # (s, n, (K - 1) P), unit norm
                draws = to_weights(phi, K)
            # draws: (s, n, K, P), summing to 0 over the classes
            converged[todo] = False
            if scale is not None:
                draws = theta_to_original(draws, scale[0][todo][:, None], scale[1][todo][:, None])
        elif todo.size and rule == "l2":
            refit = fit_softmax(Z1[todo], y[todo], K, C=opts["C_separable"], **stop)
            theta[todo] = refit.theta
            n_iter[todo] += refit.n_iter
            converged[todo] = refit.converged
        if scale is not None:
            theta = theta_to_original(theta, *scale)
            if quasi.size:
                directions = theta_to_original(directions, scale[0][quasi], scale[1][quasi])
        sampled = todo if rule == "sample" else none
        return Fit(theta, sampled, draws, separable, n_iter, converged, code, quasi, directions)
