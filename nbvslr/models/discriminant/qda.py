"""The ``qda`` entries: quadratic discriminant analysis (Gaussian classes, one full
covariance each) on continuous tasks of two classes or more, linear in ``[x, x_i x_j]`` (the
fit and its mathematics: ``gaussian``)."""

from __future__ import annotations

from nbvslr.data.dataset import Dataset
from nbvslr.models.discriminant.gaussian import DiscriminantEntry, fit_options, fit_qda


class QuadraticDiscriminant(DiscriminantEntry):
    """QDA of two classes: the log-odds, linear in ``[x, x_i x_j]`` (design ``x_xx``)."""

    name = "qda"
    design_name = "x_xx"

    def _covariances(self, data: Dataset) -> int:
        return max(data.n_classes, 2)

    def _theta(self, X, rows, y, K, opts):
        return fit_qda(X, y, K, rows=rows, **fit_options(opts))


class MulticlassQuadraticDiscriminant(QuadraticDiscriminant):
    """QDA of K > 2 classes: one score per class, linear in ``[x, x_i x_j]``."""

    multiclass = True
