"""Per-size checkpoints of one task: a restarted run skips the sizes already done.

``<task>/.checkpoints/m=<m>.csv.gz`` holds the rows of one finished size, and
``.checkpoints/fingerprint.json`` what they were computed for. A restarted run with the
same fingerprint skips those sizes; the final files are always rebuilt from the
checkpoints, so a resumed run ends with the same bytes as an uninterrupted one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from nbvslr.results.files import remove_temp_files, write_csv_gz, write_json
from nbvslr.results.layout import CHECKPOINTS, FINGERPRINT_FILE, sort_splits
from nbvslr.results.read import read_splits

_CHECKPOINT = re.compile(r"m=(\d+)\.csv\.gz")


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
        stamp = self.folder / FINGERPRINT_FILE
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
        frames = [read_splits(self.path(m), "delete it or rerun with --force") for m in sizes]
        return sort_splits(pd.concat(frames, ignore_index=True))
