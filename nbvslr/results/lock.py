"""One run at a time per task folder: an operating-system lock that dies with its process.

``TaskLocks`` takes ``<task>/.lock`` of every task of a run with ``fcntl.flock`` before the
run changes anything in those folders (removing stale temporary files, dropping stale
checkpoints, saving new ones) and holds it until the run ends. A second run on the same task
folder is refused at once, in one line naming the folder and the other run's process id;
it never waits and never interleaves its files with the first run's. The kernel releases a
``flock`` when the process that holds it ends, however it ends (``kill -9``, a crash, a power
cut), so no lock is ever stale: the file ``.lock`` stays, and is simply taken by the next
run. Worker processes never hold it (the descriptor is not inherited).

Where ``fcntl`` does not exist (Windows), runs are not locked.
"""

from __future__ import annotations

import os
from pathlib import Path

from nbvslr.errors import ResultsError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".lock"


class TaskLocks:
    """The locks of a run's task folders (a context manager): all of them, or none."""

    def __init__(self, folders: list[Path]) -> None:
        self.folders = [Path(f) for f in folders]
        self._fds: list[int] = []

    def __enter__(self) -> TaskLocks:
        try:
            for folder in self.folders:
                self._fds.append(_take(folder))
        except BaseException:
            self.release()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        while self._fds:
            os.close(self._fds.pop())  # closing the descriptor releases its flock


def _take(folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)  # not inherited by child processes
    if fcntl is None:  # pragma: no cover - Windows
        return fd
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
        os.close(fd)
        raise ResultsError(
            f"{folder}: another nbvslr run (process {holder}) is writing this task's results; "
            "wait for it to end, or give this run another --out"
        ) from None
    except OSError:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd
