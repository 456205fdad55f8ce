"""Read a results folder back: the one reader of every file a run writes.

It reads files and computes nothing: the statistics of what it reads (a task's paired rows
when it has no ``paired.csv``, the crossovers) are ``nbvslr.analysis``'s.

A *results folder* is either one task folder (holding ``summary.csv`` or ``run.json``) or a
root holding one such folder per task; ``find_task_dirs`` accepts both. Everything here
works from saved files alone; nothing is re-run, and nothing is written.

A task's files are one sealed unit: ``files.sha256`` (``MANIFEST_FILE``, written last by
``nbvslr.results.write``) lists the sha256 of each, and every file is read only if its bytes
have that sha256; a file the manifest does not list is taken as absent (so is a listed file
removed since: ``splits.csv.gz`` may be deleted to save space). A reader that finds
a mismatch reads the folder again for up to ``SETTLE_SECONDS`` (a run may be renaming its
new files into place), then refuses with one line naming the file and the fix: so it reads
the old set or the new set, never a mix, and never a damaged file. A folder without
``files.sha256`` (written before nbvslr sealed its results) has no digest to check. Nothing
in a task folder is followed through a symbolic link. Every file is checked for its shape as
it is parsed (columns once each, numbers where numbers belong, errors in [0, 1], run.json's
fields of the right kind), and, digest or not, its values for agreeing with one another
(``check_summary``, ``check_paired``: a mean inside its interval, sem = sd / sqrt(n), one row
per size, a paired.csv whose sizes and mean differences are the summary's, each model of the
family run.json says): a malformed or inconsistent file is one ``ResultsError``, never a
traceback and never a wrong winner.
"""

from __future__ import annotations

import csv
import errno
import gzip
import hashlib
import io
import json
import math
import os
import stat
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from nbvslr.errors import MissingResultsError, ResultsError
from nbvslr.results.files import read_csv_bytes
from nbvslr.results.layout import (
    HOW_TO_MAKE,
    HOW_TO_REBUILD,
    MANIFEST_FILE,
    PAIRED_COLUMNS,
    PAIRED_FILE,
    RUN_FILE,
    SEALED_FILES,
    SEPARATIONS,
    SHARE_COLUMNS,
    SPLIT_COLUMNS,
    SPLITS_FILE,
    SUMMARY_COLUMNS,
    SUMMARY_FILE,
    TEXT_COLUMNS,
)

PathLike = str | os.PathLike
T = TypeVar("T")


SETTLE_SECONDS = 2.0
"""How long a reader that finds files not matching ``files.sha256`` reads again before it
takes them as damaged (a run renames its new files into place in well under this)."""

_INTEGER = ("m", "n_splits", "split", "n_iter")
_BOOLEAN = ("separable", "converged")
_RATES = ("error", "error_mean", "error_sd", "error_sem", "train_error",
          *SHARE_COLUMNS)  # in [0, 1]
_SIGNED = ("diff_mean", "diff_sem", "ci_low", "ci_high")  # in [-1, 1]
_TEXT = TEXT_COLUMNS


class Changed(ResultsError):
    """A sealed file whose bytes do not have the sha256 its manifest lists."""


