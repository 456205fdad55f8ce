"""The results folder: deterministic files, atomic writes, per-size checkpoints.

Layout, for each task, in ``<out>/<task>/``:

- ``splits.csv.gz``: one row per (model, m, split), columns ``SPLIT_COLUMNS``, sorted by
  model, m, split; gzip with ``mtime = 0`` and no file name, so the bytes depend only on
  the numbers.
- ``summary.csv``: ``nbvslr.stats.summarize`` of it, floats written as ``%.10g``.
- ``paired.csv``: ``nbvslr.stats.paired_summary`` of the first nb-family model against the
  first lr-family model (when the run has both).
- ``run.json``: the resolved config, the task, the models, asymptotic and majority-class
  errors, package versions, timings and the machine.
- ``curve.png``: ``nbvslr.plots.plot_task``.
- ``.checkpoints/m=<m>.csv.gz``: the rows of one finished size, plus
  ``.checkpoints/fingerprint.json``. A restarted run with the same fingerprint skips those
  sizes; the final files are always rebuilt from the checkpoints, so a resumed run ends with
  the same bytes as an uninterrupted one.

Every file is written to a temporary file in the same folder, a dot-file ending in ``.tmp``,
then ``os.replace``-d. A run killed mid-write may leave such a file behind; the next run of
the task removes them (``remove_temp_files``). The task's files are rendered first and
written last, one after the other, so a run killed while writing them leaves at worst a
few of them new and the others from the previous finished run.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from nbvslr.errors import ResultsError

SPLIT_COLUMNS = (
    "task", "model", "family", "m", "split", "error", "separable", "n_iter", "converged",
)
FLOAT_FORMAT = "%.10g"
CHECKPOINTS = ".checkpoints"
_CHECKPOINT = re.compile(r"m=(\d+)\.csv\.gz")
_TEMP = re.compile(r"\..+\.tmp")


def _file_mode() -> int:
    # mkstemp creates files readable by their owner only; results are ordinary files.
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


_MODE = _file_mode()


# --------------------------------------------------------------------------- low level


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def remove_temp_files(folder: Path) -> list[Path]:
    """Delete the temporary files (``.<name>.<random>.tmp``) a killed run left in ``folder``."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    stale = [p for p in folder.iterdir() if _TEMP.fullmatch(p.name) and p.is_file()]
    for path in stale:
        path.unlink(missing_ok=True)
    return stale


def csv_bytes(df: pd.DataFrame) -> bytes:
    """A table as CSV bytes; floats as shortest round-trip text (the raw split errors)."""
    return df.to_csv(index=False, lineterminator="\n").encode("utf-8")


def csv_gz_bytes(df: pd.DataFrame) -> bytes:
    """A table as gzipped CSV with a fixed header (mtime 0, no name): same rows, same bytes."""
    return gzip.compress(csv_bytes(df), compresslevel=6, mtime=0)


def write_csv_gz(path: Path, df: pd.DataFrame) -> None:
    """Write ``csv_gz_bytes(df)`` atomically."""
    atomic_write_bytes(path, csv_gz_bytes(df))


def read_splits(path: Path) -> pd.DataFrame:
    """Read a ``splits.csv.gz`` or a checkpoint, floats parsed exactly."""
    try:
        df = pd.read_csv(path)  # pandas >= 3 parses floats exactly (round trip) by default
    except (OSError, EOFError, ValueError) as exc:  # truncated gzip, bad CSV (ParserError)
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ResultsError(
            f"{path}: unreadable ({reason}); delete it or rerun with --force"
        ) from None
    missing = [c for c in SPLIT_COLUMNS if c not in df.columns]
    if missing:
        raise ResultsError(f"{path}: missing columns {', '.join(missing)}; rerun with --force")
    return df


def json_bytes(obj: Any) -> bytes:
    text = json.dumps(obj, indent=2, sort_keys=False, default=_json_default) + "\n"
    return text.encode("utf-8")


def write_json(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, json_bytes(obj))


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):  # numpy scalars and arrays
        return obj.tolist()
    if isinstance(obj, Mapping):
        return dict(obj)
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    return str(obj)


def task_dir(out: Path, task: str) -> Path:
    """``out / task``, refusing any name that would leave ``out``."""
    if not task or "/" in task or "\\" in task or ".." in task or task.startswith("."):
        raise ResultsError(f"task name {task!r} is not a plain folder name; rename the task")
    base = Path(out).resolve()
    path = (base / task).resolve()
    if path.parent != base:
        raise ResultsError(f"task name {task!r} leaves the results folder {out}")
    return Path(out) / task


