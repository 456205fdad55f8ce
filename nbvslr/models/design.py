"""Design matrices: every model here is linear in some design ``Z`` of a Dataset.

=====================  ==========================================  ======================
model                  design ``Z`` (N, D)                         name
=====================  ==========================================  ======================
continuous NB, LR      ``X``                                       ``"x"``
class-variance GNB     ``[X, X**2]``                               ``"x_x2"``
QDA                    ``[X, X_i X_j for i <= j]`` (the products   ``"x_xx"``
                       in ``numpy.triu_indices`` order)
categorical NB         full one-hot of every attribute             ``"onehot"``
discrete LR            one-hot minus one reference level per       ``"onehot_ref"``
                       attribute (its most frequent level)
discrete LR, ``full``  full one-hot                                ``"onehot"``
discrete LR,           one column per attribute: its level code    ``"ordinal"``
``ordinal``            divided by ``k_j - 1`` (0 when ``k_j = 1``)
mixed NB               ``[Xc, full one-hot]`` (``Xc``: the           ``"x_onehot"``
                       continuous columns)
mixed NB, ``class``    ``[Xc, Xc**2, full one-hot]``               ``"x_x2_onehot"``
mixed LR               ``[Xc]`` then the discrete columns coded     ``"x_onehot_ref"``,
                       as a discrete LR codes them                 ``"x_onehot"``,
                                                                   ``"x_ordinal"``
text NB, LR with ``C``  the counts (N, V), held sparse             ``"text_counts"``
Bernoulli NB           word presence ``1[x > 0]``, held sparse    ``"text_presence"``
text LR, no ``C``      the counts of the task's shared vocabulary  ``"text_shared"``,
                       (``vocabulary: all``, ``max_features``) or  ``"text_shared_<cap>"``
                       of the model's own ``max_features``, dense
=====================  ==========================================  ======================

A linear model is ``theta = (w, b)`` of length ``D + 1`` with the intercept LAST; its score
on row ``i`` is ``Z1[i] @ theta`` with ``Z1 = [Z, 1]``, and it predicts class 1 when the
score is positive.

Designs are built once per Dataset and cached (keyed by the Dataset object, which hashes by
identity), together with the de-duplicated rows used for evaluation.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from nbvslr.data.dataset import Dataset
from nbvslr.data.text import split_vocabulary


@dataclass(frozen=True, eq=False)
class Design:
    """One design of one Dataset, held as its distinct rows.

    Attributes
    ----------
    sign : ndarray of shape (N,)
        ``2 y - 1`` as float64 (+1 for class 1, -1 for class 0).
    unique_Z1 : ndarray of shape (U, D + 1)
        The distinct rows of ``Z1`` (C-contiguous float64).
    row_to_unique : ndarray of shape (N,)
        ``Z1[i] == unique_Z1[row_to_unique[i]]``.
    unique_weight : ndarray of shape (U,)
        ``n1 - n0`` over the rows equal to each distinct row (float64).

    ``Z1`` itself, the design with a trailing column of ones (N, D + 1), is not kept: a
    one-hot design of adult has 48,842 rows but 11,382 distinct ones, so the N rows would
    hold 4x the memory (40 MB per design, in every worker). ``rows(idx)`` gathers rows by
    index, the same numbers as ``Z1[idx]``.
    """

    sign: np.ndarray
    unique_Z1: np.ndarray
    row_to_unique: np.ndarray
    unique_weight: np.ndarray

    def rows(self, idx: np.ndarray) -> np.ndarray:
        """``Z1[idx]``: shape ``idx.shape + (D + 1,)``, float64."""
        return self.unique_Z1[self.row_to_unique[idx]]

    @property
    def Z1(self) -> np.ndarray:  # noqa: N802 (the module's name for the matrix)
        """All N rows, ``[Z, 1]`` (N, D + 1), made on each read."""
        return self.rows(np.arange(self.n_rows))

    @property
    def n_rows(self) -> int:
        return int(self.row_to_unique.shape[0])

    @property
    def n_params(self) -> int:
        """``D + 1``: features plus intercept."""
        return int(self.unique_Z1.shape[1])


@dataclass(frozen=True, eq=False)
class SparseDesign:
    """A text design: the task's (N, V) counts or word presence, held sparse.

    Attributes
    ----------
    Z : scipy.sparse.csr_matrix of shape (N, V)
    sign : ndarray of shape (N,)
        ``2 y - 1`` (binary tasks).
    y : ndarray of shape (N,), int64
        The class codes (``0 .. K - 1``).

    A hyperplane is ``theta = (w, b)`` of length ``V + 1`` (intercept last) whose score on
    row ``i`` is ``Z[i] @ w + b``; its weights of the words a split does not keep are 0.
    """

    Z: sp.csr_matrix
    sign: np.ndarray
    y: np.ndarray

    @property
    def n_rows(self) -> int:
        return int(self.Z.shape[0])

    @property
    def n_params(self) -> int:
        """``V + 1``: the words plus the intercept."""
        return int(self.Z.shape[1]) + 1


def shared_vocabulary(data: Dataset, cap: int | None = None) -> np.ndarray:
    """The word columns every split of a text task keeps when its vocabulary is the task's
    (``vocabulary: all``), or the ``cap`` most frequent words over all documents: indices
    into its V words, sorted."""
    opts = dict(data.text_options)
    if cap is None and opts.get("vocabulary") != "all":
        raise ValueError("a shared vocabulary needs vocabulary: all or a cap")
    keep = split_vocabulary(data.X, np.zeros((1, 1), dtype=np.int64), "all",
                            opts.get("min_df", 1), cap or opts.get("max_features"))
    return np.flatnonzero(keep[0])


_CACHE: weakref.WeakKeyDictionary[Dataset, dict[str, Design | SparseDesign]] = (
    weakref.WeakKeyDictionary())


def onehot_offsets(n_values: tuple[int, ...]) -> np.ndarray:
    """Column of level 0 of each attribute in the full one-hot design, shape (d,)."""
    return np.concatenate([[0], np.cumsum(n_values)[:-1]]).astype(np.int64)


def reference_levels(data: Dataset) -> np.ndarray:
    """The reference (dropped) level of each attribute: its most frequent level, shape (d,).

    Only the attribute values are used, never the labels; ties go to the lowest code.
    """
    codes = data.codes()  # (N, d) of a discrete task, its discrete columns of a mixed one
    levels = [np.argmax(np.bincount(codes[:, j], minlength=k)) for j, k in enumerate(data.n_values)]
    return np.array(levels, dtype=np.int64)


def _onehot(codes: np.ndarray, n_values: tuple[int, ...], reference: np.ndarray | None):
    """Indicators of every level of ``codes`` (R, d), minus the ``reference`` level of each
    attribute when given: shape (R, sum k_j) or (R, sum k_j - d)."""
    offsets = onehot_offsets(n_values)
    Z = np.zeros((codes.shape[0], int(sum(n_values))), dtype=np.float64)  # (R, sum k_j)
    np.put_along_axis(Z, codes + offsets, 1.0, axis=1)
    if reference is not None:
        keep = np.ones(Z.shape[1], dtype=bool)
        keep[offsets + reference] = False
        Z = Z[:, keep]
    return Z


def _ordinal(codes: np.ndarray, n_values: tuple[int, ...]) -> np.ndarray:
    k = np.asarray(n_values, dtype=np.float64)  # (d,)
    return codes.astype(np.float64) / np.maximum(k - 1.0, 1.0)  # guard: one level is all 0


def _discrete(data: Dataset, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A discrete design from the distinct code rows: ``(Z, row)`` with ``Z`` (R, D) the
    design of the R distinct rows of ``data.X`` and ``row`` (N,) each row's index there.

    Each design is one-to-one in the codes, so its distinct rows are those of the R
    distinct code rows; the N rows are never built (adult: 48,842 rows, 11,382 distinct).
    """
    codes, row = np.unique(np.asarray(data.X, dtype=np.int64), axis=0, return_inverse=True)
    n_values = tuple(int(k) for k in data.n_values)
    if name == "ordinal":
        return _ordinal(codes, n_values), row.reshape(-1)
    reference = reference_levels(data) if name == "onehot_ref" else None
    return _onehot(codes, n_values, reference), row.reshape(-1)


def level_directions(data: Dataset, name: str) -> np.ndarray | None:
    """The directions (P, d) whose score on a row of design ``name`` is the indicator of
    each attribute's reference level, for the codings that drop it (``onehot_ref``,
    ``x_onehot_ref``): ``e_intercept`` minus the columns of the attribute's other levels.
    None for any other design (its levels are columns already, or it has none)."""
    if name not in ("onehot_ref", "x_onehot_ref"):
        return None
    n_values = tuple(int(k) for k in data.n_values)
    first = data.n_continuous if name == "x_onehot_ref" else 0
    P = first + int(sum(n_values)) - len(n_values) + 1
    out = np.zeros((P, len(n_values)))
    out[-1] = 1.0
    start = first
    for j, k in enumerate(n_values):
        out[start : start + k - 1, j] = -1.0
        start += k - 1
    return out


MIXED = ("x_onehot", "x_x2_onehot", "x_onehot_ref", "x_ordinal")


def _mixed(data: Dataset, name: str) -> np.ndarray:
    """A mixed task's design (N, D): its continuous columns ``Xc`` (and ``Xc**2`` for
    ``x_x2_onehot``), then its discrete columns coded as the name's suffix says."""
    Xc = np.asarray(data.X[:, : data.n_continuous], dtype=np.float64)  # (N, dc)
    codes, n_values = data.codes(), tuple(int(k) for k in data.n_values)  # (N, dd)
    coding = name.removeprefix("x_").removeprefix("x2_")
    if coding == "ordinal":
        Zd = _ordinal(codes, n_values)
    else:
        Zd = _onehot(codes, n_values, reference_levels(data) if coding == "onehot_ref" else None)
    parts = [Xc, Xc * Xc] if name == "x_x2_onehot" else [Xc]
    return np.concatenate([*parts, Zd], axis=1)


