"""``source: {text: NAME}``: the built-in text task ``NAME`` (``nbvslr.data.text.TEXT_TASKS``:
sms-spam, 20 Newsgroups) under a name of the config's, so that one corpus can appear twice
with other vocabulary options. ``strip`` (20 Newsgroups only): the parts of a post removed
(``nbvslr.data.newsgroups.strip_options``). Its classes are its own: no ``target:``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import nbvslr.data.newsgroups as newsgroups
import nbvslr.data.text as text
from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.errors import setting_error, with_hint

KEY = "text"
KEYS = (KEY, "strip")
TEXT = True
"""A text task whatever its ``features:`` say."""


@dataclass(frozen=True)
class Spec:
    name: str
    corpus: str
    options: Mapping[str, Any]
    strip: tuple[str, ...] | None  # None: the corpus's own default


def parse(task: TaskSpec) -> Spec:
    source = task.source or {}
    corpus = source[KEY]
    if not isinstance(corpus, str) or corpus not in text.TEXT_TASKS:
        raise setting_error("source.text", with_hint("not a built-in text task", corpus,
                                                      text.TEXT_TASKS), corpus,
                            f"use one of: {', '.join(text.TEXT_TASKS)}")
    if task.target is not None:
        raise setting_error("target", "a built-in text task has its own classes", task.target,
                            "remove target:")
    strip = None
    if "strip" in source:
        if corpus not in text.STRIPPED_TASKS:
            raise setting_error("source.strip", f"only the 20 Newsgroups tasks "
                                f"({', '.join(text.STRIPPED_TASKS)}) take strip",
                                source["strip"], "remove strip:")
        strip = newsgroups.strip_options(source["strip"])
    text.validate_text_features(task.features, column=False)
    return Spec(task.name, corpus, dict(task.features or {}), strip)


def load(spec: Spec, settings: DataSettings) -> Dataset:
    return text.load_text(spec.corpus, spec.options, settings, spec.name,
                          strip=text.DEFAULT if spec.strip is None else spec.strip)
