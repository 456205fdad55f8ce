"""The runner end to end on a small CSV task: schema, determinism, resume, refusals."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from nbvslr.cli import cli
from nbvslr.config import parse_config
from nbvslr.data.dataset import DataSettings
from nbvslr.errors import ConfigError
from nbvslr.results import SPLIT_COLUMNS
from nbvslr.runner import run_experiment

SIZES = [2, 6, 12]
SPLITS = 40


@pytest.fixture
def csv_task(tmp_path) -> dict:
    """An inline CSV task: 120 rows, 3 continuous features, classes shifted apart."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 120)
    X = rng.normal(size=(120, 3)) + 0.8 * y[:, None]
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y)
    path = tmp_path / "toy.csv"
    frame.to_csv(path, index=False)
    return {
        "name": "toy",
        "source": {"csv": str(path)},
        "target": {"column": "label", "positive": [1]},
        "features": {"kind": "continuous"},
    }


def _config(task, out, **kw):
    raw = {
        "tasks": [task],
        "sizes": SIZES,
        "splits": SPLITS,
        "seed": 1,
        "models": {"nb": {}, "lr": {}, "lr_l2": {"model": "lr", "C": 1.0}},
        "block": kw.pop("block", 16),
    }
    data = DataSettings(cache_dir=out.parent / "cache", download=False)
    return parse_config(raw, source="toy.yaml", data=data, out=out, **kw)


def _bytes(folder: Path) -> dict[str, bytes]:
    return {
        name: (folder / name).read_bytes()
        for name in ("summary.csv", "splits.csv.gz", "paired.csv")
    }


def test_outputs_have_the_documented_schema(csv_task, tmp_path):
    """summary.csv, splits.csv.gz, paired.csv, run.json and curve.png are written, complete."""
    out = tmp_path / "results"
    tables = run_experiment(_config(csv_task, out))
    folder = out / "toy"
    splits = pd.read_csv(folder / "splits.csv.gz")
    assert tuple(splits.columns) == SPLIT_COLUMNS
    assert len(splits) == 3 * len(SIZES) * SPLITS
    assert splits["error"].between(0, 1).all()
    assert len(tables["toy"]) == len(splits)
    summary = pd.read_csv(folder / "summary.csv")
    for col in ("task", "model", "m", "n_splits", "error_mean", "error_sem", "ci_low", "ci_high"):
        assert col in summary.columns
    assert set(summary["model"]) == {"nb", "lr", "lr_l2"}
    assert (summary["n_splits"] == SPLITS).all()
    assert (summary["ci_low"] <= summary["error_mean"]).all()
    info = json.loads((folder / "run.json").read_text())
    assert info["task"]["rows"] == 120
    assert set(info["asymptotic_error"]) == {"nb", "lr", "lr_l2"}
    assert "numpy" in info["versions"] and info["splits"] == SPLITS
    machine = info["machine"]  # what results may depend on across machines
    assert machine["numpy"] == np.__version__ and machine["cpu"]
    assert machine["blas"] and all(lib["internal_api"] and lib["version"]
                                   for lib in machine["blas"])
    assert (folder / "curve.png").read_bytes()[:4] == b"\x89PNG"
    assert not list(folder.rglob("*.tmp"))


def test_results_do_not_depend_on_jobs_block_or_backend(csv_task, tmp_path):
    """Same seed, different --jobs, block size and backend: identical bytes."""
    a = tmp_path / "a" / "results"
    b = tmp_path / "b" / "results"
    run_experiment(_config(csv_task, a, jobs=1, block=16))
    run_experiment(_config(csv_task, b, jobs=2, block=7, backend="threading"))
    assert _bytes(a / "toy") == _bytes(b / "toy")


def test_seed_changes_results(csv_task, tmp_path):
    """A different seed draws different splits."""
    a, b = tmp_path / "a" / "results", tmp_path / "b" / "results"
    run_experiment(_config(csv_task, a))
    run_experiment(_config(csv_task, b, seed=2))
    assert _bytes(a / "toy")["splits.csv.gz"] != _bytes(b / "toy")["splits.csv.gz"]


