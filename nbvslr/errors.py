"""Typed errors a person can act on.

Every error raised for bad input is an ``NbvslrError``: its message is one line that names
the setting, the offending value and the fix. The CLI prints ``error: <message>`` and exits
with ``exit_code``; nothing below the CLI prints or exits.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


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


class ResultsError(NbvslrError):
    """A results folder is missing, incomplete or inconsistent."""

    exit_code = 1


def did_you_mean(value: str, options: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest option, or ``""``."""
    close = difflib.get_close_matches(str(value), [str(o) for o in options], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
