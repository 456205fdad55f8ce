"""Nothing wrong is ever believed (issue 28): the data a run fits is the data it
fingerprinted, a task's files are one sealed unit, nothing in a task folder is followed
through a symlink, and every reader turns a damaged file into one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import nbvslr.runner as runner
from nbvslr.config import parse_config
from nbvslr.data.dataset import DataSettings
from nbvslr.errors import DataError
from nbvslr.runner import units

SIZES = [5, 10, 20]


def _toy_csv(path: Path, shift: float) -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 120)
    X = rng.normal(size=(120, 4)) + shift * y[:, None]  # (N, d)
    pd.DataFrame(X, columns=list("abcd")).assign(label=y).to_csv(path, index=False)


def _csv_config(folder: Path, **kw):
    raw = {
        "tasks": [{"name": "toy", "source": {"csv": str(folder / "toy.csv")},
                   "target": {"column": "label", "positive": [1]},
                   "features": {"kind": "continuous"}}],
        "sizes": SIZES, "splits": 6, "block": 3, "seed": 1, "models": {"nb": {}, "lr": {}},
    }
    data = DataSettings(cache_dir=folder / "cache", download=False)
    return parse_config(raw, source="toy.yaml", data=data, out=str(folder / "results"), **kw)


@pytest.mark.parametrize("backend", ["loky", "dask"])
def test_a_csv_replaced_after_the_fingerprint_is_refused_in_the_workers(
        tmp_path, monkeypatch, backend):
    """A CSV replaced between the fingerprint and the workers' reads: DataError, no files."""
    if backend == "dask":
        pytest.importorskip("distributed")
    _toy_csv(tmp_path / "toy.csv", shift=1.0)
    prepare = runner.prepare

    def prepare_then_replace(config):
        tasks = prepare(config)
        _toy_csv(tmp_path / "toy.csv", shift=3.0)  # the workers read this one
        return tasks

    monkeypatch.setattr(runner, "prepare", prepare_then_replace)
    config = _csv_config(tmp_path, backend=backend, jobs=2)
    with pytest.raises(DataError, match=r"toy\.csv changed during the run"):
        runner.run_experiment(config)
    assert not (tmp_path / "results" / "toy" / "summary.csv").exists()


def test_a_worker_reloads_a_copy_cached_by_an_earlier_run(tmp_path):
    """A process's cached copy of an earlier version of the file is read again, not fitted."""
    _toy_csv(tmp_path / "toy.csv", shift=1.0)
    config = _csv_config(tmp_path)
    spec, settings = units.portable(config.tasks[0], config.data)
    old, old_digest = units.loaded(spec, settings)
    _toy_csv(tmp_path / "toy.csv", shift=2.0)
    units._CACHE.pop(units._cache_key(spec, settings))
    new, new_digest = units.loaded(spec, settings)
    units._CACHE[units._cache_key(spec, settings)] = (old, old_digest)  # a stale copy
    assert units.dataset_for(spec, settings, new_digest) is not old
    with pytest.raises(DataError):
        units.dataset_for(spec, settings, old_digest)
