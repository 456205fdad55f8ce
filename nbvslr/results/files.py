"""The one way a file of nbvslr reaches the disk: atomic, fsynced, an ordinary file mode.

Every file (a task's tables and run.json, checkpoints, figures, the report) is written to a
temporary file in the same folder, a dot-file ending in ``.tmp``, flushed to disk, then
``os.replace``-d. A run killed mid-write may leave such a file behind; the next run of the
task removes them (``remove_temp_files``).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nbvslr.results.layout import FLOAT_FORMAT, TEXT_COLUMNS

_TEMP = re.compile(r"\..+\.tmp")


def _file_mode() -> int:
    # mkstemp creates files readable by their owner only; results are ordinary files.
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


_MODE = _file_mode()


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder."""
    tmp = stage_bytes(path, data)
    replace_staged(tmp, path)


def stage_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to a temporary file beside ``path``, flushed to disk; return its path
    (``replace_staged`` puts it in place). A failure (a full disk) removes it and names
    ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _MODE)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        if exc.filename is not None:
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from None  # name the file
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def replace_staged(tmp: Path, path: str | os.PathLike) -> None:
    """``os.replace`` a file of ``stage_bytes`` onto ``path`` (a symbolic link at ``path`` is
    replaced, never followed); the temporary file is removed if that fails."""
    try:
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """``atomic_write_bytes`` of ``text`` in UTF-8."""
    atomic_write_bytes(path, text.encode("utf-8"))


def remove_temp_files(folder: Path) -> list[Path]:
    """Delete the temporary files (``.<name>.<random>.tmp``) a killed run left in ``folder``."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    stale = [p for p in folder.iterdir() if _TEMP.fullmatch(p.name) and p.is_file()]
    for path in stale:
        path.unlink(missing_ok=True)
    return stale


MISSING = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
           "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null")
"""The cells pandas reads as missing by default; in a table's other columns than
``TEXT_COLUMNS`` they still are."""


def read_csv_bytes(data: bytes, compression: str | None = None) -> pd.DataFrame:
    """A table from its CSV bytes (gzipped for ``compression="gzip"``), as ``pd.read_csv``
    reads it except the name columns (``TEXT_COLUMNS``): those hold the text written, so any
    name a config accepts (``1``, ``2.0``, ``NaN``, ``NA``) reads back as itself."""
    header = pd.read_csv(io.BytesIO(data), compression=compression, nrows=0).columns
    text = [c for c in header if c in TEXT_COLUMNS]
    # separation is text, or empty (NaN) where the model does not tell the kinds apart
    kinds = {"separation": object} if "separation" in header else {}
    return pd.read_csv(io.BytesIO(data), compression=compression, keep_default_na=False,
                       na_values={c: list(MISSING) for c in header if c not in text},
                       dtype={**dict.fromkeys(text, str), **kinds})


def csv_bytes(df: pd.DataFrame) -> bytes:
    """A table as CSV bytes; floats as shortest round-trip text (the raw split errors).

    The bytes of pandas' ``df.to_csv(index=False, lineterminator="\\n")``. A table of the
    plain columns of a splits table (integers, floats, booleans, strings with nothing to
    quote) is written here, each distinct value formatted once as pandas formats it, several
    times faster than pandas' writer; any other table goes through pandas itself."""
    fields = _plain_fields(df)
    if fields is None:
        return df.to_csv(index=False, lineterminator="\n").encode("utf-8")
    lines = [",".join(map(str, df.columns))]
    lines.extend(map(",".join, zip(*fields, strict=True)))
    lines.append("")
    return "\n".join(lines).encode("utf-8")


_QUOTED = re.compile(r'[,"\r\n]')
"""What makes pandas' CSV writer quote a field (``csv.QUOTE_MINIMAL``, delimiter ``,``)."""


def _plain_fields(df: pd.DataFrame) -> list[list[str]] | None:
    """Each column of ``df`` as the list of its CSV fields, as pandas writes them (its
    ``get_values_for_csv``: ``astype(str)`` of numbers and booleans, strings as they are),
    or None when a column is anything else or holds a value pandas would write otherwise (a
    negative zero, a missing string, a string to quote, or an empty string as the only field
    of a row), or ``df`` has an index."""
    if not isinstance(df.index, pd.RangeIndex) or df.columns.empty or not all(
            isinstance(c, str) and c and not _QUOTED.search(c) for c in df.columns):
        return None
    fields = []
    empty_ok = df.shape[1] > 1  # an empty field is quoted only when it is the whole row
    for _, column in df.items():
        dtype = column.dtype
        kind = dtype.kind if isinstance(dtype, np.dtype) else "?"
        if kind in "iub" or (kind == "f" and dtype.itemsize == 8):
            values = column.to_numpy()
            if kind == "f" and np.signbit(values[values == 0]).any():
                return None
            # each distinct value formatted once, as pandas does (numpy's astype(str), whose
            # floats are Python's repr); a missing value (NaN: np.unique keeps one, last)
            # written empty, as pandas does
            distinct, where = np.unique(values, return_inverse=True)
            if kind == "f":  # Python's repr: the same shortest round trip, 2x faster
                text = np.array(list(map(repr, distinct.tolist())) + [""], dtype=object)
                text[:-1][np.isnan(distinct)] = ""
            else:
                text = np.array(distinct.astype(str).tolist() + [""], dtype=object)
        elif kind == "O" or isinstance(dtype, pd.StringDtype):
            codes, distinct = pd.factorize(column, use_na_sentinel=True)
            if (codes < 0).any() or not all(
                    type(v) is str and (v or empty_ok) and not _QUOTED.search(v)
                    for v in distinct):
                return None
            where = codes
            text = np.array(list(distinct) + [""], dtype=object)
        else:
            return None
        fields.append(text[where].tolist())
    return fields


def csv_gz_bytes(df: pd.DataFrame, level: int = 6) -> bytes:
    """A table as gzipped CSV with a fixed header (mtime 0, no name): same rows, same bytes.
    ``level`` is gzip's (6, its default, for the files a run leaves; a checkpoint, read
    back once by the same code, takes 1: about 4x faster, 30% larger)."""
    return gz_bytes(csv_bytes(df), level)


def gz_bytes(data: bytes, level: int = 6) -> bytes:
    """``data`` gzipped with a fixed header (mtime 0, no name), at gzip's ``level``."""
    return gzip.compress(data, compresslevel=level, mtime=0)


def table_bytes(df: pd.DataFrame) -> bytes:
    """A summary table as CSV bytes, floats as ``FLOAT_FORMAT``."""
    return df.to_csv(index=False, float_format=FLOAT_FORMAT, lineterminator="\n").encode()


def write_csv_gz(path: Path, df: pd.DataFrame) -> None:
    """Write ``csv_gz_bytes(df)`` atomically."""
    atomic_write_bytes(path, csv_gz_bytes(df))


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
