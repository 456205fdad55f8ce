"""The objects the data layer hands to the rest of the program."""

from __future__ import annotations

import math
import numbers
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import platformdirs

from nbvslr.errors import ConfigError

if TYPE_CHECKING:  # numpy is imported where it is used: listing the tasks needs none
    import numpy as np

Kind = Literal["continuous", "discrete", "mixed", "text"]


@dataclass(frozen=True, eq=False)
class Dataset:
    """A classification task of K >= 2 classes, ready for the models.

    Attributes
    ----------
    name : str
        Task name (``pima``, ``adult-discrete``, or a user's inline name).
    title : str
        Panel title (as in the paper for the 15 built-in tasks).
    X : ndarray of shape (N, d)
        ``kind == "continuous"``: float64 rescaled to [0, 1].
        ``kind == "discrete"``: int64 level codes, column j in ``0 .. n_values[j] - 1``.
        ``kind == "mixed"``: float64, the ``n_continuous`` continuous columns first (in
        [0, 1]), then the discrete ones as level codes (whole numbers), column
        ``n_continuous + j`` in ``0 .. n_values[j] - 1``.
        ``kind == "text"``: a ``scipy.sparse`` csr matrix (N, V) of word counts, float64
        (``nbvslr.data.text``).
    y : ndarray of shape (N,)
        int8 labels: in {0, 1} for a binary task (1 is the positive class), in
        ``0 .. K - 1`` for a task of K > 2 classes (the codes of ``classes``).
    kind : {"continuous", "discrete", "mixed", "text"}
    n_values : tuple of int
        Discrete: the number of levels of each column (``len == d``). Continuous: ``()``.
        Mixed: the number of levels of each discrete column (``len == d - n_continuous``).
    feature_names : tuple of str
    sizes : tuple of int or None
        The paper's m-grid for a built-in task, else None.
    x_range : tuple of float or None
        The paper's x-axis range for a built-in task, else None.
    notes : mapping
        The recipe's resolved choices and provenance, recorded in ``run.json``.
    classes : tuple of str
        A task of K > 2 classes: the class values, in the order of their codes
        ``0 .. K - 1``. A binary task: ``()`` (its classes are 0 and 1, as always).
    text_options : mapping
        A text task: its vocabulary options (``vocabulary``, ``min_df``, ``max_features``,
        ``nbvslr.data.text.check_text_options``), applied to each split's training set by
        every fit. Empty for the other kinds.

    ``eq=False`` keeps identity hashing, so a Dataset can key a cache of design matrices.
    """

    name: str
    title: str
    X: np.ndarray
    y: np.ndarray
    kind: Kind
    n_values: tuple[int, ...] = ()
    feature_names: tuple[str, ...] = ()
    sizes: tuple[int, ...] | None = None
    x_range: tuple[float, float] | None = None
    notes: Mapping[str, Any] = field(default_factory=dict)
    classes: tuple[str, ...] = ()
    text_options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_classes(self) -> int:
        """K: the number of classes (2 for a binary task)."""
        return len(self.classes) if self.classes else 2

    @property
    def multiclass(self) -> bool:
        """Whether the task has more than two classes."""
        return self.n_classes > 2

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_positive(self) -> int:
        """Rows of class 1 (a binary task's positives)."""
        import numpy as np

        return int(np.count_nonzero(self.y == 1))

    @property
    def n_continuous(self) -> int:
        """The continuous columns, first in ``X``: all of them, none, or for a mixed task
        those before the discrete ones."""
        if self.kind == "continuous":
            return self.n_features
        if self.kind in ("discrete", "text"):
            return 0
        return self.n_features - len(self.n_values)

    def codes(self) -> np.ndarray:
        """The level codes of the discrete columns, int64 of shape (N, d - n_continuous)."""
        import numpy as np

        return np.asarray(self.X[:, self.n_continuous:], dtype=np.int64)


@dataclass(frozen=True)
class TaskSpec:
    """What a config says about one task, before any data is read.

    A built-in task is ``TaskSpec(name="pima")`` with optional recipe ``overrides``; a
    built-in text task (``TaskSpec(name="sms-spam")``) takes text ``features`` instead.
    An inline task has ``source`` (``{"csv": path}``, ``{"uci": id}`` or
    ``{"synthetic": {...}}``), ``target`` (``{"column": ..., "positive": [...]}``, or
    ``classes: [...]`` / neither for a task of every class of the column) and
    ``features`` (``{"kind": ..., "columns": [...]}`` or ``{"drop": [...]}``).

    ``parsed``: the task's typed spec, the frozen ``Spec`` of the source module that reads
    it (``nbvslr.data.registry``: by its source's key, or by its name for a built-in task),
    set once when the config is read; ``None`` for a task not parsed yet (``load_task``
    parses it then).
    """

    name: str
    source: Mapping[str, Any] | None = None
    target: Mapping[str, Any] | None = None
    features: Mapping[str, Any] | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    parsed: Any = field(default=None, compare=False, repr=False)


def default_cache_dir() -> Path:
    """The user's cache folder for nbvslr, by the platform's convention (platformdirs):
    ``$XDG_CACHE_HOME/nbvslr`` or ``~/.cache/nbvslr`` on Linux, ``~/Library/Caches/nbvslr`` on
    macOS, ``%LOCALAPPDATA%\\nbvslr\\Cache`` on Windows."""
    return Path(platformdirs.user_cache_dir("nbvslr", appauthor=False))


@dataclass(frozen=True)
class DataSettings:
    """Where bytes come from: the cache, the files shipped with nbvslr (unless
    ``shipped=False``), a mirror (a local folder, or an http(s) URL of a folder laid out the
    same way, kept as a ``str``), or a download.

    ``max_download``: the largest file of a dataset of no known size (an OpenML dataset's)
    downloaded, in MiB (``nbvslr run --max-download``); a larger one is refused, before its
    body is read when the server announces its length. A built-in task's files, of known
    sha256, are bounded by ``nbvslr.data.sources.MAX_DOWNLOAD`` instead."""

    cache_dir: Path = field(default_factory=default_cache_dir)
    mirror: Path | str | None = None
    download: bool = True
    timeout: float = 30.0
    shipped: bool = True
    max_download: float = 64.0

    def __post_init__(self) -> None:
        for name in ("timeout", "max_download"):
            problem = setting_problem(name, getattr(self, name))
            if problem is not None:
                raise ConfigError(f"DataSettings({name}={getattr(self, name)!r}): {problem}")


def setting_problem(name: str, value: object) -> str | None:
    """Why ``value`` cannot be ``DataSettings``'s ``timeout`` (seconds: a finite number more
    than 0, at most ``threading.TIMEOUT_MAX``, the longest wait a thread can be given) or
    ``max_download`` (MiB: a finite number more than 0), with an example; None when it can.
    An infinite or NaN value would reach the waits and the size check as a traceback."""
    unit, example = ("seconds", "30") if name == "timeout" else ("MiB", "64")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return f"must be a number of {unit}, e.g. {example}"
    if not math.isfinite(value) or value <= 0:
        return f"must be a finite number of {unit}, more than 0; e.g. {example}"
    if name == "timeout" and value > threading.TIMEOUT_MAX:
        return (f"must be at most {threading.TIMEOUT_MAX:.0f} seconds (the longest wait this "
                f"platform allows); e.g. {example}")
    return None