def read_bytes(path: Path, fix: str = HOW_TO_MAKE) -> bytes:
    """The bytes of a results file, never through a symbolic link; ``ResultsError`` naming
    the file otherwise."""
    try:
        # never waiting: a named pipe with no writer would block the open itself
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ResultsError(
                f"{path}: is a symbolic link, which nbvslr never follows inside a task "
                f"folder; replace it by the file itself, or {fix}") from None
        raise ResultsError(f"{path}: cannot be read ({exc.strerror}); {fix}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ResultsError(f"{path}: is not a regular file; {fix}")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    except OSError as exc:
        raise ResultsError(f"{path}: cannot be read ({exc.strerror}); {fix}") from None
    finally:
        os.close(fd)


def _lexists(path: Path) -> bool:
    return os.path.lexists(path)


def read_manifest(folder: Path) -> dict[str, str] | None:
    """``files.sha256`` of a task folder as ``{file name: sha256}``; None if it has none."""
    path = Path(folder) / MANIFEST_FILE
    if not _lexists(path):
        return None
    try:
        text = read_bytes(path, HOW_TO_REBUILD).decode("ascii")
    except UnicodeDecodeError:
        text = ""
    listed: dict[str, str] = {}
    for line in text.splitlines():
        digest, _, name = line.partition("  ")
        if (len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest)
                or name not in SEALED_FILES or name in listed):
            raise ResultsError(f"{path}: is not a list of this task's files and their sha256; "
                               f"{HOW_TO_REBUILD}")
        listed[name] = digest
    if not listed:
        raise ResultsError(f"{path}: lists no file; {HOW_TO_REBUILD}")
    return listed


def sealed_bytes(folder: Path, name: str, manifest: Mapping[str, str] | None) -> bytes | None:
    """The bytes of ``folder / name``, or None when absent (or not in ``manifest``).

    With a manifest, a file it lists must have its listed sha256, else ``Changed``; a file
    it does not list is absent, and so is a listed file removed since."""
    path = Path(folder) / name
    if manifest is None:
        return read_bytes(path) if _lexists(path) else None
    if name not in manifest or not _lexists(path):
        return None  # a file removed since (splits.csv.gz, to save space) is absent
    data = read_bytes(path, HOW_TO_REBUILD)
    if hashlib.sha256(data).hexdigest() != manifest[name]:
        raise Changed(f"{path}: does not have the sha256 {MANIFEST_FILE} lists for it "
                      f"(damaged, or changed since); {HOW_TO_REBUILD}")
    return data


def settled(read: Callable[[], T], seconds: float | None = None) -> T:
    """``read()``, again while it raises ``Changed`` for up to ``seconds`` (default
    ``SETTLE_SECONDS``: a run renaming its files into place); then the last ``Changed``."""
    end = time.monotonic() + (SETTLE_SECONDS if seconds is None else seconds)
    while True:
        try:
            return read()
        except Changed:
            if time.monotonic() >= end:
                raise
            time.sleep(0.05)


def read_table(path: Path, columns: Sequence[str], fix: str = HOW_TO_MAKE,
               data: bytes | None = None) -> pd.DataFrame:
    """A CSV (or gzipped CSV) results file, floats parsed exactly; ``ResultsError`` naming
    the file and ``fix`` when it cannot be read, lacks one of ``columns``, names a column
    twice or holds a value of the wrong kind (``check_table``). ``data``: the file's bytes,
    already read."""
    path = Path(path)
    if data is None:
        data = read_bytes(path, fix)
    try:
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        text = data.decode("utf-8")
        header = next(csv.reader(io.StringIO(text)), [])
        df = read_csv_bytes(data)  # pandas >= 3 parses floats exactly (round trip)
    except (OSError, EOFError, ValueError, zlib.error, csv.Error) as exc:  # bad gzip, bad CSV
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ResultsError(f"{path}: cannot be read ({reason}); {fix}") from None
    twice = sorted({c for c in header if header.count(c) > 1})
    if twice:
        raise ResultsError(f"{path}: names the column(s) {', '.join(twice)} more than once; "
                           f"{fix}")
    # a column added since a folder was written: empty
    if "separation" in columns and "separation" not in df.columns:
        df.insert(min(list(columns).index("separation"), df.shape[1]), "separation", "")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ResultsError(f"{path}: missing column(s) {', '.join(missing)}; {fix}")
    return check_table(df, path, fix)


