"""``source: {synthetic: {...}}``: data drawn from a model with a known truth
(``nbvslr.data.synthetic``, ``nbvslr.data.symmetric``); it makes its own target and
features."""

from __future__ import annotations

from dataclasses import dataclass

import nbvslr.data.synthetic as synthetic
from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.data.registry.table import no_table
from nbvslr.data.symmetric import SymmetricParams
from nbvslr.data.synthetic import SyntheticParams

KEY = "synthetic"
KEYS = (KEY,)


@dataclass(frozen=True)
class Spec:
    name: str
    params: SyntheticParams | SymmetricParams


def parse(task: TaskSpec) -> Spec:
    params = synthetic.parse_params((task.source or {})[KEY])
    no_table(task, "a synthetic task makes its own target and features",
             "remove {key}: (set kind: and features: inside synthetic:)")
    return Spec(task.name, params)


def load(spec: Spec, settings: DataSettings) -> Dataset:
    return synthetic.load(spec.name, spec.params)
