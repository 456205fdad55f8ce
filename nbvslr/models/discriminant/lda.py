"""The ``lda`` entries: linear discriminant analysis (Gaussian classes with one shared full
covariance) on continuous tasks of two classes or more, linear in ``x`` (the fit and its
mathematics: ``gaussian``)."""

from __future__ import annotations

from nbvslr.data.dataset import Dataset
from nbvslr.models.discriminant.gaussian import DiscriminantEntry, fit_lda, fit_options


class LinearDiscriminant(DiscriminantEntry):
    """LDA of two classes: the log-odds ``theta_1 - theta_0``, linear in ``x``."""

    name = "lda"
    design_name = "x"
    #: at least 48 splits a block: at m >> d (300 rows of 52 features) the cache budget
    #: alone gives blocks of 16, whose per-block steps then cost about a tenth of the fit
    #: (benchmarks/RESULTS.md, "LDA and QDA: against scikit-learn")
    min_block = 48

    def _covariances(self, data: Dataset) -> int:
        return 1

    def _theta(self, X, rows, y, K, opts):
        return fit_lda(X, y, K, rows=rows, **fit_options(opts))


class MulticlassLinearDiscriminant(LinearDiscriminant):
    """LDA of K > 2 classes: one score per class, linear in ``x``."""

    multiclass = True
