"""``source: {csv: path}``: a local CSV file with a header row (or ``header: false``).

Keys: ``sep`` (default ``,``; a longer string is a regular expression, ``'\\s+'`` for runs
of whitespace), ``header`` (default true; false names the columns ``0``, ``1``, ...),
``missing`` and ``na`` (``nbvslr.data.registry.table``). A relative path in a config file is
read from the config's folder (``nbvslr.config``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbvslr.data.csvsource as csvsource
import nbvslr.data.sources as sources
from nbvslr.data.csvsource import TableChoices
from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.data.registry.table import MISSING_KEYS, parse_table
from nbvslr.errors import DataError, setting_error

KEY = "csv"
KEYS = (KEY, "sep", "header", *MISSING_KEYS)
PATH = True
"""It names a local path: a relative one is read from the config's folder."""


@dataclass(frozen=True)
class Spec:
    name: str
    path: str
    sep: str
    header: bool
    table: TableChoices


def parse(task: TaskSpec) -> Spec:
    source = task.source or {}
    path = source[KEY]
    if not isinstance(path, str) or not path.strip():
        raise setting_error("source.csv", "must be a file path", path,
                            "write source: {csv: data.csv}")
    sep = source.get("sep", ",")
    if not isinstance(sep, str) or not sep or sep in ('"', "\n"):
        raise setting_error("source.sep", "must be a separator character", sep, "e.g. sep: ';'")
    if len(sep) > 1:
        try:
            re.compile(sep)
        except re.error as exc:
            raise setting_error(
                "source.sep", f"a separator of more than one character is a regular "
                f"expression, and this one is not valid ({exc})", sep,
                "escape its special characters, e.g. sep: '\\|\\|' for ||",
            ) from None
    header = source.get("header", True)
    if not isinstance(header, bool):
        raise setting_error("source.header", "not true or false", header, "write header: true")
    return Spec(task.name, path, sep, header, parse_table(task, KEY))


def load(spec: Spec, settings: DataSettings) -> Dataset:
    path = Path(spec.path).expanduser()
    table = csvsource.read_csv(path, sep=spec.sep, header=spec.header)
    if table.shape[1] < 2:
        raise DataError(
            f"{path}: {table.shape[1]} column; a task needs a target and a feature: check "
            "source.sep"
        )
    return csvsource.build_dataset(
        table,
        name=spec.name,
        choices=spec.table,
        origin=str(path),
        row_label=csvsource.data_row,
        default_target=None,
        default_features=None,
        notes={"source": "csv", "path": str(path), "sha256": sources.sha256_of(path)},
    )
