"""A text task from a folder of files: one sub-folder per class, one document per file.

``load_text_folder(path)`` reads ``path/<class>/<file>``:

- the classes are the sub-folders, in sorted order of their names (Python's string order),
  ``y`` the index of a document's class: of two classes the second is class 1;
- the documents are every file directly in a class folder, in sorted order of their names;
  a file's bytes are decoded as UTF-8 (a UTF-8 byte-order mark dropped), and a file that is
  not valid UTF-8 as latin-1 (every byte a character, so decoding never fails);
- names starting with ``.`` (hidden files and folders: ``.DS_Store``, ``.git``) are
  ignored, and so are files directly in ``path`` (a README beside the class folders);
- a class folder that holds a folder, holds no file, a file that cannot be read or is not a
  regular file (a pipe, a device, or a link to one), documents whose bytes would not fit in
  memory (refused from their sizes, before they are read), fewer than
  two class folders, or a ``path`` that is not a folder: a one-line ``DataError`` naming
  it and the fix.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from nbvslr.data.csvsource import fits_in_memory
from nbvslr.data.texttask import TextTask
from nbvslr.errors import DataError


def decode(data: bytes) -> str:
    """A document's text: UTF-8 (without a byte-order mark), else latin-1."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _visible(folder: Path) -> list[Path]:
    return sorted((p for p in folder.iterdir() if not p.name.startswith(".")),
                  key=lambda p: p.name)


def folder_sha256(path: str | Path) -> str | None:
    """sha256 of what ``load_text_folder(path)`` reads: the class folders' names, their
    visible regular files' names and bytes, in the load's order; ``None`` for a path the
    load refuses (it says why). Keys the per-process copy of the task by its content."""
    root = Path(path).expanduser()
    digest = hashlib.sha256()
    total = 0
    try:
        for folder in (p for p in _visible(root) if p.is_dir()):
            digest.update(b"\x00class\x00" + folder.name.encode("utf-8", "surrogateescape"))
            for entry in _visible(folder):
                digest.update(b"\x00file\x00" + entry.name.encode("utf-8", "surrogateescape"))
                if entry.is_file():  # never a pipe or a device: the load refuses those
                    total += entry.stat().st_size
                    if not fits_in_memory(total):
                        return None  # the load refuses it from its size, unread
                    digest.update(hashlib.sha256(entry.read_bytes()).digest())
    except OSError:
        return None
    return digest.hexdigest()


def load_text_folder(path: str | Path, name: str | None = None) -> TextTask:
    """The text task of the folder ``path`` (see the module's rules); ``name`` defaults to
    the folder's own name."""
    root = Path(path).expanduser()
    if not root.is_dir():
        what = "does not exist" if not root.exists() else "is not a folder"
        raise DataError(f"text folder {root} {what}; give a folder holding one sub-folder of "
                        "files per class")
    try:
        classes = [p for p in _visible(root) if p.is_dir()]
    except OSError as exc:
        raise DataError(f"text folder {root} cannot be listed ({exc.strerror or exc}); check "
                        "its permissions") from exc
    if len(classes) < 2:
        found = f"only {classes[0].name!r}" if classes else "none"
        raise DataError(f"text folder {root} has fewer than 2 class sub-folders ({found}); "
                        "put each class's files in a sub-folder of its own")
    documents: list[str] = []
    labels: list[int] = []
    total = 0  # bytes of the documents read so far
    for k, folder in enumerate(classes):
        try:
            entries = _visible(folder)
        except OSError as exc:
            raise DataError(f"class folder {folder} cannot be listed ({exc.strerror or exc}); "
                            "check its permissions") from exc
        if not entries:
            raise DataError(f"class folder {folder} holds no file; put that class's documents "
                            "in it, or remove it")
        for entry in entries:
            if entry.is_dir():
                raise DataError(f"class folder {folder} holds a folder, {entry.name!r}; a "
                                "class folder holds only files (one document each): move it out")
            if entry.exists() and not entry.is_file():  # a pipe would block, a device not end
                raise DataError(f"document {entry} is not a regular file (a device or a pipe); "
                                "a class folder holds only files (one document each): "
                                "remove it")
            try:
                total += entry.stat().st_size
                if not fits_in_memory(total):
                    raise DataError(
                        f"memory: text folder {root} holds more bytes than this process may "
                        f"use (reading {entry} makes {total / (1 << 30):.1f} GiB); keep fewer "
                        "or smaller documents")
                data = entry.read_bytes()
            except OSError as exc:
                raise DataError(f"document {entry} cannot be read ({exc.strerror or exc}); "
                                "check it exists and its permissions, or remove it") from exc
            documents.append(decode(data))
            labels.append(k)
    return TextTask(name if name is not None else root.resolve().name, tuple(documents),
                    np.asarray(labels, dtype=np.int64), tuple(p.name for p in classes))
