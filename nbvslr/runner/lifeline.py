"""Worker processes end soon after the process that started them is gone.

A run killed with SIGKILL (or by the out-of-memory killer) cannot end its worker processes;
they would sit idle for minutes (loky's idle timeout), holding memory and their copy of the
data. ``watch_parent`` starts a daemon thread in the worker that checks, twice a second,
whether the worker still has the parent it had when the thread started, and ends the worker
when it has been handed to another (the parent died).
"""

from __future__ import annotations

import os
import threading
import time

INTERVAL = 0.5
"""Seconds between two checks of the parent."""
ORPHANED = 3
"""Exit code of a worker whose parent died."""

_started = False
_lock = threading.Lock()


def watch_parent(parent: int | None = None, interval: float = INTERVAL) -> None:
    """Start (once per process) the thread that ends this process when its parent is gone.

    ``parent`` is the process id the parent had when it started this one: a worker that
    starts after its parent died (it was still importing) ends at once. None: the parent
    this process has now.
    """
    global _started
    with _lock:
        if _started:
            return
        _started = True
    if parent is None:
        parent = os.getppid()
    elif os.getppid() != parent:
        os._exit(ORPHANED)

    def watch() -> None:
        while True:
            time.sleep(interval)
            if os.getppid() != parent:
                os._exit(ORPHANED)  # no clean-up to do: the worker holds no result

    threading.Thread(target=watch, name="nbvslr-lifeline", daemon=True).start()
