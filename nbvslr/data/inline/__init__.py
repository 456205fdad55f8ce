"""Inline tasks: a dataset the user brings, named in the config rather than built in; the
registry of their sources.

A task with a ``source:`` is inline. A source is one module of this package and one line
of ``MODULES``: its ``KEY`` (the key naming it in ``source:``), ``KEYS`` (every key its
``source:`` takes), a frozen ``Spec``, ``parse(task) -> Spec`` (every check, one-line
``ConfigError``s, before any data is read) and ``load(spec, settings) -> Dataset``; and,
where they apply, ``TEXT = True`` (always a text task) and ``PATH = True`` (``Spec.path``
is a local path, read from the config's folder). The config parses each task once
(``parse``, kept in ``TaskSpec.parsed``); ``load`` reads it without checking it again.

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

from collections.abc import Mapping
from dataclasses import replace
from types import ModuleType
from typing import Any

from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.data.inline import csv, folder, frame, openml, synthetic, text, uci
from nbvslr.errors import ConfigError, check_known_keys, setting_error, with_hint

#: The sources, in the order their names are listed.
MODULES: tuple[ModuleType, ...] = (csv, uci, openml, synthetic, frame, text, folder)

#: source key -> its module.
REGISTRY: dict[str, ModuleType] = {m.KEY: m for m in MODULES}
SOURCES: tuple[str, ...] = tuple(REGISTRY)
#: The sources whose tasks are text tasks whatever their ``features:`` say.
TEXT_SOURCES: tuple[str, ...] = tuple(m.KEY for m in MODULES if getattr(m, "TEXT", False))
#: The sources that name a local path (``Spec.path``).
PATH_SOURCES: tuple[str, ...] = tuple(m.KEY for m in MODULES if getattr(m, "PATH", False))


def source_type(source: Any) -> str | None:
    """The key naming the source of a raw ``source:`` mapping (the first known one), or
    None."""
    if not isinstance(source, Mapping):
        return None
    return next((k for k in SOURCES if k in source), None)


def parse(task: TaskSpec, where: str | None = None) -> Any:
    """The typed spec of an inline task (its source module's ``Spec``), every key checked.

    Raises ``ConfigError`` with one line: ``[where: ]<key>: <problem> (<value>); <fix>``.
    """
    try:
        return _parse(task)
    except ConfigError as exc:
        if where:
            raise ConfigError(f"{where}: {exc}") from None
        raise


def _parse(task: TaskSpec) -> Any:
    source = task.source
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
    """Read (or generate) an inline task, from its typed spec (parsed once: by the config,
    or here for a ``TaskSpec`` made by hand).

    Raises ``DataError`` (or ``DownloadError`` for uci and openml) with a one-line message.
    """
    spec = task.parsed if task.parsed is not None else parse(task)
    return REGISTRY[source_type(task.source)].load(spec, settings)