def test_resume_reuses_checkpoints_and_ends_with_the_same_bytes(csv_task, tmp_path):
    """A rerun skips finished sizes; losing a checkpoint recomputes only that size."""
    out = tmp_path / "results"
    run_experiment(_config(csv_task, out))
    first = _bytes(out / "toy")
    ckpt = out / "toy" / ".checkpoints"
    (ckpt / f"m={SIZES[1]}.csv.gz").unlink()
    (out / "toy" / "summary.csv").unlink()
    run_experiment(_config(csv_task, out))
    info = json.loads((out / "toy" / "run.json").read_text())
    assert info["timings"]["resumed_sizes"] == [SIZES[0], SIZES[2]]
    assert _bytes(out / "toy") == first
    run_experiment(_config(csv_task, out, force=True))
    info = json.loads((out / "toy" / "run.json").read_text())
    assert info["timings"]["resumed_sizes"] == []
    assert _bytes(out / "toy") == first


def test_checkpoints_of_another_experiment_are_not_reused(csv_task, tmp_path, capfd):
    """Changing the models invalidates the checkpoints (fingerprint), and the run says so
    in one line before it recomputes them (never silently); a plain resume says nothing."""
    out = tmp_path / "results"
    run_experiment(_config(csv_task, out))
    run_experiment(_config(csv_task, out))
    assert "note:" not in capfd.readouterr().err
    raw_models = {"nb": {"smoothing": 2.0}, "lr": {}}
    cfg = parse_config(
        {"tasks": [csv_task], "sizes": SIZES, "splits": SPLITS, "seed": 1, "models": raw_models},
        source="toy.yaml", data=DataSettings(cache_dir=tmp_path / "cache"), out=out,
    )
    run_experiment(cfg)
    said = [line for line in capfd.readouterr().err.splitlines() if line.startswith("note:")]
    assert said == [f"note: toy: the {len(SIZES)} finished sizes in {out / 'toy'} were made "
                    "with other settings and are recomputed; its files are replaced when "
                    "this run finishes (--out another folder keeps them)"]
    info = json.loads((out / "toy" / "run.json").read_text())
    assert info["timings"]["resumed_sizes"] == []
    assert set(pd.read_csv(out / "toy" / "summary.csv")["model"]) == {"nb", "lr"}


def test_size_that_leaves_no_test_row_is_refused_before_any_work(csv_task, tmp_path):
    """m = N is a one-line ConfigError and nothing is written."""
    out = tmp_path / "results"
    raw = {"tasks": [csv_task], "sizes": [2, 120], "splits": 3}
    cfg = parse_config(raw, source="toy.yaml", data=DataSettings(cache_dir=tmp_path / "c"), out=out)
    with pytest.raises(ConfigError, match="sizes: 120"):
        run_experiment(cfg)
    assert not (out / "toy" / "summary.csv").exists()


def test_nested_training_sets_are_reproducible(csv_task, tmp_path):
    """nested: true runs and gives the same bytes twice."""
    a, b = tmp_path / "a" / "results", tmp_path / "b" / "results"
    for out in (a, b):
        raw = {"tasks": [csv_task], "sizes": SIZES, "splits": 10, "nested": True}
        cfg = parse_config(raw, source="toy.yaml", data=DataSettings(cache_dir=out.parent), out=out)
        run_experiment(cfg)
    assert _bytes(a / "toy") == _bytes(b / "toy")


