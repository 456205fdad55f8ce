"""The Python API end to end: nbvslr.run / load / Results / Task against the CLI's files."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from api_frames import clinic_frame
from click.testing import CliRunner

import nbvslr
from nbvslr.cli import cli
from nbvslr.results import PAIRED_COLUMNS, SPLIT_COLUMNS, SUMMARY_COLUMNS
from nbvslr.runner.progress import NoProgress

ROOT = Path(__file__).resolve().parents[2]
SIZES = [3, 8, 16]
SPLITS = 12


_frame = clinic_frame


def _raw(task, **extra) -> dict:
    return {"tasks": [task], "sizes": SIZES, "splits": SPLITS, "seed": 3, **extra}


@pytest.fixture
def csv_config(tmp_path) -> Path:
    """A config file of one CSV task (the DataFrame of ``_frame`` written out)."""
    _frame().to_csv(tmp_path / "toy.csv", index=False)
    cfg = {"tasks": [{"name": "toy", "source": {"csv": "toy.csv"},
                      "target": {"column": "label", "positive": ["sick"]}}],
           "sizes": SIZES, "splits": SPLITS, "seed": 3}
    path = tmp_path / "toy.yaml"
    path.write_text(json.dumps(cfg))  # JSON is YAML
    return path


def _files(folder: Path) -> dict[str, bytes]:
    out = {name: (folder / name).read_bytes() for name in ("summary.csv", "paired.csv")}
    out["splits.csv"] = gzip.decompress((folder / "splits.csv.gz").read_bytes())
    return out


def test_run_without_out_writes_nothing(tmp_path, monkeypatch, csv_config):
    """out=None: no results folder, no checkpoint, no lock anywhere in the working folder."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    res = nbvslr.run(csv_config, progress=False)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    assert res.names == ["toy"]
    assert list(res.splits.columns) == list(SPLIT_COLUMNS)
    assert len(res.splits) == 2 * len(SIZES) * SPLITS


