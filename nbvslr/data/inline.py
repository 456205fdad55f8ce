"""Inline tasks: a dataset the user brings, named in the config rather than built in.

A task with a ``source:`` is inline. Three sources::

    - name: mydata
      source: {csv: path/to/file.csv}      # a local CSV with a header row
      target: {column: class, positive: [yes]}
      features: {kind: continuous, columns: [a, b, c]}     # or {drop: [id]}

    - name: wine
      source: {uci: 109}                   # any importable UCI dataset, via ucimlrepo
      target: {column: class, positive: [1]}

    - name: toy
      source: {synthetic: {generator: nb, rows: 1000, features: 10}}

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
``missing`` (csv, uci)
    ``error`` (default) refuses missing cells in the columns used; ``drop`` drops those rows;
    ``level`` (discrete features) makes "missing" a level of its own.
``na`` (csv, uci)
    Cell values that mean "missing", besides an empty cell. Default
    ``["?", "NA", "N/A", "NaN", "nan", "null"]``.

``target`` (csv, uci): ``column`` (default: the UCI dataset's target, or a CSV's last
column) and ``positive``, the values counted as class 1 (default: of exactly two values, the
second in sorted order; of more, every value is a class of its own), or ``classes``, the
values kept as classes (the rows of other values are dropped). ``features`` (csv, uci):
``kind`` (``continuous`` or ``discrete``; default: continuous when every column is
numeric, discrete when none is), and either ``columns`` (the features) or ``drop``
(columns to leave out; default: every other column, or for UCI every column with the role
Feature). A relative CSV path in a config file is read from the config's folder. The table
rules (missing values, scaling, levels, constant columns) are in ``nbvslr.data.csvsource``;
the synthetic generators in ``nbvslr.data.synthetic``; the UCI cache in ``nbvslr.data.ucisource``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import nbvslr.data.csvsource as csvsource
import nbvslr.data.synthetic as synthetic
from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.errors import DataError, check_known_keys, setting_error, with_hint

SOURCES = ("csv", "uci", "synthetic", "frame", "text", "folder")
SOURCE_KEYS: Mapping[str, tuple[str, ...]] = {
    "csv": ("csv", "sep", "header", "missing", "na"),
    "text": ("text", "strip"),
    "folder": ("folder",),
    "frame": ("frame", "missing", "na"),
    "uci": ("uci", "missing", "na"),
    "synthetic": ("synthetic",),
}
TARGET_KEYS = ("column", "positive", "classes")
FEATURE_KEYS = ("kind", "columns", "drop", "continuous", "discrete")
MIXED_KEYS = ("continuous", "discrete")
KINDS = ("continuous", "discrete", "text")


_error = setting_error


def _unknown(where: str, given: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    check_known_keys(where, given, allowed)


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _names(key: str, value: Any, what: str) -> list[str]:
    """A list of column names (text or integers, as a header-less CSV names them)."""
    if not isinstance(value, list) or not value:
        raise _error(key, f"must be a non-empty list of {what}", value, f"write {key}: [a, b]")
    for i, item in enumerate(value):
        if not _scalar(item):
            raise _error(
                f"{key}[{i}]", "not a column name", item, "write the column's name as text"
            )
    names = [str(v) for v in value]
    for name in names:
        if names.count(name) > 1:
            raise _error(key, "lists a column twice", name, "list each column once")
    return names


def source_type(spec: TaskSpec) -> str:
    """``csv``, ``uci`` or ``synthetic`` (the spec must have passed ``validate``)."""
    assert spec.source is not None
    return next(k for k in SOURCES if k in spec.source)


def validate(spec: TaskSpec) -> None:
    """Check an inline task's ``source``, ``target`` and ``features`` before reading data.

    Raises ``ConfigError`` with one line: ``<key>: <problem> (<value>); <fix>``.
    """
    source = spec.source
    if not isinstance(source, Mapping) or not source:
        raise _error(
            "source", "must name one source", source,
            "write source: {csv: path}, {uci: id} or {synthetic: {...}}",
        )
    named = [k for k in SOURCES if k in source]
    if len(named) != 1:
        if named:
            problem = f"names {len(named)} sources"
        else:
            first = str(next(iter(source)))
            problem = with_hint("names no known source", first, SOURCES)
        raise _error(
            "source", problem, ", ".join(map(str, source)) or source,
            "give exactly one of csv: path, uci: id, synthetic: {...}",
        )
    kind = named[0]
    _unknown("source", source, SOURCE_KEYS[kind])
    if spec.overrides:
        raise _error(
            "overrides", "only built-in tasks take recipe overrides", ", ".join(spec.overrides),
            "set an inline task's choices in source:, target: and features:",
        )

    if kind == "text":
        import nbvslr.data.text as text

        if not isinstance(source["text"], str) or source["text"] not in text.TEXT_TASKS:
            raise _error("source.text", with_hint("not a built-in text task", source["text"],
                                                   text.TEXT_TASKS), source["text"],
                         f"use one of: {', '.join(text.TEXT_TASKS)}")
        if spec.target is not None:
            raise _error("target", "a built-in text task has its own classes", spec.target,
                         "remove target:")
        if "strip" in source:
            if source["text"] not in text.STRIPPED_TASKS:
                raise _error("source.strip", f"only the 20 Newsgroups tasks "
                             f"({', '.join(text.STRIPPED_TASKS)}) take strip", source["strip"],
                             "remove strip:")
            import nbvslr.data.newsgroups as newsgroups

            newsgroups.strip_options(source["strip"])
        text.validate_text_features(spec.features, column=False)
        return

    if kind == "folder":
        import nbvslr.data.text as text

        path = source["folder"]
        if not isinstance(path, str) or not path.strip():
            raise _error("source.folder", "must be a folder path", path,
                         "write source: {folder: my-texts}, one sub-folder of files per class")
        if spec.target is not None:
            raise _error("target", "a folder's classes are its sub-folders", spec.target,
                         "remove target:")
        text.validate_text_features(spec.features, column=False,
                                   task="a task read from a folder of documents")
        return

    if kind == "synthetic":
        synthetic.parse_params(source["synthetic"])
        for extra in ("target", "features"):
            if getattr(spec, extra) is not None:
                raise _error(
                    extra, "a synthetic task makes its own target and features",
                    getattr(spec, extra),
                    f"remove {extra}: (set kind: and features: inside synthetic:)",
                )
        return

    if kind == "csv":
        path = source["csv"]
        if not isinstance(path, str) or not path.strip():
            raise _error("source.csv", "must be a file path", path, "write source: {csv: data.csv}")
        sep = source.get("sep", ",")
        if not isinstance(sep, str) or not sep or sep in ('"', "\n"):
            raise _error("source.sep", "must be a separator character", sep, "e.g. sep: ';'")
        if len(sep) > 1:
            try:
                re.compile(sep)
            except re.error as exc:
                raise _error(
                    "source.sep", f"a separator of more than one character is a regular "
                    f"expression, and this one is not valid ({exc})", sep,
                    "escape its special characters, e.g. sep: '\\|\\|' for ||",
                ) from None
        header = source.get("header", True)
        if not isinstance(header, bool):
            raise _error("source.header", "not true or false", header, "write header: true")
    elif kind == "frame":
        from nbvslr.data.frame import Frame

        if not isinstance(source["frame"], Frame):
            raise _error(
                "source.frame", "an in-memory table is given from Python only",
                type(source["frame"]).__name__,
                "use nbvslr.Task.from_frame(df, ...) or Task.from_arrays(X, y, ...)",
            )
    else:
        uci_id = source["uci"]
        if isinstance(uci_id, bool) or not isinstance(uci_id, int) or uci_id < 1:
            raise _error(
                "source.uci", "must be a UCI dataset id (a positive integer)", uci_id,
                "find the id on the dataset's page at archive.ics.uci.edu, e.g. uci: 53",
            )
    missing = source.get("missing", "error")
    if missing not in csvsource.MISSING_MODES:
        raise _error(
            "source.missing", with_hint("unknown mode", missing, csvsource.MISSING_MODES),
            missing,
            f"use one of: {', '.join(csvsource.MISSING_MODES)}",
        )
    if "na" in source:
        na = source["na"]
        if not isinstance(na, list) or not all(_scalar(v) for v in na):
            raise _error("source.na", "must be a list of values", na, "e.g. na: ['?', '']")

    target = spec.target
    if target is not None:
        if not isinstance(target, Mapping):
            raise _error("target", "must be a mapping", target, "write {column: c, positive: [v]}")
        _unknown("target", target, TARGET_KEYS)
        if "column" in target and not _scalar(target["column"]):
            raise _error("target.column", "not a column name", target["column"], "name it")
        if "positive" in target and "classes" in target:
            raise _error(
                "target", "give positive or classes, not both", "positive, classes",
                "positive: [...] makes a binary task; classes: [...] keeps those classes",
            )
        if "classes" in target:
            classes = target["classes"]
            if not isinstance(classes, list) or len(classes) < 2:
                raise _error("target.classes", "must list at least two values", classes,
                             "write classes: [a, b, c]")
            for value in classes:
                if isinstance(value, bool) or not _scalar(value):
                    raise _error("target.classes", "not a cell value", value,
                                 "list text or numbers (quote yes/no/true/false)")
            texts = [str(v).strip() for v in classes]
            for value in texts:
                if texts.count(value) > 1:
                    raise _error("target.classes", "lists a value twice", value,
                                 "list each class once")
        if "positive" in target:
            positive = target["positive"]
            values = positive if isinstance(positive, list) else [positive]
            if not values:
                raise _error("target.positive", "empty", positive, "list at least one value")
            for value in values:
                if isinstance(value, bool):
                    raise _error(
                        "target.positive", "a YAML true/false, not a cell value", value,
                        "quote it, e.g. positive: ['yes'] or positive: ['True']",
                    )
                if not _scalar(value):
                    raise _error(
                        "target.positive", "not a cell value", value, "list text or numbers"
                    )

    features = spec.features
    if isinstance(features, Mapping) and features.get("kind") == "text":
        if kind not in ("csv", "frame"):
            raise _error("features.kind", f"a text column is read from a CSV, not a {kind} "
                         "source", "text", "give source: {csv: path} or another kind")
        import nbvslr.data.text as text

        text.validate_text_features(features, column=True)
        if target is not None and str(target.get("column")) == str(features["column"]):
            raise _error("features.column", "is the target column", features["column"],
                         "name the column holding the documents")
        if missing == "level":
            raise _error("source.missing", "'level' only applies to discrete features",
                         missing, "use missing: drop or missing: error with kind: text")
        return
    if features is not None:
        if not isinstance(features, Mapping):
            raise _error(
                "features", "must be a mapping", features, "write {kind: continuous, drop: [id]}"
            )
        text_keys = [k for k in ("column", "vocabulary", "min_df", "max_features")
                     if k in features]
        if text_keys and features.get("kind") != "text":  # a text task without kind: text
            raise _error(f"features.{text_keys[0]}", "applies to a column of documents only",
                         features[text_keys[0]], "add kind: text to features: for a text task")
        _unknown("features", features, FEATURE_KEYS)
        if "kind" in features and features["kind"] not in KINDS:
            raise _error(
                "features.kind", with_hint("unknown kind", features["kind"], KINDS),
                features["kind"],
                "use continuous, discrete or text",
            )
        mixed = [k for k in MIXED_KEYS if k in features]
        if mixed:
            _mixed(features, target, missing)
            return
        if "columns" in features and "drop" in features:
            raise _error(
                "features", "give columns or drop, not both", "columns, drop",
                "list the features in columns:, or the columns to leave out in drop:",
            )
        columns = _names("features.columns", features["columns"], "columns") if (
            "columns" in features) else []
        if "drop" in features:
            _names("features.drop", features["drop"], "columns")
        if target is not None and "column" in target and str(target["column"]) in columns:
            raise _error(
                "features.columns", "lists the target column", target["column"],
                "remove it from features.columns",
            )
        if missing == "level" and features.get("kind") == "continuous":
            raise _error(
                "source.missing", "'level' only applies to discrete features", missing,
                "use missing: drop or missing: error with kind: continuous",
            )


def _mixed(features: Mapping[str, Any], target: Mapping[str, Any] | None, missing: Any) -> None:
    """``features: {continuous: [...], discrete: [...]}``: the columns of each kind, no
    other key beside them, each column once, not the target."""
    others = [k for k in features if k not in MIXED_KEYS]
    if others:
        raise _error(
            "features", "continuous: and discrete: name every feature, so they take no "
            f"{others[0]}:", others[0],
            "list each feature under continuous: or discrete:, and drop the other keys",
        )
    seen: list[str] = []
    for key in MIXED_KEYS:
        if key in features:
            seen += _names(f"features.{key}", features[key], "columns")
    for name in seen:
        if seen.count(name) > 1:
            raise _error("features", "lists a column under both continuous and discrete",
                         name, "list it under one of them")
    if target is not None and "column" in target and str(target["column"]) in seen:
        raise _error("features", "lists the target column", target["column"],
                     "remove it from features.continuous and features.discrete")
    if missing == "level" and "continuous" in features:
        raise _error(
            "source.missing", "'level' only applies to discrete features", missing,
            "use missing: drop or missing: error with continuous columns",
        )


def load(spec: TaskSpec, settings: DataSettings) -> Dataset:
    """Read (or generate) an inline task; ``spec`` must have passed ``validate``.

    Raises ``DataError`` (or ``DownloadError`` for ``uci``) with a one-line message.
    """
    validate(spec)
    source = spec.source
    assert source is not None
    kind = source_type(spec)
    if kind == "synthetic":
        return synthetic.load(spec.name, synthetic.parse_params(source["synthetic"]))
    if kind == "text":
        import nbvslr.data.text as text

        return text.load_text(source["text"], spec.features or {}, settings, spec.name,
                              strip=source.get("strip", text.DEFAULT))
    if kind == "folder":
        import nbvslr.data.text as text
        from nbvslr.data.textfolder import load_text_folder

        return text.text_dataset(load_text_folder(source["folder"], spec.name),
                                 text.check_text_options(spec.features or {}),
                                 {"source": "folder", "folder": source["folder"]})
    choices = csvsource.choices_from_spec(source, spec.target, spec.features)
    if kind == "frame":
        import nbvslr.data.frame as frame

        held = source["frame"]
        return csvsource.build_dataset(
            held.table, name=spec.name, choices=choices, origin=f"{spec.name} (DataFrame)",
            row_label=frame.row_label, default_target=None, default_features=None,
            notes={"source": "frame", "rows": held.shape[0], "sha256": held.sha256},
            missing_fix='give Task.from_frame(..., missing="drop") to drop such rows, or '
                        'fill them in',
        )
    if kind == "uci":
        import nbvslr.data.ucisource as ucisource

        return ucisource.load(spec.name, int(source["uci"]), choices, settings)
    path = Path(source["csv"]).expanduser()
    header = source.get("header", True)
    table = csvsource.read_csv(path, sep=source.get("sep", ","), header=header)
    if table.shape[1] < 2:
        raise DataError(
            f"{path}: {table.shape[1]} column; a task needs a target and a feature: check "
            "source.sep"
        )
    return csvsource.build_dataset(
        table,
        name=spec.name,
        choices=choices,
        origin=str(path),
        row_label=csvsource.data_row,
        default_target=None,
        default_features=None,
        notes={"source": "csv", "path": str(path), "sha256": csvsource.sha256_of(path)},
    )
