"""The Python API: a config or a DataFrame in, DataFrames and figures out.

``run`` runs an experiment as ``nbvslr run`` does (the same functions: ``nbvslr.config``,
``nbvslr.runner``), writing nothing unless given a folder; ``load`` reads a results folder
back; both return ``Results``, whose tables are those of the files, whose ``plot`` is the
drawing of ``nbvslr plot`` and whose ``report`` is the table of ``nbvslr report``. ``Task``
makes an in-memory task for a config dict. docs/api.md has a worked example and every
public name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
import pandas as pd

from nbvslr import results
from nbvslr.analysis import crossovers
from nbvslr.analysis.crossovers import DEFAULT_N_BOOT, task_crossovers
from nbvslr.analysis.fidelity import panel_order
from nbvslr.analysis.metrics import for_metric, metric_of, whole_of
from nbvslr.analysis.stats import task_paired, task_pairs
from nbvslr.config import COMMAND_LINE, Config, SettingNames, load_config, parse_config
from nbvslr.config.catalog import resolve_config
from nbvslr.data.dataset import DataSettings
from nbvslr.data.frame import Frame
from nbvslr.errors import ConfigError, ResultsError, did_you_mean, integer_setting
from nbvslr.results.files import read_csv_bytes, table_bytes
from nbvslr.results.layout import metrics_of, split_columns
from nbvslr.results.read import TaskResults
from nbvslr.runner import run_tasks
from nbvslr.runner.outputs import Written, task_tables, write_tables
from nbvslr.runner.progress import NoProgress, NotebookProgress, Progress

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "CROSSOVER_COLUMNS", "EXTRAPOLATION_COLUMNS", "PREDICTION_COLUMNS", "Results", "Task",
    "check_out", "load", "read_config", "run",
]

CROSSOVER_COLUMNS = ("task", "model_a", "model_b", *crossovers.CROSSOVER_COLUMNS)
"""Columns of ``Results.crossovers``: one row per task and compared pair (a, b); the same
crossover columns as ``nbvslr report --format csv``."""

EXTRAPOLATION_COLUMNS = (
    "task", "model", "family", "asymptote", "asymptote_low", "asymptote_high", "all_rows",
    "pair", "crossover", "crossover_low", "crossover_high", "horizon", "last_m", "reason",
)
"""Columns of ``Results.extrapolation()``: one row per task and model of its first pair
(``reason`` empty), or one row of a task whose curves are not fitted (``reason`` why)."""

PREDICTION_COLUMNS = (
    "task", "model", "m", "predicted", "predicted_low", "predicted_high", "within_reach",
    "reason",
)
"""Columns of ``Results.extrapolation(at=[...])``: one row per task, model and m (``reason``
empty), or one row of a task whose curves are not fitted (``reason`` why)."""

Kind = Literal["continuous", "discrete", "mixed", "text"]


def _names(value: str | Sequence[Any] | None) -> tuple[str, ...] | None:
    """Column names as given to ``Task``: None, one name (a string is one column, never
    its characters) or a sequence of names."""
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    return tuple(map(str, value))


@dataclass(frozen=True)
class Task:
    """An in-memory task for a config dict: ``{"tasks": [task, "pima"], ...}``.

    Made by ``Task.from_frame`` or ``Task.from_arrays``; the table follows the rules of a
    CSV task (docs/config.md): the positive class, the kind of the features, missing values
    (``missing``: ``error``, ``drop`` or ``level``), [0, 1] scaling or discrete levels.
    ``Task.from_openml`` names an OpenML dataset instead, read when the task runs.
    """

    name: str
    frame: Frame | None
    target: str | None
    positive: tuple[str, ...] | None = None
    kind: Kind | None = None
    columns: tuple[str, ...] | None = None
    missing: str = "error"
    continuous: tuple[str, ...] | None = None
    discrete: tuple[str, ...] | None = None
    text: tuple[tuple[str, Any], ...] = ()
    many_levels: str = "refuse"
    openml: int | None = None

    @classmethod
    def from_openml(cls, dataset_id: int, *, name: str | None = None,
                    target: str | None = None, positive: Any | Sequence[Any] | None = None,
                    missing: str = "error", columns: str | Sequence[str] | None = None,
                    many_levels: str = "refuse") -> Task:
        """OpenML dataset ``dataset_id`` as a task (``source: {openml: id}``), named ``name``
        (default ``openml-<id>``): ``target`` the class column (default: the dataset's
        default target), ``positive`` as in ``from_frame``; the features are ``columns``
        (``features.columns``; default: its other numeric and nominal columns), continuous
        and discrete as its ARFF header declares. A nominal column of nearly all distinct
        values or of free text is refused when the task is read; leave it out of
        ``columns``, or ``many_levels='allow'`` (``features.many_levels``) keeps it.
        Nothing is downloaded here: the run reads the dataset (once, into the cache,
        verified against OpenML's md5; a file above 64 MiB is refused unless the run's
        ``DataSettings(max_download=MiB)`` allows it, ``read_config(..., data=...)``), and
        checks these choices with the config."""
        if positive is not None and not isinstance(positive, list | tuple):
            positive = [positive]
        return cls(name=name if name is not None else f"openml-{dataset_id}", frame=None,
                   target=None if target is None else str(target),
                   positive=None if positive is None else tuple(str(v) for v in positive),
                   missing=missing, openml=dataset_id,
                   columns=_names(columns), many_levels=many_levels)

    @classmethod
    def from_frame(cls, df: pd.DataFrame, *, target: str, name: str,
                   positive: Any | Sequence[Any] | None = None, kind: Kind | None = None,
                   columns: str | Sequence[str] | None = None, missing: str = "error",
                   text: Mapping[str, Any] | None = None,
                   many_levels: str = "refuse") -> Task:
        """A task from a DataFrame ``df`` (N rows): the column ``target`` is the label and
        ``positive`` the value(s) counted as class 1 (default: of exactly two values, the
        second in sorted order); the features are ``columns`` (names, or one name as a
        string; default: every other column), of ``kind`` ``continuous`` or ``discrete``
        (default: continuous when every feature is numeric, discrete when none is, and
        ``mixed`` when some are: then each numeric column (by its dtype) is continuous and
        every other one discrete). A missing cell (NaN, None) is refused unless
        ``missing`` is ``drop`` or ``level``.

        ``kind="text"``: ``columns`` names the one column of documents (a text task,
        docs/text.md), ``text`` its vocabulary options (``vocabulary``, ``min_df``,
        ``max_features``).

        A discrete column of nearly all distinct values (numbers, ids) or of free text is
        refused when the task is read, the error naming the fix (``kind='continuous'``,
        ``kind='text'``); ``many_levels='allow'`` keeps it as categories, with a warning."""
        if not isinstance(df, pd.DataFrame):
            raise ConfigError(f"{name}: df is a {type(df).__name__}, not a pandas DataFrame; "
                              "give a DataFrame, or use Task.from_arrays(X, y, ...)")
        names = [str(c) for c in df.columns]
        if str(target) not in names:
            shown = ", ".join(repr(c) for c in names[:8]) + (", ..." if len(names) > 8 else "")
            raise ConfigError(f"{name}: target={target!r}: no such column"
                              f"{did_you_mean(str(target), names)}; the columns are {shown}")
        if text is not None and not isinstance(text, Mapping):
            raise ConfigError(f"{name}: text= is {type(text).__name__}, not a mapping of "
                              "vocabulary options; give e.g. text={'min_df': 2}")
        columns = _names(columns)
        if kind == "text":
            if columns is None or len(columns) != 1:
                raise ConfigError(f"{name}: kind='text' reads one column of documents; give "
                                  "columns=['<that column>']")
            return cls(name=name, frame=Frame(df), target=str(target),
                       positive=None if positive is None else tuple(
                           str(v) for v in (positive if isinstance(positive, list | tuple)
                                            else [positive])),
                       kind="text", columns=columns, missing=missing,
                       text=tuple(dict(text or {}).items()))
        if text:
            raise ConfigError(f"{name}: text options are for kind='text' only")
        held = Frame(df)
        if positive is not None and not isinstance(positive, list | tuple):
            positive = [positive]
        names = columns if columns is not None else tuple(
            c for c in held.table.columns if c != str(target))
        numeric = [c for c in names if c in held.numeric]
        split = None
        if kind == "mixed" or (kind is None and numeric and len(numeric) < len(names)):
            split = (tuple(numeric), tuple(c for c in names if c not in held.numeric))
        return cls(name=name, frame=held, target=str(target),
                   positive=None if positive is None else tuple(
                       str(v) for v in positive),
                   kind=None if split else kind,
                   columns=None if columns is None or split else names,
                   missing=missing,
                   continuous=split[0] if split else None,
                   discrete=split[1] if split else None,
                   many_levels=many_levels)

    @classmethod
    def from_arrays(cls, X: np.ndarray, y: np.ndarray, *, name: str,
                    positive: Any | Sequence[Any] | None = None, kind: Kind | None = None,
                    feature_names: str | Sequence[str] | None = None) -> Task:
        """A task from a feature matrix ``X`` of shape (N, d) and labels ``y`` of shape
        (N,), e.g. scikit-learn's ``load_breast_cancer(return_X_y=True)``; features named
        ``feature_names`` (default ``x0 .. x{d-1}``), the label column ``y``; ``positive``
        and ``kind`` as in ``from_frame``."""
        if kind == "text":
            raise ConfigError(f"{name}: from_arrays makes a task of numeric features, not of "
                              "documents; for text use Task.from_frame(df, kind='text', "
                              "columns=['<the column of documents>'])")
        X, y = np.asarray(X), np.asarray(y)
        if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
            raise ConfigError(
                f"{name}: X of shape {X.shape} and y of shape {y.shape} do not make a task; "
                "give X of shape (N, d) and y of shape (N,)")
        given = _names(feature_names)
        names = [f"x{j}" for j in range(X.shape[1])] if given is None else list(given)
        if len(names) != X.shape[1]:
            raise ConfigError(f"{name}: {len(names)} feature_names for {X.shape[1]} columns "
                              "of X; give one name per column")
        if "y" in names:
            raise ConfigError(f"{name}: feature_names holds 'y', the label's column; "
                              "rename that feature")
        df = pd.DataFrame(X, columns=names)
        df["y"] = y
        return cls.from_frame(df, target="y", name=name, positive=positive, kind=kind)

    def to_config(self) -> dict[str, Any]:
        """The task as a config entry (``source: {frame: ...}`` or ``{openml: id}``)."""
        target: dict[str, Any] = {"column": self.target} if self.target is not None else {}
        if self.positive is not None:
            target["positive"] = list(self.positive)
        if self.openml is not None:
            named = {"name": self.name,
                     "source": {"openml": self.openml, "missing": self.missing}}
            chosen: dict[str, Any] = {}
            if self.columns is not None:
                chosen["columns"] = list(self.columns)
            if self.many_levels != "refuse":
                chosen["many_levels"] = self.many_levels
            return {**named, **({"target": target} if target else {}),
                    **({"features": chosen} if chosen else {})}
        features: dict[str, Any] = {}
        if self.kind is not None:
            features["kind"] = self.kind
        if self.columns is not None:
            features["columns"] = list(self.columns)
        if self.kind == "text" and self.columns is not None:
            features = {"kind": "text", "column": self.columns[0], **dict(self.text)}
        if self.continuous is not None and self.discrete is not None:
            features = {"continuous": list(self.continuous), "discrete": list(self.discrete)}
        if self.many_levels != "refuse":
            features["many_levels"] = self.many_levels
        entry: dict[str, Any] = {"name": self.name,
                                 "source": {"frame": self.frame, "missing": self.missing},
                                 "target": target}
        if features:
            entry["features"] = features
        return entry


def _config(config: str | os.PathLike | Mapping[str, Any] | Config, settings: dict[str, Any]
            ) -> Config:
    """A ``Config`` from what ``run`` accepts, with the given settings."""
    if isinstance(config, Config):
        return _override(config, settings)
    if isinstance(config, Mapping):
        raw = dict(config)
        tasks = raw.get("tasks")
        if isinstance(tasks, Task):
            tasks = [tasks]
        if isinstance(tasks, list):
            raw["tasks"] = [t.to_config() if isinstance(t, Task) else t for t in tasks]
        return parse_config(raw, source="<config dict>", base_dir=Path.cwd(), **settings)
    if isinstance(config, str | os.PathLike):
        return load_config(resolve_config(config), **settings)
    raise ConfigError(f"config: a {type(config).__name__}; give a config file, a shipped "
                      "config's name, a dict or a Config")


def _override(config: Config, settings: dict[str, Any]) -> Config:
    """A parsed ``config`` with the settings given (not None), checked as ``parse_config``
    checks them: through it, on a one-task config carrying them."""
    given = {k: v for k, v in settings.items() if v is not None and v is not False}
    probe = parse_config(
        {"tasks": [{"name": "probe", "source": {"synthetic": {}}}], "sizes": [2]},
        **{"jobs": config.jobs, "backend": config.backend, "scheduler": config.scheduler,
           "force": config.force, **given, "out": settings.get("out")})
    changes: dict[str, Any] = {"out": probe.out}
    for key in ("splits", "seed", "jobs", "backend", "scheduler", "force", "data", "metrics"):
        if key in given:
            changes[key] = getattr(probe, key)
    return replace(config, **changes)


def check_out(out: str, where: str | None = None, example: str = "--out results") -> Path:
    """``--out`` (``run``'s ``out``, ``Results.save``'s folder) as a Path; ``ConfigError``
    (exit 2) before anything is read or written when it is empty, a file, below a file, or
    on a disk this process cannot write to. ``where`` names the argument and its value in
    the message (default ``--out OUT``), ``example`` a good one."""
    where = where if where is not None else f"--out {out}".rstrip()
    if not out.strip():
        raise ConfigError(f"{where}: an empty path; name a folder, e.g. {example}")
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{where}: is a file, not a folder; name a folder")
    existing = path.absolute()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(
            f"{where}: {existing} is a file, so no folder can be made below it; "
            "name another folder"
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(
            f"{where}: cannot write in {existing} (a read-only disk, or no permission); "
            "name a folder you may write to"
        )
    return path


def _progress(progress: bool | Progress | None) -> Progress:
    if progress is None or progress is True:
        return NotebookProgress()
    if progress is False:
        return NoProgress()
    missing = [name for name in PROGRESS_METHODS if not callable(getattr(progress, name, None))]
    if missing:
        raise ConfigError(
            f"progress: a {type(progress).__name__} without the method(s) "
            f"{', '.join(missing)}; give True, False, or an object with the methods of "
            "nbvslr.runner.progress.Progress")
    return progress


PROGRESS_METHODS = ("start", "splits_done", "size_done", "task_done", "finish")
"""What a ``progress=`` object must have (``nbvslr.runner.progress.Progress``)."""


def run(
    config: str | os.PathLike | Mapping[str, Any] | Config,
    *,
    out: str | os.PathLike | None = None,
    jobs: int | None = None,
    splits: int | None = None,
    seed: int | None = None,
    progress: bool | Progress | None = None,
    backend: str | None = None,
    metrics: Sequence[str] | None = None,
) -> Results:
    """Run the learning-curve experiment of ``config``; return its ``Results``.

    Parameters
    ----------
    config : path, str, dict or Config
        A config file, the name of a shipped config (``nbvslr configs``), a config as a
        dict (keys of docs/config.md; ``tasks`` may hold ``Task`` objects), or a parsed
        ``nbvslr.config.Config``.
    out : path, optional
        None (default): nothing is written (no folder, no checkpoint), every size is
        computed. A folder: the files of ``nbvslr run --out`` (one sub-folder per task),
        finished sizes checkpointed, and a rerun resumes.
    jobs : int, optional
        Parallel workers (-1: every core); default 1. Results do not depend on it.
    splits, seed : int, optional
        Override the config's splits per size and base seed.
    progress : bool or Progress, optional
        None or True: a progress bar (``tqdm.auto``: a widget in a notebook); False: none;
        or an object with the methods of ``nbvslr.runner.progress.Progress``.
    backend : str, optional
        joblib backend (``loky``, ``threading``, ``sequential``, ``dask``); default loky.
    metrics : list of str, optional
        Override the config's ``metrics``: what to measure of each split, some of
        ``error``, ``log_loss``, ``brier``, ``train_error`` (``error`` always); default
        the config's, ``[error]``. ``Results.metric(name)`` gives each one's tables.

    Raises ``ConfigError``, ``DataError``, ``SizeError``, ``ResultsError`` with the
    command's one-line messages, before any fit for a bad config or data; a bad argument
    is named as given (``nbvslr.run(splits=...): must be >= 1 (0); ...``).
    """
    reporter = _progress(progress)  # checked before anything is read
    parsed = _read_config(config, "nbvslr.run", out=out, jobs=jobs, splits=splits,
                          seed=seed, backend=backend, metrics=metrics)
    return Results([_as_saved(t) for t in run_tasks(parsed, progress=reporter)])


def read_config(
    config: str | os.PathLike | Mapping[str, Any] | Config,
    *,
    out: str | os.PathLike | None = None,
    jobs: int | None = None,
    splits: int | None = None,
    seed: int | None = None,
    backend: str | None = None,
    scheduler: str | None = None,
    force: bool = False,
    data: DataSettings | None = None,
    metrics: Sequence[str] | None = None,
) -> Config:
    """The checked ``Config`` that ``run`` (and ``nbvslr run``) runs: ``config`` as ``run``
    takes it, with the settings given (None keeps the config's or the default; ``out``
    None writes nothing). ``scheduler`` (a dask address), ``force`` (recompute checkpointed
    sizes) and ``data`` (cache, mirror, downloads) are ``nbvslr run``'s options, and its
    messages name the settings as ``nbvslr run``'s options (``--splits``), as that command
    reads its configs here."""
    return _read_config(config, None, out=out, jobs=jobs, splits=splits,
                        seed=seed, backend=backend, scheduler=scheduler, force=force,
                        data=data, metrics=metrics)


def _read_config(config: str | os.PathLike | Mapping[str, Any] | Config, call: str | None,
                 *,
                 out: str | os.PathLike | None = None, jobs: int | None = None,
                 splits: int | None = None, seed: int | None = None,
                 backend: str | None = None, scheduler: str | None = None,
                 force: bool = False, data: DataSettings | None = None,
                 metrics: Sequence[str] | None = None) -> Config:
    """``read_config``, its messages naming the arguments of ``call`` (``nbvslr.run``:
    ``nbvslr.run(splits=...): must be >= 1 (0); ...``), or, None, ``nbvslr run``'s options
    (``command line: --splits: ...``)."""
    if out is not None and call is None:  # before anything is read or written
        out = check_out(str(out))
    elif out is not None:
        out = check_out(str(out), f"{call}(out={str(out)!r})", "out='results'")
    settings: dict[str, Any] = {"out": out, "splits": splits, "seed": seed, "force": force,
                                "scheduler": scheduler,
                                "named": SettingNames(None, call) if call else COMMAND_LINE}
    if jobs is not None:
        settings["jobs"] = jobs
    if backend is not None:
        settings["backend"] = backend
    if data is not None:
        settings["data"] = data
    if metrics is not None:
        settings["metrics"] = list(metrics) if isinstance(metrics, list | tuple) else metrics
    return _config(config, settings)


def _as_saved(task: Written) -> Written:
    """A finished task's tables as its files hold them (summary and paired rounded to
    ``results.FLOAT_FORMAT``, summary in ``load``'s row order): a run that writes nothing
    gives the tables, figure and report of the same run read back by ``load``."""

    def reread(table: pd.DataFrame) -> pd.DataFrame:
        return read_csv_bytes(table_bytes(table))

    summary = reread(task.summary).sort_values(["model", "m"], kind="stable")
    paired = reread(task.pairs_table) if task.pairs_table is not None else None
    return replace(task, summary=summary.reset_index(drop=True), pairs_table=paired)


def load(folder: str | os.PathLike) -> Results:
    """The ``Results`` of a results folder (a run's ``--out``, or one task's folder), from
    its files alone: nothing is re-run. Its tasks in the run's order (run.json's config),
    or, of a folder holding the tasks of more than one run, by folder name."""
    tasks = results.load_results(folder)
    order = [str(t.get("name")) for t in (tasks[0].run_info.get("config") or {}).get(
        "tasks") or [] if isinstance(t, Mapping)] if tasks else []
    if order and all(t.name in order for t in tasks):  # the run's order, not the folders'
        tasks.sort(key=lambda t: order.index(t.name))
    return Results(tasks)


def _integer(call: str, key: str, value: Any, low: int) -> int:
    """``value`` of the argument ``key`` of ``call`` as an int, or a one-line
    ``ConfigError`` naming ``call(key=...)`` (not an integer, or below ``low``)."""
    return integer_setting(f"{call}({key}=...)", value, low)


def _concat(frames: list[pd.DataFrame], columns: Sequence[str]) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=list(columns))
    return pd.concat([f.loc[:, list(columns)] for f in frames], ignore_index=True)


class Results:
    """The results of a run, one or more tasks: tables, a figure, a report.

    Made by ``run`` and ``load``. The tables are tidy pandas DataFrames with the columns
    of the files (docs/api.md lists them); ``tasks`` is the list of per-task results.
    """

    def __init__(self, tasks: Sequence[TaskResults], *, n_boot: int = DEFAULT_N_BOOT,
                 seed: int = 0) -> None:
        self.tasks: list[TaskResults] = list(tasks)
        self.n_boot = n_boot
        self.seed = seed

    @property
    def n_boot(self) -> int:
        """The bootstrap resamples of the crossovers' intervals (``nbvslr report
        --n-boot``), >= 1."""
        return self._n_boot

    @n_boot.setter
    def n_boot(self, value: int) -> None:
        self._n_boot = _integer("Results", "n_boot", value, 1)

    @property
    def seed(self) -> int:
        """The seed of the bootstrap resamples (``nbvslr report --seed``), >= 0."""
        return self._seed

    @seed.setter
    def seed(self, value: int) -> None:
        self._seed = _integer("Results", "seed", value, 0)

    def __repr__(self) -> str:
        names = ", ".join(t.name for t in self.tasks)
        return f"<nbvslr.Results: {len(self.tasks)} task(s): {names}>"

    def overview(self) -> pd.DataFrame:
        """One row per task: its models, sizes (how many, smallest and largest m) and
        splits per size (the most of any size)."""
        rows = []
        for task in self.tasks:
            ms = sorted({int(m) for m in task.summary["m"]})
            rows.append({"task": task.name, "models": ", ".join(task.model_order()),
                         "sizes": len(ms), "m_min": ms[0] if ms else None,
                         "m_max": ms[-1] if ms else None,
                         "splits": int(task.summary["n_splits"].max()) if ms else 0})
        return pd.DataFrame(rows, columns=["task", "models", "sizes", "m_min", "m_max",
                                           "splits"])

    def _repr_html_(self) -> str:
        """What a notebook shows for ``res``: the tasks (models, sizes, splits; in the order
        of ``tasks``) and where each compared pair's curves cross (``crossovers``, in the
        report's order)."""
        head = (f"<p><b>nbvslr results</b>: {len(self.tasks)} task"
                f"{'' if len(self.tasks) == 1 else 's'}</p>")
        tasks = self.overview().to_html(index=False, border=0, na_rep="")
        if self.crossovers.empty:
            return head + tasks
        shown = self.crossovers[["task", "model_a", "model_b", "crossover", "crossover_low",
                                 "crossover_high", "better_after", "b_better_from"]].copy()
        for column in ("better_after", "b_better_from"):  # None and <NA>: na_rep skips them
            shown[column] = shown[column].astype(object).where(shown[column].notna(), "–")
        cross = shown.to_html(index=False, border=0, na_rep="–", float_format="{:.4g}".format)
        return (head + tasks + "<p>Crossovers (first crossing of the mean curves, its 95% "
                "bootstrap interval, the model ahead after it, and the m from which b stays "
                "significantly better):</p>" + cross)

    @property
    def names(self) -> list[str]:
        """The task names, in the order of ``tasks`` (the run's, ``load``'s)."""
        return [t.name for t in self.tasks]

    @cached_property
    def summary(self) -> pd.DataFrame:
        """``summary.csv`` of every task: one row per (task, model, m); columns
        ``results.SUMMARY_COLUMNS``."""
        return _concat([t.summary for t in self.tasks], results.SUMMARY_COLUMNS)

    @cached_property
    def splits(self) -> pd.DataFrame:
        """``splits.csv.gz`` of every task: one row per (task, model, m, split); columns
        ``results.SPLIT_COLUMNS``, with a column per metric the run measured besides the
        error (``log_loss``, ``brier``, ``train_error``) right after ``error``.
        ``ResultsError`` for a loaded folder without it."""
        frames = [t.splits() for t in self.tasks]
        measured = {m for f in frames for m in metrics_of(f)}
        return _concat(frames, split_columns(tuple(measured)))

    @property
    def metrics(self) -> list[str]:
        """The metrics every task measured (``error`` first), read from the splits."""
        frames = [t.splits() for t in self.tasks if t.has_splits()]
        if not frames:
            return ["error"]
        return [m for m in metrics_of(frames[0]) if all(m in f.columns for f in frames)]

    def metric(self, name: str) -> Results:
        """The same results for the metric ``name`` (``error``, ``log_loss``, ``brier``,
        ``train_error``): ``summary``, ``paired``, ``crossovers``, ``plot`` and ``report``
        of that metric, each computed from the splits as for the error (a split without a
        value, NaN, left out; ``n_splits`` counts the others). ``ResultsError`` when a
        task did not measure it."""
        tasks = [for_metric(t, name) for t in self.tasks]
        return Results(tasks, n_boot=self.n_boot, seed=self.seed)

    @cached_property
    def paired(self) -> pd.DataFrame:
        """``paired.csv`` of every task: one row per (task, pair, m) of the paired
        differences a - b; columns ``results.PAIRED_COLUMNS``."""
        return _concat([task_paired(t) for t in self.tasks], results.PAIRED_COLUMNS)

    @cached_property
    def crossovers(self) -> pd.DataFrame:
        """Where the curves of each compared pair cross: one row per (task, pair), tasks in
        the report's order (the paper's panels first, ``fidelity.panel_order``); columns
        ``CROSSOVER_COLUMNS`` (the report's crossover, its bootstrap interval, where b or a
        is significantly better; NaN where there is none)."""
        rows = []
        for i in panel_order([t.name for t in self.tasks]):  # the report's order
            task = self.tasks[i]
            for pair in task_pairs(task):
                _, c = task_crossovers(task, pair, n_boot=self.n_boot, seed=self.seed)
                rows.append({"task": task.name, "model_a": c.model_a, "model_b": c.model_b,
                             **crossovers.crossover_fields(c)})
        return crossovers.crossover_table(rows, CROSSOVER_COLUMNS)

    def extrapolation(self, *, n_boot: int = 200, at: Sequence[float] | None = None,
                      beyond_reach: bool = False) -> pd.DataFrame:
        """Each model's learning curve fitted past the grid (``nbvslr report
        --extrapolate``; docs/extrapolation.md), its intervals counting the noise of the
        means (``n_boot`` draws) and the choice of the curve family.

        Without ``at``: one row per task and model of the task's first pair, columns
        ``EXTRAPOLATION_COLUMNS`` (the best family, its limit with its interval, the error
        when trained on all rows, and the pair's predicted crossover past ``last_m``, NaN
        when none is predicted before the reach or ``horizon`` rows; ``inf`` in an
        interval: none).

        With ``at`` (sizes m): one row per task, model and m, columns
        ``PREDICTION_COLUMNS``: the predicted mean error and its 95% interval;
        ``within_reach`` False past the reach (``REACH`` times the largest measured m),
        where the numbers are NaN unless ``beyond_reach``.

        A task whose curves cannot be fitted (a grid too short; of the Brier score, a model
        without a value on every split, or a run made before run.json recorded the all-rows
        score) gets one row, model empty and numbers NaN, with the reason in ``reason``, as
        ``nbvslr report --extrapolate`` gives it an `n/a` row; ``ResultsError`` (the first
        task's reason) when no task can be fitted.
        """
        from nbvslr.analysis.extrapolate import all_rows, task_extrapolation

        n_boot = _integer("Results.extrapolation", "n_boot", n_boot, 1)
        if at is not None:
            sizes = np.asarray(at, dtype=float).ravel()
            if sizes.size == 0 or not np.all(np.isfinite(sizes)) or np.any(sizes < 1):
                raise ConfigError(f"extrapolation(at=...): sizes must be numbers >= 1, got "
                                  f"{list(at)}; give e.g. at=[100, 1000]")
        rows = []
        refused: list[ResultsError] = []
        for task in self.tasks:
            try:
                ex = task_extrapolation(task, n_boot=n_boot, seed=self.seed,
                                        beyond=beyond_reach)
            except ResultsError as err:
                refused.append(err)
                rows.append({"task": task.name, "model": "",
                             "reason": str(err).split(": ", 1)[-1]})
                continue
            full = all_rows(task)
            for model in (ex.model_a, ex.model_b):
                if at is not None:
                    p = ex.predict(model, sizes)
                    rows.extend({
                        "task": task.name, "model": model, "m": float(size),
                        "predicted": p["predicted"][i], "predicted_low": p["low"][i],
                        "predicted_high": p["high"][i],
                        "within_reach": bool(p["within_reach"][i]), "reason": "",
                    } for i, size in enumerate(sizes))
                    continue
                low, high = ex.asymptote_interval[model] or (None, None)
                c_low, c_high = ex.crossover_interval or (None, None)
                rows.append({
                    "task": task.name, "model": model, "family": ex.family[model],
                    "asymptote": ex.asymptote[model], "asymptote_low": low,
                    "asymptote_high": high, "all_rows": full.get(model),
                    "pair": f"{ex.model_a} - {ex.model_b}", "crossover": ex.crossover,
                    "crossover_low": c_low, "crossover_high": c_high,
                    "horizon": ex.horizon, "last_m": ex.last_m, "reason": "",
                })
        if len(refused) == len(self.tasks) and refused:
            raise refused[0]
        if at is not None:
            table = pd.DataFrame(rows, columns=list(PREDICTION_COLUMNS))
            for col in ("m", "predicted", "predicted_low", "predicted_high"):
                table[col] = table[col].astype(float)
            table["within_reach"] = table["within_reach"].fillna(False).astype(bool)
            return table
        table = pd.DataFrame(rows, columns=list(EXTRAPOLATION_COLUMNS))
        for col in ("asymptote", "asymptote_low", "asymptote_high", "all_rows", "crossover",
                    "crossover_low", "crossover_high"):
            table[col] = table[col].astype(float)
        return table

    @overload
    def plot(self, ax: None = None, *, paper: bool = False) -> Figure: ...

    @overload
    def plot(self, ax: Axes, *, paper: bool = False) -> Axes: ...

    def plot(self, ax: Axes | None = None, *, paper: bool = False) -> Figure | Axes:
        """The learning curves, as ``nbvslr plot`` draws them: one panel per task on a new
        Figure (None ``ax``), returned (a notebook shows it once, as a cell's value, with
        no ``%matplotlib`` magic); or the one task's panel drawn on ``ax``, which is
        returned (its figure is the caller's: a notebook shows a pyplot figure once at the
        end of the cell). ``paper`` overlays the paper's curves on the panels of its
        Figure 1."""
        from nbvslr.views import plots

        if ax is None:
            return plots.figure_of_tasks(self.tasks, paper=paper, n_boot=self.n_boot,
                                         seed=self.seed)
        if len(self.tasks) != 1:
            raise ConfigError(f"plot(ax=...): {len(self.tasks)} tasks for one panel; "
                              "call plot() without ax, or pick one task: results[name]")
        plots.draw_task(ax, self.tasks[0], paper=paper, n_boot=self.n_boot, seed=self.seed)
        return ax

    def report(self, *, notes: bool = True, paper: bool = True,
               extrapolate: bool = False) -> str:
        """The Markdown table of ``nbvslr report``: errors at the smallest and largest m,
        winners, crossover, asymptotic and majority errors; ``extrapolate`` appends the
        section past the grid (``nbvslr report --extrapolate``)."""
        from nbvslr.views.report import report_table

        metric = metric_of(self.tasks[0]) if self.tasks else "error"  # Results.metric's
        return report_table(self.tasks, n_boot=self.n_boot, seed=self.seed, notes=notes,
                            paper=paper, extrapolate=extrapolate, metric=metric)

    def __getitem__(self, name: str) -> Results:
        """The results of the task called ``name`` alone."""
        for task in self.tasks:
            if task.name == name:
                return Results([task], n_boot=self.n_boot, seed=self.seed)
        raise KeyError(name)

    def save(self, folder: str | os.PathLike) -> list[Path]:
        """Write every task's files to ``folder/<task>/`` as ``nbvslr run`` does (splits,
        summary, paired, curve.png, run.json); return the task folders. Of a ``metric``
        view, the files of the results it came from (every metric; the test error's
        summary): ``load(folder).metric(name)`` gives the view back."""
        root = check_out(str(folder), f"Results.save({str(folder)!r})",
                         "save('results/copy')")  # before anything is written
        written = []
        for task in map(whole_of, self.tasks):  # the run's pairs (none: no paired.csv)
            compare = (task.run_info.get("config") or {}).get("compare") or []
            tables = task_tables(results.task_dir(root, task.name), task.splits(),
                                 task.run_info, [(str(a), str(b)) for a, b in compare])
            write_tables(tables)
            written.append(tables.folder)
        return written
