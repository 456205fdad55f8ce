"""``compiled``: numba's ``njit`` as nbvslr uses it (disk cache, no zero-division checks).

The compiled loops (``kernels.hmc``, ``kernels.sparse_gram``, ``kernels.steps``,
``kernels.draws``, ``kernels.cholesky``, ``kernels.peel``, ``kernels.direction``) are imported
only where they run,
so a process that never needs them (the calling process of a parallel run, which plans and
writes) never imports numba (its import time and memory: docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba


def compiled(fn: Callable[..., Any], *, reassociate: bool = False) -> Any:
    """``numba.njit`` with the machine code kept for later processes (``cache=True``: in
    ``__pycache__`` beside the module when writable, else in numba's per-user cache folder,
    ``~/.cache/numba`` on Linux; ``NUMBA_CACHE_DIR`` overrides both). Where no folder is
    writable numba refuses to cache: compile in every process instead.
    ``error_model="numpy"``: a float division by zero gives inf or nan (never raised), so
    the loops carry no zero checks. ``reassociate=True`` lets sums be reordered (and
    multiply-adds fused), so that they run on vector registers; nan and inf keep their
    meaning."""
    options: dict[str, Any] = {"error_model": "numpy"}
    if reassociate:
        options["fastmath"] = {"reassoc", "contract"}
    try:
        return numba.njit(cache=True, **options)(fn)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return numba.njit(cache=False, **options)(fn)
