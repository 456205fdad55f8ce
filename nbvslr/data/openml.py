"""Any OpenML dataset by its id, downloaded once into the cache and verified.

``source: {openml: <id>}`` in a config, ``nbvslr.Task.from_openml(<id>)`` in Python. A small
client on ``urllib`` (``nbvslr.data.sources.download``), no ``openml`` package:

- Two requests: the dataset's description, ``<server>/api/v1/json/data/<id>`` (its name,
  version, default target, ignored and row-id columns, the URL of its ARFF file and that
  file's md5 checksum), then the ARFF file itself. ``<server>`` is ``https://www.openml.org``,
  or ``$NBVSLR_OPENML_SERVER`` (a mirror, or OpenML's test server).
- One deadline, ``settings.timeout`` seconds, for the whole transfer (both requests): a
  server that trickles is stopped then. At most ``settings.max_download`` MiB (64 by
  default, ``nbvslr run --max-download``): a larger file is refused in one line that names
  the limit and a value that would take it.
- The ARFF file must have the md5 OpenML publishes for it, or it is refused and never
  cached. The cache, ``settings.cache_dir / "openml-<id>" /`` (``description.json`` and
  ``data.arff``), is checked against that md5 on every read; once there, the network is not
  touched again.
- Every failure is one line (``DownloadError``): offline (``settings.download`` false and
  nothing cached), a time-out, an HTTP error, a bad checksum; each says how to work offline.
  An unknown id (OpenML answers HTTP 412 with its JSON error 111) says that OpenML has no
  such dataset; another error OpenML explains in JSON is quoted (code and message).

The table then follows the rules of a CSV (``nbvslr.data.csvsource``); by default the target
is the dataset's default target attribute, the features every other column but the ignored
and row-id ones and the string and date columns, and each feature's kind is the one the
ARFF header declares: numeric (``numeric``, ``real``, ``integer``) continuous, nominal
(``{a, b, ...}``) discrete, a task of both mixed; a nominal value its header does not
declare is refused, naming its line. A numeric default target (a regression
dataset) is refused unless the config names the target or its classes.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

import nbvslr.data.csvsource as csvsource
import nbvslr.data.sources as sources
from nbvslr.data.csvsource import TableChoices
from nbvslr.data.dataset import Dataset, DataSettings
from nbvslr.errors import DataError, DownloadError, did_you_mean, show

SERVER = "https://www.openml.org"
SERVER_ENV = "NBVSLR_OPENML_SERVER"
DESCRIPTION_FILE = "description.json"
DATA_FILE = "data.arff"
MIB = 1 << 20
NUMERIC = ("numeric", "real", "integer")
"""ARFF types read as continuous features; nominal ones (``{a, b}``) are discrete."""


def server() -> str:
    """The OpenML server asked: ``$NBVSLR_OPENML_SERVER`` or OpenML's own."""
    return (os.environ.get(SERVER_ENV) or SERVER).rstrip("/")


def description_url(dataset_id: int) -> str:
    return f"{server()}/api/v1/json/data/{dataset_id}"


def cache_folder(dataset_id: int, settings: DataSettings) -> Path:
    """Where dataset ``dataset_id`` is cached."""
    return Path(settings.cache_dir) / f"openml-{dataset_id}"


def _hint(dataset_id: int) -> str:
    return (f"to work offline, run once with internet (the dataset is then cached), or save "
            f"OpenML dataset {dataset_id}'s table as a CSV file and use source: {{csv: path}}")


