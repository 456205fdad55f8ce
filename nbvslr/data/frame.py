"""In-memory tables: a task made in Python from a pandas DataFrame or numpy arrays
(``nbvslr.Task.from_frame``, ``nbvslr.Task.from_arrays``).

A ``Frame`` is the table as the CSV reader would give it (every cell stripped text, a
missing value an empty cell) and the sha256 of that text, so an in-memory task follows
the CSV rules of ``nbvslr.data.csvsource`` (target, positive class, kind, missing values,
scaling, levels) and its per-process cache key and checkpoint fingerprint name its data.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pandas as pd

import nbvslr.data.csvsource as csvsource
from nbvslr.data.csvsource import MAX_COLUMNS, PARSE_CELL_BYTES, PARSE_COLUMN_BYTES
from nbvslr.errors import ConfigError


def _cell(value: Any) -> str:
    """One cell as text: a missing value (None, NaN, NaT, pd.NA) is the empty cell; a
    float keeps every digit (``repr``)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    if isinstance(value, float | np.floating):
        return repr(float(value))
    return str(value).strip()


class Frame:
    """A table held in memory, as text cells, with its sha256.

    Attributes
    ----------
    table : DataFrame of str, shape (N, columns)
    sha256 : str
        Of the column names and cells (tab- and newline-separated text).
    numeric : tuple of str
        The columns whose pandas dtype was numeric (before the text conversion).
    """

    def __init__(self, df: pd.DataFrame) -> None:
        if not isinstance(df, pd.DataFrame):
            raise ConfigError(
                f"source.frame: not a pandas DataFrame ({type(df).__name__}); "
                "give a DataFrame, or use Task.from_arrays for numpy arrays")
        _check_size(*df.shape)
        columns = [str(c).strip() for c in df.columns]
        if len(set(columns)) != len(columns):
            twice = next(c for c in columns if columns.count(c) > 1)
            raise ConfigError(f"source.frame: the column {twice!r} appears twice; "
                              "give each column its own name")
        self.numeric = tuple(str(c).strip() for c in df.columns
                             if pd.api.types.is_numeric_dtype(df[c])
                             and not pd.api.types.is_bool_dtype(df[c]))
        table = pd.DataFrame({name: [_cell(v) for v in df.iloc[:, j].tolist()]
                              for j, name in enumerate(columns)}, dtype=str)
        table.columns = columns
        self.table = table
        self.sha256 = _sha256(columns, table)

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.table.shape[0]), int(self.table.shape[1]))

    def __repr__(self) -> str:  # names the data in cache keys, fingerprints and run.json
        rows, cols = self.shape
        return f"<DataFrame of {rows} rows x {cols} columns, sha256 {self.sha256}>"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Frame) and other.sha256 == self.sha256

    def __hash__(self) -> int:
        return hash(self.sha256)

    def __deepcopy__(self, memo: dict[int, Any]) -> Frame:
        return self  # never changed after it is made


def _sha256(columns: list[str], table: pd.DataFrame) -> str:
    """sha256 of the column names and cells, each column a JSON list of its cells: a tab or
    a newline inside a cell is escaped, so two different tables never give the same text,
    and a lone surrogate is written as its escape, never an encoding error."""
    digest = hashlib.sha256(json.dumps(columns).encode("ascii"))
    for j in range(table.shape[1]):
        digest.update(b"\n" + json.dumps(table.iloc[:, j].tolist()).encode("ascii"))
    return digest.hexdigest()


def _check_size(rows: int, columns: int) -> None:
    """``ConfigError`` for a table wider than a CSV may be (``csvsource.MAX_COLUMNS``) or whose
    cells as text would not fit in memory, as the CSV reader refuses them, before any cell is
    converted."""
    if columns > MAX_COLUMNS:
        raise ConfigError(
            f"memory: the DataFrame has {columns} columns, more than the {MAX_COLUMNS} a task "
            "may read; keep only the columns the task needs")
    need = PARSE_CELL_BYTES * rows * columns + PARSE_COLUMN_BYTES * columns
    have = csvsource.memory_bytes()
    if need > have:
        raise ConfigError(
            f"memory: the DataFrame's {rows} rows x {columns} columns as text would need "
            f"{need / (1 << 30):.1f} GiB, more than the {have / (1 << 30):.1f} GiB it may use "
            "here; use fewer rows or columns")


def row_label(i: int) -> str:
    """Row position -> how a person finds it in the DataFrame: ``row 0`` is the first."""
    return f"row {i}"
