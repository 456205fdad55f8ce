"""Parallel backends: joblib's (loky, threading, ...) and dask's, and Ctrl-C.

``unit_stream(config, units)`` runs the units on the configured backend and yields their
results as they finish (one worker: in this process, without joblib); it owns the
lifecycle of a dask client it starts and the one-BLAS-thread limit of the calling process.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from threadpoolctl import threadpool_limits

from nbvslr.config import Config
from nbvslr.errors import ConfigError, stop_received
from nbvslr.runner.units import (
    BLAS_THREADS,
    Handover,
    Unit,
    UnitResult,
    run_unit,
    start_worker,
)


def n_workers(jobs: int) -> int:
    """Worker processes (or threads) of ``--jobs`` on this machine: ``-1`` is every core."""
    cores = os.cpu_count() or 1
    return jobs if jobs > 0 else max(1, cores + 1 + jobs)


DASK_CONNECT_SECONDS = 5
"""How long ``--scheduler`` waits to reach the scheduler."""
DASK_WORKERS_SECONDS = 10
"""How long a run waits for the scheduler's first worker."""


def _dask_client(config: Config, n_workers: int) -> tuple[Any, bool]:
    """The dask client of this run, and whether the run owns it (and closes it).

    ``config.scheduler`` set: a client of that scheduler. Else the current dask client if
    there is one, else a local cluster of ``n_workers`` processes, one thread each.
    """
    try:
        from distributed import Client, LocalCluster, get_client
    except ImportError:
        raise ConfigError(
            "command line: --backend: dask needs the distributed package (dask); "
            "pip install 'nbvslr[dask]' or choose another backend"
        ) from None
    if config.scheduler is not None:
        _probe_scheduler(config.scheduler)
        client = Client(config.scheduler, timeout=DASK_CONNECT_SECONDS, set_as_default=False)
        try:
            client.wait_for_workers(1, timeout=DASK_WORKERS_SECONDS)
        except TimeoutError:
            client.close()
            raise ConfigError(
                f"command line: --scheduler: the dask scheduler has no worker after "
                f"{DASK_WORKERS_SECONDS} s ({config.scheduler}); start workers with "
                f"dask worker {config.scheduler}"
            ) from None
        return client, True
    try:
        return get_client(), False
    except ValueError:
        # No dashboard; the scheduler's small HTTP server (metrics) takes any free port, so
        # another cluster holding the usual 8787 is no problem.
        with _workers_ignore_sigint("dask"):
            cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                   host="127.0.0.1", dashboard_address=None,
                                   scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
        return Client(cluster, set_as_default=False), True


def _probe_scheduler(address: str) -> None:
    # Reach the scheduler with a bare connection first: a Client that fails to connect
    # leaves a half-started object behind whose clean-up blocks for seconds. The probe has
    # its own thread and event loop, so a caller inside a running loop (Jupyter) works too.
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from distributed.comm import connect

    async def probe() -> None:
        comm = await connect(address, timeout=DASK_CONNECT_SECONDS)
        await comm.close()

    try:
        with ThreadPoolExecutor(1) as pool:
            pool.submit(lambda: asyncio.run(probe())).result()
    except Exception as exc:  # OSError (timeout, refused), ValueError (address)
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(
            f"command line: --scheduler: cannot reach the dask scheduler ({address}): "
            f"{reason}; start one with `dask scheduler` and pass its tcp://HOST:PORT"
        ) from None


def _close_dask(client: Any) -> None:
    cluster = client.cluster  # a LocalCluster this run started, or None (a --scheduler)
    client.close()
    if cluster is not None:
        cluster.close()


_TRACKER_WARNINGS = "ignore::UserWarning:joblib.externals.loky.backend.resource_tracker"


def _start_resource_trackers() -> None:
    """Start the resource tracker processes of multiprocessing and of loky now, if they are
    not running yet. Each is started on first need, and the standard library's unblocks
    SIGINT in the thread that starts it (it blocks SIGINT and SIGTERM while it spawns the
    tracker, then unblocks them rather than restoring the mask it found)."""
    from multiprocessing import resource_tracker

    from joblib.externals.loky.backend import resource_tracker as loky_tracker

    resource_tracker.ensure_running()
    # loky's tracker (loky's alone) outlives a stopped run and removes what the run could
    # not; it need not warn about it on the user's terminal ("leaked semlock objects"). It
    # takes its warning filters from this process's -W options, read when it starts.
    saved = list(sys.warnoptions)
    sys.warnoptions.append(_TRACKER_WARNINGS)
    try:
        loky_tracker.ensure_running()
    finally:
        sys.warnoptions[:] = saved


