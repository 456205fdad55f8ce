"""A text task end to end through the CLI: nbvslr run on sms-spam writes the usual sealed
results folder, a rerun resumes from its checkpoints, nbvslr report reads it; a bad text
option is one line and a non-zero exit."""

from __future__ import annotations

import json

import pandas as pd
from click.testing import CliRunner

from nbvslr.cli import cli

CONFIG = """\
tasks: [sms-spam]
sizes: [10, 40, 200]
splits: 6
seed: 0
models:
  nb: {}
  nb-bernoulli: {model: nb, event: bernoulli}
  lr-C1: {model: lr, C: 1}
  lr-50: {model: lr, max_features: 50}
"""


def test_sms_spam_run_resume_and_report(tmp_path):
    config = tmp_path / "sms.yaml"
    config.write_text(CONFIG)
    out = tmp_path / "out"
    run = CliRunner().invoke(cli, ["run", str(config), "-o", str(out), "-q", "-j", "1",
                                   "--offline"])
    assert run.exit_code == 0, run.output
    folder = out / "sms-spam"
    for name in ("splits.csv.gz", "summary.csv", "paired.csv", "run.json", "curve.png"):
        assert (folder / name).is_file(), name
    splits = pd.read_csv(folder / "splits.csv.gz")
    assert set(splits["model"]) == {"nb", "nb-bernoulli", "lr-C1", "lr-50"}
    assert len(splits) == 4 * 3 * 6 and splits["error"].between(0, 1).all()
    # the paper's rule on 50 shared words: separable training sets at m = 10 are sampled
    assert splits.query("model == 'lr-50' and m == 10")["separable"].all()
    info = json.loads((folder / "run.json").read_text())
    assert info["task"]["kind"] == "text" and info["task"]["features"] == 8713
    first = (folder / "splits.csv.gz").read_bytes()
    again = CliRunner().invoke(cli, ["run", str(config), "-o", str(out), "-j", "1",
                                     "--offline"])
    assert again.exit_code == 0, again.output
    assert (folder / "splits.csv.gz").read_bytes() == first
    report = CliRunner().invoke(cli, ["report", str(out)])
    assert report.exit_code == 0 and "| sms-spam (nb vs lr-C1) |" in report.output


def test_bad_text_option_exits_with_one_line(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text(CONFIG.replace("tasks: [sms-spam]",
                                     "tasks: [{name: sms-spam, features: {min_df: 0}}]"))
    run = CliRunner().invoke(cli, ["run", str(config), "-o", str(tmp_path / "out")])
    assert run.exit_code == 2
    lines = [line for line in run.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "features.min_df" in lines[0]
