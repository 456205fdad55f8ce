"""What a model family is to the rest of nbvslr: its options and one entry per kind of task.

An *entry* (``Family``) answers to a config's ``model:`` name (``nb``, ``lr``) for some kinds
of task (``continuous``, ``discrete``): it names the design it is linear in, fits S training
sets at once, and says how a tied score counts. ``nbvslr.models.registry`` lists the entries;
``score_splits`` and ``score_full`` use only this interface.

An ``Option`` is one line of a name's options table: its default, its validator, and the
one-line descriptions that the config errors, ``docs/options.md`` and ``nbvslr run --help``
show. The table is the only place an option is declared.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.models.budget import Budget
from nbvslr.models.design import Design

GENERATIVE = "generative"
"""A family that models p(x, y) and classifies by Bayes' rule (naive Bayes, LDA, QDA)."""
DISCRIMINATIVE = "discriminative"
"""A family that models p(y | x) alone (logistic regression)."""


@dataclass(frozen=True)
class Option:
    """One option of a model name.

    Attributes
    ----------
    name : str
        The key a config sets.
    default : object
        Its value when the config does not set it (None: filled in later, see ``Family``).
    check : callable
        Returns the normalised value, or raises ValueError / TypeError for an invalid one.
    valid : str
        The valid values, as the error message ends: "it must be {valid}".
    meaning : str
        What it does, one line (Markdown).
    """

    name: str
    default: Any
    check: Callable[[Any], Any]
    valid: str
    meaning: str


def defaults(table: Sequence[Option]) -> dict[str, Any]:
    """``{option name: default}`` of an options table, in its order."""
    return {o.name: o.default for o in table}


# --------------------------------------------------------------------------- validators
def number(lo: float, *, strict: bool, none_ok: bool = False) -> Callable[[Any], Any]:
    """A validator for a real number ``> lo`` (strict) or ``>= lo``; returns a float."""

    def check(value: Any) -> Any:
        if value is None and none_ok:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError
        v = float(value)
        if v != v or v in (float("inf"), float("-inf")) or (v <= lo if strict else v < lo):
            raise ValueError
        return v

    return check


def integer(lo: int, hi: int, *, none_ok: bool = False) -> Callable[[Any], int | None]:
    """A validator for an integer in ``lo .. hi`` (a float with an integral value is
    accepted)."""

    def check(value: Any) -> int | None:
        if value is None and none_ok:
            return None
        if isinstance(value, bool):
            raise ValueError
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or not lo <= value <= hi:
            raise ValueError
        return int(value)

    return check


def choice(*options: str) -> Callable[[Any], str]:
    """A validator for one of ``options``."""

    def check(value: Any) -> str:
        if value not in options:
            raise ValueError
        return str(value)

    return check


def one_of(*options: str) -> str:
    """The ``valid`` text of a ``choice``: "one of 'a', 'b'"."""
    return "one of " + ", ".join(f"'{o}'" for o in options)


# --------------------------------------------------------------------------- fits
@dataclass(frozen=True)
class Fit:
    """The fits of S training sets.

    Attributes
    ----------
    theta : ndarray of shape (S, P)
        One hyperplane per split over the entry's design (intercept last); for an entry of
        K > 2 classes (S, K, P), one weight vector per class.
    sampled : ndarray of shape (s,), int64
        The splits whose error is the mean over hyperplanes drawn for them (LR's separable-set
        rule); empty for a family that draws none.
    draws : ndarray of shape (s, K, P)
        The K hyperplanes of each sampled split.
    separable : ndarray of shape (S,), bool
        The certificate that a training set is linearly separable (False where not asked).
    n_iter : ndarray of shape (S,), int64
        Iterations of the fit (0 for a closed form).
    converged : ndarray of shape (S,), bool
        Whether the fit met its stopping criterion (True for a closed form).
    separation : ndarray of shape (S,), int8, optional
        ``nbvslr.models.lr.separation``'s code of each training set (overlap, complete,
        quasi), or ``NOT_ASSESSED`` (-1, the default: a fit that does not ask).
    quasi : ndarray of shape (q,), int64, optional
        The splits classified lexicographically (LR's quasi-separation rule): a row by the
        sign of its score under ``directions`` where that score is not 0, else by ``theta``
        (K classes: among the classes of its largest score under ``directions``, by
        ``theta``; ``evaluate_multi.count_mistakes_multi_lex``).
    directions : ndarray of shape (q, P), optional
        The direction of each split of ``quasi``; (q, K, P) for K classes.
    """

    theta: np.ndarray
    sampled: np.ndarray
    draws: np.ndarray
    separable: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    separation: np.ndarray | None = None
    quasi: np.ndarray | None = None
    directions: np.ndarray | None = None

    @classmethod
    def closed_form(cls, theta: np.ndarray) -> Fit:
        """A fit without iterations or sampled hyperplanes (naive Bayes)."""
        S, P = theta.shape
        return cls(theta, np.empty(0, dtype=np.int64), np.empty((0, 1, P)),
                   np.zeros(S, dtype=bool), np.zeros(S, dtype=np.int64), np.ones(S, dtype=bool))


class Family(Protocol):
    """One registry entry: a model name fitted to one or more kinds of task."""

    #: The config's ``model:`` name this entry answers to (``nb``, ``lr``).
    name: str
    #: The task kinds (``Dataset.kind``) it fits.
    kinds: tuple[str, ...]
    #: The options of ``name`` (every entry of one name holds the same table).
    options: tuple[Option, ...]
    #: Whether it fits tasks of more than two classes (its ``theta`` is (S, K, P)); an entry
    #: without the attribute fits two classes.
    multiclass: bool

    def finish(self, model: str, resolved: dict[str, Any]) -> None:
        """Complete the validated options in place (defaults that depend on other options)
        and check their combinations; ``ConfigError`` naming ``model`` if one is invalid."""

    def design(self, data: Dataset, opts: Mapping[str, Any]) -> str:
        """The name of the design (``nbvslr.models.design.get_design``) it is linear in."""

    def width(self, data: Dataset, design: Design) -> int:
        """The widest row of the per-split stacks its fit holds (float64 values)."""

    def planned(self, data: Dataset, opts: Mapping[str, Any]) -> tuple[int, int]:
        """For the memory plan, before any design is built: the widest design row it may use
        (P, with the intercept) and the most hyperplanes it keeps per split."""

    def fit(
        self,
        data: Dataset,
        design: Design,
        idx: np.ndarray,
        opts: Mapping[str, Any],
        seeds: Sequence[np.random.SeedSequence],
        budget: Budget,
    ) -> Fit:
        """Fit the training rows ``idx`` (S, m); ``seeds`` are the splits' model seeds."""

    def ties(self, opts: Mapping[str, Any]) -> float:
        """The predicted sign of a score of exactly 0 (0: half an error)."""