def _md5(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


@dataclass(frozen=True)
class Description:
    """What OpenML says of a dataset (its ``data_set_description``)."""

    dataset_id: int
    name: str
    version: str
    url: str
    md5: str
    format: str
    default_target: str | None
    ignore: tuple[str, ...]
    row_id: tuple[str, ...]
    status: str


def _names(value: Any) -> tuple[str, ...]:
    """An attribute list as OpenML writes it: absent, one name, a list, or comma-separated."""
    if value in (None, ""):
        return ()
    items = value if isinstance(value, list) else [value]
    return tuple(n.strip() for item in items for n in str(item).split(",") if n.strip())


def parse_description(raw: bytes, dataset_id: int, origin: str) -> Description:
    """A ``Description`` from the JSON OpenML answers; ``DataError`` for anything else."""
    try:
        body = json.loads(raw.decode("utf-8"))
        d = body["data_set_description"]
        url, md5 = d["url"], str(d["md5_checksum"]).lower()
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError):
        raise DataError(f"{origin}: not an OpenML dataset description (JSON with "
                        "data_set_description, its url and md5_checksum); check "
                        f"{SERVER_ENV}, or delete the cached copy") from None
    if not isinstance(url, str) or not url.strip():
        raise DataError(f"{origin}: the description has no data URL (url: {json.dumps(url)}), so "
                        f"dataset {dataset_id} cannot be downloaded; check {SERVER_ENV}, or "
                        "save its table as a CSV file and use source: {csv: path}")
    if not sources.is_url(url):
        raise DataError(f"{origin}: the data URL {url[:80]!r} is not an http:// or https:// "
                        f"URL, the only ones nbvslr downloads from; check {SERVER_ENV}")
    if not re.fullmatch(r"[0-9a-f]{32}", md5):
        raise DataError(f"{origin}: md5_checksum {md5!r} is not an md5; check {SERVER_ENV}")
    target = _names(d.get("default_target_attribute"))
    return Description(
        dataset_id=dataset_id, name=str(d.get("name", f"openml-{dataset_id}")),
        version=str(d.get("version", "")), url=url, md5=md5,
        format=str(d.get("format", "ARFF")),
        default_target=",".join(target) if target else None,
        ignore=_names(d.get("ignore_attribute")), row_id=_names(d.get("row_id_attribute")),
        status=str(d.get("status", "")))


def fetch(dataset_id: int, settings: DataSettings) -> tuple[Description, bytes, str]:
    """The dataset's description and its verified ARFF bytes, and where they came from
    (``"cache"`` or the data file's URL); downloaded and cached when not cached yet."""
    folder = cache_folder(dataset_id, settings)
    described, arff = folder / DESCRIPTION_FILE, folder / DATA_FILE
    if described.is_file() and arff.is_file():
        about = parse_description(described.read_bytes(), dataset_id, str(described))
        data = arff.read_bytes()
        if _md5(data) == about.md5:
            return about, data, "cache"
    hint = _hint(dataset_id)
    if not settings.download:
        where = (f"{arff} fails its md5 check" if arff.is_file() and described.is_file()
                 else f"OpenML dataset {dataset_id} is not in the cache ({folder})")
        raise DownloadError(f"{where} and downloads are off; {hint}")
    deadline = time.monotonic() + settings.timeout
    raw = _download(description_url(dataset_id), deadline, settings, dataset_id)
    about = parse_description(raw, dataset_id, description_url(dataset_id))
    if about.format.lower() != "arff":
        raise DataError(f"OpenML dataset {dataset_id} ({about.name}) is stored as "
                        f"{about.format}, which nbvslr does not read (dense ARFF only); save "
                        "its table as a CSV file and use source: {csv: path}")
    data = _download(about.url, deadline, settings, dataset_id)
    actual = _md5(data)
    if actual != about.md5:
        raise DownloadError(
            f"download of {about.url} refused: md5 {actual[:12]}... is not the "
            f"{about.md5[:12]}... OpenML publishes for dataset {dataset_id} ({len(data)} "
            f"bytes); {hint}")
    sources.write_atomic(arff, data=data)
    sources.write_atomic(described, data=raw)  # last: a cache entry is complete or absent
    return about, data, about.url


