"""Any importable UCI dataset, through ``ucimlrepo``, with a cache and a timeout.

``source: {uci: <id>}`` in a config. ``ucimlrepo.fetch_ucirepo`` has neither a cache nor a
timeout, so this module wraps it:

- Cache: ``settings.cache_dir / "uci-<id>" /`` holds ``data.csv`` (the table as ucimlrepo
  returned it, every column) and ``metadata.json`` (the dataset's metadata and its variables:
  name, role, type). Plain text, never a pickle. Once both are there the network is not
  touched again; delete the folder to fetch anew. The folder is written to a temporary
  name and renamed into place, so an interrupted fetch leaves no half cache.
- Timeout: every network wait (connect, each read) is bounded by ``settings.timeout``
  (the socket default timeout, set around the call), and the whole fetch by one deadline,
  ``FETCH_DEADLINE_FACTOR * settings.timeout`` (the factor is 1: a server that trickles
  stops at ``--timeout``; the fetch runs in a thread).
- Verified: a table with fewer rows than the metadata's ``num_instances`` (or, when it
  gives none, whose last row alone lacks its last field: a file cut short) is refused and
  never cached; the cache records the sha256 of ``data.csv`` and checks it on every read
  (a cached table that fails, or cannot be read, is one line saying to delete the folder).
- Failures are ``DownloadError`` saying what failed and how to work offline: save the
  table as a CSV and use ``source: {csv: path}``; an id that exists whose data file cannot
  be read (an HTTP error, a web page) says so, not "not found".

The table then goes through the same rules as a user's CSV (``nbvslr.data.csvsource``).
By default the target is the dataset's only column with the role Target, and the features
are its columns with the role Feature (never ID or Other columns).
"""

from __future__ import annotations

import gc
import json
import math
import os
import shutil
import socket
import tempfile
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import nbvslr.data.csvsource as csvsource
import nbvslr.data.sources as sources
from nbvslr.data.csvsource import TableChoices
from nbvslr.data.dataset import Dataset, DataSettings
from nbvslr.errors import DataError, DownloadError

FETCH_DEADLINE_FACTOR = 1
"""The whole fetch ends within ``settings.timeout``: one deadline, not one per read."""
DEADLINE_GRACE = 0.5
"""Seconds the deadline leaves a socket's own timeout to be reported first (no answer)."""
DATA_FILE = "data.csv"
META_FILE = "metadata.json"


def _offline_hint(uci_id: int) -> str:
    return (
        f"to work offline, save the table of UCI dataset {uci_id} as a CSV file and use "
        "source: {csv: path}"
    )


def cache_folder(uci_id: int, settings: DataSettings) -> Path:
    """Where dataset ``uci_id`` is cached."""
    return Path(settings.cache_dir) / f"uci-{uci_id}"


def _read_meta(folder: Path) -> dict[str, Any] | None:
    """The cached metadata, or None when the cache is absent or incomplete."""
    if not (folder / DATA_FILE).is_file() or not (folder / META_FILE).is_file():
        return None
    try:
        meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(meta, dict) or not isinstance(meta.get("variables"), list):
        return None
    return meta


def _default_fetch(uci_id: int) -> Any:
    from ucimlrepo import fetch_ucirepo

    return fetch_ucirepo(id=uci_id)


def _call_with_deadline(uci_id: int, timeout: float, fetch: Callable[[int], Any]) -> Any:
    """Run ``fetch(uci_id)`` with socket waits bounded by ``timeout`` and a total deadline."""
    outcome: dict[str, Any] = {}

    def work() -> None:
        # ucimlrepo never closes its API response: its socket is closed when the call's
        # frame is freed, with a ResourceWarning. Free it here, with that warning silenced,
        # and hand the caller a fresh error that holds no reference to the frame.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            try:
                outcome["value"] = fetch(uci_id)
            except BaseException as exc:
                outcome["error"] = _download_error(uci_id, timeout, exc)
            gc.collect()

    previous = socket.getdefaulttimeout()
    # Sockets ucimlrepo (and pandas, for the CSV) open while this is set get the timeout;
    # it must be set before the thread starts, and is restored once it is done or abandoned.
    socket.setdefaulttimeout(timeout)
    try:
        thread = threading.Thread(target=work, name=f"uci-{uci_id}", daemon=True)
        thread.start()
        thread.join(min(FETCH_DEADLINE_FACTOR * timeout + DEADLINE_GRACE,
                        threading.TIMEOUT_MAX))
    finally:
        socket.setdefaulttimeout(previous)
    if thread.is_alive():
        raise DownloadError(
            f"UCI dataset {uci_id}: the fetch did not finish within "
            f"{FETCH_DEADLINE_FACTOR * timeout:g} s; retry later, or {_offline_hint(uci_id)}"
        )
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _is_timeout(exc: BaseException | None) -> bool:
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, TimeoutError) or "timed out" in str(exc):
            return True
        reason = getattr(exc, "reason", None)  # URLError wraps the socket's error here
        exc = reason if isinstance(reason, BaseException) else exc.__cause__ or exc.__context__
        seen += 1
    return False


