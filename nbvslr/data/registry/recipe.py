"""A built-in task named alone (``tasks: [pima]``): the recipes of ``nbvslr.data.recipes``
(Figure 1's 15 panels, adult-mixed and the tasks of K > 2 classes), read from the original
UCI files (``nbvslr.data.sources``: cache, shipped copy, mirror or download, each verified by
sha256) and built by ``nbvslr.data.parse``. A config changes a recipe's open choices through
``overrides:`` (``recipes.resolve_choices``); its target and features are the recipe's."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import nbvslr.data.sources as sources
from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.data.parse import build_dataset, read_rows
from nbvslr.data.recipes import RECIPES, Recipe, resolve_choices
from nbvslr.errors import setting_error

KEY = None
"""Named by its task name, not in ``source:``."""
KEYS = ()
NAMES = tuple(RECIPES)


@dataclass(frozen=True)
class Spec:
    name: str
    recipe: Recipe
    choices: Mapping[str, Any]  # every choice of the recipe, after the overrides (read-only)

    @property
    def sizes(self) -> tuple[int, ...]:
        """The paper's m-grid (``sizes: paper``)."""
        return self.recipe.sizes


def parse(task: TaskSpec) -> Spec:
    for extra in ("target", "features"):
        if getattr(task, extra) is not None:
            raise setting_error(extra, "only inline tasks (with a source:) take this key",
                                task.name, "change a built-in task through overrides:")
    recipe = RECIPES[task.name]
    return Spec(task.name, recipe, MappingProxyType(resolve_choices(recipe, task.overrides)))


def load(spec: Spec, settings: DataSettings) -> Dataset:
    """The recipe's files (verified), parsed and built under its resolved choices; the
    choices and the files' names, sha256 and origin in ``Dataset.notes``."""
    recipe = spec.recipe
    files = recipe.train + (recipe.test if spec.choices.get("pool", True) else ())
    tables, provenance = [], []
    for file in files:
        content, how = sources.read_verified(recipe.dataset, file, settings)
        tables.append((file.name, read_rows(content, file.name, recipe.parse)))
        provenance.append({"name": file.name, "sha256": file.sha256, "source": how})
    return build_dataset(recipe, dict(spec.choices), tables, provenance)


def fetch(name: str, settings: DataSettings) -> Iterable[Path]:
    """Verified copies of every file of the task ``name`` in the cache."""
    recipe = RECIPES[name]
    return [sources.fetch_file(recipe.dataset, file, settings) for file in recipe.files]

