"""What a config says about one model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ModelSpec:
    """A named model variant from a config's ``models:`` mapping.

    Attributes
    ----------
    name : str
        The config's key (``nb``, ``lr``, ``lr_l2``...): the ``model`` column of results.
    family : str
        The config's ``model:`` name, ``nb`` (naive Bayes: Gaussian for continuous tasks,
        categorical for discrete ones) or ``lr`` (logistic regression); with the task's kind
        it picks the entry of ``nbvslr.models.registry``.
    options : mapping
        Family options, resolved with their defaults by ``nbvslr.models.resolve_options``.
    """

    name: str
    family: str
    options: Mapping[str, Any] = field(default_factory=dict)