def check_table(df: pd.DataFrame, path: Path, fix: str) -> pd.DataFrame:
    """``df`` with every known column of the kind it must hold: whole numbers (m, splits),
    True/False, rates in [0, 1], differences in [-1, 1], text; ``ResultsError`` naming the
    file, the column and the first bad row (a 1-based data row) otherwise."""

    def bad(column: str, rows: pd.Series, what: str) -> ResultsError:
        row = int(rows.to_numpy().nonzero()[0][0]) + 1
        value = df[column].iloc[row - 1]
        return ResultsError(f"{path}: column {column}, row {row}: {value!r} is not {what}; "
                            f"{fix}")

    for column in df.columns:
        col = df[column]
        if column in _TEXT:
            nan = col.isna() | (col.astype(str) == "")
            if nan.any():
                raise bad(column, nan, "a name")
            df[column] = col.astype(str)
        elif column == "separation":  # a name of SEPARATIONS, or empty
            col = col.astype(object).where(col.notna(), "").astype(str)
            ok = col.isin(("", *SEPARATIONS))
            if not ok.all():
                raise bad(column, ~ok, f"one of {', '.join(SEPARATIONS)} or empty")
            df[column] = col
        elif column in _BOOLEAN:
            ok = col.isin([True, False])
            if not ok.all():
                raise bad(column, ~ok, "True or False")
            df[column] = col.astype(bool)
        elif column in _INTEGER or column in _RATES or column in _SIGNED:
            num = pd.to_numeric(col, errors="coerce")
            wrong = num.isna() & ~col.isna() | num.isin([math.inf, -math.inf])
            if column in _INTEGER:
                wrong |= num.isna() | (num != num.round()) | (num < 0)
                what = "a whole number"
            elif column in _RATES:
                wrong |= (num < 0) | (num > 1)
                what = "a number in [0, 1]"
            else:
                wrong |= (num < -1) | (num > 1)
                what = "a number in [-1, 1]"
            if wrong.any():
                raise bad(column, wrong, what)
            df[column] = num.astype("int64") if column in _INTEGER else num.astype("float64")
    return df


#: How far two numbers the tables hold may differ and still agree: both are written with
#: ten significant digits (``layout.FLOAT_FORMAT``), so a mean and an interval's midpoint, or
#: a paired mean and the difference of two means, differ by ~1e-10 at most.
AGREE = 1e-8


def check_summary(df: pd.DataFrame, path: Path, fix: str = HOW_TO_REBUILD) -> pd.DataFrame:
    """``df`` (a ``summary.csv`` already read by ``read_table``) if its values agree with one
    another, whether or not a digest vouches for the file: one row per (model, m), at least
    one split, a mean where there are splits, sd, sem and interval where there are two (sem
    = sd / sqrt(n)), the interval ordered around the mean and centred on it unless clipped
    at 0 or 1. ``ResultsError`` naming the file, the row and what disagrees otherwise."""
    _check_stats(df, path, fix, "error_mean", "error_sd", "error_sem", (0.0, 1.0))
    twice = df.duplicated(["model", "m"])
    if twice.any():
        row = int(twice.to_numpy().nonzero()[0][0]) + 1
        raise ResultsError(f"{path}: row {row}: model {df['model'].iloc[row - 1]} at m = "
                           f"{df['m'].iloc[row - 1]} appears twice; {fix}")
    return df