def sort_splits(df: pd.DataFrame) -> pd.DataFrame:
    """Rows in file order (model, m, split) and columns in ``SPLIT_COLUMNS`` order."""
    df = df.loc[:, list(SPLIT_COLUMNS)]
    return df.sort_values(["model", "m", "split"], kind="mergesort").reset_index(drop=True)


# --------------------------------------------------------------------------- checkpoints


class Checkpoints:
    """Finished sizes of one task, valid for one fingerprint of the experiment."""

    def __init__(self, folder: Path, fingerprint: str) -> None:
        self.folder = Path(folder) / CHECKPOINTS
        self.fingerprint = fingerprint

    def path(self, m: int) -> Path:
        return self.folder / f"m={m}.csv.gz"

    def prepare(self, *, force: bool = False) -> None:
        """Drop checkpoints made for another fingerprint (or all of them, with ``force``),
        and the temporary files a killed run left in the task's folder."""
        remove_temp_files(self.folder.parent)
        remove_temp_files(self.folder)
        stamp = self.folder / "fingerprint.json"
        current = None
        if stamp.is_file():
            try:
                current = json.loads(stamp.read_text("utf-8")).get("fingerprint")
            except (ValueError, OSError, AttributeError):
                current = None
        if force or current != self.fingerprint:
            for old in self.folder.glob("m=*.csv.gz"):
                old.unlink()
            write_json(stamp, {"fingerprint": self.fingerprint})

    def done(self) -> set[int]:
        """The sizes that have a checkpoint."""
        if not self.folder.is_dir():
            return set()
        found = (_CHECKPOINT.fullmatch(p.name) for p in self.folder.iterdir())
        return {int(f.group(1)) for f in found if f}

    def save(self, m: int, df: pd.DataFrame) -> None:
        write_csv_gz(self.path(m), sort_splits(df))

    def load(self, sizes: Sequence[int]) -> pd.DataFrame:
        """All rows of ``sizes``, in file order."""
        frames = [read_splits(self.path(m)) for m in sizes]
        return sort_splits(pd.concat(frames, ignore_index=True))


# --------------------------------------------------------------------------- task outputs


def pick_pair(models: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """(first nb-family model, first lr-family model) from ``(name, family)`` pairs."""
    nb = next((name for name, fam in models if fam == "nb"), None)
    lr = next((name for name, fam in models if fam == "lr"), None)
    return (nb, lr) if nb and lr else None


def write_task_outputs(
    folder: Path,
    splits: pd.DataFrame,
    run_info: Mapping[str, Any],
    pair: tuple[str, str] | None,
    *,
    plot: bool = True,
) -> dict[str, Path]:
    """Write splits, summary, paired, curve.png and run.json; return their paths.

    Every file is rendered before the first is written, and run.json is written last.
    """
    from nbvslr import stats

    folder = Path(folder)
    splits = sort_splits(splits)
    summary = stats.summarize(splits)
    paired = stats.paired_summary(splits, *pair) if pair is not None else None
    files: dict[str, tuple[Path, bytes]] = {
        "splits": (folder / "splits.csv.gz", csv_gz_bytes(splits)),
        "summary": (folder / "summary.csv", _table_bytes(summary)),
    }
    if paired is not None:
        files["paired"] = (folder / "paired.csv", _table_bytes(paired))
    if plot:
        files["curve"] = (folder / "curve.png", _curve_png(summary, run_info, paired))
    files["run"] = (folder / "run.json", json_bytes(run_info))
    for path, data in files.values():
        atomic_write_bytes(path, data)
    return {key: path for key, (path, _) in files.items()}


def _table_bytes(df: pd.DataFrame) -> bytes:
    return df.to_csv(index=False, float_format=FLOAT_FORMAT, lineterminator="\n").encode()


def _curve_png(summary: pd.DataFrame, run_info: Mapping[str, Any], paired) -> bytes:
    from matplotlib.figure import Figure

    from nbvslr import plots

    fig = Figure(figsize=(5, 3.6), dpi=100)  # no pyplot: no global state, Agg canvas
    ax = fig.add_subplot()
    plots.plot_task(ax, summary, run_info, paired=paired)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()
