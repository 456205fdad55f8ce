"""The registry of sources: every task, built-in or the user's, is read by one module of
this package, named by one line of ``MODULES``.

A task named alone (``tasks: [pima]``, ``[sms-spam]``, ``[20news]``) is built in: the module
whose ``NAMES`` holds its name reads it (``recipe``: Figure 1's panels, adult-mixed and the
K-class tasks; ``sms``; ``newsgroups``). A task with a ``source:`` is inline: the module whose
``KEY`` names its source reads it. A module has its ``KEY`` (or None), ``KEYS`` (every key its
``source:`` takes), ``NAMES`` (the built-in tasks it serves, if any), a frozen ``Spec``,
``parse(task) -> Spec`` (every check, one-line ``ConfigError``s, before any data is read)
and ``load(spec, settings) -> Dataset``; and, where they apply, ``TEXT = True`` (always a
text task), ``PATH = True`` (``Spec.path`` is a local path, read from the config's folder),
``Spec.sizes`` (the paper's grid, for ``sizes: paper``) and ``fetch(name, settings)`` (fill
the cache for ``nbvslr datasets fetch``). A source takes no recipe ``overrides:`` unless its
``parse`` reads them (the registry refuses them for every ``source:``). The config parses
each task once (``parse``, kept in ``TaskSpec.parsed``); ``load`` reads it without checking
it again. Adding a source: one module here, its import and its entry in ``MODULES``
(docs/data.md, "Adding a source").

Some sources::

    - name: mydata
      source: {csv: path/to/file.csv}      # a local CSV with a header row
      target: {column: class, positive: [yes]}
      features: {kind: continuous, columns: [a, b, c]}     # or {drop: [id]}

    - name: wine
      source: {uci: 109}                   # any importable UCI dataset, via ucimlrepo
      target: {column: class, positive: [1]}

    - name: toy
      source: {synthetic: {generator: nb, rows: 1000, features: 10}}

    - name: blood
      source: {openml: 1464}               # an OpenML dataset, cached and verified

A CSV column of documents is a text task (``features: {kind: text, column: NAME}``, the other
columns ignored, the target as for any CSV task), and ``source: {text: NAME}`` is the
built-in text task ``NAME`` under a name of the config's (so that one corpus can appear
twice, with other vocabulary options: ``nbvslr.data.text``)::

    - name: sms-200
      source: {text: sms-spam}
      features: {kind: text, vocabulary: all, max_features: 200}

A fourth, ``source: {frame: ...}``, is a table in memory (``nbvslr.data.frame.Frame``), made
from Python by ``nbvslr.Task.from_frame`` / ``from_arrays`` and read by the CSV rules.

Keys of ``source`` (besides the one naming it):

``sep`` (csv)
    The field separator, default ``,``; a longer string is a regular expression
    (``'\\s+'`` for runs of whitespace).
``header`` (csv)
    ``true`` (default): the first line names the columns; ``false``: columns are named by
    position, ``0``, ``1``, ...
``missing`` (csv, uci, openml)
    ``error`` (default) refuses missing cells in the columns used; ``drop`` drops those rows;
    ``level`` (discrete features) makes "missing" a level of its own.
``na`` (csv, uci, openml)
    Cell values that mean "missing", besides an empty cell. Default
    ``["?", "NA", "N/A", "NaN", "nan", "null"]``.

``target`` (csv, uci, openml): ``column`` (default: the UCI or OpenML dataset's target,
or a CSV's last column) and ``positive``, the values counted as class 1 (default: of
exactly two values, the second in sorted order; of more, every value is a class of its
own), or ``classes``, the values kept as classes (the rows of other values are dropped).
``features`` (csv, uci, openml): ``kind`` (``continuous`` or ``discrete``; default:
continuous when every column is numeric, discrete when none is), and either ``columns``
(the features) or ``drop`` (columns to leave out; default: every other column, or for UCI
and OpenML the dataset's feature columns). A relative CSV path in a config file is read
from the config's folder. The table rules (missing values, scaling, levels, constant
columns) are in ``nbvslr.data.csvsource``; the synthetic generators in
``nbvslr.data.synthetic``; the UCI cache in ``nbvslr.data.ucisource``; OpenML's in
``nbvslr.data.openml``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from types import ModuleType
from typing import Any

from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.data.registry import (
    csv,
    folder,
    frame,
    newsgroups,
    openml,
    recipe,
    sms,
    synthetic,
    text,
    uci,
)
from nbvslr.errors import (
    ConfigError,
    check_known_keys,
    did_you_mean,
    setting_error,
    show,
    with_hint,
)

#: The sources, in the order their names are listed.
MODULES: tuple[ModuleType, ...] = (recipe, sms, newsgroups, csv, uci, openml, synthetic, frame,
                                   text, folder)

#: source key -> its module (the inline sources).
REGISTRY: dict[str, ModuleType] = {m.KEY: m for m in MODULES if m.KEY is not None}
SOURCES: tuple[str, ...] = tuple(REGISTRY)
#: built-in task name -> its module.
BUILTIN: dict[str, ModuleType] = {name: m for m in MODULES for name in getattr(m, "NAMES", ())}
#: The built-in text tasks (those of a ``TEXT`` module), in the order they are listed.
TEXT_TASKS: tuple[str, ...] = tuple(n for n, m in BUILTIN.items() if getattr(m, "TEXT", False))
#: The sources whose tasks are text tasks whatever their ``features:`` say.
TEXT_SOURCES: tuple[str, ...] = tuple(k for k, m in REGISTRY.items() if getattr(m, "TEXT", False))
#: The sources that name a local path (``Spec.path``).
PATH_SOURCES: tuple[str, ...] = tuple(k for k, m in REGISTRY.items() if getattr(m, "PATH", False))


def source_type(source: Any) -> str | None:
    """The key naming the source of a raw ``source:`` mapping (the first known one), or
    None."""
    if not isinstance(source, Mapping):
        return None
    return next((k for k in SOURCES if k in source), None)


def module_of(task: TaskSpec) -> ModuleType | None:
    """The module that reads ``task``: by its source's key, or by its name when it has no
    ``source:``; None when there is none (``parse`` says why)."""
    if task.source is None:
        return BUILTIN.get(task.name)
    key = source_type(task.source)
    return REGISTRY[key] if key is not None else None


def is_text(task: TaskSpec) -> bool:
    """Whether ``task`` is a text task: read by a ``TEXT`` module, or ``features: {kind:
    text}``."""
    module = module_of(task)
    features = task.features if isinstance(task.features, Mapping) else {}
    return bool(getattr(module, "TEXT", False)) or features.get("kind") == "text"


def parse(task: TaskSpec, where: str | None = None) -> Any:
    """The typed spec of a task (its module's ``Spec``), every key checked.

    Raises ``ConfigError`` with one line: ``[where: ]<key>: <problem> (<value>); <fix>``.
    """
    try:
        return _parse(task)
    except ConfigError as exc:
        if where:
            raise ConfigError(f"{where}: {exc}") from None
        raise


def _unknown(name: str) -> ConfigError:
    recipes = [n for n in BUILTIN if n not in TEXT_TASKS]
    return ConfigError(
        f"{with_hint('unknown task', name, BUILTIN)} ({show(name)}); use a built-in task "
        f"({', '.join(recipes)}), a text task ({', '.join(TEXT_TASKS)}) or give an inline "
        "task a source:")


def _parse(task: TaskSpec) -> Any:
    source = task.source
    if source is None:
        if task.name not in BUILTIN:
            raise _unknown(task.name)
        return BUILTIN[task.name].parse(task)
    if not isinstance(source, Mapping) or not source:
        raise setting_error(
            "source", "must name one source", source,
            "write source: {csv: path}, {uci: id}, {openml: id} or {synthetic: {...}}",
        )
    named = [k for k in SOURCES if k in source]
    if len(named) != 1:
        if named:
            problem = f"names {len(named)} sources"
        else:
            first = str(next(iter(source)))
            problem = with_hint("names no known source", first, SOURCES)
        raise setting_error(
            "source", problem, ", ".join(map(str, source)) or source,
            "give exactly one of csv: path, uci: id, openml: id, synthetic: {...}",
        )
    module = REGISTRY[named[0]]
    check_known_keys("source", source, module.KEYS)
    if task.overrides:
        raise setting_error(
            "overrides", "only built-in tasks take recipe overrides", ", ".join(task.overrides),
            "set an inline task's choices in source:, target: and features:",
        )
    return module.parse(task)


def parsed(task: TaskSpec, where: str | None = None) -> TaskSpec:
    """``task`` with its typed spec in ``parsed`` (parsed here unless it already is)."""
    if task.parsed is not None:
        return task
    return replace(task, parsed=parse(task, where))


def load(task: TaskSpec, settings: DataSettings) -> Dataset:
    """Read (or generate) a task, from its typed spec (parsed once: by the config, or here
    for a ``TaskSpec`` made by hand).

    Raises ``DataError`` (or ``DownloadError`` for a download) with a one-line message.
    """
    spec = task.parsed if task.parsed is not None else parse(task)
    module = module_of(task)
    assert module is not None  # parsed: a known source or name
    return module.load(spec, settings)


def check_builtin(names: Iterable[str]) -> None:
    """Refuse the first of ``names`` that is no built-in task: a ``ConfigError`` with the
    closest name and every built-in task, text tasks too."""
    for name in names:
        if name not in BUILTIN:
            recipes = [n for n in BUILTIN if n not in TEXT_TASKS]
            raise ConfigError(f"task {name!r} is not a built-in task{did_you_mean(name, BUILTIN)}"
                              f"; built-in tasks: {', '.join(recipes)}; text tasks: "
                              f"{', '.join(TEXT_TASKS)}")


def fetch(name: str, settings: DataSettings) -> list:
    """Verified copies in the cache of every file of the built-in task ``name``
    (``check_builtin`` for any other name)."""
    check_builtin([name])
    return list(BUILTIN[name].fetch(name, settings))
