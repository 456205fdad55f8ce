"""``source: {openml: id}``: any OpenML dataset (dense ARFF), downloaded once into the cache
and verified against the md5 OpenML publishes (``nbvslr.data.openml``). Keys: ``missing``
and ``na`` (``nbvslr.data.registry.table``); by default the dataset's default target, and its
other numeric and nominal columns as continuous and discrete features."""

from __future__ import annotations

from dataclasses import dataclass

import nbvslr.data.openml as openml
from nbvslr.data.csvsource import TableChoices
from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.data.registry.table import MISSING_KEYS, dataset_id, parse_table

KEY = "openml"
KEYS = (KEY, *MISSING_KEYS)


@dataclass(frozen=True)
class Spec:
    name: str
    dataset_id: int
    table: TableChoices


def parse(task: TaskSpec) -> Spec:
    number = dataset_id(task, KEY, "an OpenML dataset id",
                        "find the id in the dataset's address, openml.org/d/<id>, e.g. openml: 31")
    return Spec(task.name, number, parse_table(task, KEY))


def load(spec: Spec, settings: DataSettings) -> Dataset:
    return openml.load(spec.name, spec.dataset_id, spec.table, settings)
