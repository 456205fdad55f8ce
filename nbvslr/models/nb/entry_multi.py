"""The K-class entries of ``nb`` (Gaussian and categorical naive Bayes, ``nb.fit_multi``),
for tasks of K > 2 classes.

They answer to the same ``model:`` name and options table as the two-class entries
(``nb.entry``); a fit returns ``theta`` of shape (S, K, P), one weight vector per class, and
a split's rule predicts the class of highest score (``evaluate_multi`` scores it, ties as
stated there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.errors import ConfigError
from nbvslr.models.budget import DEFAULT_BUDGET, Budget
from nbvslr.models.design import Design
from nbvslr.models.family import Family, Fit
from nbvslr.models.lr.sum_zero import centred
from nbvslr.models.nb.entry import CategoricalNB, GaussianNB
from nbvslr.models.nb.fit import NB_OPTIONS
from nbvslr.models.nb.fit_multi import fit_categorical_nb_multi, fit_gaussian_nb_multi


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

    #: The two-class entry of the same kind: its design, and its memory plan per class.
    binary: Family

    def design(self, data: Dataset, opts: Mapping[str, Any]) -> str:
        return self.binary.design(data, opts)

    def planned(self, data: Dataset, opts: Mapping[str, Any]) -> tuple[int, int]:
        width, _ = self.binary.planned(data, opts)
        return data.n_classes * width, 0  # one hyperplane per class

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
    binary = GaussianNB()

    def _theta(self, data: Dataset, X: np.ndarray, y: np.ndarray,
               opts: Mapping[str, Any]) -> np.ndarray:
        """The K scores minus their mean over the classes (the same predictions): a feature
        constant at a non-zero value in the training rows has weights of about
        ``1 / epsilon`` that every class shares, which would widen the evaluation's tie
        band (``1e-10 * ||theta||_1``) past the scores' differences."""
        return centred(fit_gaussian_nb_multi(
            X, y, data.n_classes,
            smoothing=opts["smoothing"], variance=opts["variance"],
            var_smoothing=opts["var_smoothing"], var_floor=opts["var_floor"],
            prior="empirical" if opts["prior"] == "empirical" else "uniform",
            var_estimator=opts["var_estimator"], epsilon_form=opts["epsilon_form"],
            epsilon_mode=opts["epsilon_mode"], rescale=opts["rescale"],
        ))


class MulticlassCategoricalNB(_MultiNB):
    """Categorical NB of K classes: linear in the full one-hot design."""

    kinds = ("discrete",)
    binary = CategoricalNB()

    def _theta(self, data: Dataset, X: np.ndarray, y: np.ndarray,
               opts: Mapping[str, Any]) -> np.ndarray:
        return fit_categorical_nb_multi(
            X, y, data.n_classes, tuple(data.n_values), smoothing=opts["smoothing"],
            prior="uniform" if opts["prior"] == "uniform" else "empirical",
        )