def test_cli_run_and_bad_config(csv_task, tmp_path):
    """`nbvslr run` writes results and says where; a bad config exits 2 with one line."""
    import yaml

    cfg = tmp_path / "toy.yaml"
    cfg.write_text(yaml.safe_dump({"tasks": [csv_task], "sizes": [2, 4], "splits": 5}))
    out = tmp_path / "res"
    runner = CliRunner()
    result = runner.invoke(cli, ["run", str(cfg), "--out", str(out), "--quiet",
                                 "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    assert "results in" in result.output
    with gzip.open(out / "toy" / "splits.csv.gz", "rt") as fh:
        assert fh.readline().strip() == ",".join(SPLIT_COLUMNS)
    bad = tmp_path / "bad.yaml"
    bad.write_text("tasks: [toy]\nsplitz: 3\n")
    result = runner.invoke(cli, ["run", str(bad), "--out", str(out)])
    assert result.exit_code == 2
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ")



def test_the_data_of_every_config_is_checked_before_the_first_runs(csv_task, tmp_path):
    """`nbvslr run good.yaml bad.yaml`: bad.yaml's missing CSV is reported before good.yaml
    runs, so nothing is computed and no results folder is written."""
    import yaml

    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump({"tasks": [csv_task], "sizes": [2, 4], "splits": 5}))
    bad = tmp_path / "bad.yaml"
    missing = dict(csv_task, name="gone", source={"csv": str(tmp_path / "nothere.csv")})
    bad.write_text(yaml.safe_dump({"tasks": [missing], "sizes": [2, 4], "splits": 5}))
    out = tmp_path / "res"
    result = CliRunner().invoke(cli, ["run", str(good), str(bad), "--out", str(out),
                                      "--quiet", "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 1, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "nothere.csv" in lines[0] and "file not found" in lines[0]
    assert not (out / "toy").exists()


def test_checkpoints_of_other_code_are_not_reused(csv_task, tmp_path, monkeypatch):
    """A checkpoint made by different model code is recomputed, never mixed in."""
    from nbvslr.runner import bookkeeping

    out = tmp_path / "results"
    run_experiment(_config(csv_task, out))
    monkeypatch.setattr(bookkeeping, "code_digest", lambda: "other code")
    run_experiment(_config(csv_task, out))
    info = json.loads((out / "toy" / "run.json").read_text())
    assert info["timings"]["resumed_sizes"] == []


def test_paired_csv_holds_every_compared_pair(csv_task, tmp_path):
    """Default pairs: nb vs lr, then nb vs lr_l2; compare: names others, in its order."""
    out = tmp_path / "results"
    run_experiment(_config(csv_task, out))
    paired = pd.read_csv(out / "toy" / "paired.csv")
    pairs = list(dict.fromkeys(zip(paired["model_a"], paired["model_b"], strict=True)))
    assert pairs == [("nb", "lr"), ("nb", "lr_l2")]
    assert len(paired) == 2 * len(SIZES)
    raw = {"tasks": [csv_task], "sizes": SIZES, "splits": SPLITS, "seed": 1,
           "models": {"nb": {}, "lr": {}, "lr_l2": {"model": "lr", "C": 1.0}},
           "compare": [["lr_l2", "lr"]]}
    config = parse_config(raw, source="toy.yaml", out=tmp_path / "other",
                          data=DataSettings(cache_dir=tmp_path / "cache", download=False))
    run_experiment(config)
    paired = pd.read_csv(tmp_path / "other" / "toy" / "paired.csv")
    assert set(zip(paired["model_a"], paired["model_b"], strict=True)) == {("lr_l2", "lr")}
    info = json.loads((tmp_path / "other" / "toy" / "run.json").read_text())
    assert info["config"]["compare"] == [["lr_l2", "lr"]]


def test_wall_seconds_is_the_tasks_own_time(csv_task, tmp_path):
    """Two tasks run one after the other: each run.json's wall_seconds is its own time, so
    they add up to at most the run's clock when the second finished."""
    out = tmp_path / "results"
    raw = {"tasks": [csv_task, {**csv_task, "name": "toy2"}], "sizes": SIZES, "splits": 20}
    config = parse_config(raw, source="toy.yaml", out=out, backend="sequential",
                          data=DataSettings(cache_dir=tmp_path / "cache", download=False))
    run_experiment(config)
    first, second = (json.loads((out / t / "run.json").read_text())["timings"]
                     for t in ("toy", "toy2"))
    assert 0 < first["wall_seconds"] <= first["run_seconds_at_finish"]
    assert second["wall_seconds"] < second["run_seconds_at_finish"]
    assert first["wall_seconds"] + second["wall_seconds"] <= second["run_seconds_at_finish"]


def test_a_worker_replaced_by_loky_does_not_stop_the_run(csv_task, tmp_path):
    """loky replaces a worker whose memory grew past its leak threshold and warns from its
    manager thread. Under warnings-as-errors (this suite's filterwarnings) that warning, if
    raised, would end the manager thread and leave the run waiting for ever."""
    import threading
    import warnings

    from nbvslr.runner.backends import unit_stream

    raised: list[Warning] = []

    def manager_thread() -> None:
        try:
            warnings.warn("A worker stopped while some jobs were given to the executor. This "
                          "can be caused by a too short worker timeout or by a memory leak.",
                          UserWarning, stacklevel=1)
        except UserWarning as exc:
            raised.append(exc)

    config = _config(csv_task, tmp_path / "out", jobs=2)
    with unit_stream(config, []) as stream:
        thread = threading.Thread(target=manager_thread)
        thread.start()
        thread.join()
        assert list(stream) == []
    assert raised == []


def test_the_runs_curve_is_the_one_plot_draws_from_the_folder(tmp_path):
    """curve.png written by a run is, byte for byte, what `nbvslr plot <task folder>` draws
    from the saved files, the crossover's bootstrap interval included (which needs the
    splits: without them the drawing differs)."""
    import shutil

    dependent = {"name": "dep", "source": {"synthetic": {
        "generator": "dependent", "kind": "continuous", "rows": 1000, "features": 10,
        "factors": 3, "noise": 0.5, "separation": 2.5, "seed": 0}}}
    raw = {"tasks": [dependent], "sizes": [2, 16, 40, 70, 100], "splits": 60, "seed": 0}
    out = tmp_path / "out"
    run_experiment(parse_config(raw, source="dep.yaml", out=out,
                                data=DataSettings(cache_dir=tmp_path / "c", download=False)))
    paired = pd.read_csv(out / "dep" / "paired.csv")
    assert (paired["diff_mean"].iloc[0] < 0) and (paired["diff_mean"].iloc[-1] > 0)  # crosses
    again = tmp_path / "again.png"
    result = CliRunner().invoke(cli, ["plot", str(out / "dep"), "-o", str(again)])
    assert result.exit_code == 0, result.output
    assert (out / "dep" / "curve.png").read_bytes() == again.read_bytes()
    bare = tmp_path / "bare" / "dep"
    shutil.copytree(out / "dep", bare)
    (bare / "splits.csv.gz").unlink()
    result = CliRunner().invoke(cli, ["plot", str(bare), "-o", str(tmp_path / "bare.png")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "bare.png").read_bytes() != again.read_bytes()  # the interval shows


def test_a_model_without_a_fit_for_a_task_names_the_task_and_its_setting(tmp_path):
    """lda on a discrete task: one line naming the config, models.<name>, the task and its
    kind, exit 2, nothing written (the message named neither the task nor the setting)."""
    rng = np.random.default_rng(0)
    pd.DataFrame({"a": rng.choice(list("xyz"), 40), "b": rng.choice(list("pq"), 40),
                  "label": rng.choice(["yes", "no"], 40)}).to_csv(tmp_path / "d.csv",
                                                                  index=False)
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({
        "tasks": [{"name": "votes", "source": {"csv": "d.csv"},
                   "target": {"column": "label", "positive": ["yes"]},
                   "features": {"kind": "discrete"}}],
        "models": {"nb": {}, "my_lda": {"model": "lda"}}, "sizes": [4], "splits": 2}))
    result = CliRunner().invoke(cli, ["run", str(config), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: {config}: models.my_lda: model 'lda' has no fit for task 'votes', a discrete "
        "task of two classes; with two classes it fits continuous tasks: change the task's "
        "features or classes, or leave models.my_lda out"]
    assert not (tmp_path / "out").exists()
