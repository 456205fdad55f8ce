"""A text task from a folder of files: one sub-folder per class, one document per file."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from nbvslr.data.textfolder import decode, load_text_folder
from nbvslr.errors import DataError


def _write(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


@pytest.fixture
def corpus(tmp_path) -> Path:
    return _write(tmp_path / "reviews", {
        "pos/b.txt": b"Great film, I loved it.",
        "pos/a.txt": "Wonderful acting – a delight.".encode(),  # UTF-8 (an en dash)
        "pos/.hidden": b"never read",
        "neg/01": b"Dull and far too long.",
        "neg/02": "\ufeffA mess, badly edited.".encode(),  # UTF-8 with a byte-order mark
        "neg/03": b"Clich\xe9s everywhere, na\xefve plot.",  # latin-1, not valid UTF-8
        ".git/config": b"[core]",
        "README": b"files directly in the folder are no documents",
    })


def test_a_folder_of_class_folders_is_a_task(corpus):
    task = load_text_folder(corpus)
    assert task.name == "reviews"
    assert task.classes == ("neg", "pos")  # sorted: pos is class 1
    assert task.documents == (
        "Dull and far too long.",
        "A mess, badly edited.",
        "Clichés everywhere, naïve plot.",
        "Wonderful acting – a delight.",
        "Great film, I loved it.",
    )
    assert task.y.dtype == np.int64 and task.y.tolist() == [0, 0, 0, 1, 1]
    assert load_text_folder(str(corpus), name="movies").name == "movies"


def test_more_than_two_classes(tmp_path):
    root = _write(tmp_path / "t", {"c/x": b"c doc", "a/x": b"a doc", "b/x": b"b doc",
                                   "b/y": b"b again"})
    task = load_text_folder(root)
    assert task.classes == ("a", "b", "c")
    assert task.y.tolist() == [0, 1, 1, 2]
    assert task.documents == ("a doc", "b doc", "b again", "c doc")


def test_decode_takes_utf8_else_latin1():
    assert decode("naïve".encode()) == "naïve"
    assert decode(b"na\xefve") == "naïve"
    assert decode(b"\xef\xbb\xbfbom") == "bom"
    assert decode(b"") == ""


def _error(path, match: str) -> str:
    with pytest.raises(DataError, match=match) as info:
        load_text_folder(path)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_a_path_that_is_no_folder(tmp_path):
    _error(tmp_path / "missing", r"text folder .*missing does not exist; give a folder")
    (tmp_path / "file.txt").write_text("x")
    _error(tmp_path / "file.txt", r"file.txt is not a folder")


def test_fewer_than_two_class_folders(tmp_path):
    _error(tmp_path, r"fewer than 2 class sub-folders \(none\)")
    _write(tmp_path, {"only/x": b"doc", ".hidden/y": b"doc", "loose.txt": b"doc"})
    _error(tmp_path, r"fewer than 2 class sub-folders \(only 'only'\); put each class's")


def test_an_empty_class_folder(tmp_path):
    _write(tmp_path, {"a/x": b"doc", "b/.DS_Store": b"junk"})
    message = _error(tmp_path, r"class folder .*b holds no file")
    assert str(tmp_path / "b") in message


def test_a_folder_inside_a_class_folder(tmp_path):
    _write(tmp_path, {"a/x": b"doc", "b/y": b"doc", "b/nested/z": b"doc"})
    _error(tmp_path, r"class folder .*b holds a folder, 'nested'")


def test_an_unreadable_file(tmp_path):
    _write(tmp_path, {"a/x": b"doc", "b/y": b"doc"})
    (tmp_path / "b" / "z").symlink_to(tmp_path / "gone")  # a link to nothing
    message = _error(tmp_path, r"document .*z cannot be read \(No such file or directory\); "
                               r"check it exists")
    assert str(tmp_path / "b" / "z") in message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_in_a_class_folder_is_refused_not_read(tmp_path):
    # reading a named pipe would block for ever; a link to a device (/dev/zero) would never end
    _write(tmp_path, {"a/x": b"doc", "b/y": b"doc"})
    os.mkfifo(tmp_path / "b" / "pipe")
    _error(tmp_path, r"document .*pipe is not a regular file \(a device or a pipe\); .*remove it")


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_a_link_to_a_device_is_refused_not_read(tmp_path):
    _write(tmp_path, {"a/x": b"doc", "b/y": b"doc"})
    (tmp_path / "b" / "zero").symlink_to("/dev/zero")
    _error(tmp_path, r"document .*zero is not a regular file")


def test_a_link_to_a_file_is_a_document(tmp_path):
    _write(tmp_path, {"a/x": b"alpha words", "b/y": b"beta words"})
    (tmp_path / "b" / "z").symlink_to(tmp_path / "a" / "x")
    task = load_text_folder(tmp_path)
    assert task.documents == ("alpha words", "beta words", "alpha words")
    assert task.y.tolist() == [0, 1, 1]
