"""Write a finished task's files: splits, summary, paired, curve.png and run.json.

Every file is rendered before the first is written, and written one after the other
(``files.atomic_write_bytes``), run.json last: a run killed while writing them leaves at
worst a few of them new and the others from the previous finished run.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from nbvslr.results.files import atomic_write_bytes, csv_gz_bytes, json_bytes, table_bytes
from nbvslr.results.layout import (
    CURVE_FILE,
    PAIRED_FILE,
    RUN_FILE,
    SPLITS_FILE,
    SUMMARY_FILE,
    sort_splits,
)


def write_task_outputs(
    folder: Path,
    splits: pd.DataFrame,
    run_info: Mapping[str, Any],
    *,
    summary: pd.DataFrame,
    paired: pd.DataFrame | None = None,
    curve: bytes | None = None,
) -> dict[str, Path]:
    """Write splits, summary, paired (when given), curve.png (the bytes ``curve``, when
    given) and run.json; return their paths by kind.

    The tables are computed by the caller (``nbvslr.runner.outputs``: ``summary`` and
    ``paired`` from ``splits`` in file order, ``sort_splits``); nothing here computes.
    """
    folder = Path(folder)
    splits = sort_splits(splits)
    files: dict[str, tuple[Path, bytes]] = {
        "splits": (folder / SPLITS_FILE, csv_gz_bytes(splits)),
        "summary": (folder / SUMMARY_FILE, table_bytes(summary)),
    }
    if paired is not None:
        files["paired"] = (folder / PAIRED_FILE, table_bytes(paired))
    if curve is not None:
        files["curve"] = (folder / CURVE_FILE, curve)
    files["run"] = (folder / RUN_FILE, json_bytes(run_info))
    for path, data in files.values():
        atomic_write_bytes(path, data)
    return {key: path for key, (path, _) in files.items()}