def check_paired(paired: pd.DataFrame, summary: pd.DataFrame, path: Path,
                 fix: str = HOW_TO_REBUILD) -> pd.DataFrame:
    """``paired`` (a ``paired.csv`` read by ``read_table``) if it agrees with itself (as
    ``check_summary``, its interval within [-1, 1]) and with the task's ``summary``: each pair
    at exactly the sizes where both models have splits, and where both have every split of
    the pair, a mean difference equal to the difference of the two means (a paired.csv of
    another run, its signs flipped or its models swapped, is refused)."""
    _check_stats(paired, path, fix, "diff_mean", None, "diff_sem", (-1.0, 1.0))
    twice = paired.duplicated(["model_a", "model_b", "m"])
    if twice.any():
        row = int(twice.to_numpy().nonzero()[0][0]) + 1
        raise ResultsError(f"{path}: row {row}: the pair at m = {paired['m'].iloc[row - 1]} "
                           f"appears twice; {fix}")
    counted = summary[summary["n_splits"] > 0]
    means = {(str(r.model), int(r.m)): (float(r.error_mean), int(r.n_splits))
             for r in counted.itertuples(index=False)}
    for (a, b), rows in paired.groupby(["model_a", "model_b"], sort=False):
        both = sorted({m for (name, m) in means if name == a} & {m for (name, m) in means
                                                                 if name == b})
        have = sorted(int(m) for m in rows["m"])
        if have != both:
            raise ResultsError(
                f"{path}: the pair {a} - {b} has the sizes {_sizes(have)}, where the task's "
                f"summary has both models at {_sizes(both)}; {fix}")
        for r in rows.itertuples(index=False):
            (mean_a, n_a), (mean_b, n_b) = means[(a, int(r.m))], means[(b, int(r.m))]
            if n_a == n_b == int(r.n_splits) and abs(
                    float(r.diff_mean) - (mean_a - mean_b)) > AGREE:
                raise ResultsError(
                    f"{path}: the pair {a} - {b} at m = {int(r.m)}: diff_mean "
                    f"{float(r.diff_mean):.10g} is not the summary's {mean_a:.10g} - "
                    f"{mean_b:.10g}; {fix}")
    return paired


def _check_families(summary: pd.DataFrame, run_info: Mapping[str, Any], path: Path) -> None:
    """Each model of ``summary`` of the family run.json gives it (models swapped or renamed
    in one of the two files are refused)."""
    listed = run_info.get("models")
    if not isinstance(listed, list):
        return
    family = {str(m["name"]): m.get("family") for m in listed
              if isinstance(m, Mapping) and isinstance(m.get("family"), str)}
    for r in summary.itertuples(index=False):
        said = family.get(str(r.model))
        if said is not None and said != str(r.family):
            raise ResultsError(f"{path}: model {r.model} is of family {r.family} here and "
                               f"{said} in {RUN_FILE}; {HOW_TO_REBUILD}")


def _sizes(ms: Sequence[int]) -> str:
    if not ms:
        return "none"
    return ", ".join(map(str, ms)) if len(ms) <= 4 else f"{ms[0]} .. {ms[-1]} ({len(ms)})"


def _check_stats(df: pd.DataFrame, path: Path, fix: str, mean: str, sd: str | None,
                 sem: str, bounds: tuple[float, float]) -> None:
    """The shared checks of ``check_summary`` and ``check_paired`` (see there)."""
    n = df["n_splits"].to_numpy(dtype=float)
    mu = df[mean].to_numpy(dtype=float)
    se = df[sem].to_numpy(dtype=float)
    low, high = df["ci_low"].to_numpy(dtype=float), df["ci_high"].to_numpy(dtype=float)
    spread = [se, low, high] + ([df[sd].to_numpy(dtype=float)] if sd else [])
    with np.errstate(invalid="ignore", divide="ignore"):
        checks = [
            (n < 1, "n_splits: no split"),
            (np.isnan(mu), f"{mean}: missing (NaN) where there are splits"),
            ((n >= 2) & np.any([np.isnan(v) for v in spread], axis=0),
             "no sd, sem or interval where there are two splits or more"),
            ((n == 1) & ~np.all([np.isnan(v) for v in spread], axis=0),
             "an sd, sem or interval from a single split"),
            (se < 0, f"{sem}: negative"),
            ((low > mu + AGREE) | (mu > high + AGREE),
             f"the interval [ci_low, ci_high] does not hold {mean}"),
            ((low > bounds[0]) & (high < bounds[1])
             & (np.abs((low + high) / 2 - mu) > AGREE),
             f"the interval is not centred on {mean}"),
        ]
        if sd:
            sd_values = df[sd].to_numpy(dtype=float)
            checks.append((np.abs(se - sd_values / np.sqrt(n)) > AGREE * (1 + sd_values),
                           f"{sem} is not {sd} / sqrt(n_splits)"))
    for wrong, what in checks:
        if wrong.any():
            row = int(wrong.nonzero()[0][0]) + 1
            raise ResultsError(f"{path}: row {row}: {what}; {fix}")