def _lacks_columns(exc: BaseException) -> bool:
    """Whether ``exc`` is pandas' ``KeyError`` for columns the table does not have: the data
    file ucimlrepo read is not the table its variables describe (a web page, another file)."""
    return isinstance(exc, KeyError) and ("not in index" in str(exc)
                                          or "are in the [columns]" in str(exc))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]


def _download_error(uci_id: int, timeout: float, exc: BaseException) -> DownloadError:
    name = type(exc).__name__
    if name == "DatasetNotFoundError" and "data csv file" in str(exc) or _lacks_columns(exc):
        # ucimlrepo's words when the data URL answers an HTTP error, or a page that is no
        # table (HTML): the id exists, its data file is what failed
        return DownloadError(
            f"UCI dataset {uci_id} exists, but its data file could not be read "
            f"({name}: {_first_line(exc)}); retry later, or {_offline_hint(uci_id)}"
        )
    if name == "DatasetNotFoundError":
        if "not available for import" in str(exc):
            return DownloadError(
                f"UCI dataset {uci_id} exists but ucimlrepo cannot import it (no standard "
                "table); download its files from archive.ics.uci.edu, save the table as CSV "
                "and use source: {csv: path}"
            )
        return DownloadError(
            f"UCI dataset {uci_id}: not found ({_first_line(exc)}); check the id on "
            "archive.ics.uci.edu"
        )
    if _is_timeout(exc):
        return DownloadError(
            f"UCI dataset {uci_id}: no answer within {timeout:g} s; retry later, or "
            f"{_offline_hint(uci_id)}"
        )
    if isinstance(exc, OSError):  # ConnectionError, URLError, HTTPError...
        return DownloadError(
            f"UCI dataset {uci_id}: download failed ({name}: {_first_line(exc)}); check the "
            f"connection, or {_offline_hint(uci_id)}"
        )
    return DownloadError(
        f"UCI dataset {uci_id}: unexpected answer from the UCI repository ({name}: "
        f"{_first_line(exc)}); retry later, or {_offline_hint(uci_id)}"
    )


def _jsonable(value: Any) -> Any:
    """Metadata as plain JSON data: dotdicts become dicts, NaN null, anything else text."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _count(value: Any) -> int | None:
    """A row count the metadata gives (an int, or digits), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value) or None
    return None


def table_problem(table: pd.DataFrame, metadata: Any) -> str | None:
    """What shows a table (N, columns) to be cut short, or None: fewer rows than the
    metadata's ``num_instances`` when it gives one (more is allowed: some datasets' counts
    name one part of their table); without it, a last row that lacks its last field where
    every other row has it (a file cut inside its last line). A missing cell is NaN (as
    ucimlrepo reads) or empty (as the cache is read)."""
    expected = _count(metadata.get("num_instances")) if isinstance(metadata, dict) else None
    if expected is not None:
        if len(table) < expected:
            return (f"has {len(table)} rows, fewer than the {expected} its metadata gives "
                    "(num_instances)")
        return None
    if len(table) < 2 or table.shape[1] < 2:
        return None

    def missing(cells: pd.Series) -> np.ndarray:
        return (cells.isna() | cells.astype(str).eq("")).to_numpy()

    if missing(table.iloc[-1:, -1])[0] and not missing(table.iloc[:-1, -1]).any():
        kept = table.shape[1] - int(missing(table.iloc[-1])[::-1].cumprod().sum())
        return (f"ends in a row of {kept} of its {table.shape[1]} fields (data row "
                f"{len(table)}), the only row without its last field")
    return None


