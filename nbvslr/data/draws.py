"""What the synthetic generators (``nbvslr.data.synthetic``, ``nbvslr.data.symmetric``) share:
their random streams, the normal CDF and the ``Dataset`` of their draws."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from nbvslr.data.dataset import Dataset


def phi(z: float) -> float:
    """Standard normal CDF."""
    return 0.5 * math.erfc(-z / math.sqrt(2))


def stream(seed: int, number: int) -> np.random.Generator:
    """The generator of stream ``number`` of a task's ``seed``: one stream per use (its
    parameters, its rows...), so that no use shifts another's draws."""
    return np.random.default_rng(np.random.SeedSequence([seed, number]))


def rescale_unit(X: np.ndarray) -> np.ndarray:
    """Each column of ``X`` (N, d) rescaled to [0, 1] by its minimum and maximum; a constant
    column (span 0, never the case for N >= 3 Gaussian draws) becomes 0."""
    low, high = X.min(axis=0), X.max(axis=0)
    return np.clip((X - low) / np.where(high > low, high - low, 1.0), 0.0, 1.0)


def drawn_dataset(name: str, title: str, X: np.ndarray, y: np.ndarray, kind: str,
                  levels: int, notes: Mapping[str, Any]) -> Dataset:
    """The ``Dataset`` of drawn rows ``X`` (N, d) and labels ``y`` (N,): continuous columns
    rescaled to [0, 1] over all rows, or discrete ones of ``levels`` levels each; the
    features named ``x0 .. x{d-1}``."""
    continuous = kind == "continuous"
    return Dataset(
        name=name,
        title=title,
        X=rescale_unit(X) if continuous else X,
        y=y,
        kind=kind,  # type: ignore[arg-type]
        n_values=() if continuous else (levels,) * X.shape[1],
        feature_names=tuple(f"x{j}" for j in range(X.shape[1])),
        notes=dict(notes),
    )