def _download(url: str, deadline: float, settings: DataSettings, dataset_id: int) -> bytes:
    """``url``'s bytes within what is left of the transfer's one deadline, and at most
    ``settings.max_download`` MiB (``too_large`` says so)."""
    left = deadline - time.monotonic()
    late = DownloadError(
        f"download of OpenML dataset {dataset_id} failed: timed out after "
        f"{settings.timeout:g} s (the whole transfer, its description and its data, "
        f"--timeout); {_hint(dataset_id)}")
    if left <= 0:
        raise late
    limit = max(int(settings.max_download * MIB), 1)
    try:
        return sources.download(url, left, _hint(dataset_id), limit=limit) or b""
    except sources.TooLarge as exc:
        raise too_large(url, dataset_id, exc.size, settings.max_download) from None
    except sources.HttpStatus as exc:
        refusal = _refusal(exc.body)
        if refusal is None:
            raise
        code, message = refusal
        if code == UNKNOWN_DATASET:
            raise DownloadError(f"OpenML has no dataset {dataset_id} ({server()} answered "
                                f"HTTP {exc.status}, error {code}: {message}); check the "
                                "id") from None
        raise DownloadError(f"OpenML refused dataset {dataset_id} ({server()} answered HTTP "
                            f"{exc.status}, error {code}: {message}); {_hint(dataset_id)}"
                            ) from None
    except DownloadError:
        if time.monotonic() >= deadline - 0.05:  # the deadline ended it
            raise late from None
        raise


UNKNOWN_DATASET = "111"
"""OpenML's error code for an id it has no dataset for (with HTTP 412)."""


def _refusal(body: bytes) -> tuple[str, str] | None:
    """OpenML's reason for an error status, ``(code, message)`` from its JSON answer
    (``{"error": {"code": "111", "message": "Unknown dataset"}}``); None for another answer."""
    try:
        error = json.loads(body.decode("utf-8"))["error"]
        code, message = str(error["code"]).strip(), str(error.get("message", "")).strip()
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, AttributeError):
        return None
    if not re.fullmatch(r"\d{1,6}", code):
        return None
    return code, " ".join(message.split())[:120] or "no message"


def too_large(url: str, dataset_id: int, size: int | None, limit: float) -> DownloadError:
    """The one line refusing a file larger than ``limit`` MiB (``size``: the bytes the
    server announced, None when it sent more without announcing them), with a limit that
    would take it (the next power of two MiB above ``size``, or twice ``limit``)."""
    if size is not None:
        what = f"{url} is {size / MIB:.1f} MiB"
        enough = float(2 ** max(math.ceil(math.log2(size / MIB)), 0))
    else:
        what = f"{url} sent more than that without announcing its size"
        enough = 2 * limit
    return DownloadError(
        f"download of OpenML dataset {dataset_id} refused: {what}, more than the download "
        f"limit of {limit:g} MiB; raise it with --max-download {enough:g} (or "
        f"NBVSLR_MAX_DOWNLOAD={enough:g}; in Python DataSettings(max_download={enough:g}))")


# --------------------------------------------------------------------------- ARFF

@dataclass(frozen=True)
class Attribute:
    name: str
    type: str  # numeric, nominal, string, date (ARFF's types, numeric for real/integer)
    levels: tuple[str, ...] = ()  # a nominal attribute's declared values, unquoted


_ATTRIBUTE = re.compile(r"""@attribute\s+('(?:\\.|[^'])*'|"(?:\\.|[^"])*"|\S+)\s+(.+)$""",
                        re.IGNORECASE)


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = re.sub(r"\\(.)", r"\1", text[1:-1])
    return text


_VALUE = re.compile(r"""\s*(?: '((?:\\.|[^'\\])*)'   # single-quoted
                              | "((?:\\.|[^"\\])*)"   # double-quoted
                              | ([^,'"][^,]*|) )        # bare, or empty
                          \s*(,|\Z)""", re.VERBOSE)
"""One value of a data row and the comma after it (or the row's end): single-quoted,
double-quoted (ARFF allows both, a backslash escaping the quote) or bare."""


def _cells(row: str) -> list[str] | None:
    """The values of a dense data row as text: a quoted value unquoted and unescaped, a bare
    ``?`` missing (the empty cell); None for a row whose quotes do not close, or with text
    after a closing quote."""
    cells: list[str] = []
    pos = 0
    while True:
        found = _VALUE.match(row, pos)
        if found is None:
            return None
        single, double, bare, comma = found.groups()
        quoted = single if single is not None else double
        if quoted is not None:
            cells.append(re.sub(r"\\(.)", r"\1", quoted))
        else:
            cells.append("" if bare.strip() == "?" else bare.strip())
        if not comma:
            return cells
        pos = found.end()


