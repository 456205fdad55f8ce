"""Per-size checkpoints of one task: a restarted run skips the sizes already done.

``<task>/.checkpoints/m=<m>.csv.gz`` holds the rows of one finished size, and
``.checkpoints/fingerprint.json`` what they were computed for (the fingerprint) and the
sha256 of each checkpoint's bytes, recorded when it was written. A restarted run with the
same fingerprint skips those sizes; the final files are always rebuilt from the
checkpoints, so a resumed run ends with the same bytes as an uninterrupted one.

A checkpoint is used only if its bytes have the recorded sha256 and its rows are what the
size needs (``check_rows``: the task, the models, its own m, every split once, errors in
[0, 1]). Every checkpoint to be reused is checked when the run starts, before any size is
computed, and again when the final files are built; one that fails is named in a one-line
``ResultsError``: delete it (that size is recomputed) or rerun with ``--force``. A
checkpoint with no recorded sha256 is what a run killed between writing a checkpoint and
recording it leaves: it is deleted and its size recomputed.

The caller holds the task's lock (``nbvslr.results.lock``) while it uses this: one run at a
time writes a task's checkpoints.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from nbvslr.errors import ResultsError
from nbvslr.results.files import (
    atomic_write_bytes,
    csv_gz_bytes,
    read_csv_bytes,
    remove_temp_files,
    write_json,
)
from nbvslr.results.layout import (
    CHECKPOINTS,
    DEFAULT_METRICS,
    FINGERPRINT_FILE,
    SEPARATIONS,
    row_order,
    sort_splits,
    split_columns,
)
from nbvslr.results.read import read_bytes

_CHECKPOINT = re.compile(r"m=(\d+)\.csv\.gz")
CHECKPOINT_LEVEL = 1
"""gzip's level for checkpoints: they are read back once, by this code, so speed counts
more than size (the task's splits.csv.gz keeps level 6, ``layout.splits_level``)."""
FIX = "delete it to recompute that size, or rerun with --force"
"""The fix named by every error about a checkpoint."""


@dataclass(frozen=True)
class Expected:
    """What every checkpoint of a task holds: rows of the task ``task`` only, of the models
    ``models`` (``(name, family)`` pairs), each with the splits ``0 .. splits - 1`` once."""

    task: str
    models: tuple[tuple[str, str], ...]
    splits: int
    metrics: tuple[str, ...] = DEFAULT_METRICS


class Checkpoints:
    """Finished sizes of one task, valid for one fingerprint of the experiment."""

    def __init__(self, folder: Path, fingerprint: str, expected: Expected | None = None) -> None:
        self.folder = Path(folder) / CHECKPOINTS
        self.fingerprint = fingerprint
        self.expected = expected
        self.digests: dict[str, str] = {}

    def path(self, m: int) -> Path:
        return self.folder / f"m={m}.csv.gz"

    @property
    def _stamp(self) -> Path:
        return self.folder / FINGERPRINT_FILE

    def prepare(self, *, force: bool = False) -> int:
        """Drop checkpoints made for another fingerprint (or all of them, with ``force``),
        those with no recorded sha256, and the temporary files a killed run left in the
        task's folder. Returns how many finished sizes of an earlier run with other
        settings were dropped (0 with ``force``: asked for)."""
        self._no_link()
        remove_temp_files(self.folder.parent)
        remove_temp_files(self.folder)
        current, digests = None, {}
        if self._stamp.is_file():
            try:
                stamp = json.loads(self._stamp.read_text("utf-8"))
                current = stamp.get("fingerprint")
                digests = dict(stamp.get("checkpoints", {}))
            except (ValueError, OSError, AttributeError, TypeError):
                current = None
        if force or current != self.fingerprint:
            digests = {}
        files = {p.name for p in self._files()}
        stale = 0 if force or current in (None, self.fingerprint) else len(files)
        for name in files - set(digests):
            (self.folder / name).unlink()  # a save cut short, or another fingerprint's
        self.digests = {name: str(d) for name, d in digests.items() if name in files}
        if force or current != self.fingerprint or self.digests != digests:
            self._record()
        return stale

    def _no_link(self) -> None:
        """``ResultsError`` if the checkpoints' folder is a symbolic link: nothing in a task
        folder is followed through one (its files would be written and deleted elsewhere)."""
        if self.folder.is_symlink():
            raise ResultsError(
                f"{self.folder}: is a symbolic link, which nbvslr never follows inside a task "
                "folder; remove the link (the sizes it held are recomputed)")

    def _files(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return [p for p in self.folder.iterdir() if _CHECKPOINT.fullmatch(p.name)]

    def _record(self) -> None:
        write_json(self._stamp, {"fingerprint": self.fingerprint,
                                 "checkpoints": dict(sorted(self.digests.items()))})

    def done(self) -> set[int]:
        """The sizes that have a checkpoint (with a recorded sha256)."""
        return {int(_CHECKPOINT.fullmatch(name).group(1)) for name in self.digests}

    def save(self, m: int, df: pd.DataFrame) -> None:
        """Write the checkpoint of size ``m``, then record its sha256."""
        data = csv_gz_bytes(sort_splits(df), level=CHECKPOINT_LEVEL)
        self._no_link()
        atomic_write_bytes(self.path(m), data)
        self.digests[self.path(m).name] = hashlib.sha256(data).hexdigest()
        self._record()

    def check(self, sizes: Sequence[int]) -> None:
        """``ResultsError`` naming the first checkpoint of ``sizes`` that is damaged."""
        for m in sizes:
            self._read(m)

    def load(self, sizes: Sequence[int]) -> pd.DataFrame:
        """All rows of ``sizes``, in file order, each checkpoint checked."""
        return self.load_csv(sizes)[0]

    def load_csv(self, sizes: Sequence[int]) -> tuple[pd.DataFrame, bytes | None]:
        """``load(sizes)``, and the CSV bytes of that table (``files.csv_bytes``) made from
        the checkpoints' own lines (``joined_csv``): each value formatted once, when its
        size's checkpoint was written."""
        read = [self._read_raw(m) for m in sizes]
        return joined(read)

    def _read(self, m: int) -> pd.DataFrame:
        return self._read_raw(m)[1]

    def _read_raw(self, m: int) -> tuple[bytes, pd.DataFrame]:
        """The checkpoint of ``m``: its CSV text (decompressed) and its rows, checked."""
        path = self.path(m)
        data = read_bytes(path, FIX)  # a regular file, never a pipe or a link
        recorded = self.digests.get(path.name)
        if recorded is None:
            raise ResultsError(f"{path}: no sha256 recorded for it in {self._stamp}; {FIX}")
        if hashlib.sha256(data).hexdigest() != recorded:
            raise ResultsError(
                f"{path}: damaged (its sha256 is not the one recorded when it was written); "
                f"{FIX}"
            )
        try:
            text = gzip.decompress(data)
            df = read_csv_bytes(text)
        except (OSError, EOFError, ValueError, zlib.error) as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ResultsError(f"{path}: unreadable ({reason}); {FIX}") from None
        if self.expected is not None:
            check_rows(df, path, m, self.expected)
        return text, df


def joined(read: Sequence[tuple[bytes, pd.DataFrame]]) -> tuple[pd.DataFrame, bytes | None]:
    """The checkpoints ``read`` (each its CSV text and the rows read from it) as one table
    in file order, and that table's CSV bytes (``joined_csv``)."""
    frames = [df for _, df in read]
    whole = pd.concat(frames, ignore_index=True)
    table = _named(sort_splits(whole))
    return table, joined_csv([text for text, _ in read], frames, whole, table)


def joined_csv(texts: Sequence[bytes], frames: Sequence[pd.DataFrame], whole: pd.DataFrame,
               table: pd.DataFrame) -> bytes | None:
    """``files.csv_bytes(table)`` from the checkpoints' lines, reordered, without formatting
    a value again; None where that cannot be vouched for (then the caller formats).

    texts : each checkpoint's CSV bytes; frames : the rows read from each; whole : their
    concatenation; table : ``whole`` in file order (``sort_splits``).

    A value read back from a checkpoint is the value written (floats as their shortest
    round-trip text, which pandas' parser reads exactly) and ``csv_bytes`` writes each field
    from its value and its column's type alone, so the lines are the table's own when every
    checkpoint has the table's header and columns of the same types (a column of integers
    in one and of floats in another would be written ``5`` and ``5.0``), and a line per row
    (no field spanning lines).
    """
    if not texts or any(df.dtypes.to_dict() != frames[0].dtypes.to_dict() for df in frames):
        return None
    if list(whole.columns) != list(table.columns):
        return None
    header = ",".join(map(str, table.columns)).encode("utf-8")
    lines: list[bytes] = []
    for text, df in zip(texts, frames, strict=True):
        split = text.split(b"\n")
        if split[0] != header or split[-1] != b"" or len(split) != len(df) + 2:
            return None
        lines.extend(split[1:-1])
    order = row_order(whole)
    if order is None:
        return None
    if not (order == np.arange(len(order))).all():
        lines = [lines[i] for i in order.tolist()]
    return b"\n".join([header, *lines, b""])


def _named(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its ``separation`` as text (an empty field reads NaN: "")."""
    col = df["separation"]
    df["separation"] = col.astype(object).where(col.notna(), "").astype(str)
    return df


def _distinct_str(column: pd.Series) -> set[str]:
    """``str()`` of each distinct value of ``column`` (one call per value, not per row); a
    missing value reads ``'nan'``."""
    return {str(v) for v in pd.unique(column)}


def first_bad_error(error: np.ndarray) -> int | None:
    """The index of the first test error outside [0, 1] (NaN included), or None."""
    bad = ~((error >= 0) & (error <= 1))  # NaN fails both comparisons
    return int(np.flatnonzero(bad)[0]) if bad.any() else None


def check_rows(df: pd.DataFrame, path: Path, m: int, expected: Expected) -> None:
    """``ResultsError`` naming ``path`` unless ``df`` holds the rows of size ``m``: the
    columns ``SPLIT_COLUMNS``, the task, the models, the splits, errors in [0, 1]."""

    def wrong(problem: str) -> ResultsError:
        return ResultsError(f"{path}: not the checkpoint of m = {m} ({problem}); {FIX}")

    want_columns = split_columns(expected.metrics)
    if list(df.columns) != list(want_columns):
        columns = ", ".join(map(str, df.columns))
        raise wrong(f"columns {columns}, not {', '.join(want_columns)}")
    others = sorted(_distinct_str(df["task"]) - {expected.task})
    if others:
        raise wrong(f"rows of task {others[0]}, not {expected.task}")
    sizes = pd.to_numeric(df["m"], errors="coerce")
    if not (sizes == m).all():
        raise wrong(f"rows of m = {df['m'][sizes != m].iloc[0]}")
    # the distinct (model, family) pairs, from each column's codes
    model_codes, models = pd.factorize(df["model"], use_na_sentinel=False)
    family_codes, families = pd.factorize(df["family"], use_na_sentinel=False)
    combined = np.unique(model_codes * max(len(families), 1) + family_codes)
    pairs = {(str(models[c // len(families)]), str(families[c % len(families)]))
             for c in combined}
    if pairs != set(expected.models):
        show = ", ".join(f"{n} ({f})" for n, f in sorted(pairs))
        raise wrong(f"models {show}, not {', '.join(f'{n} ({f})' for n, f in expected.models)}")
    want = np.arange(expected.splits)
    model_names = np.array([str(v) for v in models], dtype=object)
    every_split = pd.to_numeric(df["split"], errors="coerce").to_numpy(dtype=np.float64)
    for name, _ in expected.models:
        splits = every_split[np.isin(model_codes, np.flatnonzero(model_names == name))]
        if splits.shape != want.shape or not np.array_equal(np.sort(splits), want):
            raise wrong(f"model {name} has {len(splits)} rows, not the splits 0 to "
                        f"{expected.splits - 1} once each")
    i = first_bad_error(pd.to_numeric(df["error"], errors="coerce").to_numpy(dtype=np.float64))
    if i is not None:
        raise wrong(f"error {df['error'].iloc[i]} at data row {i + 1} is not in [0, 1]")
    n_iter = pd.to_numeric(df["n_iter"], errors="coerce").to_numpy(dtype=np.float64)
    if not ((n_iter >= 0) & (n_iter == np.floor(n_iter))).all():
        raise wrong("n_iter holds a value that is not a count")
    for column in ("separable", "converged"):
        if not _distinct_str(df[column]) <= {"True", "False"}:
            raise wrong(f"{column} holds a value other than True and False")
    if not _distinct_str(df["separation"]) <= {"nan", *SEPARATIONS}:
        raise wrong(f"separation holds a value other than {', '.join(SEPARATIONS)} or empty")


class MemoryCheckpoints:
    """``Checkpoints`` of a run that writes nothing (``nbvslr.run(..., out=None)``): each
    finished size is kept in memory as the bytes its checkpoint file would hold, and read
    back as that file would be, so the tables are those of a run with a results folder.
    Nothing is resumed: every size is computed."""

    def __init__(self) -> None:
        self._data: dict[int, bytes] = {}

    def prepare(self, *, force: bool = False) -> int:
        self._data.clear()
        return 0

    def done(self) -> set[int]:
        return set(self._data)

    def save(self, m: int, df: pd.DataFrame) -> None:
        self._data[m] = csv_gz_bytes(sort_splits(df), level=CHECKPOINT_LEVEL)

    def check(self, sizes: Sequence[int]) -> None:
        """Nothing to check: no size is ever reused."""

    def load(self, sizes: Sequence[int]) -> pd.DataFrame:
        frames = [read_csv_bytes(self._data[m], compression="gzip") for m in sizes]
        return _named(sort_splits(pd.concat(frames, ignore_index=True)))

    def load_csv(self, sizes: Sequence[int]) -> tuple[pd.DataFrame, None]:
        """``load(sizes)``, and no CSV bytes: a run that writes nothing needs none."""
        return self.load(sizes), None
