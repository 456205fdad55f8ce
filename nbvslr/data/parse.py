"""Turn a recipe's verified files into a ``Dataset``.

The steps, each driven by the recipe's data and its resolved choices:

1. ``read_rows``: split every line of the files into string fields (``Parse``).
2. ``build_dataset``: make the class binary, or codes ``0 .. K - 1`` (``Target``), keep
   the recipe's attributes, treat missing values, drop constant (or binary) columns, then
   encode: continuous columns as float64 rescaled to [0, 1] over the whole dataset,
   discrete columns as int64 level codes; a mixed task's continuous attributes (the
   recipe's ``continuous``) the first way, then its other attributes the second, as float64.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.data.recipes import Parse, Recipe, resolved_target
from nbvslr.errors import DataError


def split_line(line: str, parse: Parse) -> list[str]:
    """The string fields of one data line (``id_suffix``, ``strip_dot``, ``expand`` applied)."""
    if parse.id_suffix and "|" in line:
        line = line[: line.rindex("|")]
    fields = line.split() if parse.sep is None else [f.strip() for f in line.split(parse.sep)]
    if parse.strip_dot and fields and fields[-1].endswith("."):
        fields[-1] = fields[-1][:-1]
    return fields


def read_rows(content: bytes, name: str, parse: Parse) -> list[list[str]]:
    """Every record of one file (its bytes, ``content``) as a list of string fields,
    ``len == len(parse.columns)``.

    Blank lines and lines starting with one of ``parse.junk_prefixes`` are skipped; a line
    with the wrong number of fields is a ``DataError`` naming the file (``name``) and the line.
    """
    text = content.decode("utf-8", errors="strict")
    rows: list[list[str]] = []
    width = len(parse.columns)
    junk, sep, strip = parse.junk_prefixes, parse.sep, str.strip
    plain = sep is not None and not parse.id_suffix and not parse.strip_dot
    for number, line in enumerate(text.splitlines(), start=1):
        if not line or line.isspace() or (junk and line.startswith(junk)):
            continue
        # split_line, inlined for the common case (about half the time of a large file)
        fields = list(map(strip, line.split(sep))) if plain else split_line(line, parse)
        if len(fields) != width:
            raise DataError(
                f"{name} line {number}: {len(fields)} fields where the recipe expects "
                f"{width}; the file is not the original (delete it from the cache to refetch)"
            )
        rows.append(fields)
    return rows


def _expand(table: np.ndarray, columns: list[str], field: str) -> tuple[np.ndarray, list[str]]:
    """Replace the string column ``field`` by one column per character (``field1..fieldL``)."""
    j = columns.index(field)
    seqs = table[:, j]
    lengths = {len(s) for s in seqs}
    if len(lengths) != 1:
        raise DataError(
            f"column {field}: sequences of different lengths {sorted(lengths)}; "
            "the file is not the original"
        )
    length = lengths.pop()
    chars = np.empty((len(seqs), length), dtype=object)  # (N, L)
    chars[:] = [list(s) for s in seqs]
    names = [f"{field}{i}" for i in range(1, length + 1)]
    table = np.concatenate([table[:, :j], chars, table[:, j + 1 :]], axis=1)
    return table, columns[:j] + names + columns[j + 1 :]


def _numeric(values: np.ndarray, column: str) -> np.ndarray:
    try:
        return values.astype(np.float64)
    except ValueError:
        bad = next(v for v in values if not _is_number(v))
        raise DataError(
            f"column {column}: value {bad!r} is not a number; the file is not the original"
        ) from None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _level_order(levels: Sequence[str], missing: str) -> list[str]:
    """Observed levels sorted numerically when they are all numbers, else as text;
    the missing marker (when kept as a level) comes last."""
    present = [v for v in levels if v != missing]
    if all(_is_number(v) for v in present):
        present.sort(key=float)
    else:
        present.sort()
    return present + [missing] * (missing in levels)


def build_dataset(
    recipe: Recipe, choices: Mapping[str, Any], tables: Sequence[tuple[str, list[list[str]]]],
    provenance: Sequence[Mapping[str, str]] = (),
) -> Dataset:
    """The task of ``recipe`` under ``choices`` from the rows of its files.

    Parameters
    ----------
    recipe : Recipe
    choices : mapping
        Every choice of the recipe, resolved (``resolve_choices``).
    tables : sequence of (file name, rows)
        The rows of each file to use, in order (train files, then test files if pooled).
    provenance : sequence of mapping
        ``{"name", "sha256", "source"}`` of each file, recorded in ``notes``.
    """
    parse = recipe.parse
    rows = [r for _, table in tables for r in table]
    if not rows:
        raise DataError(f"{recipe.name}: the data files hold no records")
    # object, not fixed-width str: the table points at the parsed strings (8 bytes a cell)
    # instead of copying each into the longest field's width (adult: ~60 MB a copy)
    table = np.empty((len(rows), len(rows[0])), dtype=object)  # (N, C)
    table[:] = rows
    columns = list(parse.columns)
    if parse.expand is not None:
        table, columns = _expand(table, columns, parse.expand)
    col = {c: j for j, c in enumerate(columns)}
    n_read = table.shape[0]

    # --- target ----------------------------------------------------------------------
    target_key, target = resolved_target(recipe, choices)
    t = table[:, col[target.column]]  # (N,)
    if np.any(t == parse.missing):
        raise DataError(f"{recipe.name}: the class column {target.column} has missing values")
    keep = ~np.isin(t, target.drop)  # (N,)
    if target.classes:
        keep &= np.isin(t, target.classes)
    table, t = table[keep], t[keep]
    if target.classes:
        code = {v: k for k, v in enumerate(target.classes)}
        y = np.array([code[v] for v in t], dtype=np.int8)  # (N,) in 0 .. K - 1
        target_note = target.describe
    elif target.above_median:
        values = _numeric(t, target.column)
        median = float(np.median(values))
        y = values > median
        target_note = f"{target.describe} (median {median:g})"
    else:
        y = np.isin(t, target.positive)
        target_note = target.describe

    # --- attributes and missing values ------------------------------------------------
    names = [f for f in recipe.features if f != target.column]
    X = table[:, [col[f] for f in names]]  # (N, d) strings
    missing = X == parse.missing  # (N, d)
    if parse.zero_missing and choices.get("zeros") == "drop-rows":
        for j, name in enumerate(names):
            if name in parse.zero_missing:
                # "0" and "0.0" alike: compare numbers, not text.
                missing[:, j] |= np.array([_is_number(v) and float(v) == 0.0 for v in X[:, j]])
    rows_missing = missing.any(axis=1)  # (N,)
    how = choices.get("missing")
    if choices.get("zeros") == "drop-rows" or how == "drop-rows":
        keep = ~rows_missing
        X, y, missing = X[keep], y[keep], missing[keep]
    elif rows_missing.any() and how != "level":
        first = names[int(np.argmax(missing.any(axis=0)))]
        raise DataError(
            f"{recipe.name}: column {first} has missing values ('{parse.missing}') but the "
            "recipe says nothing about them; add a 'missing' choice to the recipe"
        )

    # --- encoding -----------------------------------------------------------------------
    if recipe.kind == "continuous":
        X_out, names, dropped = _encode_continuous(X, names, choices)
        n_values: tuple[int, ...] = ()
    elif recipe.kind == "discrete":
        X_out, names, n_values, dropped = _encode_discrete(X, names, choices, parse.missing)
    else:  # mixed: the continuous attributes rescaled, then the discrete ones' codes
        numeric = [j for j, n in enumerate(names) if n in recipe.continuous]
        coded = [j for j, n in enumerate(names) if n not in recipe.continuous]
        Xc, names_c, dropped_c = _encode_continuous(X[:, numeric], [names[j] for j in numeric],
                                                    choices)
        Xd, names_d, n_values, dropped_d = _encode_discrete(
            X[:, coded], [names[j] for j in coded], choices, parse.missing)
        X_out = np.concatenate([Xc, Xd.astype(np.float64)], axis=1)  # (N, d)
        names, dropped = names_c + names_d, dropped_c + dropped_d

    notes = {
        "recipe": recipe.name,
        "choices": {k: v for k, v in choices.items()},
        "target": {"rule": target_key, "describe": target_note},
        "files": [dict(p) for p in provenance],
        "rows_read": int(n_read),
        "rows_dropped": int(n_read - len(y)),
        "columns_dropped": dropped,
    }
    return Dataset(
        name=recipe.name,
        title=recipe.panel_title(target_key),
        X=np.ascontiguousarray(X_out),
        y=y.astype(np.int8),
        kind=recipe.kind,  # type: ignore[arg-type]
        n_values=n_values,
        feature_names=tuple(names),
        sizes=tuple(recipe.sizes),
        x_range=tuple(recipe.x_range),  # type: ignore[arg-type]
        notes=notes,
        classes=tuple(target.classes),
    )


def _encode_continuous(
    X: np.ndarray, names: list[str], choices: Mapping[str, Any]
) -> tuple[np.ndarray, list[str], list[str]]:
    """The string columns ``X`` (N, d) as float64 rescaled to [0, 1] over all N rows,
    ``(X - min) / (max - min)``, after dropping constant (``constant_columns``) or two-valued
    (``binary_columns``) columns; returns (X (N, d'), kept names, dropped names)."""
    Xf = np.column_stack([_numeric(X[:, j], names[j]) for j in range(len(names))])  # (N, d)
    lo, hi = Xf.min(axis=0), Xf.max(axis=0)  # (d,)
    n_distinct = np.array([np.unique(Xf[:, j]).size for j in range(Xf.shape[1])])
    drop = np.zeros(len(names), dtype=bool)
    if choices.get("constant_columns", "drop") == "drop":
        drop |= n_distinct == 1
    if choices.get("binary_columns", "keep") == "drop":
        drop |= n_distinct == 2
    dropped = [n for n, d in zip(names, drop, strict=True) if d]
    keep_cols = ~drop
    Xf, lo, hi = Xf[:, keep_cols], lo[keep_cols], hi[keep_cols]
    span = hi - lo
    # A kept constant column has span 0: it is mapped to 0 instead of dividing by zero.
    span = np.where(span > 0, span, 1.0)
    kept = [n for n, k in zip(names, keep_cols, strict=True) if k]
    return (Xf - lo) / span, kept, dropped  # (N, d') in [0, 1]


def _encode_discrete(
    X: np.ndarray, names: list[str], choices: Mapping[str, Any], missing: str
) -> tuple[np.ndarray, list[str], tuple[int, ...], list[str]]:
    """The string columns ``X`` (N, d) as int64 level codes ``0 .. L_j - 1`` in the order of
    ``_level_order`` (the ``missing`` marker, kept as a level, last), after dropping
    one-level columns (``constant_columns``); returns (codes (N, d'), kept names, L of each
    kept column, dropped names)."""
    codes, levels = [], []
    for j in range(X.shape[1]):
        # each value's code by first appearance, from a dict (np.unique on strings sorts
        # every cell: about ten times slower on adult's 48,842 rows)
        first: dict[str, int] = {}
        seen = np.array([first.setdefault(v, len(first)) for v in X[:, j]],
                        dtype=np.int64)  # (N,)
        order = _level_order(sorted(first), missing)
        where = {v: i for i, v in enumerate(order)}
        rank = np.array([where[v] for v in first], dtype=np.int64)  # (L,) by first appearance
        codes.append(rank[seen])
        levels.append(order)
    keep_cols = np.array(
        [choices.get("constant_columns", "drop") != "drop" or len(lv) > 1 for lv in levels],
        dtype=bool,
    )
    dropped = [n for n, k in zip(names, keep_cols, strict=True) if not k]
    X_out = (
        np.column_stack([c for c, k in zip(codes, keep_cols, strict=True) if k])
        if keep_cols.any() else np.zeros((X.shape[0], 0), dtype=np.int64)
    )  # (N, d')
    n_values = tuple(len(lv) for lv, k in zip(levels, keep_cols, strict=True) if k)
    kept = [n for n, k in zip(names, keep_cols, strict=True) if k]
    return X_out, kept, n_values, dropped