@contextmanager
def _workers_ignore_sigint(backend: str) -> Iterator[None]:
    """Start worker processes with SIGINT blocked (they inherit the mask and keep it), and
    hold back a Ctrl-C that arrives meanwhile until the block ends, then raise it here.

    A terminal's Ctrl-C reaches every process of the group: the run stops in this process,
    which then ends the workers, and a worker still importing prints no traceback of its own.
    This process neither ignores SIGINT meanwhile (the kernel may hand a signal sent to the
    process to any of its threads, a BLAS thread say, which would drop an ignored one) nor
    raises it while joblib starts the workers: the handler only notes it.
    """
    if backend not in ("loky", "dask") or not hasattr(signal, "pthread_sigmask") or (
        threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    _start_resource_trackers()  # before the block: starting one would lift it
    noted: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)  # the handler first, then a pending signal
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    if noted:
        raise KeyboardInterrupt


QUIET_SECONDS = 30.0
"""How long after a stopped run an exception in loky's manager thread goes unprinted."""
_stopped_at: list[float] = []


def _stopping() -> bool:
    """A run of this process is being stopped: the command's handler received Ctrl-C or
    SIGTERM, or a run saw its KeyboardInterrupt less than ``QUIET_SECONDS`` ago."""
    return stop_received() or bool(
        _stopped_at and time.monotonic() - _stopped_at[-1] < QUIET_SECONDS)


def _quiet_after_stop(args: threading.ExceptHookArgs) -> None:
    """``threading.excepthook`` while runs use loky: when a run is stopped, joblib cancels
    its queue and loky's manager thread can race it (``KeyError`` in
    ``add_call_item_to_queue``), printing a traceback after the one line of the
    interruption. That one exception goes unprinted while a stop is under way; every other
    thread's exception, and the manager's at any other time, is printed as usual."""
    thread = args.thread
    if (thread is not None and thread.name == "ExecutorManagerThread"
            and args.exc_type is KeyError and _raised_in(args.exc_traceback,
                                                         "add_call_item_to_queue")
            and _stopping()):
        return
    _previous_hook(args)


def _raised_in(tb: Any, function: str) -> bool:
    """Whether the innermost frame of traceback ``tb`` is a call of ``function``."""
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_name == function


_previous_hook = threading.excepthook
_hook_installed = False


def _quiet_loky_on_stop() -> None:
    """Install ``_quiet_after_stop`` once per process, in front of the hook found then (a
    hook installed later that calls ours is never put behind ours: no loop)."""
    global _previous_hook, _hook_installed
    if not _hook_installed:
        _hook_installed = True
        _previous_hook = threading.excepthook
        threading.excepthook = _quiet_after_stop


@contextmanager
def unit_stream(config: Config, units: Sequence[Unit]) -> Iterator[Iterator[UnitResult]]:
    """The results of ``units``, in the order they finish, on ``config.backend``.

    Closing the context cancels the units still queued and closes a dask client (and its
    local cluster) that this run started.
    """
    if config.backend != "dask" and n_workers(config.jobs) == 1:
        # One worker: the units run here, in order, as joblib runs them with one job, but
        # without importing joblib and its process machinery or starting trackers.
        with threadpool_limits(limits=BLAS_THREADS):
            yield (run_unit(u) for u in units)
        return
    # joblib (and its process machinery), imported when a pool is used
    from joblib import Parallel, delayed, parallel_config

    client, owned = (
        _dask_client(config, n_workers(config.jobs)) if config.backend == "dask"
        else (None, False)
    )
    backend_args: dict[str, Any] = {"client": client} if client is not None else {}
    if config.backend == "loky":  # every worker, even one that never gets a unit
        _quiet_loky_on_stop()
        backend_args["initializer"] = start_worker
        backend_args["initargs"] = (os.getpid(), Handover(units))
    stream = None
    try:
        with threadpool_limits(limits=BLAS_THREADS), \
                parallel_config(backend=config.backend, **backend_args), \
                warnings.catch_warnings():
            # An interrupted run cancels its queued units on purpose: joblib need not warn.
            warnings.filterwarnings("ignore", message=r".*tasks? which were still being")
            # loky replaces a worker whose memory grew by 300 MB since its first unit (it
            # takes that for a leak; here it is the worker's datasets and compiled kernels)
            # and warns from its manager thread. The units are seeded, so the replacement
            # changes no result; and a warning turned into an error there (python -W error,
            # pytest's filterwarnings) would end that thread and leave the run waiting.
            warnings.filterwarnings("ignore", message=r"A worker stopped while some jobs",
                                    category=UserWarning)
            parallel = Parallel(n_jobs=config.jobs, return_as="generator_unordered",
                                batch_size=1)
            try:
                # workers start at the first unit; a Ctrl-C meanwhile is raised on leaving
                with _workers_ignore_sigint(config.backend):
                    stream = parallel(delayed(run_unit)(u) for u in units)
                yield stream
            except KeyboardInterrupt:
                _stopped_at.append(time.monotonic())
                raise
            finally:
                if stream is not None:
                    stream.close()
    finally:
        if owned:
            _close_dask(client)
