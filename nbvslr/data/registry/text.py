"""``source: {text: NAME}``: the built-in text task ``NAME`` (sms-spam, ``nbvslr.data.registry
.sms``; 20news or 20news-crypt-graphics, ``nbvslr.data.registry.newsgroups``) under a name of
the config's, so that one corpus can appear twice with other vocabulary options. ``strip``
(20 Newsgroups only): the parts of a post removed. Parsed and loaded by the corpus's own
module; its classes are its own: no ``target:``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import nbvslr.data.registry.newsgroups as newsgroups
import nbvslr.data.registry.sms as sms
from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.errors import setting_error, with_hint

KEY = "text"
KEYS = (KEY, "strip")
TEXT = True
"""A text task whatever its ``features:`` say."""

#: corpus name -> its module.
CORPORA = {name: module for module in (sms, newsgroups) for name in module.NAMES}
STRIPPED = tuple(n for n, m in CORPORA.items() if getattr(m, "STRIP", False))


@dataclass(frozen=True)
class Spec:
    corpus: Any  # the corpus module's Spec, under the config's task name


def parse(task: TaskSpec) -> Spec:
    source = task.source or {}
    corpus = source[KEY]
    if not isinstance(corpus, str) or corpus not in CORPORA:
        raise setting_error("source.text", with_hint("not a built-in text task", corpus,
                                                      CORPORA), corpus,
                            f"use one of: {', '.join(CORPORA)}")
    if "strip" in source and corpus not in STRIPPED:
        raise setting_error("source.strip", f"only the 20 Newsgroups tasks "
                            f"({', '.join(STRIPPED)}) take strip", source["strip"],
                            "remove strip:")
    return Spec(CORPORA[corpus].parse(task))


def load(spec: Spec, settings: DataSettings) -> Dataset:
    module = next(m for m in CORPORA.values() if isinstance(spec.corpus, m.Spec))
    return module.load(spec.corpus, settings)