def test_run_with_out_writes_the_cli_files(tmp_path, csv_config):
    """out=folder: the same files, byte for byte, as `nbvslr run --out` of the same config."""
    nbvslr.run(csv_config, out=tmp_path / "api", progress=False)
    result = CliRunner().invoke(cli, ["run", str(csv_config), "--out", str(tmp_path / "cli"),
                                      "--jobs", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    assert _files(tmp_path / "api" / "toy") == _files(tmp_path / "cli" / "toy")
    assert (tmp_path / "api" / "toy" / "curve.png").read_bytes() == (
        tmp_path / "cli" / "toy" / "curve.png").read_bytes()


def test_rerun_with_out_resumes(tmp_path, csv_config):
    """A second run into the same folder reuses every checkpointed size, as the CLI does."""
    first = nbvslr.run(csv_config, out=tmp_path / "r", progress=False)
    second = nbvslr.run(csv_config, out=tmp_path / "r", progress=False)
    info = json.loads((tmp_path / "r" / "toy" / "run.json").read_text())
    assert info["timings"]["resumed_sizes"] == SIZES
    assert second.splits.equals(first.splits)


def test_load_gives_back_what_run_returned(tmp_path, csv_config):
    """load(folder) has the tables, report and figure of the in-memory run of that config."""
    mem = nbvslr.run(csv_config, progress=False)
    nbvslr.run(csv_config, out=tmp_path / "r", progress=False)
    back = nbvslr.load(tmp_path / "r")
    for attr in ("summary", "splits", "paired", "crossovers"):
        assert getattr(mem, attr).equals(getattr(back, attr)), attr
    assert mem.report() == back.report()
    from nbvslr.views.plots import render

    assert render(mem.plot(), "png") == (tmp_path / "r" / "toy" / "curve.png").read_bytes()


def test_tables_have_the_files_columns(csv_config):
    """summary, paired and splits carry exactly the files' columns; crossovers its own."""
    res = nbvslr.run(csv_config, progress=False)
    assert list(res.summary.columns) == list(SUMMARY_COLUMNS)
    assert list(res.paired.columns) == list(PAIRED_COLUMNS)
    assert list(res.crossovers.columns) == list(nbvslr.api.CROSSOVER_COLUMNS)
    assert res.crossovers[["model_a", "model_b"]].values.tolist() == [["nb", "lr"]]


def test_save_writes_what_the_cli_writes(tmp_path, csv_config):
    """Results.save of an in-memory run gives the files of a run with out=folder."""
    nbvslr.run(csv_config, progress=False).save(tmp_path / "saved")
    nbvslr.run(csv_config, out=tmp_path / "r", progress=False)
    assert _files(tmp_path / "saved" / "toy") == _files(tmp_path / "r" / "toy")
    assert nbvslr.load(tmp_path / "saved").report() == nbvslr.load(tmp_path / "r").report()


def test_report_matches_the_command(tmp_path, csv_config):
    """Results.report() is the text of `nbvslr report` on the saved folder."""
    res = nbvslr.run(csv_config, out=tmp_path / "r", progress=False)
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert res.report() == result.output


def test_frame_task_gives_the_csv_task_results(tmp_path, csv_config):
    """Task.from_frame of a DataFrame gives the rows of the same table read from a CSV."""
    task = nbvslr.Task.from_frame(_frame(), target="label", positive="sick", name="toy")
    from_frame = nbvslr.run(_raw(task), progress=False)
    from_csv = nbvslr.run(csv_config, progress=False)
    assert from_frame.splits.equals(from_csv.splits)


def test_frame_task_beside_a_builtin_one(tmp_path):
    """A config dict may list a Task beside a built-in task's name."""
    task = nbvslr.Task.from_arrays(*_xy(), name="arrays")
    res = nbvslr.run({"tasks": [task, "lenses"], "sizes": [4, 8], "splits": 5},
                     progress=False)
    assert res.names == ["arrays", "lenses"]
    assert set(res.summary["task"]) == {"arrays", "lenses"}


def _xy(n: int = 120, seed: int = 1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return rng.normal(size=(n, 4)) + y[:, None], y


def test_fingerprint_covers_the_frame(tmp_path):
    """Another DataFrame under the same task name is never resumed from the first's
    checkpoints, nor served from the per-process cache."""
    out = tmp_path / "r"
    a = nbvslr.run(_raw(nbvslr.Task.from_arrays(*_xy(seed=1), name="t")), out=out,
                   progress=False)
    b = nbvslr.run(_raw(nbvslr.Task.from_arrays(*_xy(seed=2), name="t")), out=out,
                   progress=False)
    info = json.loads((out / "t" / "run.json").read_text())
    assert info["timings"]["resumed_sizes"] == []
    assert not a.splits["error"].equals(b.splits["error"])
    assert info["task"]["recipe"]["sha256"] in json.dumps(info["config"])


def test_progress_object_is_called():
    """progress= takes any object with the Progress methods; it sees every split."""

    class Count(NoProgress):
        splits = 0

        def splits_done(self, task, m, n, seconds=None):
            Count.splits += n

    nbvslr.run(_raw(nbvslr.Task.from_arrays(*_xy(), name="p")), progress=Count())
    assert Count.splits == len(SIZES) * SPLITS


def test_default_progress_is_a_tqdm_bar(capsys):
    """progress=None draws a tqdm.auto bar (on stderr outside a notebook)."""
    nbvslr.run(_raw(nbvslr.Task.from_arrays(*_xy(), name="bar")))
    shown = capsys.readouterr()
    assert "36/36" in shown.err and "split" in shown.err
    assert "bar: done" in shown.out + shown.err


def test_bad_input_raises_the_cli_error(tmp_path):
    """A bad config is nbvslr.ConfigError with the one line `nbvslr run` prints."""
    path = tmp_path / "bad.yaml"
    path.write_text("tasks: [pimaa]\n")
    with pytest.raises(nbvslr.ConfigError) as caught:
        nbvslr.run(path, progress=False)
    result = CliRunner().invoke(cli, ["run", str(path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert f"error: {caught.value}" in result.output
    assert "\n" not in str(caught.value)


def test_bad_data_is_a_data_error():
    """A frame whose target has one value is nbvslr.DataError, before any fit."""
    df = _frame().assign(label="well")
    with pytest.raises(nbvslr.DataError, match="has 1 value "):
        nbvslr.run(_raw(nbvslr.Task.from_frame(df, target="label", name="one")),
                   progress=False)


def test_out_that_is_a_file_is_refused_before_running(tmp_path, csv_config):
    """out= naming a file is the CLI's --out ConfigError, and nothing is run."""
    (tmp_path / "f").write_text("")
    with pytest.raises(nbvslr.ConfigError, match="is a file, not a folder"):
        nbvslr.run(csv_config, out=tmp_path / "f", progress=False)


def test_shipped_config_by_name_and_overrides():
    """A shipped config's name runs, with splits and seed overridden."""
    cfg = nbvslr.api.read_config("synthetic", splits=3, seed=7)
    assert (cfg.splits, cfg.seed, cfg.out) == (3, 7, None)


def test_import_is_light():
    """`import nbvslr` loads neither pandas nor matplotlib nor the runner."""
    code = ("import sys, nbvslr; heavy = [m for m in ('pandas', 'matplotlib', 'numba', "
            "'nbvslr.runner') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    assert out.stdout.strip() == "[]"


def test_plot_on_given_axes(csv_config):
    """plot(ax=...) draws the one task's panel on ax and returns ax (not its figure, which a
    notebook would then show twice); with several tasks it asks for one."""
    from matplotlib.figure import Figure

    res = nbvslr.run(csv_config, progress=False)
    fig = Figure()
    ax = fig.subplots()
    assert res.plot(ax=ax) is ax
    assert [line.get_label() for line in ax.get_lines()][:2] == ["nb", "lr"]
    two = nbvslr.Results(res.tasks * 2)
    with pytest.raises(nbvslr.ConfigError, match="2 tasks for one panel"):
        two.plot(ax=ax)
    assert two["toy"].names == ["toy"]


def test_results_html_names_tasks_models_sizes_and_crossovers(csv_config):
    """A notebook's view of Results: every task with its models, sizes and splits, and the
    crossover table of its pairs."""
    res = nbvslr.run(csv_config, progress=False)
    page = res._repr_html_()
    assert "<table" in page and "toy" in page and "nb, lr" in page
    overview = res.overview().iloc[0]
    assert (overview["sizes"], overview["m_min"], overview["m_max"], overview["splits"]) == (
        len(SIZES), SIZES[0], SIZES[-1], SPLITS)
    assert "crossover_low" in page and "b_better_from" in page


def test_results_html_shows_a_missing_crossover_as_a_dash(csv_config):
    """A pair whose curves do not cross shows "–" in every crossover cell of the notebook
    view, not pandas' None and <NA>."""
    res = nbvslr.run(csv_config, progress=False)
    cross = res.crossovers.copy()
    cross[["crossover", "crossover_low", "crossover_high"]] = np.nan
    cross["better_after"] = None  # what crossover_fields gives when the curves never cross
    cross["b_better_from"] = pd.array([pd.NA] * len(cross), dtype="Int64")
    res.__dict__["crossovers"] = cross  # the cached property, as a run without a crossing
    page = res._repr_html_()
    row = page.split("<tbody>")[-1]
    assert "None" not in row and "&lt;NA&gt;" not in row
    assert row.count("<td>–</td>") == 5 * len(cross)


def test_progress_without_ipywidgets_is_a_quiet_text_bar(monkeypatch, capsys):
    """Without ipywidgets the default bar is tqdm's text bar: no TqdmWarning about a missing
    IProgress widget (pytest turns warnings into errors), the bar on stderr."""
    import importlib.util

    from nbvslr.runner import progress

    real = importlib.util.find_spec
    monkeypatch.setattr(progress.importlib.util, "find_spec",
                        lambda name, *a: None if name == "ipywidgets" else real(name, *a))
    from tqdm import tqdm

    assert progress._auto_bar() is tqdm
    nbvslr.run(_raw(nbvslr.Task.from_arrays(*_xy(), name="quiet")))
    assert "36/36" in capsys.readouterr().err


def test_frame_task_in_worker_processes():
    """A frame task reaches loky workers (pickled with its units): the same rows as in
    one process."""
    task = nbvslr.Task.from_arrays(*_xy(), name="w")
    one = nbvslr.run(_raw(task), progress=False)
    two = nbvslr.run({**_raw(task), "block": 4}, jobs=2, progress=False)
    assert one.splits.equals(two.splits)


def test_mixed_frame_is_the_mixed_csv_task(tmp_path):
    """A DataFrame of numbers and text is a mixed task by its dtypes: the rows of the CSV
    task with features: {continuous, discrete} naming the same columns."""
    df = _frame()
    df["smoker"] = np.where(np.arange(len(df)) % 3 == 0, "yes", "no")
    task = nbvslr.Task.from_frame(df, target="label", positive="sick", name="mix")
    assert task.to_config()["features"] == {"continuous": ["a", "b", "c"],
                                            "discrete": ["smoker"]}
    df.to_csv(tmp_path / "mix.csv", index=False)
    csv_task = {"name": "mix", "source": {"csv": str(tmp_path / "mix.csv")},
                "target": {"column": "label", "positive": ["sick"]},
                "features": {"continuous": ["a", "b", "c"], "discrete": ["smoker"]}}
    from_frame = nbvslr.run(_raw(task), progress=False)
    from_csv = nbvslr.run(_raw(csv_task), progress=False)
    assert from_frame.splits.equals(from_csv.splits)
    info = from_frame.tasks[0].run_info["task"]
    assert (info["kind"], info["features"]) == ("mixed", 4)


def test_from_frame_checks_its_target_column_at_once():
    """A target that is not a column is a ConfigError from Task.from_frame itself, naming
    the columns and the closest one, before any run."""
    with pytest.raises(nbvslr.ConfigError, match=r"target='lable': no such column "
                                                 r"\(did you mean 'label'\?\); the columns "
                                                 r"are 'a', 'b', 'c', 'label'"):
        nbvslr.Task.from_frame(_frame(), target="lable", name="toy")


def test_a_missing_value_names_the_python_argument():
    """A DataFrame's missing cell: the error names from_frame's missing="drop", not the
    config key, and missing="drop" then runs."""
    df = _frame()
    df.loc[3, "a"] = np.nan
    task = nbvslr.Task.from_frame(df, target="label", name="gappy")
    with pytest.raises(nbvslr.DataError, match=r'missing value at .*Task.from_frame\(\.\.\., '
                                               r'missing="drop"\)') as err:
        nbvslr.run(_raw(task), progress=False)
    assert "source.missing" not in str(err.value)
    dropped = nbvslr.Task.from_frame(df, target="label", name="gappy", missing="drop")
    assert not nbvslr.run(_raw(dropped), progress=False).summary.empty


def test_constant_columns_are_kept_as_docs_api_says():
    """docs/api.md: a constant column of a DataFrame is kept, not refused (continuous and
    discrete), and the run goes on."""
    df = _frame().assign(flat=1.0, same="x")
    task = nbvslr.Task.from_frame(df, target="label", name="flat",
                                  columns=["a", "b", "flat"])
    assert not nbvslr.run(_raw(task), progress=False).summary.empty
    discrete = nbvslr.Task.from_frame(df.assign(a=df["a"] > 0), target="label", name="levels",
                                      columns=["same", "a"], kind="discrete")
    assert not nbvslr.run(_raw(discrete), progress=False).summary.empty
    assert "constant column kept" in (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
