"""The data layer: every task, built-in or inline, becomes a ``Dataset`` the same way.

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
    with an inline task's typed spec in ``TaskSpec.parsed``, so that loading it checks
    nothing again.
``absolute_paths(spec, base)``
    An inline task whose source names a local path, with that path made absolute.
``load_task(spec, settings)``
    The task's ``Dataset``, its files taken from the cache, the shipped copies, the mirror
    or a download.
``fetch(names, settings)``, ``task_status(name, settings)``
    Fill the cache; say where a task's files would come from.

Inline tasks (``source: {csv|uci|openml|synthetic|frame|text|folder}``) are handled by the
registry of sources ``nbvslr.data.inline``, one module per source;
the built-in text tasks (``nbvslr.data.text.TEXT_TASKS``, named like a built-in task, with
text ``features:`` of their own) by ``nbvslr.data.text``.

Importing this package imports no numpy (``parse`` is imported by ``load_task``, numpy by
``Dataset``'s methods): ``nbvslr datasets`` lists the tasks without it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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
from nbvslr.errors import ConfigError

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
    "validate_task",
]


def _inline():
    from nbvslr.data import inline  # numpy and pandas: only for an inline task

    return inline


def _text():
    from nbvslr.data import text  # numpy and scipy: only for a text task

    return text


def text_task_names() -> tuple[str, ...]:
    """The built-in text tasks' names (``nbvslr.data.text.TEXT_TASKS``)."""
    return tuple(_text().TEXT_TASKS)


def is_text(spec: TaskSpec) -> bool:
    """Whether ``spec`` is a text task: a built-in text task by name, ``source: {text:
    ...}``, or ``features: {kind: text}``."""
    if spec.builtin:
        return spec.name not in RECIPES and spec.name in text_task_names()
    features = spec.features if isinstance(spec.features, Mapping) else {}
    inline = _inline()
    return inline.source_type(spec.source) in inline.TEXT_SOURCES or (
        features.get("kind") == "text")


def validate_task(spec: TaskSpec) -> None:
    """Check ``spec`` without reading data: a built-in name with valid recipe overrides, a
    built-in text task with valid text ``features:``, or an inline task (parsed by its
    source's module, ``nbvslr.data.inline``). Raises ``ConfigError``."""
    parse_task(spec)


def parse_task(spec: TaskSpec, where: str | None = None) -> TaskSpec:
    """``spec`` checked without reading data (``validate_task``), an inline task returned
    with its typed spec in ``parsed``. Raises ``ConfigError``, prefixed ``where: ``."""
    try:
        if spec.builtin and is_text(spec):
            if spec.overrides:
                raise ConfigError(f"overrides: a text task takes no recipe overrides "
                                  f"({', '.join(spec.overrides)}); set its options in "
                                  "features:")
            _text().validate_text_features(spec.features, column=False)
        elif spec.builtin:
            resolve_choices(get_recipe(spec.name), spec.overrides)
    except ConfigError as exc:
        if where:
            raise ConfigError(f"{where}: {exc}") from None
        raise
    if spec.builtin:
        return spec
    return _inline().parsed(spec, where)


def absolute_paths(spec: TaskSpec, base: Path | None = None) -> TaskSpec:
    """``spec`` with the local path its source names (a CSV file, a folder of documents)
    made absolute: read from ``base``, or from the current folder when ``base`` is None;
    parsed first if it is not. Any other task is returned as it is."""
    if spec.builtin:
        return spec
    spec = parse_task(spec)
    path = getattr(spec.parsed, "path", None)
    if not isinstance(path, str):
        return spec
    full = Path(path).expanduser()
    if not full.is_absolute():
        full = base / full if base is not None else full.absolute()
    key = _inline().source_type(spec.source)
    assert spec.source is not None and key is not None
    return replace(spec, source={**spec.source, key: str(full)},
                   parsed=replace(spec.parsed, path=str(full)))


def _files(recipe: Recipe, pool: bool) -> tuple:
    return recipe.train + (recipe.test if pool else ())


def load_task(spec: TaskSpec, settings: DataSettings) -> Dataset:
    """The ``Dataset`` of one task.

    A built-in task reads its recipe's files (verified, see ``nbvslr.data.sources``),
    applies the recipe under the spec's overrides and records the resolved choices and
    the files' names and sha256 in ``Dataset.notes``.
    """
    if not spec.builtin:
        return _inline().load(spec, settings)
    if is_text(spec):
        return _text().load_text(spec.name, spec.features or {}, settings)
    recipe = get_recipe(spec.name)
    choices = resolve_choices(recipe, spec.overrides)
    from nbvslr.data.parse import build_dataset, read_rows  # numpy: only when data is read

    tables, provenance = [], []
    for file in _files(recipe, choices.get("pool", True)):
        content, how = sources.read_verified(recipe.dataset, file, settings)
        tables.append((file.name, read_rows(content, file.name, recipe.parse)))
        provenance.append({"name": file.name, "sha256": file.sha256, "source": how})
    return build_dataset(recipe, choices, tables, provenance)


def fetch(names: Iterable[str], settings: DataSettings) -> list[Path]:
    """Put verified copies of every file of the named built-in tasks (text tasks too) in the
    cache.

    Returns the cache paths, each once, in task order.
    """
    paths: list[Path] = []
    for name in names:
        if name not in RECIPES and name in text_task_names():
            path = _text().fetch_text(name, settings)
            if path not in paths:
                paths.append(path)
            continue
        recipe = get_recipe(name)
        for file in recipe.files:
            path = sources.fetch_file(recipe.dataset, file, settings)
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
