"""The data layer: every task, built-in or inline, becomes a ``Dataset`` the same way, through
the registry of sources (``nbvslr.data.registry``, one module per source).

Public API
----------
``BUILTIN_TASKS``
    The 15 tasks of Ng & Jordan's Figure 1, in panel order.
``MULTICLASS_TASKS``
    The built-in tasks of more than two classes (optdigits-10, lymphography-4, lenses-3).
``MIXED_TASKS``
    The built-in tasks of continuous and discrete attributes together (adult-mixed).
``get_recipe(name)``, ``resolve_choices(recipe, overrides)``
    A built-in task's recipe, and its choices after a config's overrides.
``validate_task(spec)``, ``parse_task(spec, where)``
    Check a task spec before any data is read (``ConfigError``); ``parse_task`` returns it
    with its source module's typed spec in ``TaskSpec.parsed``, so that loading it checks
    nothing again.
``absolute_paths(spec, base)``
    An inline task whose source names a local path, with that path made absolute.
``load_task(spec, settings)``
    The task's ``Dataset``, its files taken from the cache, the shipped copies, the mirror
    or a download.
``fetch(names, settings)``, ``task_status(name, settings)``
    Fill the cache; say where a built-in task's files would come from.

Importing this package imports no numpy (the registry, and with it numpy and pandas, is
imported by the functions that parse or load a task): ``nbvslr datasets`` lists the tasks
without it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from nbvslr.data import sources
from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.data.recipes import (
    BUILTIN_TASKS,
    MIXED_TASKS,
    MULTICLASS_TASKS,
    RECIPES,
    Recipe,
    get_recipe,
    resolve_choices,
)

__all__ = [
    "BUILTIN_TASKS",
    "MIXED_TASKS",
    "MULTICLASS_TASKS",
    "RECIPES",
    "Dataset",
    "DataSettings",
    "Recipe",
    "TaskSpec",
    "absolute_paths",
    "fetch",
    "get_recipe",
    "is_text",
    "load_task",
    "parse_task",
    "resolve_choices",
    "task_status",
    "text_task_names",
    "validate_task",
]


def _registry():
    from nbvslr.data import registry  # numpy and pandas: only once a task is parsed

    return registry


def text_task_names() -> tuple[str, ...]:
    """The built-in text tasks' names (sms-spam, 20news, 20news-crypt-graphics)."""
    return _registry().TEXT_TASKS


def is_text(spec: TaskSpec) -> bool:
    """Whether ``spec`` is a text task: a built-in text task by name, ``source: {text|folder:
    ...}``, or ``features: {kind: text}``."""
    return _registry().is_text(spec)


def validate_task(spec: TaskSpec) -> None:
    """Check ``spec`` without reading data (its source module's ``parse``, ``nbvslr.data
    .registry``). Raises ``ConfigError``."""
    parse_task(spec)


def parse_task(spec: TaskSpec, where: str | None = None) -> TaskSpec:
    """``spec`` checked without reading data, returned with its typed spec in ``parsed``
    (parsed here unless it already is). Raises ``ConfigError``, prefixed ``where: ``."""
    return _registry().parsed(spec, where)


def absolute_paths(spec: TaskSpec, base: Path | None = None) -> TaskSpec:
    """``spec`` with the local path its source names (a CSV file, a folder of documents)
    made absolute: read from ``base``, or from the current folder when ``base`` is None;
    parsed first if it is not. Any other task is returned as it is."""
    spec = parse_task(spec)
    path = getattr(spec.parsed, "path", None)
    if not isinstance(path, str):
        return spec
    full = Path(path).expanduser()
    if not full.is_absolute():
        full = base / full if base is not None else full.absolute()
    key = _registry().source_type(spec.source)
    assert spec.source is not None and key is not None
    return replace(spec, source={**spec.source, key: str(full)},
                   parsed=replace(spec.parsed, path=str(full)))


def load_task(spec: TaskSpec, settings: DataSettings) -> Dataset:
    """The ``Dataset`` of one task, read by its source's module from its typed spec (parsed
    here for a ``TaskSpec`` made by hand). A built-in task records its resolved choices and
    its files' names and sha256 in ``Dataset.notes``."""
    return _registry().load(spec, settings)


def fetch(names: Iterable[str], settings: DataSettings) -> list[Path]:
    """Put verified copies of every file of the named built-in tasks (text tasks too) in the
    cache, every name checked first (``ConfigError``, nothing fetched). Returns the cache
    paths, each once, in task order."""
    registry = _registry()
    names = list(names)
    registry.check_builtin(names)
    paths: list[Path] = []
    for name in names:
        for path in registry.fetch(name, settings):
            if path not in paths:
                paths.append(path)
    return paths


def task_status(name: str, settings: DataSettings) -> str:
    """Where the files of a built-in task come from: ``"cached"`` when every file is in the
    cache, else ``"shipped"``, ``"mirror"`` or ``"download"``: the last of these that any of
    its files needs."""
    recipe = get_recipe(name)
    states = {sources.status(recipe.dataset, f, settings) for f in recipe.files}
    for state in ("download", "mirror", "shipped"):
        if state in states:
            return state
    return "cached"
