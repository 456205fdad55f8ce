"""In-memory tables (nbvslr.data.frame, nbvslr.Task): text cells, the sha256, the checks."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest

import nbvslr
from nbvslr.config import parse_config
from nbvslr.data import load_task as load
from nbvslr.data.dataset import DataSettings
from nbvslr.data.frame import Frame
from nbvslr.errors import ConfigError


def test_cells_are_the_csv_readers_text():
    """Floats keep every digit, a missing value is the empty cell, text is stripped."""
    df = pd.DataFrame({"x": [0.1, np.nan, 1 / 3], "s": [" a ", None, "b"]})
    held = Frame(df)
    assert held.table["x"].tolist() == ["0.1", "", repr(1 / 3)]
    assert held.table["s"].tolist() == ["a", "", "b"]
    assert held.numeric == ("x",)


def test_sha256_follows_the_data():
    """One changed cell, or a renamed column, changes the sha256; a copy keeps it."""
    df = pd.DataFrame({"a": [1.0, 2.0], "y": [0, 1]})
    base = Frame(df).sha256
    assert Frame(df.copy()).sha256 == base
    assert Frame(df.assign(a=[1.0, 2.5])).sha256 != base
    assert Frame(df.rename(columns={"a": "b"})).sha256 != base
    assert base in repr(Frame(df))


def test_deepcopy_keeps_the_frame():
    """A config's deep copy of its tasks shares the (never changed) table."""
    held = Frame(pd.DataFrame({"a": [1], "y": [0]}))
    assert copy.deepcopy({"frame": held})["frame"] is held


def test_duplicate_columns_are_refused():
    """Two columns of one name: a ConfigError naming it."""
    df = pd.DataFrame([[1, 2]], columns=["a", "a"])
    with pytest.raises(ConfigError, match="'a' appears twice"):
        Frame(df)


def test_from_arrays_shapes_are_checked():
    """X and y of different lengths: one line naming both shapes."""
    with pytest.raises(ConfigError, match=r"\(5, 2\).*\(4,\)"):
        nbvslr.Task.from_arrays(np.zeros((5, 2)), np.zeros(4), name="t")


def test_from_frame_dataset_is_the_tables():
    """The Dataset of a frame task: features scaled to [0, 1], labels from positive."""
    df = pd.DataFrame({"a": [0.0, 5.0, 10.0, 2.5], "label": ["n", "p", "p", "n"]})
    task = nbvslr.Task.from_frame(df, target="label", positive="p", name="t")
    config = parse_config({"tasks": [task.to_config()], "sizes": [2]})
    data = load(config.tasks[0], DataSettings())
    assert data.X[:, 0].tolist() == [0.0, 0.5, 1.0, 0.25]
    assert data.y.tolist() == [0, 1, 1, 0]
    assert data.notes["sha256"] == task.frame.sha256


def test_a_frame_source_from_a_file_is_refused():
    """source: {frame: ...} written in YAML is not a table: the fix names Task.from_frame."""
    with pytest.raises(ConfigError, match="Task.from_frame"):
        parse_config({"tasks": [{"name": "t", "source": {"frame": "x.csv"}}]})
