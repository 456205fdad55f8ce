"""A user's CSV file, and any table of text cells, as a ``Dataset``.

``read_csv`` reads a local file; ``build_dataset`` is shared with the ``uci`` source. Every
cell is read as text and decided here, so the rules are the same whatever the file held:

- A cell is *missing* when it is empty or equals one of the ``na`` markers (default
  ``?``, ``NA``, ``N/A``, ``NaN``, ``nan``, ``null``). ``missing: error`` (the default) refuses
  a used column with a missing cell; ``missing: drop`` drops those rows; ``missing: level``
  (discrete features only) makes a missing feature value a level of its own, written ``?``,
  and drops rows whose target is missing.
- Target: ``positive`` lists the values that count as class 1, everything else is class 0.
  Without ``positive`` a column of exactly two values is binary, and the second in sorted
  order is positive (numeric order when both are numbers, else text order: ``1`` of 0/1,
  ``yes`` of no/yes, ``tested_positive`` of tested_negative/tested_positive); a column of
  K > 2 values keeps every class, coded ``0 .. K - 1`` in that sorted order. ``classes``
  keeps only the rows of the values it lists, coded in the order listed (two values: a
  binary task whose second value is class 1).
- Continuous features must parse as finite numbers (``inf`` is refused whatever
  ``missing`` says: it is a value, not a gap; ``NaN`` is a missing marker by default);
  they are rescaled to [0, 1] with the minimum and maximum over all rows (as the paper
  does, once per dataset). A constant
  column is kept and becomes all zeros (it carries no information; the models handle it).
- Discrete features become integer codes ``0 .. k-1`` over the levels seen in the table,
  in sorted order (numeric order when every level is a number). A discrete column is
  refused when it would make categories no model can learn from: its levels nearly all
  distinct (more than ``MANY_LEVELS_SHARE`` of its rows, and more than
  ``MANY_LEVELS_MIN``: measurements, ids, messages), or free text (a median cell of
  ``FREE_TEXT_WORDS`` words or more, and more than ``MANY_LEVELS_MIN`` levels). The message
  names the column and the fix (``kind: continuous``, ``kind: text``, ``features.drop``);
  ``features: {many_levels: allow}`` keeps such columns as categories, with a warning said
  once when the run starts and recorded in ``run.json`` (``Dataset.notes["warnings"]``).
- ``features: {kind: text, column: NAME}`` makes a *text* task of the documents in column
  ``NAME`` (every other column but the target ignored; an empty cell is an empty document,
  never missing), its counts and vocabulary options as ``nbvslr.data.text`` says.
- ``features: {continuous: [...], discrete: [...]}`` makes a *mixed* task: each listed
  column follows its own kind's rule, the continuous columns first in ``X``.
- At least 3 rows and two classes must remain, or the task is refused; at most
  ``MAX_CLASSES`` classes.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nbvslr.data.dataset import Dataset
from nbvslr.errors import DataError, did_you_mean

DEFAULT_NA: tuple[str, ...] = ("?", "NA", "N/A", "NaN", "nan", "null")
MISSING_MODES = ("error", "drop", "level")
MISSING_LEVEL = "?"
MIN_ROWS = 3
MAX_CLASSES = 100
"""The most classes a task may have (the labels are int8)."""
MAX_COLUMNS = 10_000
"""The widest CSV read (the synthetic generators' ``MAX_FEATURES``): checked on the header
line, before the file is parsed (a parse holds some kilobytes per column)."""
PARSE_CELL_BYTES = 120
"""Bytes a parse holds per cell (a Python string in a table of text cells), set above
pandas' ``dtype=str`` tables."""
PARSE_COLUMN_BYTES = 16 << 10
"""Bytes a parse holds per column whatever its rows."""
MEMORY_SHARE = 0.9
MANY_LEVELS_SHARE = 0.5
"""A discrete column of more levels than this share of its rows is refused (each level
would be seen in about one row: a category no model learns from) ..."""
MANY_LEVELS_MIN = 10
"""... when it has more levels than this too (a tiny table's few levels are no sign)."""
FREE_TEXT_WORDS = 5
"""A discrete column whose median cell holds this many words or more is free text (with
more than ``MANY_LEVELS_MIN`` levels: a survey's few long answers are categories)."""
MANY_LEVELS_MODES = ("refuse", "allow")


@dataclass(frozen=True)
class TableChoices:
    """What the config says about a table, parsed once (``nbvslr.data.registry.table``).

    ``target_column``/``feature_columns`` of ``None`` fall back to the source's defaults.
    """

    target_column: str | None = None
    positive: tuple[str, ...] | None = None
    classes: tuple[str, ...] | None = None
    kind: str | None = None
    feature_columns: tuple[str, ...] | None = None
    drop: tuple[str, ...] = ()
    continuous: tuple[str, ...] | None = None
    discrete: tuple[str, ...] | None = None
    missing: str = "error"
    na: tuple[str, ...] = DEFAULT_NA
    text_column: str | None = None
    text_options: Mapping[str, Any] | None = None
    many_levels: str = "refuse"


def choices_from_spec(
    source: Mapping[str, Any],
    target: Mapping[str, Any] | None,
    features: Mapping[str, Any] | None,
) -> TableChoices:
    """Collect a validated inline spec's table options (values become text)."""
    target = target or {}
    features = features or {}
    positive = target.get("positive")
    if positive is not None and not isinstance(positive, list):
        positive = [positive]
    classes = target.get("classes")
    columns = features.get("columns")
    return TableChoices(
        target_column=None if target.get("column") is None else str(target["column"]),
        positive=None if positive is None else tuple(_text(v) for v in positive),
        classes=None if classes is None else tuple(_text(v) for v in classes),
        kind=features.get("kind"),
        feature_columns=None if columns is None else tuple(str(c) for c in columns),
        drop=tuple(str(c) for c in features.get("drop", ()) or ()),
        continuous=_columns(features, "continuous"),
        discrete=_columns(features, "discrete"),
        missing=source.get("missing", "error"),
        na=tuple(str(v) for v in source.get("na", DEFAULT_NA)),
        text_column=str(features["column"]) if features.get("kind") == "text" else None,
        text_options=({k: features[k] for k in ("vocabulary", "min_df", "max_features")
                       if k in features} if features.get("kind") == "text" else None),
        many_levels=features.get("many_levels", "refuse"),
    )


def _columns(features: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
    """``features.continuous`` or ``features.discrete`` as text; () when only the other is
    given; None when neither is."""
    if "continuous" not in features and "discrete" not in features:
        return None
    return tuple(str(c) for c in features.get(key) or ())


def _text(value: Any) -> str:
    """A YAML scalar as the text a table cell would hold (``1.0`` -> ``1.0``, ``1`` -> ``1``)."""
    return str(value).strip()


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _sorted_values(values: Sequence[str]) -> list[str]:
    """Numeric order when every value is a number, else text order."""
    numbers = [_number(v) for v in values]
    if all(n is not None and math.isfinite(n) for n in numbers):
        return [v for _, v in sorted(zip(numbers, values, strict=True))]
    return sorted(values)


def _listing(values: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(repr(v) for v in values[:limit])
    return shown + (f", ... ({len(values)} in all)" if len(values) > limit else "")


def _same_value(cell: str, wanted: str) -> bool:
    """Text equality, or numeric equality when both parse (``1`` matches ``1.0``)."""
    if cell == wanted:
        return True
    a, b = _number(cell), _number(wanted)
    return a is not None and b is not None and a == b


MISSING_FIX = "set source.missing: drop to drop such rows, or fill them in"
"""What a missing cell's error says to do, in a config."""


def build_dataset(
    table: pd.DataFrame,
    *,
    name: str,
    choices: TableChoices,
    origin: str,
    row_label: Callable[[int], str],
    default_target: str | None,
    default_features: Sequence[str] | None,
    notes: Mapping[str, Any],
    missing_fix: str = MISSING_FIX,
) -> Dataset:
    """Build the task from a table of text cells.

    Parameters
    ----------
    table : DataFrame of str, shape (N, columns)
        Every cell stripped text; column names are text.
    origin : str
        Names the data in messages (a file path, ``UCI dataset 53``).
    row_label : callable
        Row position -> how a person finds that row (``data row 12``).
    default_target, default_features
        Used when the config does not name them (``None``: last column / every other column).
    notes : mapping
        Provenance recorded first in ``Dataset.notes``.
    missing_fix : str
        The fix a missing cell's error names (the config's key; the Python argument for a
        DataFrame).
    """
    columns = [str(c) for c in table.columns]

    def need(column: str, key: str) -> None:
        if column not in columns:
            hint = did_you_mean(column, columns)
            raise DataError(
                f"{origin}: {key}: no column {column!r}{hint}; columns are {_listing(columns)}"
            )

    target = choices.target_column or default_target or columns[-1]
    need(target, "target.column")
    by_kind = None  # features: {continuous: [...], discrete: [...]}
    if choices.kind == "text":
        assert choices.text_column is not None
        need(choices.text_column, "features.column")
        if choices.text_column == target:
            raise DataError(f"{origin}: features.column: {target!r} is the target column; "
                            "name the column holding the documents")
        features = [choices.text_column]
    elif choices.continuous is not None and choices.discrete is not None:
        by_kind = (list(choices.continuous), list(choices.discrete))
        for key, listed in zip(("continuous", "discrete"), by_kind, strict=True):
            for column in listed:
                need(column, f"features.{key}")
        features = [*by_kind[0], *by_kind[1]]  # the continuous columns first
        if target in features:
            raise DataError(
                f"{origin}: features: the target column {target!r} is listed as a feature; "
                "remove it from features.continuous and features.discrete"
            )
    elif choices.feature_columns is not None:
        features = list(choices.feature_columns)
        for column in features:
            need(column, "features.columns")
        if target in features:
            raise DataError(
                f"{origin}: features.columns: the target column {target!r} is listed as a "
                "feature; remove it from features.columns"
            )
    else:
        for column in choices.drop:
            need(column, "features.drop")
        pool = list(default_features) if default_features is not None else columns
        features = [c for c in pool if c != target and c not in choices.drop]
    if not features:
        raise DataError(
            f"{origin}: features: no feature column left besides the target {target!r}; "
            "list some in features.columns"
        )

    cells = table[[target, *features]].astype(str).apply(lambda s: s.str.strip())
    na = set(choices.na)
    missing = cells.eq("") | cells.isin(na)  # (N, 1 + d)
    if choices.kind == "text":
        missing[features] = False  # an empty cell is an empty document
    n_read = len(cells)

    if by_kind is not None:
        kind = "mixed" if all(by_kind) else "continuous" if by_kind[0] else "discrete"
    else:
        kind = choices.kind or _infer_kind(cells[features], missing[features], origin)
    if choices.missing == "level" and kind != "discrete":
        raise DataError(
            f"{origin}: source.missing: 'level' only applies to discrete features, and "
            f"these are {kind}; use missing: drop or missing: error"
        )
    keep = np.ones(n_read, dtype=bool)
    if choices.missing == "error":
        bad = missing.to_numpy()
        if bad.any():
            row, col = np.argwhere(bad)[0]
            column = [target, *features][col]
            raise DataError(
                f"{origin}: column {column!r}: missing value at {row_label(int(row))} "
                f"({int(bad.sum())} missing cells in the columns used); {missing_fix}"
            )
    elif choices.missing == "drop":
        keep = ~missing.to_numpy().any(axis=1)
    else:  # level: a missing feature is a level; a missing target drops the row
        keep = ~missing[target].to_numpy()
        cells = cells.mask(missing & (cells.columns != target), MISSING_LEVEL)
    if choices.classes is not None:
        wanted = _class_values(cells[target].iloc[np.flatnonzero(keep)].tolist(),
                               choices.classes, target, origin)
        keep &= cells[target].isin(wanted).to_numpy()
    rows = np.flatnonzero(keep)
    cells = cells.iloc[rows]
    if len(cells) < MIN_ROWS:
        raise DataError(
            f"{origin}: {len(cells)} usable rows of {n_read} (after missing: "
            f"{choices.missing}); a task needs at least {MIN_ROWS}: add rows or use fewer "
            "columns"
        )

    if kind in ("discrete", "mixed"):
        listed = features if kind == "discrete" else by_kind[1]  # type: ignore[index]
        said = _category_check(cells[listed], origin, choices.many_levels == "allow",
                               python=notes.get("source") == "frame")
        if said:
            notes = {**notes, "warnings": said}
    values = cells[target].tolist()
    classes: tuple[str, ...] = ()
    if choices.positive is None and (choices.classes is not None or len(set(values)) > 2):
        y, classes = _classes(values, choices.classes, target, origin)
        if len(classes) == 2:  # two classes listed: the binary task, the second as class 1
            positive, negative, classes = [classes[1]], [classes[0]], ()
        else:
            positive, negative = None, None
    else:
        y, positive, negative = _binarise(values, choices.positive, target, origin)
    if kind == "text":
        import nbvslr.data.text as text  # scipy: only for a text task

        documents = tuple(cells[features[0]].tolist())
        task = text.TextTask(name, documents, np.asarray(y, dtype=np.int64),
                             classes if classes else ("", ""))
        return text.text_dataset(task, text.check_text_options(choices.text_options or {}), {
            **notes, "rows_read": n_read, "rows_dropped": n_read - len(cells),
            "missing": choices.missing, "target": target, "column": features[0],
            **({"classes": list(classes)} if classes else
               {"positive": positive, "negative": negative})})
    if kind == "continuous":
        X, constant = _continuous(cells[features], rows, features, origin, row_label)
        n_values: tuple[int, ...] = ()
        extra: dict[str, Any] = {"scaling": "min-max over all rows", "constant": constant}
    elif kind == "discrete":
        X, levels = _discrete(cells[features], features)
        n_values = tuple(len(levels[c]) for c in features)
        extra = {"levels": levels}
    else:  # mixed: the continuous columns, then the discrete ones' codes
        assert by_kind is not None
        Xc, constant = _continuous(cells[by_kind[0]], rows, by_kind[0], origin, row_label)
        codes, levels = _discrete(cells[by_kind[1]], by_kind[1])
        X = np.concatenate([Xc, codes.astype(np.float64)], axis=1)  # (N, d)
        n_values = tuple(len(levels[c]) for c in by_kind[1])
        extra = {"scaling": "min-max over all rows", "constant": constant,
                 "continuous": by_kind[0], "levels": levels}
    return Dataset(
        name=name,
        title=f"{name} ({kind})",
        X=X,
        y=y,
        kind=kind,  # type: ignore[arg-type]
        n_values=n_values,
        feature_names=tuple(features),
        notes={
            **notes,
            "rows_read": n_read,
            "rows_dropped": n_read - len(cells),
            "missing": choices.missing,
            "target": target,
            **({"classes": list(classes)} if classes else
               {"positive": positive, "negative": negative}),
            **extra,
        },
        classes=classes,
    )


def _infer_kind(cells: pd.DataFrame, missing: pd.DataFrame, origin: str) -> str:
    empty = [c for c in cells.columns if missing[c].all()]
    if empty:
        raise DataError(
            f"{origin}: features: columns {_listing(empty, 4)} have no value (every cell is "
            "empty or missing); features.drop them"
        )
    numeric = []
    for column in cells.columns:
        values = cells[column][~missing[column]]
        # "nan" and "inf" parse as numbers: such a column is numeric, refused later as
        # not finite, which says more than "holds text".
        numeric.append(bool(len(values)) and all(_number(v) is not None for v in values))
    if all(numeric):
        return "continuous"
    if not any(numeric):
        return "discrete"
    text = [c for c, n in zip(cells.columns, numeric, strict=True) if not n]
    raise DataError(
        f"{origin}: features: columns {_listing(list(text), 4)} hold text and the others "
        "numbers; list each column under features: {continuous: [...], discrete: [...]}, "
        "or features.drop the text columns"
    )


def _category_check(cells: pd.DataFrame, origin: str, allow: bool, python: bool
                    ) -> list[str]:
    """Refuse (``DataError``) a discrete column of ``cells`` (N, d) that would be read as
    categories no model can learn from: levels nearly all distinct, or free text. With
    ``allow`` the same findings are returned as warnings instead (one line each)."""
    said: list[str] = []
    rows = len(cells)
    for column in cells.columns:
        values = cells[column]
        levels = int(values.nunique())
        if levels <= MANY_LEVELS_MIN:
            continue
        distinct = levels > MANY_LEVELS_SHARE * rows
        words = float(values.str.split().str.len().median()) if rows else 0.0
        free_text = words >= FREE_TEXT_WORDS
        if not (distinct or free_text):
            continue
        numeric = all(_number(v) is not None for v in values.unique() if v != MISSING_LEVEL)
        found = f"column {column!r} would be read as {levels} categories in {rows} rows"
        if numeric:
            why = "its values are numbers"
            fix = ("read it as continuous: kind='continuous' (or list the column as numeric)"
                   if python else "read it as continuous: features: {kind: continuous}, or "
                   "list it under features.continuous")
        elif free_text:
            why = f"free text, a median {words:g} words a cell"
            fix = (f"make it a text task: Task.from_frame(df, kind='text', columns="
                   f"[{column!r}], ...)" if python else
                   f"make it a text task: features: {{kind: text, column: {column}}}")
        else:
            why = "nearly every row its own level (an id or a name?)"
            fix = "leave it out (columns=[...])" if python else "features.drop it"
        if allow:
            said.append(f"{origin}: {found} ({why}); kept as categories (many_levels: allow)")
            continue
        keep = ("many_levels='allow'" if python else "features.many_levels: allow")
        raise DataError(f"{origin}: {found} ({why}), which no model learns from; {fix}, or "
                        f"set {keep} to keep them as categories")
    return said


def _binarise(
    values: list[str], positive: tuple[str, ...] | None, target: str, origin: str
) -> tuple[np.ndarray, list[str], list[str]]:
    distinct = _sorted_values(sorted(set(values)))
    if positive is None:
        if len(distinct) != 2:
            raise DataError(
                f"{origin}: target.positive: column {target!r} has {len(distinct)} "
                f"value{'' if len(distinct) == 1 else 's'} "
                f"({_listing(distinct)}), not 2; list the values that count as class 1 in "
                "target.positive"
            )
        positive_values = [distinct[1]]
    else:
        positive_values = _values_named(distinct, positive, "positive", target, origin)
    negative_values = [v for v in distinct if v not in positive_values]
    y = np.isin(np.asarray(values, dtype=object), positive_values).astype(np.int8)
    if y.all() or not y.any():
        which = "positive" if y.all() else "negative"
        raise DataError(
            f"{origin}: target.positive: every row of column {target!r} is {which} "
            f"(values {_listing(distinct)}); a task needs both classes: change "
            "target.positive"
        )
    return y, positive_values, negative_values


def _class_values(
    values: list[str], wanted: tuple[str, ...], target: str, origin: str
) -> list[str]:
    """The cell values of ``target`` that ``classes`` names, in its order (``1`` matches
    ``1.0``); DataError for a listed value the column never holds."""
    distinct = _sorted_values(sorted(set(values)))
    return _values_named(distinct, wanted, "classes", target, origin)


def _values_named(distinct: list[str], wanted, key: str, target: str,
                  origin: str) -> list[str]:
    """The cell values among ``distinct`` that ``target.<key>`` names, in its order (``1``
    matches ``1.0``); DataError for a named value the column never holds."""
    out: list[str] = []
    for value in wanted:
        hits = [v for v in distinct if _same_value(v, value)]
        if not hits:
            raise DataError(
                f"{origin}: target.{key}: value {value!r} never occurs in column "
                f"{target!r}; its values are {_listing(distinct)}"
            )
        out.extend(h for h in hits if h not in out)
    return out


def _classes(
    values: list[str], wanted: tuple[str, ...] | None, target: str, origin: str
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Labels ``0 .. K - 1`` (int8, shape (N,)) and the K class values: those of ``wanted``
    in its order (each listed value one class), else every value in sorted order."""
    if wanted is None:
        classes = _sorted_values(sorted(set(values)))
        code = {v: k for k, v in enumerate(classes)}
    else:
        classes = [str(w) for w in wanted]
        code = {v: k for k, w in enumerate(wanted) for v in set(values) if _same_value(v, w)}
    if len(classes) > MAX_CLASSES and wanted is not None:
        raise DataError(
            f"{origin}: target.classes: lists {len(classes)} classes of column {target!r}, "
            f"more than {MAX_CLASSES}; keep at most {MAX_CLASSES} classes in target.classes"
        )
    if len(classes) > MAX_CLASSES:
        raise DataError(
            f"{origin}: target.column: column {target!r} has {len(classes)} values "
            f"({_listing(classes)}), more than {MAX_CLASSES} classes; list the classes to "
            "keep in target.classes, or the values of class 1 in target.positive"
        )
    y = np.array([code[v] for v in values], dtype=np.int8)  # (N,)
    present = np.bincount(y, minlength=len(classes)) if y.size else np.zeros(len(classes))
    if np.count_nonzero(present) < 2:
        raise DataError(
            f"{origin}: target.classes: the rows kept from column {target!r} hold "
            f"{np.count_nonzero(present)} class; a task needs at least two: list more in "
            "target.classes"
        )
    return y, tuple(classes)


def _continuous(
    cells: pd.DataFrame,
    rows: np.ndarray,
    features: list[str],
    origin: str,
    row_label: Callable[[int], str],
) -> tuple[np.ndarray, list[str]]:
    X = np.empty(cells.shape, dtype=np.float64)  # (N, d)
    for j, column in enumerate(features):
        values = pd.to_numeric(cells[column], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            text = cells[column].iloc[i]
            problem = "not a number" if np.isnan(values[i]) else "not finite"
            raise DataError(
                f"{origin}: column {column!r}: {problem} ({text!r}) at "
                f"{row_label(int(rows[i]))}; fix the value, mark it missing with source.na "
                "and set source.missing: drop, or list the column under features.discrete "
                "(features: {continuous: [...], discrete: [...]})"
            )
        X[:, j] = values
    low, high = X.min(axis=0), X.max(axis=0)  # (d,)
    with np.errstate(over="ignore"):
        wide = not np.isfinite(high - low).all()
    if wide:
        # Finite values can span more than the largest float (1e308 and -1e308): halve
        # every value (exact for normal floats), so the span and the scaled values are finite.
        X, low, high = X / 2, low / 2, high / 2
    span = high - low
    constant = [c for c, s in zip(features, span, strict=True) if s == 0]
    # A constant column has span 0: divide by 1 instead, so it becomes all zeros.
    X = (X - low) / np.where(span > 0, span, 1.0)
    # Rounding can leave x - low a hair outside [0, span]; clip back onto [0, 1].
    np.clip(X, 0.0, 1.0, out=X)
    return X, constant


def _discrete(cells: pd.DataFrame, features: list[str]) -> tuple[np.ndarray, dict[str, list]]:
    X = np.empty(cells.shape, dtype=np.int64)  # (N, d)
    levels: dict[str, list[str]] = {}
    for j, column in enumerate(features):
        values = cells[column].to_numpy(dtype=object)
        observed = _sorted_values(sorted(set(values)))
        codes = {v: k for k, v in enumerate(observed)}
        X[:, j] = [codes[v] for v in values]
        levels[column] = observed
    return X, levels


def read_csv(path: Path, *, sep: str = ",", header: bool = True) -> pd.DataFrame:
    """Read a CSV file as stripped text cells; every failure is a one-line ``DataError``.

    With ``header: false`` the columns are named by their position, ``0``, ``1``, ...
    """
    origin = str(path)
    if not path.is_file():
        problem = (
            "file not found" if not path.exists()
            else "is a folder, not a file" if path.is_dir()
            else "not a regular file (a device or a pipe)"
        )
        raise DataError(
            f"{origin}: source.csv: {problem}; name a CSV file (a relative path in a "
            "config file is read from the config's folder)"
        )
    text = _checked_text(path, sep, header)
    try:
        table = pd.read_csv(
            io.StringIO(text),
            sep=sep,
            header=0 if header else None,
            dtype=str,
            keep_default_na=False,  # missing cells are decided by source.na, not pandas
            skipinitialspace=True,
            quoting=csv.QUOTE_MINIMAL,
            engine="python" if len(sep) > 1 else "c",
        )
    except pd.errors.EmptyDataError:
        raise DataError(f"{origin}: the file is empty; give a CSV with a header row") from None
    except (pd.errors.ParserError, ValueError, OSError, re.error) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(
            f"{origin}: cannot parse as CSV ({first}); check source.sep and that every row "
            "has the same number of fields"
        ) from None
    table.columns = [str(c).strip() for c in table.columns]
    return table


def _checked_text(path: Path, sep: str, header: bool) -> str:
    """The file's text, checked before any parse: its size (columns on the first line, rows,
    the memory a parse would hold, refused in one line as the memory plan refuses a run), its
    encoding (the offset of a byte that is not UTF-8, counted from the file's start) and,
    with a header, no column named twice."""
    origin = str(path)
    try:
        size = path.stat().st_size
        have = _memory_bytes()
        if not fits_in_memory(size):  # refused before a byte is read
            raise DataError(
                f"memory: {origin} is {size / (1 << 30):.1f} GiB; reading it would need more "
                f"than the {have / (1 << 30):.1f} GiB it may use here; use fewer rows or "
                "columns")
        with path.open("rb") as fh:
            raw = fh.read(size + 1)  # never more than its size said, and one byte
    except OSError as exc:
        raise DataError(f"{origin}: cannot be read ({exc.strerror}); check the path") from None
    if len(raw) > size:
        raise DataError(f"{origin}: grew while it was read; run again once it no longer "
                        "changes")
    end = raw.find(b"\n")
    first = raw if end < 0 else raw[:end]
    try:
        columns = (len(re.split(sep.encode(), first)) if len(sep) > 1
                   else first.count(sep.encode()) + 1)
    except re.error:
        columns = 1  # the parse names the bad pattern
    if columns > MAX_COLUMNS:
        raise DataError(
            f"memory: {origin} has {columns} columns on its first line, more than the "
            f"{MAX_COLUMNS} a task may read; keep only the columns the task needs in the file")
    rows = raw.count(b"\n") + 1
    need = PARSE_CELL_BYTES * rows * columns + PARSE_COLUMN_BYTES * columns + 2 * len(raw)
    if need > have:
        raise DataError(
            f"memory: reading {origin} ({rows} rows x {columns} columns) would need "
            f"{need / (1 << 30):.1f} GiB, more than the {have / (1 << 30):.1f} GiB it may use "
            "here; use fewer rows or columns")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{origin}: not UTF-8 text (byte 0x{raw[exc.start:exc.start + 1].hex()} at offset "
            f"{exc.start}); save the file as UTF-8") from None
    if header and len(sep) == 1:
        try:
            names = next(csv.reader(io.StringIO(text.split("\n", 1)[0]), delimiter=sep,
                                    skipinitialspace=True), [])
        except csv.Error:
            names = []
        names = [n.strip() for n in names]
        twice = next((n for n in names if names.count(n) > 1), None)
        if twice is not None:
            where = [i + 1 for i, n in enumerate(names) if n == twice]
            raise DataError(
                f"{origin}: the header names column {twice!r} more than once (columns "
                f"{', '.join(map(str, where))}); rename one of them")
    return text


def memory_bytes() -> float:
    """The memory a table read here may use (the machine's or its cgroup's, a share)."""
    return _memory_bytes()


def fits_in_memory(size: int) -> bool:
    """Whether a file of ``size`` bytes may be read: its bytes and its text within the memory
    this process may use."""
    return 2 * size <= _memory_bytes()


def _memory_bytes() -> float:
    """The memory this process may use: the machine's, or its cgroup's limit if lower."""
    try:
        total = float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return float("inf")
    for limit in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            value = Path(limit).read_text().strip()
        except OSError:
            continue
        if value.isdigit():
            total = min(total, float(value))
    return total * MEMORY_SHARE


def data_row(i: int) -> str:
    """Row position -> how a person finds it: ``data row 1`` is the first row after the header."""
    return f"data row {i + 1}"
