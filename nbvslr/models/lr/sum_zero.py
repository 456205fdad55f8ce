"""The sum-zero coordinates of K weight vectors: the K-class separable-set rule's space.

A K-class linear rule predicts ``argmax_k w_k . z``; adding one vector to every ``w_k``
changes no prediction, so the rules are the K weight vectors up to that shift, and every
rule has one representative with ``sum_k w_k = 0``. The paper's rule for a separable
training set draws a rule from the separating cone ``(w_y - w_k) . z_i > 0`` under the
isotropic Gaussian on that sum-zero subspace of ``R^{K P}``: the Gaussian on all K weight
vectors, ``N(0, I_{K P})``, with its part along the shift removed. Nothing in it names a
class, so relabelling the classes relabels the draws and leaves the law of the errors as
it was. (Pinning one class's weights at 0, the reference-class form of the unpenalised
fit, does not: the Gaussian on the other K - 1 vectors favours the pinned class.)

Coordinates: the columns of the Helmert matrix ``H`` (K, K - 1) are an orthonormal basis
of the sum-zero vectors of ``R^K`` (column j: ``-1/sqrt((j+1)(j+2))`` for classes ``0 .. j``,
``(j+1)/sqrt((j+1)(j+2))`` for class j + 1, 0 after). ``W = H phi`` maps the (K - 1) P
coordinates ``phi`` one to one onto the sum-zero weight matrices and keeps norms, so the
standard Gaussian on ``phi`` is the isotropic one on the subspace, and each cone
constraint stays linear: ``(h_y - h_k) (x) z`` with ``h_k`` row k of H. Any orthonormal basis
gives the same law; this one's first column ``(-1, 1)/sqrt(2)`` makes K = 2 the binary rule
in its own coordinates: ``w_1 - w_0 = sqrt(2) phi``, and the walls ``(w_1 - w_0) . z`` are the
binary sampler's, scaled by ``sqrt(2)``.
"""

from __future__ import annotations

import numpy as np


def basis(n_classes: int) -> np.ndarray:
    """The Helmert basis H, shape (K, K - 1): orthonormal columns, each summing to 0."""
    K = int(n_classes)
    H = np.zeros((K, K - 1))
    for j in range(K - 1):
        norm = np.sqrt((j + 1.0) * (j + 2.0))
        H[: j + 1, j] = -1.0 / norm
        H[j + 1, j] = (j + 1.0) / norm
    return H


def to_weights(phi: np.ndarray, n_classes: int) -> np.ndarray:
    """The weight matrices ``W = H phi`` of coordinates phi (..., (K - 1) P), shape
    (..., K, P), summing to 0 over the classes."""
    K = int(n_classes)
    phi = np.asarray(phi, dtype=np.float64)
    blocks = phi.reshape(phi.shape[:-1] + (K - 1, phi.shape[-1] // (K - 1)))
    return np.einsum("kj,...jp->...kp", basis(K), blocks)


def to_coordinates(W: np.ndarray) -> np.ndarray:
    """The coordinates ``H^T W`` (..., (K - 1) P) of weight matrices W (..., K, P): those of
    W's sum-zero representative (the same rule)."""
    W = np.asarray(W, dtype=np.float64)
    K = W.shape[-2]
    phi = np.einsum("kj,...kp->...jp", basis(K), W)
    return phi.reshape(W.shape[:-2] + ((K - 1) * W.shape[-1],))


def centred(W: np.ndarray) -> np.ndarray:
    """W (..., K, P) minus its mean over the classes: the sum-zero matrix of the same rule."""
    W = np.asarray(W, dtype=np.float64)
    return W - W.mean(axis=-2, keepdims=True)
