"""The built-in text tasks of 20 Newsgroups (``nbvslr.data.newsgroups.TASKS``: ``20news``,
all 20 groups, and ``20news-crypt-graphics``), named alone (``tasks: [20news]``) or under a
name of the config's (``source: {text: 20news, strip: ...}``, ``nbvslr.data.registry.text``).
The archive is downloaded on first use and verified by sha256; ``strip`` (given with
``source: {text: ...}`` only) names the parts of a post removed (default: headers, footers
and quotes, ``nbvslr.data.newsgroups.strip_options``). Its classes are its own groups;
``features:`` takes the vocabulary options."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import nbvslr.data.newsgroups as newsgroups
import nbvslr.data.text as text
from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec

KEY = None
"""Named by its task name (or by ``source: {text: NAME}``)."""
KEYS = ()
NAMES = tuple(newsgroups.TASKS)
TEXT = True
"""A text task whatever its ``features:`` say."""
STRIP = True
"""``source: {text: NAME, strip: ...}`` applies to it."""


@dataclass(frozen=True)
class Spec:
    name: str
    corpus: str  # one of NAMES
    options: Mapping[str, Any]  # the vocabulary options, checked and completed (read-only)
    strip: tuple[str, ...] | None  # the parts removed; None: the default, not recorded


def parse(task: TaskSpec) -> Spec:
    source = task.source or {}
    corpus = source.get("text", task.name)
    strip = newsgroups.strip_options(source["strip"]) if "strip" in source else None
    return Spec(task.name, corpus, MappingProxyType(text.corpus_options(task)), strip)


def load(spec: Spec, settings: DataSettings) -> Dataset:
    strip = newsgroups.DEFAULT_STRIP if spec.strip is None else spec.strip
    task = newsgroups.load_newsgroups(settings, newsgroups.TASKS[spec.corpus], strip, spec.name)
    notes: dict[str, Any] = {"source": "text", "text": spec.corpus}
    if spec.strip is not None:
        notes["strip"] = list(spec.strip)
    return text.text_dataset(task, dict(spec.options), notes)


def fetch(name: str, settings: DataSettings) -> list:
    """The verified archive in the cache (both tasks read the one archive)."""
    return [newsgroups.fetch_archive(settings)]
