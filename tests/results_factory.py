"""Fabricated results folders with the exact schema the runner writes (for plot/report tests).

``make_splits`` builds a per-split table from smooth NB and LR curves plus noise that is
shared by the models on the same split (so the paired comparison is tighter than the
unpaired one, as in real runs); ``write_task`` writes ``splits.csv.gz``, ``summary.csv``,
``paired.csv`` and ``run.json`` into ``<root>/<task>/``.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from nbvslr.analysis import stats
from nbvslr.results import SPLIT_COLUMNS


def nb_curve(m: np.ndarray) -> np.ndarray:
    """Fast to a high asymptote."""
    return 0.30 + 0.20 / m


def lr_curve(m: np.ndarray) -> np.ndarray:
    """Slow to a low asymptote: crosses nb_curve at m = 10."""
    return 0.20 + 1.20 / m


def make_splits(
    task: str,
    sizes: Sequence[int],
    n_splits: int,
    seed: int = 0,
    curves: dict[str, tuple[str, Callable[[np.ndarray], np.ndarray]]] | None = None,
    noise: float = 0.05,
) -> pd.DataFrame:
    """A splits table: one row per (model, m, split); ``curves``: name -> (family, mean)."""
    curves = curves or {"nb": ("nb", nb_curve), "lr": ("lr", lr_curve)}
    rng = np.random.default_rng(seed)
    ms = np.asarray(sizes, dtype=float)
    shared = rng.normal(0.0, noise, size=(len(ms), n_splits))  # (M, S) same split, same shift
    frames = []
    for k, (name, (family, mean)) in enumerate(curves.items()):
        own = rng.normal(0.0, noise / 2, size=(len(ms), n_splits))  # (M, S)
        err = np.clip(mean(ms)[:, None] + shared + own, 0.0, 1.0)  # (M, S)
        frames.append(pd.DataFrame({
            "task": task,
            "model": name,
            "family": family,
            "m": np.repeat(np.asarray(sizes, dtype=np.int64), n_splits),
            "split": np.tile(np.arange(n_splits), len(ms)),
            "error": err.ravel(),
            "separable": np.repeat(ms <= 5, n_splits) & (family == "lr"),
            "separation": (np.where(np.repeat(ms <= 5, n_splits), "complete", "overlap")
                           if family == "lr" else ""),
            "n_iter": k + 3,
            "converged": True,
        }))
    return pd.concat(frames, ignore_index=True).loc[:, list(SPLIT_COLUMNS)]


def run_info(task: str, title: str, sizes: Sequence[int], models: dict[str, str],
             x_range: Sequence[float] | None = None) -> dict:
    """A run.json with the fields plots and report read (as the runner's bookkeeping writes it)."""
    return {
        "task": {
            "name": task, "title": title, "kind": "continuous", "rows": 500,
            "features": 8, "positives": 200,
            "x_range": list(x_range) if x_range is not None else None,
            "sizes": list(sizes), "paper_sizes": None, "recipe": {},
        },
        "seed": 0,
        "splits": 0,
        "models": [{"name": n, "family": f, "options": {}} for n, f in models.items()],
        "asymptotic_error": {n: 0.3 if f == "nb" else 0.2 for n, f in models.items()},
        "majority_error": 0.4,
    }


def write_task(root: Path, splits: pd.DataFrame, info: dict, *, paired: bool = True) -> Path:
    """Write one task folder under ``root``; return it."""
    task = str(splits["task"].iloc[0])
    folder = Path(root) / task
    folder.mkdir(parents=True, exist_ok=True)
    splits = splits.sort_values(["model", "m", "split"], kind="mergesort")
    with gzip.open(folder / "splits.csv.gz", "wt", encoding="utf-8") as fh:
        splits.to_csv(fh, index=False, lineterminator="\n")
    stats.summarize(splits).to_csv(folder / "summary.csv", index=False, float_format="%.10g")
    if paired:
        pair = stats.default_pair(splits, [m["name"] for m in info["models"]])
        stats.paired_summary(splits, *pair).to_csv(folder / "paired.csv", index=False,
                                                   float_format="%.10g")
    (folder / "run.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return folder


def fabricate(root: Path, task: str = "toy", title: str = "toy (continuous)",
              sizes: Sequence[int] = (2, 4, 6, 8, 12, 16, 24, 32), n_splits: int = 40,
              seed: int = 0, x_range: Sequence[float] | None = (0, 40),
              curves: dict | None = None) -> Path:
    """A complete task folder with NB crossing LR near m = 10."""
    splits = make_splits(task, sizes, n_splits, seed, curves)
    models = dict(zip(splits["model"], splits["family"], strict=False))
    return write_task(root, splits, run_info(task, title, sizes, models, x_range))
