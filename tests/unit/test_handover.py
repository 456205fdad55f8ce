"""The data a run's loky workers are handed as they start (``runner.units.Handover``)."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import nbvslr.runner.units as units
from nbvslr.config import load_config, parse_config
from nbvslr.data.dataset import DataSettings

PIMA = Path(__file__).resolve().parents[2] / "configs" / "pima.yaml"


@pytest.fixture
def fresh_cache(monkeypatch):
    """A process cache of its own (the module's is shared by the tests of this process)."""
    monkeypatch.setattr(units, "_CACHE", {})
    monkeypatch.setattr(units.lifeline, "watch_parent", lambda parent: None)


def _units(config, digest):
    spec, settings = units.portable(config.tasks[0], config.data)
    return [units.Unit(task=spec, data=settings, models=config.models, seed=0, m=m,
                       start=0, stop=2, digest=digest) for m in (10, 20)]


def test_a_worker_handed_a_builtin_task_reads_no_file(fresh_cache, monkeypatch):
    """A worker started with the handover uses the calling process's arrays for a built-in
    task (never loading it), and they are the data of the run's sha256."""
    config = load_config(PIMA)
    spec, settings = units.portable(config.tasks[0], config.data)
    data, digest = units.loaded(spec, settings)  # the calling process's load
    handed = pickle.loads(pickle.dumps(units.Handover(_units(config, digest))))
    assert len(handed.entries) == 1
    units._CACHE.clear()  # a new worker process

    def no_load(*args, **kwargs):
        raise AssertionError("the worker loaded the data itself")

    monkeypatch.setattr(units, "load_task", no_load)
    units.start_worker(0, handed)
    got = units.dataset_for(spec, settings, digest)
    np.testing.assert_array_equal(got.X, data.X)
    np.testing.assert_array_equal(got.y, data.y)
    assert units.data_digest(got) == digest


def test_only_the_fingerprinted_data_of_nbvslr_files_is_handed_over(fresh_cache, tmp_path):
    """A unit of other data (another sha256) gets nothing, nor does a user's CSV (read by
    the workers themselves, so that one replaced during the run is refused); any two
    handovers compare equal (loky keeps a reusable pool whose initializer's arguments are
    equal)."""
    config = load_config(PIMA)
    spec, settings = units.portable(config.tasks[0], config.data)
    _, digest = units.loaded(spec, settings)
    assert units.Handover(_units(config, "0" * 64)).entries == {}
    X = np.random.default_rng(0).normal(size=(40, 3))
    pd.DataFrame(X, columns=list("abc")).assign(label=np.arange(40) % 2).to_csv(
        tmp_path / "toy.csv", index=False)
    raw = {"tasks": [{"name": "toy", "source": {"csv": str(tmp_path / "toy.csv")},
                      "target": {"column": "label", "positive": [1]},
                      "features": {"kind": "continuous"}}],
           "sizes": [10, 20], "splits": 2, "models": {"nb": {}}}
    toy = parse_config(raw, source="toy.yaml",
                       data=DataSettings(cache_dir=tmp_path / "cache", download=False))
    toy_spec, toy_settings = units.portable(toy.tasks[0], toy.data)
    _, toy_digest = units.loaded(toy_spec, toy_settings)
    assert units.Handover(_units(toy, toy_digest)).entries == {}
    assert units.Handover(_units(config, digest)) == units.Handover([])
