"""Typed errors a person can act on.

Every error raised for bad input is an ``NbvslrError``: its message is one line that names
the setting, the offending value and the fix. The CLI prints ``error: <message>`` and exits
with ``exit_code``; nothing below the CLI prints or exits.
"""

from __future__ import annotations

import difflib
import importlib
import numbers
import signal
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import ModuleType
from typing import Any


class NbvslrError(Exception):
    """Base class of every error meant for the user (never a bug)."""

    exit_code = 1


class ConfigError(NbvslrError):
    """A config file, a CLI option or an inline task definition is invalid."""

    exit_code = 2


class DataError(NbvslrError):
    """A dataset cannot be read, verified or turned into a binary task."""

    exit_code = 1


class DownloadError(DataError):
    """A download failed (network, HTTP status, timeout, checksum)."""


class SizeError(ConfigError, ValueError):
    """A training-set size outside ``2 .. N - 1`` (``nbvslr.splits.check_size``)."""


class ResultsError(NbvslrError):
    """A results folder is missing, incomplete or inconsistent."""

    exit_code = 1


class MissingResultsError(ResultsError):
    """A results folder named on the command line does not exist: a usage error."""

    exit_code = 2


def did_you_mean(value: str, options: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest option, or ``""``."""
    close = difflib.get_close_matches(str(value), [str(o) for o in options], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def with_hint(problem: str, value: Any, options: Iterable[str]) -> str:
    """``problem`` followed by ``, did you mean 'x'?`` for the closest option, if any."""
    close = difflib.get_close_matches(str(value), [str(o) for o in options], n=1, cutoff=0.6)
    return f"{problem}, did you mean '{close[0]}'?" if close else problem


def show(value: Any) -> str:
    """A value as a message quotes it: strings in quotes, at most 60 characters."""
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def setting_error(key: str, problem: str, value: Any, fix: str,
                  source: str | None = None, cls: type[ConfigError] = ConfigError) -> ConfigError:
    """The one shape of a message about a setting: ``[source: ]key: problem (value); fix``.

    The value is left out where it would only repeat the message: an empty string, or the
    key itself (``splitz: unknown key``, ``models.nb.foo: unknown key``).
    """
    prefix = f"{source}: " if source else ""
    return cls(f"{prefix}{key}: {problem}{_value_part(value, key)}; {fix}")


def integer_setting(key: str, value: Any, low: int, rule: str | None = None,
                    source: str | None = None, cls: type[ConfigError] = ConfigError) -> int:
    """``value`` as an int >= ``low`` (any integer type, never a bool), or the one-line
    ``setting_error`` naming ``key``: ``not an integer``, or ``must be RULE`` as ``cls``
    (``rule`` default ``>= low``)."""
    rule = rule if rule is not None else f">= {low}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise setting_error(key, "not an integer", value, f"give an integer {rule}", source)
    if value < low:
        raise setting_error(key, f"must be {rule}", value, f"give an integer {rule}", source,
                            cls)
    return int(value)


def _value_part(value: Any, key: str) -> str:
    if isinstance(value, str) and (value == "" or key == value or key.endswith(f".{value}")):
        return ""
    return f" ({show(value)})"


def check_known_keys(where: str, given: Mapping[str, Any], allowed: Iterable[str],
                     source: str | None = None) -> None:
    """Raise ``setting_error`` for the first key of ``given`` that is not ``allowed``."""
    allowed = tuple(allowed)
    for key in given:
        if key not in allowed:
            name = f"{where}.{key}" if where else str(key)
            raise setting_error(name, with_hint("unknown key", key, allowed), key,
                                f"valid keys: {', '.join(allowed)}", source)


# --------------------------------------------------------------------------- stopping

INTERRUPTED = 130
"""Exit code of a command stopped by Ctrl-C (SIGINT), as a shell reports it."""
TERMINATED = 143
"""Exit code of a command stopped by SIGTERM (``kill PID``), as a shell reports it."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread by ``stop_on_sigterm``'s handler: a run stops
    exactly as on Ctrl-C (its worker processes are ended, the finished sizes kept)."""


_received: list[int] = []
"""The stopping signals this process's handlers have received (``stop_on_signal``)."""


def stop_on_sigterm(signum: int, frame: object) -> None:
    """A SIGTERM handler: raise ``Terminated``."""
    raise Terminated


def stop_on_signal(signum: int, frame: object) -> None:
    """The ``nbvslr`` command's handler of SIGINT and SIGTERM: note the signal, then raise
    ``KeyboardInterrupt`` (``Terminated`` for SIGTERM).

    The note is kept because C code can swallow the exception: a signal that arrives while
    an extension module initialises (numpy.random's, during the command's imports) has its
    exception cleared there, and the command would run on. ``raise_if_stopped`` raises it
    again at the next point that checks."""
    _received.append(signum)
    raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt


def stop_received() -> bool:
    """Whether the command's handler has received Ctrl-C or SIGTERM."""
    return bool(_received)


def raise_if_stopped() -> None:
    """Raise the exception of a stopping signal received earlier whose exception was lost
    (see ``stop_on_signal``); nothing if there was none."""
    if _received:
        raise Terminated if _received[-1] == signal.SIGTERM else KeyboardInterrupt


def stopped(exc: KeyboardInterrupt) -> tuple[str, int]:
    """``("interrupted", 130)`` for a Ctrl-C, ``("terminated", 143)`` for a SIGTERM."""
    return ("terminated", TERMINATED) if isinstance(exc, Terminated) else (
        "interrupted", INTERRUPTED)


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM back while the block runs, then raise a held one's exception.

    For imports: a signal's exception raised while an extension module initialises
    (matplotlib's, numpy's) fails that import ("ImportError: initialization failed", or a
    fatal error of the interpreter) rather than stopping the command. Meanwhile the handlers
    only note a signal; when the block ends the previous handlers are back, and the first
    noted signal is handed to its handler (``stop_on_signal`` raises, and notes it for
    ``raise_if_stopped``). Only in the main thread (where handlers run), and only for signals
    with a Python handler (a default SIGTERM ends the process as it always does).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []
    previous: dict[int, Any] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            handler = signal.getsignal(sig)
            if callable(handler):
                previous[sig] = signal.signal(sig, lambda signum, frame: noted.append(signum))
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if noted:
        previous[noted[0]](noted[0], None)


def import_held(name: str) -> ModuleType:
    """``importlib.import_module(name)`` with stopping signals held (``signals_held``)."""
    with signals_held():
        return importlib.import_module(name)
