"""The Python API's edges: a metric view saved, bad arguments refused in one line, the
documented orders and error types."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from api_frames import clinic_frame

import nbvslr
import nbvslr.api
from nbvslr.results.layout import SPLITS_FILE

ROOT = Path(__file__).resolve().parents[2]
SIZES = [3, 8, 16]


_frame = clinic_frame


def _task(name: str = "toy", **kwargs) -> nbvslr.Task:
    return nbvslr.Task.from_frame(_frame(), target="label", positive="sick", name=name,
                                  **kwargs)


@pytest.fixture(scope="module")
def measured() -> nbvslr.Results:
    """A small run of one frame task measuring the log-loss and Brier score too."""
    return nbvslr.run({"tasks": [_task()], "sizes": SIZES, "splits": 10, "seed": 3,
                       "metrics": ["error", "log_loss", "brier"]}, progress=False)


def _bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())
            if p.name != "curve.png"}


def test_metric_view_saves_the_whole_results(tmp_path, measured):
    """metric(name).save writes the run's files (every metric), which load and view back."""
    measured.metric("brier").save(tmp_path / "view")
    measured.save(tmp_path / "whole")
    assert _bytes(tmp_path / "view" / "toy") == _bytes(tmp_path / "whole" / "toy")
    back = nbvslr.load(tmp_path / "view")
    assert back.metrics == ["error", "log_loss", "brier"]
    assert back.summary.equals(measured.summary)
    assert back.metric("brier").summary.equals(measured.metric("brier").summary)
    assert (tmp_path / "view" / "toy" / SPLITS_FILE).exists()


@pytest.mark.parametrize("n_boot", [0, -3, 2.5, True])
def test_extrapolation_refuses_a_bad_n_boot(measured, n_boot):
    """extrapolation(n_boot=0 or negative or not an int) is one ConfigError, no traceback."""
    with pytest.raises(nbvslr.ConfigError, match=r"extrapolation\(n_boot=\.\.\.\): .*>= 1"):
        measured.extrapolation(n_boot=n_boot)


@pytest.mark.parametrize(("key", "value"), [("n_boot", 0), ("seed", -1), ("n_boot", "9")])
def test_results_refuses_a_bad_n_boot_or_seed(measured, key, value):
    """Results(n_boot=0), Results(seed=-1) and setting them later are one ConfigError."""
    with pytest.raises(nbvslr.ConfigError, match=rf"Results\({key}=\.\.\.\)"):
        nbvslr.Results(measured.tasks, **{key: value})
    copy = nbvslr.Results(measured.tasks)
    with pytest.raises(nbvslr.ConfigError, match=rf"Results\({key}=\.\.\.\)"):
        setattr(copy, key, value)


@pytest.mark.parametrize("target", ["afile", "afile/below", ""])
def test_save_to_a_file_is_refused_before_writing(tmp_path, monkeypatch, measured, target):
    """save(a file, a path below one, '') is run(out=...)'s one ConfigError; nothing written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("kept")
    folder = str(tmp_path / target) if target else ""
    with pytest.raises(nbvslr.ConfigError, match=r"Results\.save\(.*(file|empty path)"):
        measured.save(folder)
    assert (tmp_path / "afile").read_text() == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_a_string_of_columns_is_one_column_name():
    """columns="ab" is the column ab (not a and b), as from_openml and feature_names read it."""
    df = _frame().assign(ab=lambda d: d["a"] * 0)  # a, b, c, label and ab
    one = nbvslr.Task.from_frame(df, target="label", name="one", columns="ab")
    assert one.columns == ("ab",)
    assert nbvslr.Task.from_frame(df, target="label", name="two", columns="c").columns == (
        "c",)
    res = nbvslr.run({"tasks": [one], "sizes": [4], "splits": 3}, progress=False)
    assert res.names == ["one"]
    docs = pd.DataFrame({"doc": ["spam offer", "hello there"] * 20, "y": [1, 0] * 20})
    text = nbvslr.Task.from_frame(docs, target="y", name="t", kind="text", columns="doc")
    assert text.columns == ("doc",)
    X = np.zeros((10, 1))
    arrays = nbvslr.Task.from_arrays(X, np.arange(10) % 2, name="p", feature_names="price")
    assert list(arrays.frame.table.columns) == ["price", "y"]
    assert nbvslr.Task.from_openml(61, columns="sepallength").columns == ("sepallength",)


def test_the_orders_docs_api_states():
    """load of two runs' task folders: tables by folder name, crossovers in the report's."""
    from nbvslr.analysis.fidelity import panel_order

    res = nbvslr.load(ROOT / "results" / "reference")  # Figure 1's and synthetic's tasks
    res.n_boot = 20
    names = sorted(p.name for p in (ROOT / "results" / "reference").iterdir() if p.is_dir())
    assert res.names == names
    assert list(pd.unique(res.summary["task"])) == names
    assert list(pd.unique(res.paired["task"])) == names
    report = [names[i] for i in panel_order(names)]
    assert report[:2] == ["pima", "adult-continuous"] and report != names
    assert list(pd.unique(res.crossovers["task"])) == report


@pytest.mark.parametrize("sizes", [[1], [0, 4], [-2], {"start": 1, "stop": 5}])
def test_a_size_below_two_is_a_size_error(sizes):
    """m = 1, 0 or less is nbvslr.SizeError, as docs/api.md says of m outside 2 .. N - 1."""
    with pytest.raises(nbvslr.SizeError, match="sizes"):
        nbvslr.run({"tasks": [_task()], "sizes": sizes, "splits": 3}, progress=False)
    assert issubclass(nbvslr.SizeError, nbvslr.ConfigError)


@pytest.mark.parametrize(("kwargs", "named"), [
    ({"splits": 0}, r"nbvslr\.run\(splits=\.\.\.\): must be >= 1"),
    ({"seed": -1}, r"nbvslr\.run\(seed=\.\.\.\): must be >= 0"),
    ({"jobs": 0}, r"nbvslr\.run\(jobs=\.\.\.\): must not be 0"),
    ({"backend": "lokyy"}, r"nbvslr\.run\(backend=\.\.\.\): unknown backend"),
    ({"metrics": 5}, r"nbvslr\.run\(metrics=\.\.\.\): not a list of metrics"),
])
def test_run_names_its_own_arguments_not_the_commands_options(tmp_path, kwargs, named):
    """nbvslr.run(splits=0) names splits=, not the command line's --splits; so does a Config."""
    config = {"tasks": [_task()], "sizes": SIZES}
    parsed = nbvslr.api.read_config(config)
    for given in ("synthetic", config, parsed):
        with pytest.raises(nbvslr.ConfigError, match=named) as caught:
            nbvslr.run(given, progress=False, **kwargs)
        assert "command line" not in str(caught.value) and "--" not in str(caught.value)


def test_read_config_keeps_the_commands_wording():
    """read_config, which `nbvslr run` reads its configs with, names --splits as before."""
    with pytest.raises(nbvslr.ConfigError, match="command line: --splits: must be >= 1"):
        nbvslr.api.read_config("synthetic", splits=0)


def test_run_out_that_is_a_file_names_out(tmp_path):
    """run(out=a file) names out=, before anything is run."""
    (tmp_path / "f").write_text("")
    with pytest.raises(nbvslr.ConfigError, match=r"nbvslr\.run\(out='.*f'\): is a file"):
        nbvslr.run("synthetic", out=tmp_path / "f", progress=False)
