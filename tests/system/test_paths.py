"""Paths: no task name or results folder lets a run write outside the chosen results folder."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nbvslr.cli import cli
from nbvslr.errors import ResultsError
from nbvslr.results import task_dir

TASK = {"source": {"synthetic": {"rows": 40, "features": 3}}}
BAD_NAMES = [
    "../escape", "../../etc", "/tmp/abs", "a/b", "a\\b", "..", ".", ".hidden", "x..y",
    "~", "~root", "", " ", "tab\tname", "new\nline", "name;rm", "$HOME", "C:evil", "-rf",
]


def _invoke(tmp_path: Path, name, out: Path | None = None):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({
        "tasks": [{"name": name, **TASK}], "sizes": [2], "splits": 1, "models": {"nb": {}},
    }))
    out = out if out is not None else tmp_path / "results"
    return CliRunner().invoke(cli, ["run", str(config), "--out", str(out), "--jobs", "1", "-q",
                                    "--cache", str(tmp_path / "cache")])


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("name", BAD_NAMES)
def test_task_names_that_are_not_plain_folder_names_are_refused(tmp_path, name):
    """'../x', absolute paths, separators, dots, blanks: exit 2 before anything is written."""
    work = tmp_path / "work"
    work.mkdir()
    before = _files(tmp_path)
    result = _invoke(work, name)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "tasks[0].name" in lines[0]
    assert _files(tmp_path) - before == {work / "c.yaml"}


@pytest.mark.parametrize("name", ["../escape", "/tmp/abs", "a/b", "..", ".checkpoints", ""])
def test_task_dir_refuses_names_that_leave_the_results_folder(tmp_path, name):
    """The results layer checks again, whatever the config layer let through."""
    with pytest.raises(ResultsError, match="task name"):
        task_dir(tmp_path, name)


def test_task_dir_refuses_a_task_folder_that_is_a_symlink_out(tmp_path):
    """OUT/<task> linked elsewhere is refused: results would land outside OUT."""
    out, elsewhere = tmp_path / "results", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "toy").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(ResultsError, match="leaves the results folder"):
        task_dir(out, "toy")


def test_plain_names_write_only_under_the_results_folder(tmp_path):
    """A valid name writes OUT/<name>/ and nothing anywhere else (absolute --out is allowed)."""
    out = (tmp_path / "deep" / "results").resolve()
    result = _invoke(tmp_path, "ok-name_1.2", out=out)
    assert result.exit_code == 0, result.output
    written = _files(tmp_path) - {tmp_path / "c.yaml"}
    written = {p for p in written if tmp_path / "cache" not in p.parents}
    assert written and all(out / "ok-name_1.2" in p.parents for p in written)


def test_out_that_is_a_file_is_refused(tmp_path):
    """--out naming an existing file: a one-line error, exit 2."""
    blocker = tmp_path / "results"
    blocker.write_text("not a folder")
    result = _invoke(tmp_path, "toy", out=blocker)
    assert result.exit_code == 2
    assert "is a file" in result.output
    assert blocker.read_text() == "not a folder"


def test_two_configs_naming_one_task_are_refused_before_anything_is_written(tmp_path):
    """Two configs of one command that both name pima would write OUT/pima one after the
    other (the second replacing the first): refused in one line, exit 2, nothing written."""
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text("tasks: [pima]\nsizes: [2, 5]\nsplits: 3\n")
    second.write_text("tasks: [sonar, pima]\nsizes: [2, 5]\nsplits: 3\n")
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["run", str(first), str(second), "--out", str(out), "-q"])
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "task 'pima' is also in" in lines[0], res.output
    assert not out.exists()