def fetch_to_cache(
    uci_id: int, settings: DataSettings, fetch: Callable[[int], Any] | None = None
) -> Path:
    """Fetch dataset ``uci_id`` with ucimlrepo and cache it; return the cache folder.

    A complete cache is used as is (no network). ``fetch`` replaces
    ``ucimlrepo.fetch_ucirepo`` (tests).
    """
    folder = cache_folder(uci_id, settings)
    if _read_meta(folder) is not None:
        return folder
    if not settings.download:
        raise DownloadError(
            f"UCI dataset {uci_id} is not in the cache ({folder}) and downloads are off; "
            f"allow downloads, or {_offline_hint(uci_id)}"
        )
    result = _call_with_deadline(uci_id, settings.timeout, fetch or _default_fetch)
    try:
        table = result["data"]["original"]
        variables = result["variables"]
        metadata = dict(result["metadata"] or {})
    except (KeyError, TypeError, AttributeError) as exc:
        raise _download_error(uci_id, settings.timeout, exc) from None
    if not isinstance(table, pd.DataFrame) or table.empty:
        raise DownloadError(
            f"UCI dataset {uci_id}: ucimlrepo returned no table; retry later, or "
            f"{_offline_hint(uci_id)}"
        )
    problem = table_problem(table, metadata)
    if problem is not None:
        raise DownloadError(
            f"UCI dataset {uci_id}: its data file {problem}: it looks cut short, and was not "
            f"cached; retry later, or {_offline_hint(uci_id)}"
        )
    if isinstance(variables, pd.DataFrame):
        # to_json turns NaN into null, which json.dumps would write as an invalid NaN.
        variables = json.loads(variables.to_json(orient="records"))
    meta = {
        "uci_id": uci_id,
        "name": metadata.get("name"),
        "doi": metadata.get("doi"),
        "repository_url": metadata.get("repository_url"),
        "data_url": metadata.get("data_url"),
        "variables": _jsonable(list(variables or [])),
        "metadata": _jsonable(metadata),
    }
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".uci-{uci_id}-", dir=folder.parent))
    try:
        table.to_csv(staging / DATA_FILE, index=False)
        meta["sha256"] = sources.sha256_of(staging / DATA_FILE)
        (staging / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")
        if folder.exists():  # an incomplete earlier cache
            shutil.rmtree(folder)
        os.replace(staging, folder)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return folder


def _read_cached(uci_id: int, folder: Path, meta: dict[str, Any]) -> pd.DataFrame:
    """The cached table, checked: against the sha256 the cache recorded, or (a cache
    written before it recorded one) by ``table_problem``; a table that fails, or cannot be
    read, is a ``DataError`` saying to delete the folder (the next run fetches it anew)."""
    path = folder / DATA_FILE
    fix = f"delete {folder} to fetch the dataset again"
    recorded = meta.get("sha256")
    if isinstance(recorded, str) and sources.sha256_of(path) != recorded:
        raise DataError(f"UCI dataset {uci_id}: the cached table {path} is not the one "
                        f"downloaded (its sha256 changed); {fix}")
    try:
        table = csvsource.read_csv(path)
    except DataError as exc:
        raise DataError(f"UCI dataset {uci_id}: the cached table cannot be read "
                        f"({str(exc).split('; ')[0]}); {fix}") from None
    problem = None if isinstance(recorded, str) else table_problem(table, meta.get("metadata"))
    if problem is not None:
        raise DataError(f"UCI dataset {uci_id}: the cached table {path} {problem}: it looks "
                        f"cut short; {fix}")
    return table


def load(
    name: str,
    uci_id: int,
    choices: TableChoices,
    settings: DataSettings,
    fetch: Callable[[int], Any] | None = None,
) -> Dataset:
    """The task built from UCI dataset ``uci_id`` (fetched once, then read from the cache)."""
    folder = fetch_to_cache(uci_id, settings, fetch)
    meta = _read_meta(folder)
    if meta is None:
        raise DataError(f"{folder}: incomplete cache; delete the folder and fetch again")
    table = _read_cached(uci_id, folder, meta)
    roles: dict[str, list[str]] = {}
    for var in meta["variables"]:
        if isinstance(var, dict) and var.get("name") in table.columns:
            roles.setdefault(str(var.get("role")), []).append(str(var["name"]))
    targets = roles.get("Target", [])
    origin = f"UCI dataset {uci_id} ({folder / DATA_FILE})"
    if choices.target_column is None and len(targets) != 1:
        raise DataError(
            f"{origin}: target.column: the dataset has {len(targets)} target columns "
            f"({', '.join(targets) or 'none'}); name one in target: {{column: ...}}"
        )
    features = roles.get("Feature")
    return csvsource.build_dataset(
        table,
        name=name,
        choices=choices,
        origin=origin,
        row_label=csvsource.data_row,
        default_target=targets[0] if len(targets) == 1 else None,
        default_features=features if features else None,
        notes={
            "source": "uci",
            "uci_id": uci_id,
            "uci_name": meta.get("name"),
            "doi": meta.get("doi"),
            "data_url": meta.get("data_url"),
            "cache": str(folder),
            "sha256": sources.sha256_of(folder / DATA_FILE),
        },
    )
