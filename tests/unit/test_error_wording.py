"""The wording of three one-line errors: a size larger than a task allows says the limit,
why and the fix without repeating the size; an error about a text or synthetic task's
``target:`` quotes the target, not the task's name; ``features.kind`` on a folder task does
not call it built in."""

from __future__ import annotations

from pathlib import Path

import pytest

import nbvslr
from nbvslr.config import load_config
from nbvslr.errors import ConfigError, SizeError
from nbvslr.splits import check_size


def _csv(tmp_path: Path, rows: int) -> Path:
    path = tmp_path / "tiny.csv"
    path.write_text("a,label\n" + "".join(f"{k / rows},{k % 2}\n" for k in range(rows)))
    return path


def test_a_size_larger_than_the_task_allows_says_the_limit_why_and_the_fix(tmp_path):
    """sizes: [5, 60] on 60 rows: one line naming 60, the 59 rows a training set may
    take of the 60 (one left to test on) and the fix; 60 is not repeated as "(60)"."""
    config = {"tasks": [{"name": "tiny", "source": {"csv": str(_csv(tmp_path, 60))},
                         "target": {"column": "label", "positive": [1]}}],
              "sizes": [5, 60], "splits": 2}
    with pytest.raises(SizeError) as err:
        nbvslr.run(config, progress=False)
    text = str(err.value)
    assert text == ("<config dict>: sizes: 60 is too large for tiny: a training set can "
                    "take at most 59 of its 60 rows, as at least one row must be left to test "
                    "on; use sizes of at most 59")
    assert "(60)" not in text and "\n" not in text


def test_check_size_names_the_task_and_keeps_the_config_file():
    with pytest.raises(SizeError, match=r"^run\.yaml: sizes: 12 is too large for pima: .*"
                                        r"at most 10 of its 11 rows.*; use sizes of at most 10$"):
        check_size(12, 11, "pima", "run.yaml")
    check_size(10, 11, "pima")  # one test row left: accepted


def _folder(root: Path) -> Path:
    for label in ("ham", "spam"):
        (root / "texts" / label).mkdir(parents=True)
        for k in range(3):
            (root / "texts" / label / f"{k}.txt").write_text(f"{label} words {k}")
    return root


@pytest.mark.parametrize(("task", "message"), [
    ("{name: mine, source: {folder: texts}, target: {column: x}}",
     "tasks[0]: target: a folder's classes are its sub-folders ({'column': 'x'}); "
     "remove target:"),
    ("{name: mine, source: {text: sms-spam}, target: {column: x}}",
     "tasks[0]: target: a built-in text task has its own classes ({'column': 'x'}); "
     "remove target:"),
    ("{name: mine, source: {synthetic: {kind: continuous}}, target: {column: x}}",
     "tasks[0]: target: a synthetic task makes its own target and features ({'column': 'x'}); "
     "remove target: (set kind: and features: inside synthetic:)"),
    ("{name: mine, source: {folder: texts}, features: {kind: discrete}}",
     "tasks[0]: features.kind: a task read from a folder of documents has text features "
     "('discrete'); write kind: text, or leave kind: out"),
    ("{name: mine, source: {text: sms-spam}, features: {kind: discrete}}",
     "tasks[0]: features.kind: a built-in text task has text features ('discrete'); "
     "write kind: text, or leave kind: out"),
])
def test_text_and_synthetic_task_errors_quote_the_offending_value(tmp_path, task, message):
    """The value in brackets is the target (or kind) given, never the task's name 'mine';
    a folder task is not called built in."""
    path = _folder(tmp_path) / "run.yaml"
    path.write_text(f"tasks:\n  - {task}\nsizes: [4]\nmodels: {{nb: {{}}}}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == f"{path}: {message}"
