"""``source: {frame: Frame}``: a table in memory (``nbvslr.data.frame.Frame``), made from
Python by ``nbvslr.Task.from_frame`` / ``from_arrays`` and read by the CSV rules. Keys:
``missing`` and ``na`` (``nbvslr.data.registry.table``)."""

from __future__ import annotations

from dataclasses import dataclass

import nbvslr.data.csvsource as csvsource
import nbvslr.data.frame as frames
from nbvslr.data.csvsource import TableChoices
from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.data.frame import Frame
from nbvslr.data.registry.table import MISSING_KEYS, parse_table
from nbvslr.errors import setting_error

KEY = "frame"
KEYS = (KEY, *MISSING_KEYS)


@dataclass(frozen=True)
class Spec:
    name: str
    frame: Frame
    table: TableChoices


def parse(task: TaskSpec) -> Spec:
    held = (task.source or {})[KEY]
    if not isinstance(held, Frame):
        raise setting_error(
            "source.frame", "an in-memory table is given from Python only",
            type(held).__name__,
            "use nbvslr.Task.from_frame(df, ...) or Task.from_arrays(X, y, ...)",
        )
    return Spec(task.name, held, parse_table(task, KEY))


def load(spec: Spec, settings: DataSettings) -> Dataset:
    held = spec.frame
    return csvsource.build_dataset(
        held.table, name=spec.name, choices=spec.table, origin=f"{spec.name} (DataFrame)",
        row_label=frames.row_label, default_target=None, default_features=None,
        notes={"source": "frame", "rows": held.shape[0], "sha256": held.sha256},
        missing_fix='give Task.from_frame(..., missing="drop") to drop such rows, or '
                    'fill them in',
    )
