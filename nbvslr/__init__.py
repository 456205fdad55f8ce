"""nbvslr: naive Bayes vs logistic regression learning curves (Ng & Jordan, NIPS 2001).

The pipeline, one package per layer: data -> splits -> models -> config -> analysis ->
views -> runner -> api -> cli. From Python (docs/api.md)::

    import nbvslr
    res = nbvslr.run("synthetic", splits=50)   # nothing written; out= a folder writes
    res.summary, res.paired, res.crossovers    # pandas DataFrames
    res.plot()                                 # a matplotlib Figure
    print(res.report())                        # the Markdown table

The API's names are imported on first use (module ``__getattr__``), so ``import nbvslr``
and the ``nbvslr`` command start as fast as before.
"""

from __future__ import annotations

import importlib

from nbvslr.version import __version__

TYPE_CHECKING = False  # typing's own flag, without importing typing at start-up

if TYPE_CHECKING:
    from nbvslr.api import Results, Task, load, run
    from nbvslr.config import Config
    from nbvslr.errors import (
        ConfigError,
        DataError,
        DownloadError,
        MissingResultsError,
        NbvslrError,
        ResultsError,
        SizeError,
    )

_LAZY = {
    "run": "nbvslr.api", "load": "nbvslr.api", "Results": "nbvslr.api", "Task": "nbvslr.api",
    "Config": "nbvslr.config",
    "NbvslrError": "nbvslr.errors", "ConfigError": "nbvslr.errors",
    "DataError": "nbvslr.errors", "DownloadError": "nbvslr.errors",
    "SizeError": "nbvslr.errors", "ResultsError": "nbvslr.errors",
    "MissingResultsError": "nbvslr.errors",
}

__all__ = [
    "Config", "ConfigError", "DataError", "DownloadError", "MissingResultsError",
    "NbvslrError", "Results", "ResultsError", "SizeError", "Task", "__version__", "load", "run",
]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'nbvslr' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
