"""Learning curves of a text task: every model on the same seeded splits, one size at a time.

``run_text(task, models, sizes, splits, seed, out)`` draws the training sets as every run
does (``nbvslr.splits``: seeded, every class in every training set, the test set every other
document), keeps each split's vocabulary (``nbvslr.data.text.split_vocabulary``), fits every
model on all splits of a size at once (``nbvslr.models.text``) and scores the held-out
documents (``heldout_errors``). With ``out`` a folder it writes ``<out>/<task>/splits.csv.gz``
(``results.SPLIT_COLUMNS``) and ``summary.csv`` (``results.SUMMARY_COLUMNS``).

A model is ``{"model": "nb", "event": "multinomial" | "bernoulli", "smoothing": l}`` or
``{"model": "lr", "C": c}``; ``features`` holds ``vocabulary``, ``min_df``, ``max_features``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from nbvslr.analysis.stats import summarize
from nbvslr.data.text import TEXT_TASKS, TextTask, count_matrix, load_sms_spam, split_vocabulary
from nbvslr.errors import ConfigError, did_you_mean
from nbvslr.models.text import design_of, fit_lr_text, fit_nb_text, heldout_errors
from nbvslr.results.layout import SPLIT_COLUMNS
from nbvslr.splits import check_size, draw_train_sets, split_seeds

_NB_KEYS = {"model", "event", "smoothing"}
_LR_KEYS = {"model", "C"}


def load_text_task(name: str) -> TextTask:
    """A built-in text task by name; one-line ``ConfigError`` for an unknown one."""
    if name != "sms-spam":
        raise ConfigError(f"'{name}' is not a built-in text task{did_you_mean(name, TEXT_TASKS)}; "
                          f"text tasks: {', '.join(TEXT_TASKS)}")
    return load_sms_spam()


def _check_model(name: str, spec: Mapping[str, Any]) -> None:
    keys = {"nb": _NB_KEYS, "lr": _LR_KEYS}.get(spec.get("model"))
    if keys is None:
        raise ConfigError(f"model '{name}': model must be 'nb' or 'lr' on a text task")
    extra = set(spec) - keys
    if extra:
        raise ConfigError(f"model '{name}': unknown option(s) {', '.join(sorted(extra))} for "
                          f"{spec['model']} on text; valid: {', '.join(sorted(keys - {'model'}))}")


def run_text(
    task: TextTask,
    models: Mapping[str, Mapping[str, Any]],
    sizes: Sequence[int],
    splits: int,
    seed: int = 0,
    features: Mapping[str, Any] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The splits table (one row per model, m, split) and its summary, in memory. Nothing is
    written: a results folder is the runner's (sealed, locked, resumable), which text tasks
    reach once they are a config's task kind."""
    features = dict(features or {})
    for name, spec in models.items():
        _check_model(name, spec)
    X, _ = count_matrix(task.documents)
    N = X.shape[0]
    frames = []
    for m in sizes:
        check_size(int(m), N, task.name)
        draw, _ = split_seeds(seed, task.name, int(m), range(splits))
        idx = draw_train_sets(task.y, int(m), draw)  # (S, m)
        keep = split_vocabulary(X, idx, features.get("vocabulary", "training"),
                                features.get("min_df", 1), features.get("max_features"))
        for name, spec in models.items():
            n_iter = np.zeros(splits, dtype=np.int64)
            converged = np.ones(splits, dtype=bool)
            if spec["model"] == "nb":
                event = spec.get("event", "multinomial")
                theta = fit_nb_text(X, task.y, idx, keep, event, float(spec.get("smoothing", 1.0)))
                error = heldout_errors(design_of(X, event), task.y, theta, idx)
            else:
                theta, n_iter, converged = fit_lr_text(X, task.y, idx, keep, spec.get("C"))
                error = heldout_errors(X, task.y, theta, idx)
            frames.append(pd.DataFrame({
                "task": task.name, "model": name, "family": spec["model"], "m": int(m),
                "split": np.arange(splits), "error": error, "separable": False,
                "n_iter": n_iter, "converged": converged}))
    table = pd.concat(frames, ignore_index=True).loc[:, list(SPLIT_COLUMNS)]
    return table, summarize(table)