def _type_of(declared: str, origin: str, name: str) -> str:
    word = declared.strip().split()[0].lower() if declared.strip() else ""
    if declared.strip().startswith("{"):
        return "nominal"
    if word in NUMERIC:
        return "numeric"
    if word in ("string", "date"):
        return word
    raise DataError(f"{origin}: attribute {name!r} has ARFF type {declared.strip()!r}, which "
                    "nbvslr does not read (numeric, nominal, string or date); save the table "
                    "as a CSV file and use source: {csv: path}")


def read_arff(data: bytes, origin: str) -> tuple[pd.DataFrame, tuple[Attribute, ...]]:
    """A dense ARFF file as a table of stripped text cells (N, columns) and its attributes;
    an unquoted ``?`` is a missing (empty) cell, a value may be quoted with ``'`` or ``"``.
    The file is UTF-8, or else Latin-1 (as many of OpenML's older files are: every byte is
    a Latin-1 character). ``DataError``, one line, for a file that is not dense ARFF."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    lines = text.splitlines()
    attributes: list[Attribute] = []
    start = None
    for number, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith("%"):
            continue
        lowered = stripped.lower()
        if lowered.startswith("@attribute"):
            found = _ATTRIBUTE.match(stripped)
            if found is None:
                raise DataError(f"{origin} line {number + 1}: not an ARFF attribute "
                                f"({stripped[:60]!r}); check {SERVER_ENV}")
            name = _unquote(found.group(1))
            kind = _type_of(found.group(2), origin, name)
            levels = (_levels(found.group(2), origin, number + 1, name)
                      if kind == "nominal" else ())
            attributes.append(Attribute(name, kind, levels))
        elif lowered.startswith("@data"):
            start = number + 1
            break
    if start is None or not attributes:
        raise DataError(f"{origin}: not an ARFF file (no @attribute or no @data line); check "
                        f"{SERVER_ENV}")
    rows: list[list[str]] = []
    numbers: list[int] = []
    width = len(attributes)
    for number, line in enumerate(lines[start:], start + 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("%"):
            continue
        if stripped.startswith("{"):
            raise DataError(f"{origin} line {number}: a sparse ARFF row, which nbvslr does not "
                            "read; save the table as a CSV file and use source: {csv: path}")
        cells = _cells(stripped)
        if cells is None:
            raise DataError(f"{origin} line {number}: a quoted value is not closed, or text "
                            f"follows its closing quote ({stripped[:60]!r}); save the table "
                            "as a CSV file and use source: {csv: path}")
        if len(cells) != width:
            raise DataError(f"{origin} line {number}: {len(cells)} "
                            f"value{'' if len(cells) == 1 else 's'}, the header "
                            f"declares {width} attributes; check {SERVER_ENV}")
        rows.append(cells)
        numbers.append(number)
    names = [a.name for a in attributes]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise DataError(f"{origin}: attribute {twice!r} is declared twice; check {SERVER_ENV}")
    table = pd.DataFrame(rows, columns=names, dtype=str)
    for j, attribute in enumerate(attributes):
        if attribute.type != "nominal":
            continue
        column = table.iloc[:, j]
        stray = (~column.isin(attribute.levels) & (column != "")).to_numpy().nonzero()[0]
        if stray.size:
            first = int(stray[0])
            declared = ", ".join(map(repr, attribute.levels[:8])) + (
                ", ..." if len(attribute.levels) > 8 else "")
            raise DataError(
                f"{origin} line {numbers[first]}: attribute {attribute.name!r} has the value "
                f"{show(column.iat[first])}, not one of the values its header declares "
                f"({{{declared}}}; {stray.size} such row{'s' if stray.size > 1 else ''}); "
                f"check {SERVER_ENV}, or save the table as a CSV file and use "
                "source: {csv: path}")
    return table, tuple(attributes)


def _levels(declared: str, origin: str, number: int, name: str) -> tuple[str, ...]:
    """The values a nominal type ``{a, 'b c', ...}`` declares, unquoted as a row's are."""
    inside = declared.strip()[1:]
    inside = inside[:inside.rfind("}")] if "}" in inside else None
    cells = _cells(inside.strip()) if inside is not None else None
    if cells is None:
        raise DataError(f"{origin} line {number}: the values of nominal attribute {name!r} "
                        f"are not a closed {{...}} list ({show(declared.strip())}); check "
                        f"{SERVER_ENV}")
    return tuple(c for c in cells if c != "")


