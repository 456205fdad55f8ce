"""One run at a time per task folder: an operating-system lock that dies with its process.

``TaskLocks`` takes an exclusive lock (``filelock.lock_descriptor``: ``flock`` on POSIX,
``LockFileEx`` on Windows) on every task folder of a run (on POSIX the folder itself, opened
without following a symbolic link; on Windows, where a folder cannot be opened as a file,
the file ``<task>/.lock.held``) before the run changes anything in those folders
(removing stale temporary files, dropping stale checkpoints, saving new ones) and holds it
until the run ends. The holder writes its process id and a random token in ``<task>/.lock``
(opened with ``O_NOFOLLOW``: a ``.lock`` that is a symbolic link is refused, never
truncated), and ``check`` finds out before each write whether that file is still its own: a
``.lock`` deleted or replaced meanwhile stops the run with one line; and since the lock is on
the folder, a second run is refused even then. A second run on the same task folder is
refused at once, in one line naming the folder and the other run's process id; it never
waits and never interleaves its files with the first run's. The kernel releases the lock
when the process that holds it ends, however it ends (``kill -9``, a crash, a power cut), so
no lock is ever stale: the file ``.lock`` stays, and is simply taken by the next run. Worker
processes never hold it (the descriptor is not inherited).
"""

from __future__ import annotations

import errno
import os
import secrets
import sys
from pathlib import Path

from filelock import lock_descriptor

from nbvslr.errors import ResultsError

LOCK_FILE = ".lock"
HELD_FILE = ".lock.held"
"""Windows only: the file whose first byte is locked (a folder cannot be opened there)."""


class TaskLocks:
    """The locks of a run's task folders (a context manager): all of them, or none."""

    def __init__(self, folders: list[Path]) -> None:
        self.folders = [Path(f) for f in folders]
        self._fds: list[int] = []
        self._tokens: dict[Path, str] = {}

    def __enter__(self) -> TaskLocks:
        try:
            for folder in self.folders:
                token = f"{os.getpid()} {secrets.token_hex(8)}\n"
                self._fds.append(_take(folder, token))
                self._tokens[folder] = token
        except BaseException:
            self.release()
            raise
        return self

    def check(self, folder: Path) -> None:
        """``ResultsError`` unless ``folder``'s ``.lock`` is still the one this run wrote (a
        ``.lock`` deleted, replaced or turned into a symbolic link since)."""
        token = self._tokens.get(Path(folder))
        if token is None:
            return
        path = Path(folder) / LOCK_FILE
        try:
            found = _read_lock(path)
        except OSError:
            found = None
        if found != token:
            raise ResultsError(
                f"{path}: was replaced or removed while this run held it (another program is "
                "changing the task folder); stop it, then rerun the same command to resume")

    def __exit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        while self._fds:
            os.close(self._fds.pop())  # closing the descriptor releases its lock


def _read_lock(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        raw = os.pread(fd, 64, 0) if hasattr(os, "pread") else os.read(fd, 64)
        return raw.decode("ascii", "replace")
    finally:
        os.close(fd)


def _open_target(folder: Path) -> int:
    """The descriptor the run's lock is taken on: the folder itself (POSIX), or its
    ``HELD_FILE`` (Windows)."""
    if sys.platform == "win32":  # pragma: no cover - Windows
        return os.open(folder / HELD_FILE, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0),
                       0o666)
    return os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
                   | getattr(os, "O_NOFOLLOW", 0))


def _take(folder: Path, token: str) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = _open_target(folder)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ResultsError(f"{folder}: is not a folder (a symbolic link or a file); "
                               "give this run another --out") from None
        raise
    try:
        taken = lock_descriptor(fd, blocking=False)
    except OSError:
        os.close(fd)
        raise
    if not taken:
        try:
            holder = _read_lock(path).split()[0]
        except (OSError, IndexError):
            holder = "?"
        os.close(fd)
        raise ResultsError(
            f"{folder}: another nbvslr run (process {holder}) is writing this task's results; "
            "wait for it to end, or give this run another --out"
        )
    try:
        lock = os.open(path, os.O_RDWR | os.O_CREAT | nofollow, 0o666)
    except OSError as exc:
        os.close(fd)
        if exc.errno == errno.ELOOP:
            raise ResultsError(
                f"{path}: is a symbolic link, which nbvslr never follows inside a task folder; "
                "delete the link and rerun") from None
        raise
    try:
        os.ftruncate(lock, 0)
        if hasattr(os, "pwrite"):
            os.pwrite(lock, token.encode(), 0)
        else:  # pragma: no cover - Windows: a new descriptor writes at offset 0
            os.write(lock, token.encode())
    except OSError as exc:  # a full disk, say: name the file
        os.close(fd)
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    finally:
        os.close(lock)
    return fd
