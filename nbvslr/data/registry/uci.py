"""``source: {uci: id}``: any importable UCI dataset, through ``ucimlrepo``, cached
(``nbvslr.data.ucisource``). Keys: ``missing`` and ``na`` (``nbvslr.data.registry.table``);
by default the dataset's target and its Feature columns."""

from __future__ import annotations

from dataclasses import dataclass

import nbvslr.data.ucisource as ucisource
from nbvslr.data.csvsource import TableChoices
from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.data.registry.table import MISSING_KEYS, dataset_id, parse_table

KEY = "uci"
KEYS = (KEY, *MISSING_KEYS)


@dataclass(frozen=True)
class Spec:
    name: str
    uci_id: int
    table: TableChoices


def parse(task: TaskSpec) -> Spec:
    uci_id = dataset_id(task, KEY, "a UCI dataset id",
                        "find the id on the dataset's page at archive.ics.uci.edu, e.g. uci: 53")
    return Spec(task.name, uci_id, parse_table(task, KEY))


def load(spec: Spec, settings: DataSettings) -> Dataset:
    return ucisource.load(spec.name, spec.uci_id, spec.table, settings)