# --------------------------------------------------------------------------- the task

def _declared_choices(choices: TableChoices, attributes: Sequence[Attribute], target: str,
                      defaults: list[str], origin: str) -> TableChoices:
    """The table choices with each feature's kind the one its ARFF type declares, unless
    the config chose kinds itself (``kind:``, or ``continuous:`` and ``discrete:``)."""
    if choices.kind is not None or choices.continuous is not None:
        return choices
    types = {a.name: a.type for a in attributes}
    pool = list(choices.feature_columns) if choices.feature_columns is not None else defaults
    for column in [*pool, *choices.drop]:
        if column not in types:
            key = "features.columns" if choices.feature_columns is not None else "features.drop"
            raise DataError(f"{origin}: {key}: no column {column!r}"
                            f"{did_you_mean(column, list(types))}; columns are "
                            f"{', '.join(map(repr, list(types)[:8]))}"
                            f"{', ...' if len(types) > 8 else ''}")
    if choices.feature_columns is not None and target in choices.feature_columns:
        raise DataError(f"{origin}: features.columns: the target column {target!r} is listed "
                        "as a feature; remove it from features.columns")
    pool = [c for c in pool if c != target and c not in choices.drop]
    other = [c for c in pool if types[c] not in ("numeric", "nominal")]
    if other:
        raise DataError(f"{origin}: features.columns: column {other[0]!r} is an ARFF "
                        f"{types[other[0]]}; list only numeric and nominal columns, or give "
                        "features.kind")
    if not pool:
        return choices  # refused by the table rules, naming the fix
    return replace(choices, feature_columns=None, drop=(),
                   continuous=tuple(c for c in pool if types[c] == "numeric"),
                   discrete=tuple(c for c in pool if types[c] == "nominal"))


def load(name: str, dataset_id: int, choices: TableChoices, settings: DataSettings) -> Dataset:
    """The ``Dataset`` of OpenML dataset ``dataset_id`` under the task name ``name``."""
    about, data, how = fetch(dataset_id, settings)
    origin = f"OpenML dataset {dataset_id} ({about.name})"
    table, attributes = read_arff(data, origin)
    target = choices.target_column or about.default_target
    if target is None or "," in target:
        problem = ("has no default target" if target is None
                   else f"has several default targets ({target})")
        raise DataError(f"{origin}: {problem}; name the class column in target.column")
    declared = {a.name: a.type for a in attributes}
    if (choices.target_column is None and choices.positive is None and choices.classes is None
            and declared.get(target) == "numeric"):
        raise DataError(f"{origin}: its default target {target!r} is numeric (a regression "
                        "dataset), not classes; name a nominal column in target.column, or "
                        f"make classes of {target!r}: target.positive (its values of class 1) "
                        "or a CSV of the table with it binned, source: {csv: path}")
    left_out = {*about.ignore, *about.row_id}
    defaults = [a.name for a in attributes if a.name != target and a.name not in left_out
                and a.type in ("numeric", "nominal")]
    if choices.target_column is None and target not in table.columns:
        raise DataError(f"{origin}: its default target {target!r} is not one of its "
                        "columns; name the class column in target.column")
    chosen = _declared_choices(choices, attributes, target, defaults, origin)
    return csvsource.build_dataset(
        table, name=name, choices=chosen, origin=origin, row_label=csvsource.data_row,
        default_target=target, default_features=defaults,
        notes={"source": "openml", "openml": dataset_id, "dataset": about.name,
               "version": about.version, "url": about.url, "md5": about.md5,
               "sha256": hashlib.sha256(data).hexdigest(), "from": how,
               "left_out": sorted(left_out | {a.name for a in attributes
                                              if a.type not in ("numeric", "nominal")})},
    )
