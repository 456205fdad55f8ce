"""A task of three classes end to end: run, results files, report, plot, refusals."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from nbvslr.cli import cli


@pytest.fixture
def three_csv(tmp_path):
    """A CSV of 150 rows and three overlapping classes named by text."""
    rng = np.random.default_rng(0)
    y = np.arange(150) % 3
    X = rng.normal(size=(150, 3)) + 0.9 * np.eye(3)[y]
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(kind=np.array(["x", "y", "z"])[y])
    path = tmp_path / "three.csv"
    frame.to_csv(path, index=False)
    return path


def _write_config(tmp_path, csv, sizes, models):
    config = tmp_path / "c.yaml"
    config.write_text(
        f"tasks:\n  - name: three\n    source: {{csv: {csv}}}\n    target: {{column: kind}}\n"
        f"sizes: {sizes}\nsplits: 12\nseed: 0\nmodels:\n{models}"
    )
    return config


def test_three_classes_run_report_and_plot(tmp_path, three_csv):
    """nbvslr run on a three-class CSV writes the usual files (errors in [0, 1], every
    class recorded in run.json, the majority error of three classes), the same files
    again on a rerun with --force, and nbvslr report and plot read them."""
    models = "  nb: {}\n  lr: {separable: l2}\n  lr-C1: {model: lr, C: 1.0}\n"
    config = _write_config(tmp_path, three_csv, "[3, 10, 40]", models)
    out = tmp_path / "out"
    run = CliRunner().invoke(cli, ["run", str(config), "-o", str(out), "-q", "-j", "1"])
    assert run.exit_code == 0, run.output
    folder = out / "three"
    splits = pd.read_csv(folder / "splits.csv.gz")
    assert set(splits["model"]) == {"nb", "lr", "lr-C1"} and len(splits) == 3 * 3 * 12
    assert splits["error"].between(0, 1).all()
    info = json.loads((folder / "run.json").read_text())
    assert info["task"]["classes"] == ["x", "y", "z"]
    assert info["majority_error"] == pytest.approx(2 / 3)
    first = (folder / "splits.csv.gz").read_bytes()
    again = CliRunner().invoke(cli, ["run", str(config), "-o", str(out), "-q", "-j", "1",
                                     "--force"])
    assert again.exit_code == 0 and (folder / "splits.csv.gz").read_bytes() == first
    report = CliRunner().invoke(cli, ["report", str(out)])
    assert report.exit_code == 0 and "| three |" in report.output
    plot = CliRunner().invoke(cli, ["plot", str(out), "-o", str(tmp_path / "fig.png")])
    assert plot.exit_code == 0, plot.output


def test_size_below_k_refused_and_separable_sets_sampled(tmp_path, three_csv):
    """A size below K = 3 is refused in one line naming K, before any fit; an unpenalised
    lr (separable: sample) at m = 3 samples every split's cone: all separable, none
    converged, errors in [0, 1]."""
    small = _write_config(tmp_path, three_csv, "[2, 10]", "  nb: {}\n")
    res = CliRunner().invoke(cli, ["run", str(small), "-o", str(tmp_path / "a"), "-q"])
    assert res.exit_code != 0 and "K = 3" in res.output and "Traceback" not in res.output
    sample = _write_config(tmp_path, three_csv, "[3]", "  lr: {}\n")
    res = CliRunner().invoke(cli, ["run", str(sample), "-o", str(tmp_path / "b"), "-q",
                                   "-j", "1"])
    assert res.exit_code == 0, res.output
    splits = pd.read_csv(tmp_path / "b" / "three" / "splits.csv.gz")
    assert splits["separable"].all() and not splits["converged"].any()
    assert splits["error"].between(0, 1).all()
