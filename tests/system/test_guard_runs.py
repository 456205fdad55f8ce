"""The curve guard on real runs: a small synthetic task run honestly, then with broken
settings, and compared (fabricated curves: tests/unit/test_guard.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from nbvslr.analysis import compare
from nbvslr.config import load_config
from nbvslr.data.dataset import DataSettings
from nbvslr.runner import run_experiment, units

SIZES = [2, 4, 6, 10, 14, 20, 30]
SPLITS = 120


def _run(tmp_path: Path, name: str, models: dict) -> Path:
    """A real run of a small, imbalanced, discrete synthetic task (no data files)."""
    config = {
        "tasks": [{"name": "toy", "source": {"synthetic": {
            "generator": "nb", "kind": "discrete", "rows": 400, "features": 8,
            "prior": 0.1, "seed": 3}}}],
        "sizes": SIZES, "splits": SPLITS, "seed": 0, "models": models,
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    out = tmp_path / name
    settings = DataSettings(cache_dir=tmp_path / "cache", download=False)
    run_experiment(load_config(path, out=out, data=settings, jobs=1))
    return out


def _uniform_train_sets(unit: units.Unit, y: np.ndarray) -> np.ndarray:
    """Training sets drawn uniformly, ignoring the one-example-per-class rule."""
    draw, _ = units.split_seeds(unit.seed, unit.task.name, unit.m,
                                 range(unit.start, unit.stop))
    return np.stack([np.sort(np.random.default_rng(ss).choice(y.size, unit.m, replace=False))
                     for ss in draw])


def _score_one_class_sets(real):
    """score_splits that also accepts one-class training sets: the model can only predict
    the class it saw, so its error is the share of the other class among the test rows."""

    def score(spec, data, train_idx, seeds, **options):
        y = np.asarray(data.y)
        n1 = y[train_idx].sum(axis=1)  # (S,)
        one = (n1 == 0) | (n1 == train_idx.shape[1])
        out = {"error": np.empty(len(train_idx)), "separable": np.zeros(len(train_idx), bool),
               "separation": np.full(len(train_idx), -1, np.int8),  # not assessed
               "n_iter": np.zeros(len(train_idx), np.int64),
               "converged": np.ones(len(train_idx), bool)}
        if (~one).any():
            kept = [s for s, o in zip(seeds, one, strict=True) if not o]
            good = real(spec, data, train_idx[~one], kept, **options)
            for key in out:
                out[key][~one] = good[key]
        seen = y[train_idx[one, 0]]  # (k,) the only class of each one-class set
        other_in_test = np.where(seen == 1, (y == 0).sum(), (y == 1).sum())
        out["error"][one] = other_in_test / (y.size - train_idx.shape[1])
        return out

    return score


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> Path:
    """The honest run of the small real task."""
    return _run(tmp_path_factory.mktemp("honest"), "honest", {"nb": {}, "lr": {}})


@pytest.mark.parametrize("broken, model", [
    ({"nb": {"smoothing": 50}, "lr": {}}, "nb"),
    ({"nb": {}, "lr": {"C": 0.01}}, "lr"),
])
def test_real_runs_with_broken_models_fail(honest, tmp_path, broken, model):
    """NB with Laplace smoothing l = 50, or LR with a strong penalty (C = 0.01), bends the
    curves of a real run: the guard names the task, the broken model and its sizes."""
    report = compare.compare(honest, _run(tmp_path, "broken", broken))
    assert not report.ok
    points = [c for c in report.violations if c.kind == "point"]
    assert points and {c.model for c in points} == {model}
    assert all(c.task == "toy" for c in report.violations)
    assert any(msg.startswith(f"toy: {model} at m = ") for msg in report.messages())


def test_real_run_with_splits_ignoring_the_class_rule_fails(honest, tmp_path, monkeypatch):
    """Training sets drawn without the one-example-per-class rule change the small-m end
    of a real run's curves: the guard reports both models at the smallest sizes."""
    monkeypatch.setattr(units, "train_sets", _uniform_train_sets)
    monkeypatch.setattr(units.models, "score_splits",
                        _score_one_class_sets(units.models.score_splits))
    report = compare.compare(honest, _run(tmp_path, "uniform", {"nb": {}, "lr": {}}))
    points = [c for c in report.violations if c.kind == "point"]
    assert {c.model for c in points} == {"nb", "lr"}
    assert min(c.m for c in points) == 2
    assert any(msg.startswith("toy: nb at m = 2:") for msg in report.messages())


def test_real_rerun_of_the_honest_settings_passes(honest, tmp_path):
    """The same settings with another seed differ only by noise: no alarm."""
    config = yaml.safe_load((honest.parent / "honest.yaml").read_text("utf-8"))
    config["seed"] = 1
    path = tmp_path / "again.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    settings = DataSettings(cache_dir=tmp_path / "cache", download=False)
    run_experiment(load_config(path, out=tmp_path / "again", data=settings, jobs=1))
    report = compare.compare(honest, tmp_path / "again")
    assert report.ok, report.table()
