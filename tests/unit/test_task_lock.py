"""The task lock (nbvslr.results.lock) on filelock's descriptor lock, POSIX and Windows
layouts."""

from __future__ import annotations

import os
import sys

import pytest
from filelock import lock_descriptor, unlock_descriptor

from nbvslr.errors import ResultsError
from nbvslr.results import lock
from nbvslr.results.lock import LOCK_FILE, TaskLocks


def _other_holder_can_lock(folder) -> bool:
    """Whether another open file description of the lock target can take filelock's lock."""
    fd = lock._open_target(folder)
    try:
        taken = lock_descriptor(fd, blocking=False)
        if taken:
            unlock_descriptor(fd)
        return taken
    finally:
        os.close(fd)


def test_the_lock_is_filelocks_and_is_released(tmp_path):
    """While a run holds a folder, filelock's own lock on it is refused; after, it is free."""
    folder = tmp_path / "task"
    with TaskLocks([folder]) as locks:
        assert not _other_holder_can_lock(folder)
        locks.check(folder)  # its .lock is its own
        assert (folder / LOCK_FILE).read_text().split()[0] == str(os.getpid())
    assert _other_holder_can_lock(folder)


def test_windows_layout_locks_a_held_file_and_keeps_the_token_readable(tmp_path,
                                                                      monkeypatch):
    """The Windows layout (a folder cannot be locked there): the lock is on .lock.held, a
    second run is refused naming the holder, and check() still reads the token (it was
    never checked on Windows before: runs were not locked at all)."""
    monkeypatch.setattr(sys, "platform", "win32")
    folder = tmp_path / "task"
    with TaskLocks([folder]) as locks:
        assert (folder / lock.HELD_FILE).is_file()
        with pytest.raises(ResultsError, match=rf"another nbvslr run \(process {os.getpid()}\)"):
            TaskLocks([folder]).__enter__()
        locks.check(folder)
        (folder / LOCK_FILE).write_text("someone else\n")
        with pytest.raises(ResultsError, match="was replaced or removed"):
            locks.check(folder)
    with TaskLocks([folder]):
        pass  # free again once released
