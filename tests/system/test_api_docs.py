"""docs/api.md cannot go stale: its Python blocks run, in order, as one script."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "api.md"
FEW = 8
"""Splits per size the page's runs get here (the page asks for more)."""


def blocks() -> list[str]:
    """The page's ```python blocks."""
    return re.findall(r"```python\n(.*?)```", PAGE.read_text("utf-8"), flags=re.S)


def fewer_splits(code: str) -> str:
    """Every ``splits`` the code asks for, at most ``FEW``."""
    def cut(match: re.Match) -> str:
        return f"{match.group(1)}{min(int(match.group(2)), FEW)}"

    return re.sub(r"""((?:"splits":\s*|splits=))(\d+)""", cut, code)


def test_the_page_has_its_blocks():
    """The extraction finds the worked example and every other block (a page edit that
    broke the fences would otherwise run nothing)."""
    found = blocks()
    assert len(found) >= 5
    assert "Task.from_frame" in found[0] and "res.plot()" in found[0]
    assert fewer_splits('{"splits": 200}, splits=50') == '{"splits": 8}, splits=8'


def test_every_block_runs(tmp_path, monkeypatch, capsys):
    """The blocks run in a fresh folder, sharing names as a reader's session would."""
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "docs_api"}
    for i, code in enumerate(blocks()):
        exec(compile(fewer_splits(code), f"docs/api.md block {i + 1}", "exec"), namespace)
    import matplotlib.pyplot as plt

    plt.close("all")
    assert "unknown task, did you mean 'pima'?" in capsys.readouterr().out
    assert (tmp_path / "results" / "notebook" / "clinic" / "summary.csv").is_file()
    assert (tmp_path / "results" / "copy" / "clinic" / "curve.png").is_file()
    assert namespace["res"].names == ["wdbc"]