def read_splits(path: Path, fix: str = HOW_TO_MAKE, data: bytes | None = None) -> pd.DataFrame:
    """A ``splits.csv.gz`` or a checkpoint, every column of ``SPLIT_COLUMNS`` present."""
    return read_table(path, SPLIT_COLUMNS, fix, data)


def read_run_info(path: Path, data: bytes | None = None) -> dict[str, Any]:
    """A ``run.json``, its fields of the kinds the readers use (``ResultsError`` otherwise)."""
    path = Path(path)
    if data is None:
        data = read_bytes(path)
    try:
        run_info = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ResultsError(f"{path}: cannot be read ({one_reason(exc)}); "
                           f"{HOW_TO_MAKE}") from None
    if not isinstance(run_info, dict):
        raise ResultsError(f"{path}: expected a JSON object; {HOW_TO_MAKE}")
    problem = _run_info_problem(run_info)
    if problem:
        raise ResultsError(f"{path}: {problem}; {HOW_TO_MAKE}")
    return run_info


def one_reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _number(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def _run_info_problem(info: Mapping[str, Any]) -> str | None:
    """What is wrong with the fields of a run.json that the readers use, or None."""
    task = info.get("task")
    if task is not None and not isinstance(task, dict):
        return "task: expected an object"
    task = task or {}
    for key in ("name", "title"):
        if task.get(key) is not None and not isinstance(task[key], str):
            return f"task.{key}: expected a text"
    if task.get("recipe") is not None and not isinstance(task["recipe"], dict):
        return "task.recipe: expected an object"
    rng = task.get("x_range")
    if rng is not None and not (isinstance(rng, list) and len(rng) == 2
                                and all(_number(v) and v is not None for v in rng)):
        return "task.x_range: expected two numbers"
    models = info.get("models")
    if models is not None and not isinstance(models, list | dict):
        return "models: expected a list"
    if isinstance(models, list) and not all(
            isinstance(m, str) or (isinstance(m, dict) and isinstance(m.get("name"), str))
            for m in models):
        return "models: expected named models"
    asym = info.get("asymptotic_error")
    if asym is not None and not (isinstance(asym, dict) and all(map(_number, asym.values()))):
        return "asymptotic_error: expected an error per model"
    brier = info.get("asymptotic_brier")
    if brier is not None and not (isinstance(brier, dict) and all(
            isinstance(b, dict) and _number(b.get("value")) and _number(b.get("sem"))
            for b in brier.values())):
        return "asymptotic_brier: expected a Brier score and its standard error per model"
    if not _number(info.get("majority_error")):
        return "majority_error: expected a number"
    config = info.get("config")
    if config is not None and not isinstance(config, dict):
        return "config: expected an object"
    compare = (config or {}).get("compare")
    if compare is not None and not (isinstance(compare, list) and all(
            isinstance(p, list) and len(p) == 2 for p in compare)):
        return "config.compare: expected pairs of model names"
    return None


def model_order(summary: pd.DataFrame, run_info: Mapping[str, Any]) -> list[str]:
    """Models in the run's config order (run.json ``models``), then any others in the table."""
    listed = run_info.get("models") or []
    if isinstance(listed, Mapping):
        names = [str(k) for k in listed]
    else:
        names = [str(m["name"]) if isinstance(m, Mapping) else str(m) for m in listed]
    present = [str(m) for m in pd.unique(summary["model"])]
    return [m for m in names if m in present] + [m for m in present if m not in names]


@dataclass(frozen=True)
class TaskResults:
    """What one task folder holds (the splits table is read on demand: it can be large).

    Attributes
    ----------
    name : str
        The task name (``run.json`` task.name, else the folder name).
    folder : Path
    summary : DataFrame
        ``summary.csv``: one row per (model, m).
    run_info : dict
        ``run.json``.
    manifest : dict or None
        ``files.sha256`` as read with the other two (None: a folder without one).
    sealed : dict
        With a manifest, the bytes of ``paired.csv`` and ``splits.csv.gz`` read (and
        checked) with the other two, parsed on demand: what is read of a task comes from
        one run, even while another run rewrites the folder.
    """

    name: str
    folder: Path
    summary: pd.DataFrame
    run_info: Mapping[str, Any]
    manifest: Mapping[str, str] | None = None
    sealed: Mapping[str, bytes] = field(default_factory=dict)

    def _bytes(self, name: str) -> bytes | None:
        if self.manifest is not None:
            return self.sealed.get(name)
        return sealed_bytes(self.folder, name, None)

    @property
    def title(self) -> str:
        task = self.run_info.get("task") or {}
        return str(task.get("title") or self.name)

    def model_order(self) -> list[str]:
        """Models in config order (run.json ``models``), then any others in summary order."""
        return model_order(self.summary, self.run_info)

    def has_splits(self) -> bool:
        if self.manifest is not None:
            return SPLITS_FILE in self.sealed
        return _lexists(self.folder / SPLITS_FILE)

    def saved_paired(self) -> pd.DataFrame | None:
        """``paired.csv`` when the folder has one, else None (never computed here: see
        ``nbvslr.analysis.stats.task_paired``)."""
        data = self._bytes(PAIRED_FILE)
        if data is None:
            return None
        path = self.folder / PAIRED_FILE
        return check_paired(read_table(path, PAIRED_COLUMNS, data=data), self.summary, path)

    def splits(self) -> pd.DataFrame:
        """``splits.csv.gz``, floats read exactly; ResultsError if absent or malformed."""
        data = self._bytes(SPLITS_FILE)
        if data is None:
            raise ResultsError(f"{self.folder}: {SPLITS_FILE} is missing; {HOW_TO_MAKE}")
        return read_splits(self.folder / SPLITS_FILE, data=data)


def is_task_dir(path: Path) -> bool:
    """Whether ``path`` is a task folder (it holds a run's summary, run.json or manifest)."""
    return any(_lexists(path / name) for name in (SUMMARY_FILE, RUN_FILE, MANIFEST_FILE))


def find_task_dirs(results_dirs: PathLike | Iterable[PathLike]) -> list[Path]:
    """The task folders under each results folder, in the order given (sorted within a root).

    A folder holding ``summary.csv`` or ``run.json`` is a task folder; otherwise its
    sub-folders that do are. Raises ``MissingResultsError`` (a usage error, exit 2) for a
    folder that does not exist or holds no task results.
    """
    if isinstance(results_dirs, str | os.PathLike):
        results_dirs = [results_dirs]
    found: list[Path] = []
    for raw in results_dirs:
        path = Path(raw)
        if not path.is_dir():
            what = "is not a folder" if path.exists() else "does not exist"
            raise MissingResultsError(f"results folder {path} {what}; {HOW_TO_MAKE}")
        if is_task_dir(path):
            found.append(path)
            continue
        tasks = sorted(p for p in path.iterdir() if p.is_dir() and is_task_dir(p))
        if not tasks:
            raise MissingResultsError(
                f"results folder {path} holds no task results (no {SUMMARY_FILE} and "
                f"{RUN_FILE}, nor sub-folders with them); {HOW_TO_MAKE}"
            )
        found.extend(tasks)
    return found


def load_task(folder: PathLike) -> TaskResults:
    """Read one task folder's ``summary.csv`` and ``run.json`` (checked against its
    ``files.sha256``: ``settled``); ResultsError if incomplete, damaged or malformed."""
    folder = Path(folder)

    def read() -> tuple[dict[str, str] | None, dict[str, bytes | None]]:
        manifest = read_manifest(folder)
        names = (SUMMARY_FILE, RUN_FILE) if manifest is None else (
            SUMMARY_FILE, RUN_FILE, PAIRED_FILE, SPLITS_FILE)
        return manifest, {name: sealed_bytes(folder, name, manifest) for name in names}

    manifest, files = settled(read)
    summary_bytes, run_bytes = files[SUMMARY_FILE], files[RUN_FILE]
    missing = [f for f, b in ((SUMMARY_FILE, summary_bytes), (RUN_FILE, run_bytes)) if b is None]
    if missing:
        raise ResultsError(f"results folder {folder} is incomplete: {' and '.join(missing)} "
                           f"missing; {HOW_TO_MAKE}")
    summary = check_summary(read_table(folder / SUMMARY_FILE, SUMMARY_COLUMNS,
                                       data=summary_bytes), folder / SUMMARY_FILE)
    run_info = read_run_info(folder / RUN_FILE, data=run_bytes)
    _check_families(summary, run_info, folder / SUMMARY_FILE)
    name = str((run_info.get("task") or {}).get("name") or folder.name)
    summary = summary.sort_values(["model", "m"], kind="stable").reset_index(drop=True)
    sealed = {k: v for k, v in files.items() if k in (PAIRED_FILE, SPLITS_FILE)
              and v is not None}
    return TaskResults(name=name, folder=folder, summary=summary, run_info=run_info,
                       manifest=manifest, sealed=sealed)


def load_results(results_dirs: PathLike | Iterable[PathLike]) -> list[TaskResults]:
    """``load_task`` of every task folder ``find_task_dirs`` finds."""
    return [load_task(p) for p in find_task_dirs(results_dirs)]


def _empty_paired() -> pd.DataFrame:
    return pd.DataFrame(columns=list(PAIRED_COLUMNS))


@dataclass(frozen=True)
class Tables:
    """The summaries of one run: ``summary.csv`` and ``paired.csv`` rows of every task.

    ``paired`` may be empty (a run without one nb-family and one lr-family model).
    """

    summary: pd.DataFrame
    paired: pd.DataFrame = field(default_factory=_empty_paired)


def load_tables(folder: PathLike) -> Tables:
    """Read ``summary.csv`` and ``paired.csv`` of every task under ``folder``.

    ``folder`` is a results folder (``<folder>/<task>/summary.csv``) or one task's folder.
    A task without ``paired.csv`` contributes no paired rows.
    """
    summaries, paired = [], []
    for task_dir in find_task_dirs(folder):

        def read(task_dir: Path = task_dir) -> tuple[bytes | None, bytes | None]:
            manifest = read_manifest(task_dir)
            return (sealed_bytes(task_dir, SUMMARY_FILE, manifest),
                    sealed_bytes(task_dir, PAIRED_FILE, manifest))

        summary_bytes, paired_bytes = settled(read)
        if summary_bytes is None:
            raise ResultsError(f"results folder {task_dir} is incomplete: {SUMMARY_FILE} "
                               f"missing; {HOW_TO_MAKE}")
        summary = check_summary(read_table(task_dir / SUMMARY_FILE, SUMMARY_COLUMNS,
                                           data=summary_bytes), task_dir / SUMMARY_FILE)
        summaries.append(summary.loc[:, list(SUMMARY_COLUMNS)])
        if paired_bytes is not None:
            table = read_table(task_dir / PAIRED_FILE, PAIRED_COLUMNS, data=paired_bytes)
            paired.append(check_paired(table, summary, task_dir / PAIRED_FILE)
                          .loc[:, list(PAIRED_COLUMNS)])
    return Tables(
        pd.concat(summaries, ignore_index=True),
        pd.concat(paired, ignore_index=True) if paired else _empty_paired(),
    )
