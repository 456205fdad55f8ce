"""A small two-class DataFrame for the Python API's tests (``Task.from_frame``)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def clinic_frame(n: int = 150, seed: int = 0) -> pd.DataFrame:
    """``n`` rows: three continuous columns a, b, c shifted by the class, and ``label``
    ("sick" or "well")."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    df = pd.DataFrame(rng.normal(size=(n, 3)) + 0.9 * y[:, None], columns=["a", "b", "c"])
    df["label"] = np.where(y == 1, "sick", "well")
    return df
