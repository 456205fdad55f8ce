"""``TextTask``: the documents of a text task and their classes (in a module of its own so
that every text source, ``text``, ``newsgroups`` and ``textfolder``, builds one without
importing the others)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TextTask:
    """A text task: its documents and classes.

    Attributes
    ----------
    name : str
    documents : tuple of str
        The N raw documents.
    y : ndarray of shape (N,), int64
        The class of each, ``0 .. K-1`` (two classes: ``1`` = the ``positive`` class).
    classes : tuple of str
        The K class labels as the source names them, ``classes[k]`` that of ``y == k``
        (two classes: ``(negative, positive)``).
    """

    name: str
    documents: tuple[str, ...]
    y: np.ndarray
    classes: tuple[str, ...]