TEXT = ("text_counts", "text_presence")


def _build_text(data: Dataset, name: str) -> SparseDesign:
    if data.kind != "text":
        raise ValueError(f"design {name!r} needs a text dataset")
    Z = data.X
    if name == "text_presence":
        Z = Z.copy()
        Z.data[:] = 1.0
    y = np.asarray(data.y, dtype=np.int64)
    return SparseDesign(Z=Z, sign=2.0 * y - 1.0, y=y)


def _build(data: Dataset, name: str) -> Design:
    if name.startswith("text_shared"):  # text_shared, or text_shared_<cap>
        if data.kind != "text":
            raise ValueError(f"design {name!r} needs a text dataset")
        cap = name.removeprefix("text_shared").removeprefix("_")
        cols = shared_vocabulary(data, int(cap) if cap else None)
        Z = np.asarray(data.X[:, cols].toarray(), dtype=np.float64)
        first = np.arange(Z.shape[0])
    elif name in MIXED:
        if data.kind != "mixed":
            raise ValueError(f"design {name!r} needs a mixed dataset")
        Z = _mixed(data, name)
        first = np.arange(Z.shape[0])
    elif name in ("ordinal", "onehot", "onehot_ref"):
        if data.kind != "discrete":
            raise ValueError(f"design {name!r} needs a discrete dataset")
        Z, first = _discrete(data, name)  # (R, D), (N,)
    elif name in ("x", "x_x2", "x_xx"):
        if data.kind != "continuous":
            raise ValueError(f"design {name!r} needs a continuous dataset")
        X = np.asarray(data.X, dtype=np.float64)
        if name == "x_xx":
            i, j = np.triu_indices(X.shape[1])
            Z = np.concatenate([X, X[:, i] * X[:, j]], axis=1)
        else:
            Z = X if name == "x" else np.concatenate([X, X * X], axis=1)
        first = np.arange(Z.shape[0])
    else:
        raise ValueError(f"unknown design {name!r}")
    Z1 = np.ascontiguousarray(np.concatenate([Z, np.ones((Z.shape[0], 1))], axis=1))
    sign = 2.0 * np.asarray(data.y, dtype=np.float64) - 1.0  # (N,)
    # the distinct rows in np.unique's order, whatever rows Z1 started from
    unique_Z1, inverse = np.unique(Z1, axis=0, return_inverse=True)
    row_to_unique = inverse.reshape(-1).astype(np.int64)[first]  # (N,)
    unique_weight = np.bincount(row_to_unique, weights=sign, minlength=unique_Z1.shape[0])
    return Design(
        sign=sign,
        unique_Z1=np.ascontiguousarray(unique_Z1),
        row_to_unique=row_to_unique,
        unique_weight=unique_weight,
    )


def get_design(data: Dataset, name: str) -> Design | SparseDesign:
    """The design ``name`` of ``data``, built on first use and cached with the Dataset (a
    ``SparseDesign`` for ``TEXT``'s names)."""
    per_data = _CACHE.setdefault(data, {})
    if name not in per_data:
        per_data[name] = _build_text(data, name) if name in TEXT else _build(data, name)
    return per_data[name]
