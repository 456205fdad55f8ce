"""Degenerate data in a CSV task: each case runs to finite error rates or is refused clearly.

Constant features, duplicated rows, identical rows with different labels, a class with a
single row and m = N - 1 run; NaN, inf and values too far apart for a float are handled as
README's "What happens when..." says. No NaN is ever written as an error rate.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nbvslr.config import parse_config
from nbvslr.data.dataset import DataSettings
from nbvslr.errors import ConfigError, DataError
from nbvslr.runner import run_experiment

N = 30
MODELS = {"nb": {}, "lr": {}, "lr_l2": {"model": "lr", "C": 1.0}}


def _table(X: np.ndarray, y: np.ndarray) -> str:
    rows = zip(X, y, strict=True)
    lines = ["a,b,y"] + [f"{float(a)!r},{float(b)!r},{int(c)}" for (a, b), c in rows]
    return "\n".join(lines) + "\n"


def _run(tmp_path: Path, text: str, sizes, *, splits: int = 12, **source) -> pd.DataFrame:
    """Run the CSV ``text`` as a task; return its splits table after checking the files."""
    path = tmp_path / "d.csv"
    path.write_text(text)
    raw = {
        "tasks": [{"name": "d", "source": {"csv": str(path), **source},
                   "target": {"column": "y", "positive": [1]}}],
        "sizes": sizes, "splits": splits, "models": MODELS, "block": 5,
    }
    config = parse_config(raw, source="d.yaml", data=DataSettings(cache_dir=tmp_path / "c"),
                          out=tmp_path / "out", jobs=1, backend="sequential")
    table = run_experiment(config)["d"]
    written = pd.read_csv(tmp_path / "out" / "d" / "splits.csv.gz")
    summary = pd.read_csv(tmp_path / "out" / "d" / "summary.csv")
    assert written["error"].notna().all() and table["error"].notna().all()
    assert written["error"].between(0, 1).all()
    assert not summary[["error_mean", "error_sem"]].isna().any().any()
    assert len(written) == len(MODELS) * len(sizes) * splits
    return written


@pytest.fixture
def data() -> tuple[np.ndarray, np.ndarray]:
    """30 rows, two features, both classes."""
    rng = np.random.default_rng(7)
    y = np.r_[np.zeros(15), np.ones(15)].astype(int)
    return rng.normal(size=(N, 2)) + y[:, None], y


def test_constant_features_predict_the_training_majority(tmp_path, data):
    """All features constant: every model predicts alike; m=2 (one per class) is a tie, 0.5."""
    _, y = data
    splits = _run(tmp_path, _table(np.ones((N, 2)), y), [2, 10, N - 1])
    at2 = splits[splits["m"] == 2]
    assert (at2["error"] == 0.5).all()
    by_split = splits.pivot_table(index=["m", "split"], columns="model", values="error")
    assert (by_split.nunique(axis=1) == 1).all()


def test_one_constant_feature_is_harmless(tmp_path, data):
    """A constant column next to an informative one: finite errors, better than chance."""
    X, y = data
    X[:, 0] = 3.0
    splits = _run(tmp_path, _table(X, y), [10, 20])
    assert splits["error"].mean() < 0.45


def test_duplicated_rows_run(tmp_path, data):
    """Every row twice: a normal task (a test row may have its twin in the training set)."""
    X, y = data
    splits = _run(tmp_path, _table(np.r_[X, X], np.r_[y, y]), [2, 10, 2 * N - 1])
    assert splits["error"].mean() < 0.5


def test_identical_rows_with_different_labels_run(tmp_path, data):
    """Each row also appears with the other label: the Bayes error is 1/2, errors stay finite."""
    X, y = data
    splits = _run(tmp_path, _table(np.r_[X, X], np.r_[y, 1 - y]), [2, 10, 30])
    assert 0.3 < splits[splits["m"] == 30]["error"].mean() < 0.7


def test_a_class_with_a_single_row_always_trains_on_it(tmp_path, data):
    """One positive row: every training set holds it (both-classes rule), tests are negatives."""
    X, _ = data
    y = np.zeros(N, dtype=int)
    y[11] = 1
    splits = _run(tmp_path, _table(X, y), [2, 10, N - 1])
    assert splits["error"].notna().all()


def test_m_equal_n_minus_one_tests_on_a_single_row(tmp_path, data):
    """m = N - 1 leaves one test row: each error is 0, 1/2 (a tie) or 1."""
    X, y = data
    splits = _run(tmp_path, _table(X, y), [N - 1], splits=20)
    assert set(splits["error"]) <= {0.0, 0.5, 1.0}


def test_m_equal_n_is_refused_before_any_work(tmp_path, data):
    """m = N leaves no test row: a ConfigError naming the largest valid size."""
    X, y = data
    with pytest.raises(ConfigError, match=f"use sizes of at most {N - 1}"):
        _run(tmp_path, _table(X, y), [2, N])
    assert not (tmp_path / "out" / "d" / "splits.csv.gz").exists()


def test_the_smallest_task_runs(tmp_path):
    """Three rows (the minimum), m = 2: one test row per split."""
    splits = _run(tmp_path, "a,b,y\n1,2,0\n3,4,1\n5,6,0\n", [2])
    assert set(splits["error"]) <= {0.0, 0.5, 1.0}


def test_nan_is_missing_and_refused_by_default(tmp_path, data):
    """A NaN cell is a missing value: refused, naming the column, row and missing: drop."""
    X, y = data
    X[4, 1] = np.nan
    with pytest.raises(DataError, match=r"column 'b': missing value at data row 5.*drop"):
        _run(tmp_path, _table(X, y), [2])


def test_nan_rows_are_dropped_when_asked(tmp_path, data):
    """missing: drop removes the NaN row; the rest runs to finite errors."""
    X, y = data
    X[4, 1] = np.nan
    splits = _run(tmp_path, _table(X, y), [2, N - 2], missing="drop")
    with pytest.raises(ConfigError, match="at most 28"):
        _run(tmp_path, _table(X, y), [N - 1], missing="drop")
    assert len(splits)


def test_nan_not_marked_missing_is_refused_as_not_a_number(tmp_path, data):
    """With na: [] a 'nan' cell is a value, and not a number: refused."""
    X, y = data
    X[4, 1] = np.nan
    with pytest.raises(DataError, match=r"column 'b': not a number \('nan'\) at data row 5"):
        _run(tmp_path, _table(X, y), [2], na=[])


@pytest.mark.parametrize("cell", ["inf", "-inf", "1e400", "Infinity"])
def test_infinite_values_are_refused(tmp_path, data, cell):
    """inf (or a number too large for a float) is refused, whatever missing: says."""
    X, y = data
    text = _table(X, y).replace(repr(float(X[6, 0])), cell, 1)
    for missing in ("error", "drop"):
        with pytest.raises(DataError, match=r"column 'a': not finite .* at data row 7"):
            _run(tmp_path, text, [2], missing=missing)


def test_values_spanning_more_than_the_largest_float_are_scaled(tmp_path, data):
    """1e308 and -1e308 in one column: scaled to [0, 1] without overflow, finite errors."""
    X, y = data
    X[0, 0], X[1, 0] = 1e308, -1e308
    _run(tmp_path, _table(X, y), [2, 10])


def test_tiny_values_are_not_constant(tmp_path, data):
    """Subnormal-sized values still scale to [0, 1] and carry their information."""
    X, y = data
    splits = _run(tmp_path, _table(X * 1e-310, y), [20])
    assert splits["error"].mean() < 0.45
