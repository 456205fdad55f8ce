"""What every table source (csv, frame, uci, openml) says the same way: ``missing``, ``na``,
``target`` and ``features``, parsed once into a frozen ``csvsource.TableChoices``.

``parse_table(task, kind)`` raises ``ConfigError`` with one line, ``<key>: <problem>
(<value>); <fix>``, the messages the config has always given; the table's own rules (which
columns exist, the levels, the scaling) are applied when it is read
(``nbvslr.data.csvsource.build_dataset``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import nbvslr.data.csvsource as csvsource
from nbvslr.data.csvsource import TableChoices
from nbvslr.data.dataset import TaskSpec
from nbvslr.errors import check_known_keys, setting_error, with_hint

TARGET_KEYS = ("column", "positive", "classes")
FEATURE_KEYS = ("kind", "columns", "drop", "continuous", "discrete", "many_levels")
MIXED_KEYS = ("continuous", "discrete")
KINDS = ("continuous", "discrete", "text")
#: The sources whose table may hold a column of documents (``features: {kind: text}``).
TEXT_COLUMN_SOURCES = ("csv", "frame")
MISSING_KEYS = ("missing", "na")

_error = setting_error


def scalar(value: Any) -> bool:
    """A YAML scalar that can name a column or a cell (text or a number, not a bool)."""
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _names(key: str, value: Any, what: str) -> list[str]:
    """A list of column names (text or integers, as a header-less CSV names them)."""
    if not isinstance(value, list) or not value:
        raise _error(key, f"must be a non-empty list of {what}", value, f"write {key}: [a, b]")
    for i, item in enumerate(value):
        if not scalar(item):
            raise _error(
                f"{key}[{i}]", "not a column name", item, "write the column's name as text"
            )
    names = [str(v) for v in value]
    for name in names:
        if names.count(name) > 1:
            raise _error(key, "lists a column twice", name, "list each column once")
    return names


def parse_table(task: TaskSpec, kind: str) -> TableChoices:
    """The table options of an inline task of source ``kind``, checked; ``ConfigError``."""
    source = task.source or {}
    missing = source.get("missing", "error")
    if missing not in csvsource.MISSING_MODES:
        raise _error(
            "source.missing", with_hint("unknown mode", missing, csvsource.MISSING_MODES),
            missing,
            f"use one of: {', '.join(csvsource.MISSING_MODES)}",
        )
    if "na" in source:
        na = source["na"]
        if not isinstance(na, list) or not all(scalar(v) for v in na):
            raise _error("source.na", "must be a list of values", na, "e.g. na: ['?', '']")
    _target(task.target)
    _features(task.features, task.target, missing, kind)
    return csvsource.choices_from_spec(source, task.target, task.features)


def _target(target: Any) -> None:
    if target is None:
        return
    if not isinstance(target, Mapping):
        raise _error("target", "must be a mapping", target, "write {column: c, positive: [v]}")
    check_known_keys("target", target, TARGET_KEYS)
    if "column" in target and not scalar(target["column"]):
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
            if isinstance(value, bool) or not scalar(value):
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
            if not scalar(value):
                raise _error(
                    "target.positive", "not a cell value", value, "list text or numbers"
                )


def _features(features: Any, target: Mapping[str, Any] | None, missing: Any,
              kind: str) -> None:
    if isinstance(features, Mapping) and features.get("kind") == "text":
        if kind not in TEXT_COLUMN_SOURCES:
            raise _error("features.kind", f"a text column is read from a CSV, not a {kind} "
                         "source", "text", "give source: {csv: path} or another kind")
        import nbvslr.data.text as text  # scipy: only for a task with a text column

        text.validate_text_features(features, column=True)
        if target is not None and str(target.get("column")) == str(features["column"]):
            raise _error("features.column", "is the target column", features["column"],
                         "name the column holding the documents")
        if missing == "level":
            raise _error("source.missing", "'level' only applies to discrete features",
                         missing, "use missing: drop or missing: error with kind: text")
        return
    if features is None:
        return
    if not isinstance(features, Mapping):
        raise _error(
            "features", "must be a mapping", features, "write {kind: continuous, drop: [id]}"
        )
    text_keys = [k for k in ("column", "vocabulary", "min_df", "max_features") if k in features]
    if text_keys:  # a text task without kind: text
        raise _error(f"features.{text_keys[0]}", "applies to a column of documents only",
                     features[text_keys[0]], "add kind: text to features: for a text task")
    check_known_keys("features", features, FEATURE_KEYS)
    if "kind" in features and features["kind"] not in KINDS:
        raise _error(
            "features.kind", with_hint("unknown kind", features["kind"], KINDS),
            features["kind"],
            "use continuous, discrete or text",
        )
    if "many_levels" in features:
        if features["many_levels"] not in csvsource.MANY_LEVELS_MODES:
            raise _error("features.many_levels", with_hint(
                "unknown mode", features["many_levels"], csvsource.MANY_LEVELS_MODES),
                features["many_levels"], "use refuse (the default) or allow")
        if features.get("kind") == "continuous":
            raise _error("features.many_levels", "only applies to discrete columns",
                         features["many_levels"], "remove it with kind: continuous")
    if any(k in features for k in MIXED_KEYS):
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
    others = [k for k in features if k not in (*MIXED_KEYS, "many_levels")]
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


def dataset_id(task: TaskSpec, key: str, what: str, fix: str) -> int:
    """``source.<key>``: the id of a dataset of a catalogue (UCI, OpenML), a positive
    integer; ``ConfigError`` naming ``what`` it must be and where to find it (``fix``)."""
    value = (task.source or {})[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _error(f"source.{key}", f"must be {what} (a positive integer)", value, fix)
    return value


def no_table(task: TaskSpec, message: str, fix: str) -> None:
    """Refuse ``target:`` and ``features:`` on a source that makes its own."""
    for extra in ("target", "features"):
        if getattr(task, extra) is not None:
            raise _error(extra, message, getattr(task, extra), fix.format(key=extra))
