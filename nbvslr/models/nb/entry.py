"""The ``nb`` entries: Gaussian naive Bayes on continuous tasks, categorical naive Bayes on
discrete ones, both at once on mixed ones (the fits and their mathematics:
``fit``). All take the one options table ``fit.NB_OPTIONS``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.models.budget import DEFAULT_BUDGET, Budget
from nbvslr.models.design import Design
from nbvslr.models.family import Fit
from nbvslr.models.nb.fit import NB_OPTIONS, fit_categorical_nb, fit_gaussian_nb

#: ``ties``: the predicted sign of a tied score (0: half an error).
TIES = {"half": 0.0, "positive": 1.0, "negative": -1.0}


class _NaiveBayes:
    """What both NB entries share: the options, the stacks, the tie rule."""

    name = "nb"
    kinds: tuple[str, ...] = ()
    options = NB_OPTIONS
    multiclass = False

    def finish(self, model: str, resolved: dict[str, Any]) -> None:
        pass

    def width(self, data: Dataset, design: Design) -> int:
        return max(design.n_params, data.n_features + 1)  # the design, or the stacked X

    def ties(self, opts: Mapping[str, Any]) -> float:
        return TIES[opts["ties"]]

    def planned(self, data: Dataset, opts: Mapping[str, Any]) -> tuple[int, int]:
        if data.kind == "discrete":
            return int(sum(data.n_values)) + 1, 0  # the full one-hot design
        if data.kind == "mixed":
            dc = data.n_continuous
            return (2 * dc if opts["variance"] == "class" else dc) + int(sum(data.n_values)) + 1, 0
        d = data.n_features
        return (2 * d + 1 if opts["variance"] == "class" else d + 1), 0  # [X, X**2] or X

    def fit(
        self,
        data: Dataset,
        design: Design,
        idx: np.ndarray,
        opts: Mapping[str, Any],
        seeds: Sequence[np.random.SeedSequence] = (),
        budget: Budget = DEFAULT_BUDGET,
    ) -> Fit:
        """The closed-form fit of the training rows ``idx`` (S, m): theta (S, D + 1)."""
        X = data.X[idx]  # (S, m, d)
        y = np.asarray(data.y)[idx]  # (S, m)
        return Fit.closed_form(self._theta(data, X, y, opts))

    def _theta(self, data: Dataset, X: np.ndarray, y: np.ndarray,
               opts: Mapping[str, Any]) -> np.ndarray:
        raise NotImplementedError


class GaussianNB(_NaiveBayes):
    """Gaussian NB: linear in ``x`` (one variance per feature) or in ``[x, x^2]``."""

    kinds = ("continuous",)

    def design(self, data: Dataset, opts: Mapping[str, Any]) -> str:
        return "x" if opts["variance"] == "shared" else "x_x2"

    def _theta(self, data: Dataset, X: np.ndarray, y: np.ndarray,
               opts: Mapping[str, Any]) -> np.ndarray:
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


class CategoricalNB(_NaiveBayes):
    """Categorical NB: linear in the full one-hot design."""

    kinds = ("discrete",)

    def design(self, data: Dataset, opts: Mapping[str, Any]) -> str:
        return "onehot"

    def _theta(self, data: Dataset, X: np.ndarray, y: np.ndarray,
               opts: Mapping[str, Any]) -> np.ndarray:
        prior = "uniform" if opts["prior"] == "uniform" else "empirical"
        return fit_categorical_nb(
            X, y, tuple(data.n_values), smoothing=opts["smoothing"], prior=prior
        )


class MixedNB(_NaiveBayes):
    """Naive Bayes on a mixed task: a Gaussian for each continuous column (as
    ``GaussianNB``) and a categorical for each discrete one (as ``CategoricalNB``).

    The features are independent given the class, so the log-odds are the sum of the
    Gaussian part's and the categorical part's, with the log prior ratio counted once::

        log p(1|x) / p(0|x) = log p(1)/p(0) + sum_j log N(x_j | mu_1j, v_j) / N(x_j | mu_0j, v_j)
                              + sum_k log p(x_k | 1) / p(x_k | 0)

    linear in ``[Xc, one-hot]`` (``variance: shared``) or ``[Xc, Xc**2, one-hot]``
    (``class``). The prior is the categorical part's (``uniform`` or else empirical); the
    Gaussian part is fitted with a uniform prior, so it adds none. ``rescale`` and the
    epsilon options apply to the continuous columns.
    """

    kinds = ("mixed",)

    def design(self, data: Dataset, opts: Mapping[str, Any]) -> str:
        return "x_onehot" if opts["variance"] == "shared" else "x_x2_onehot"

    def _theta(self, data: Dataset, X: np.ndarray, y: np.ndarray,
               opts: Mapping[str, Any]) -> np.ndarray:
        dc = data.n_continuous
        gauss = fit_gaussian_nb(
            X[:, :, :dc],
            y,
            smoothing=opts["smoothing"],
            variance=opts["variance"],
            var_smoothing=opts["var_smoothing"],
            var_floor=opts["var_floor"],
            prior="uniform",  # the prior is counted once, in the categorical part
            var_estimator=opts["var_estimator"],
            epsilon_form=opts["epsilon_form"],
            epsilon_mode=opts["epsilon_mode"],
            rescale=opts["rescale"],
        )  # (S, dc + 1) or (S, 2 dc + 1)
        prior = "uniform" if opts["prior"] == "uniform" else "empirical"
        categorical = fit_categorical_nb(
            X[:, :, dc:].astype(np.int64), y, tuple(data.n_values),
            smoothing=opts["smoothing"], prior=prior,
        )  # (S, K + 1)
        b = gauss[:, -1] + categorical[:, -1]  # (S,)
        return np.concatenate([gauss[:, :-1], categorical[:, :-1], b[:, None]], axis=1)
