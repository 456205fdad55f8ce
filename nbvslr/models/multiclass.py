"""The entries of tasks of K > 2 classes: ``nb`` (Gaussian and categorical naive Bayes,
``multiclass_nb``) and ``lr`` (softmax logistic regression, ``softmax``).

They answer to the same ``model:`` names and options tables as the two-class entries; a
fit returns ``theta`` of shape (S, K, P), one weight vector per class, and a split's rule
predicts the class of highest score (``evaluate_multi`` scores it, ties as stated there).

The paper's rule for separable training sets (``separable: sample``) is not implemented for
K > 2: an unpenalised fit that meets a training set it classifies perfectly stops with a
``ConfigError`` asking for ``C:`` or ``separable: l2`` (``l2`` refits those splits with
``C = C_separable``; ``mle`` keeps the capped Newton iterate).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.errors import ConfigError
from nbvslr.models.budget import DEFAULT_BUDGET, Budget
from nbvslr.models.design import Design
from nbvslr.models.family import Fit
from nbvslr.models.lr import _CODINGS, LR_OPTIONS
from nbvslr.models.multiclass_nb import fit_categorical_nb_multi, fit_gaussian_nb_multi
from nbvslr.models.naive_bayes import NB_OPTIONS, rescale_to_training, theta_to_original
from nbvslr.models.softmax import fit_softmax


def _fit(theta: np.ndarray, n_iter: np.ndarray | None = None,
         converged: np.ndarray | None = None, separable: np.ndarray | None = None) -> Fit:
    """A Fit of K-class rules theta (S, K, P), no sampled splits."""
    S, K, P = theta.shape
    return Fit(
        theta,
        np.empty(0, dtype=np.int64),
        np.empty((0, 1, K, P)),
        np.zeros(S, dtype=bool) if separable is None else separable,
        np.zeros(S, dtype=np.int64) if n_iter is None else n_iter,
        np.ones(S, dtype=bool) if converged is None else converged,
    )


class _MultiNB:
    """What both K-class NB entries share."""

    name = "nb"
    kinds: tuple[str, ...] = ()
    options = NB_OPTIONS
    multiclass = True

    def finish(self, model: str, resolved: dict[str, Any]) -> None:
        pass

    def width(self, data: Dataset, design: Design) -> int:
        return data.n_classes * max(design.n_params, data.n_features + 1)

    def ties(self, opts: Mapping[str, Any]) -> float:
        if opts["ties"] != "half":
            raise ConfigError(
                f"nb option ties = '{opts['ties']}' names a class of two; a task of more "
                "than two classes counts a tie among t classes as (t - 1)/t of an error: "
                "remove ties:"
            )
        return 0.0

    def planned(self, data: Dataset, opts: Mapping[str, Any]) -> tuple[int, int]:
        K = data.n_classes
        if data.kind == "discrete":
            return K * (int(sum(data.n_values)) + 1), 0
        d = data.n_features
        return K * (2 * d + 1 if opts["variance"] == "class" else d + 1), 0

    def fit(self, data: Dataset, design: Design, idx: np.ndarray, opts: Mapping[str, Any],
            seeds: Sequence[np.random.SeedSequence] = (),
            budget: Budget = DEFAULT_BUDGET) -> Fit:
        """The closed-form fit of the training rows ``idx`` (S, m): theta (S, K, D + 1)."""
        self.ties(opts)
        return _fit(self._theta(data, data.X[idx], np.asarray(data.y)[idx], opts))

    def _theta(self, data: Dataset, X: np.ndarray, y: np.ndarray,
               opts: Mapping[str, Any]) -> np.ndarray:
        raise NotImplementedError


class MulticlassGaussianNB(_MultiNB):
    """Gaussian NB of K classes: linear in ``x`` (shared variances) or ``[x, x^2]``."""

    kinds = ("continuous",)

    def design(self, data: Dataset, opts: Mapping[str, Any]) -> str:
        return "x" if opts["variance"] == "shared" else "x_x2"

    def _theta(self, data: Dataset, X: np.ndarray, y: np.ndarray,
               opts: Mapping[str, Any]) -> np.ndarray:
        return fit_gaussian_nb_multi(
            X, y, data.n_classes,
            smoothing=opts["smoothing"], variance=opts["variance"],
            var_smoothing=opts["var_smoothing"], var_floor=opts["var_floor"],
            prior="empirical" if opts["prior"] == "empirical" else "uniform",
            var_estimator=opts["var_estimator"], epsilon_form=opts["epsilon_form"],
            epsilon_mode=opts["epsilon_mode"], rescale=opts["rescale"],
        )


class MulticlassCategoricalNB(_MultiNB):
    """Categorical NB of K classes: linear in the full one-hot design."""

    kinds = ("discrete",)

    def design(self, data: Dataset, opts: Mapping[str, Any]) -> str:
        return "onehot"

    def _theta(self, data: Dataset, X: np.ndarray, y: np.ndarray,
               opts: Mapping[str, Any]) -> np.ndarray:
        return fit_categorical_nb_multi(
            X, y, data.n_classes, tuple(data.n_values), smoothing=opts["smoothing"],
            prior="uniform" if opts["prior"] == "uniform" else "empirical",
        )


class SoftmaxRegression:
    """Softmax logistic regression on continuous and discrete tasks of K > 2 classes."""

    name = "lr"
    kinds = ("continuous", "discrete")
    options = LR_OPTIONS
    multiclass = True

    def finish(self, model: str, resolved: dict[str, Any]) -> None:
        pass  # the two-class entry completes the shared table's options

    def design(self, data: Dataset, opts: Mapping[str, Any]) -> str:
        return _CODINGS[opts["coding"]] if data.kind == "discrete" else "x"

    def width(self, data: Dataset, design: Design) -> int:
        return design.n_params + 4 * data.n_classes  # the rows, scores, probabilities

    def ties(self, opts: Mapping[str, Any]) -> float:
        return 0.0

    def planned(self, data: Dataset, opts: Mapping[str, Any]) -> tuple[int, int]:
        width = int(sum(data.n_values)) + 1 if data.kind == "discrete" else data.n_features + 1
        return width + 4 * data.n_classes, 0

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
        res = fit_softmax(Z1, y, K, C=C, stop_when_separable=C is None and rule != "mle",
                          **stop)
        theta, n_iter, converged = res.theta.copy(), res.n_iter.copy(), res.converged.copy()
        todo = np.flatnonzero(res.separable)
        if todo.size and rule == "sample":
            raise ConfigError(
                f"{data.name}: {todo.size} training set(s) of m = {idx.shape[1]} are "
                f"separable and the paper's rule (separable: sample) is not available for "
                f"{K} classes; set C: (e.g. C: 1) or separable: l2 for lr"
            )
        if todo.size and rule == "l2":
            refit = fit_softmax(Z1[todo], y[todo], K, C=opts["C_separable"], **stop)
            theta[todo] = refit.theta
            n_iter[todo] += refit.n_iter
            converged[todo] = refit.converged
        if scale is not None:
            theta = theta_to_original(theta, *scale)
        return _fit(theta, n_iter, converged, res.separable)
