"""A class with a single row (or document) is in every training set, since every training
set holds every class, and so is never tested: the run says so once, in one line on stderr,
and records it in run.json."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from click.testing import CliRunner

import nbvslr
from nbvslr.cli import cli

ROWS = 30


def _csv(path: Path, labels: list) -> Path:
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(len(labels), 2))
    path.write_text("a,b,label\n" + "".join(f"{a:.4f},{b:.4f},{c}\n"
                                            for (a, b), c in zip(x, labels, strict=True)))
    return path


def _config(root: Path, task: str) -> Path:
    path = root / "run.yaml"
    path.write_text(f"tasks:\n  - {task}\nsizes: [4, 8]\nsplits: 5\n"
                    "models: {nb: {}, lr: {C: 1}}\n")
    return path


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning: ")]


def test_nbvslr_run_says_once_that_a_single_positive_is_never_tested(tmp_path):
    labels = [0] * ROWS
    labels[11] = 1
    _csv(tmp_path / "d.csv", labels)
    config = _config(tmp_path, "{name: d, source: {csv: d.csv}, "
                               "target: {column: label, positive: [1]}}")
    result = CliRunner().invoke(cli, ["run", str(config), "--out", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 0, result.output
    line = ("d: the positive class ('1') has a single row, which every training set holds "
            "(one row of each class), so it is never tested and the test errors are those "
            "of the other class; add rows of that class to test it")
    assert _warnings(result.stderr) == [f"warning: {line}"]
    run = json.loads((tmp_path / "out" / "d" / "run.json").read_text())
    assert run["warnings"] == [line]
    assert len(pd.read_csv(tmp_path / "out" / "d" / "splits.csv.gz")) == 2 * 2 * 5


def test_a_multiclass_task_names_its_single_row_classes(tmp_path, capsys):
    labels = ["a", "b"] * (ROWS // 2)
    labels[7], labels[9] = "c", "d"
    _csv(tmp_path / "m.csv", labels)
    res = nbvslr.run(str(_config(tmp_path, "{name: m, source: {csv: m.csv}, "
                                           "target: {column: label}}")), progress=False)
    said = _warnings(capsys.readouterr().err)
    assert said == ["warning: m: classes 'c' and 'd' have a single row each, which every "
                    "training set holds (one row of each class), so they are never tested and "
                    "the test errors are those of the other classes; add rows of those classes "
                    "to test them"]
    assert not res.summary.empty


def test_a_folder_text_task_with_a_single_document_in_a_class(tmp_path, capsys):
    for label, n in (("ham", 8), ("spam", 1)):
        (tmp_path / "texts" / label).mkdir(parents=True)
        for k in range(n):
            (tmp_path / "texts" / label / f"{k}.txt").write_text(f"{label} words here {k}")
    nbvslr.run(str(_config(tmp_path, "{name: t, source: {folder: texts}}")), progress=False,
               out=tmp_path / "out")
    said = _warnings(capsys.readouterr().err)
    assert said == ["warning: t: the positive class ('spam') has a single document, which "
                    "every training set holds (one document of each class), so it is never "
                    "tested and the test errors are those of the other class; add documents "
                    "of that class to test it"]
    run = json.loads((tmp_path / "out" / "t" / "run.json").read_text())
    assert run["warnings"] == [said[0].removeprefix("warning: ")]


def test_no_line_and_no_warnings_key_when_every_class_has_two_rows(tmp_path, capsys):
    labels = [0] * ROWS
    labels[11] = labels[12] = 1
    _csv(tmp_path / "d.csv", labels)
    config = _config(tmp_path, "{name: d, source: {csv: d.csv}, "
                               "target: {column: label, positive: [1]}}")
    nbvslr.run(str(config), progress=False, out=tmp_path / "out")
    assert _warnings(capsys.readouterr().err) == []
    assert "warnings" not in json.loads((tmp_path / "out" / "d" / "run.json").read_text())
