"""``source: {folder: path}``: a folder of documents, one sub-folder of files per class
(``nbvslr.data.textfolder``); its classes are its sub-folders: no ``target:``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import nbvslr.data.text as text
from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.data.textfolder import load_text_folder
from nbvslr.errors import setting_error

KEY = "folder"
KEYS = (KEY,)
TEXT = True
"""A text task whatever its ``features:`` say."""
PATH = True
"""It names a local path: a relative one is read from the config's folder."""


@dataclass(frozen=True)
class Spec:
    name: str
    path: str
    options: Mapping[str, Any]


def parse(task: TaskSpec) -> Spec:
    path = (task.source or {})[KEY]
    if not isinstance(path, str) or not path.strip():
        raise setting_error("source.folder", "must be a folder path", path,
                            "write source: {folder: my-texts}, one sub-folder of files per class")
    if task.target is not None:
        raise setting_error("target", "a folder's classes are its sub-folders", task.target,
                            "remove target:")
    text.validate_text_features(task.features, column=False,
                                task="a task read from a folder of documents")
    return Spec(task.name, path, text.check_text_options(task.features or {}))


def load(spec: Spec, settings: DataSettings) -> Dataset:
    return text.text_dataset(load_text_folder(spec.path, spec.name), dict(spec.options),
                             {"source": "folder", "folder": spec.path})
