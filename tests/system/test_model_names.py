"""Model names that look like numbers or missing values ("1", "2", "NaN") round-trip through
a run's checkpoints, its tables, nbvslr.load and the report, as any name a config accepts."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from click.testing import CliRunner

import nbvslr
from nbvslr.cli import cli

NAMES = ["1", "2", "NaN"]
SIZES = [4, 10]


def _config(tmp_path):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 80)
    df = pd.DataFrame(rng.normal(size=(80, 2)) + y[:, None], columns=["a", "b"])
    df["label"] = np.where(y == 1, "yes", "no")
    df.to_csv(tmp_path / "toy.csv", index=False)
    cfg = {"tasks": [{"name": "toy", "source": {"csv": "toy.csv"},
                      "target": {"column": "label", "positive": ["yes"]}}],
           "models": {"1": {"model": "nb"}, "2": {"model": "lr"}, "NaN": {"model": "nb"}},
           "sizes": SIZES, "splits": 4, "seed": 1}
    path = tmp_path / "names.yaml"
    path.write_text(json.dumps(cfg))  # JSON is YAML
    return path


def _names(column: pd.Series) -> list:
    return sorted(set(column.tolist()), key=str)


def test_numeric_and_nan_model_names_round_trip(tmp_path):
    """Models named 1, 2 and NaN: a run, its resume from checkpoints, load and report keep
    the names as text (pandas read them as 1, 2 and a missing value, and the run failed)."""
    config = _config(tmp_path)
    out = tmp_path / "r"
    first = nbvslr.run(config, out=out, progress=False)
    for table in (first.splits, first.summary):
        assert _names(table["model"]) == NAMES
    assert sorted(map(tuple, first.paired[["model_a", "model_b"]].drop_duplicates()
                      .values.tolist())) == [("1", "2"), ("NaN", "2")]
    again = nbvslr.run(config, out=out, progress=False)  # every size from its checkpoint
    info = json.loads((out / "toy" / "run.json").read_text())
    assert info["timings"]["resumed_sizes"] == SIZES
    assert again.splits.equals(first.splits)
    back = nbvslr.load(out)
    for attr in ("summary", "splits", "paired"):
        assert getattr(back, attr).equals(getattr(first, attr)), attr
    memory = nbvslr.run(config, progress=False)  # nothing written: tables as saved
    assert memory.summary.equals(back.summary) and memory.paired.equals(back.paired)
    assert memory.report() == back.report()
    result = CliRunner().invoke(cli, ["report", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output == back.report()
    assert "NaN" in result.output
