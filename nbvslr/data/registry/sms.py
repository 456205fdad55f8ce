"""The built-in text task ``sms-spam``, named alone (``tasks: [sms-spam]``) or under a name
of the config's (``source: {text: sms-spam}``, ``nbvslr.data.registry.text``): the SMS Spam
Collection, shipped with nbvslr and verified by sha256 (``nbvslr.data.text.load_sms_spam``).
Its classes are its own (spam = 1); ``features:`` takes the vocabulary options."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import nbvslr.data.text as text
from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.data.sources import fetch_file
from nbvslr.data.texttask import TextTask

KEY = None
"""Named by its task name (or by ``source: {text: sms-spam}``)."""
KEYS = ()
NAMES = ("sms-spam",)
TEXT = True
"""A text task whatever its ``features:`` say."""


@dataclass(frozen=True)
class Spec:
    name: str
    options: Mapping[str, Any]  # the vocabulary options, checked and completed (read-only)


def parse(task: TaskSpec) -> Spec:
    return Spec(task.name, MappingProxyType(text.corpus_options(task)))


def load(spec: Spec, settings: DataSettings) -> Dataset:
    task = text.load_sms_spam(settings)
    if spec.name != task.name:
        task = TextTask(spec.name, task.documents, task.y, task.classes)
    return text.text_dataset(task, dict(spec.options), {"source": "text", "text": NAMES[0]})


def fetch(name: str, settings: DataSettings) -> list:
    """The verified file of the task in the cache."""
    return [fetch_file("sms-spam", text.SMS_SPAM_FILE, settings)]
