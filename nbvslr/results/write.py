"""Write a finished task's files: splits, summary, paired, curve.png and run.json.

The files are one unit: every file and ``files.sha256`` (the sha256 of each,
``MANIFEST_FILE``) are rendered, then written to temporary files beside them and flushed to
disk (``files.stage_bytes``: a full disk stops here, the previous finished run's files
untouched), then each is renamed into place, ``files.sha256`` last. A reader checks every
file against it (``nbvslr.results.read``), so it reads the old set or the new set, never a
mix: while the files are being renamed, and after a run killed meanwhile, the files do not
match the manifest and are refused (a resume rebuilds them from the checkpoints). The
previous set keeps a second name (a hard link) until the renames are done: an OS error part
way (EIO, ENOSPC) puts it back, so the previous finished result stays readable. A file of an
earlier run that this run does not write (``paired.csv``, ``curve.png``) is removed first.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from nbvslr.results.files import (
    atomic_write_bytes,
    csv_gz_bytes,
    gz_bytes,
    json_bytes,
    replace_staged,
    stage_bytes,
    table_bytes,
)
from nbvslr.results.layout import (
    CURVE_FILE,
    MANIFEST_FILE,
    PAIRED_FILE,
    RUN_FILE,
    SPLITS_FILE,
    SUMMARY_FILE,
    sort_splits,
    splits_level,
)


def write_task_outputs(
    folder: Path,
    splits: pd.DataFrame,
    run_info: Mapping[str, Any],
    *,
    summary: pd.DataFrame,
    paired: pd.DataFrame | None = None,
    curve: bytes | None = None,
    splits_csv: bytes | None = None,
) -> dict[str, Path]:
    """Write splits, summary, paired (when given), curve.png (the bytes ``curve``, when
    given) and run.json; return their paths by kind.

    The tables are computed by the caller (``nbvslr.runner.outputs``: ``summary`` and
    ``paired`` from ``splits`` in file order, ``sort_splits``); nothing here computes.
    ``splits_csv``: ``csv_bytes`` of ``splits`` in file order, when the caller has them
    (a finished run's, from its checkpoints' lines), gzipped as they are.
    """
    folder = Path(folder)
    level = splits_level(splits)
    if splits_csv is not None:
        splits_gz = gz_bytes(splits_csv, level)
    else:
        splits_gz = csv_gz_bytes(sort_splits(splits), level)
    files: dict[str, tuple[Path, bytes]] = {
        "splits": (folder / SPLITS_FILE, splits_gz),
        "summary": (folder / SUMMARY_FILE, table_bytes(summary)),
    }
    if paired is not None:
        files["paired"] = (folder / PAIRED_FILE, table_bytes(paired))
    if curve is not None:
        files["curve"] = (folder / CURVE_FILE, curve)
    files["run"] = (folder / RUN_FILE, json_bytes(run_info))
    outputs = [*files.values(),
               (folder / MANIFEST_FILE, manifest_bytes(
                   {path.name: data for path, data in files.values()}))]
    staged: list[tuple[Path, Path]] = []
    try:
        for path, data in outputs:  # the manifest too: a full disk stops here
            staged.append((stage_bytes(path, data), path))
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    written = {path.name for path, _ in outputs}
    # an earlier run's files that this run does not write
    stale = [folder / name for name in (PAIRED_FILE, CURVE_FILE) if name not in written]
    targets = [path for _, path in staged] + stale
    new = [path for path in targets if not os.path.lexists(path)]
    kept = _keep_previous(targets)
    try:
        for path in stale:
            path.unlink(missing_ok=True)
        for i, (tmp, path) in enumerate(staged):
            try:
                replace_staged(tmp, path)
            except BaseException:
                for rest, _ in staged[i + 1:]:
                    rest.unlink(missing_ok=True)
                raise
    except BaseException:
        _restore(kept, new, targets)  # an OS error part way: the previous files again
        raise
    for backup in kept.values():
        backup.unlink(missing_ok=True)
    return {key: path for key, (path, _) in files.items()}


def _keep_previous(paths: list[Path]) -> dict[Path, Path]:
    """A second name (a hard link, ``.<name>.prev-<pid>.tmp``) for each of ``paths`` that
    exists, so the previous finished files can be put back if the renames fail part way;
    a file system without hard links keeps none."""
    kept: dict[Path, Path] = {}
    for path in paths:
        if not path.is_file() or path.is_symlink():
            continue
        backup = path.with_name(f".{path.name}.prev-{os.getpid()}.tmp")
        try:
            backup.unlink(missing_ok=True)
            os.link(path, backup)
        except OSError:
            continue
        kept[path] = backup
    return kept


def _restore(kept: dict[Path, Path], new: list[Path], targets: list[Path]) -> None:
    """Put the previous files back (``_keep_previous``) and remove those of ``new`` (no
    previous version); best effort: the error that stopped the write is the one raised."""
    for path in targets:
        try:
            if path in kept:
                os.replace(kept[path], path)
            elif path in new:
                path.unlink(missing_ok=True)
        except OSError:
            continue
    for backup in kept.values():  # a file never replaced: its two names were one file
        backup.unlink(missing_ok=True)


def manifest_bytes(files: Mapping[str, bytes]) -> bytes:
    """``files.sha256``: one ``<sha256>  <name>`` line per file, as ``sha256sum`` writes."""
    return "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n"
                   for name, data in files.items()).encode("ascii")


SEALED_TABLES = (SUMMARY_FILE, PAIRED_FILE, RUN_FILE)
"""What ``seal_tables`` lists: the files the readers read of a folder kept without its
splits (a committed run), not its drawings (drawn again from these tables)."""


def seal_tables(folder: Path) -> bytes:
    """Write ``folder``'s ``files.sha256`` over the tables it holds (``SEALED_TABLES``), so
    the readers check them as they check a run's; return its bytes. A splits.csv.gz or
    curve.png beside them is not listed (to the readers, absent)."""
    folder = Path(folder)
    files = {name: (folder / name).read_bytes() for name in SEALED_TABLES
             if (folder / name).is_file()}
    data = manifest_bytes(files)
    atomic_write_bytes(folder / MANIFEST_FILE, data)
    return data
