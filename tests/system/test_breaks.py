"""Faults found by breaking the tool on purpose: each test here failed on the code before
its fix (stale data in one process, unbounded memory, results no reader accepts, damaged
folders believed, unbounded reads, tracebacks instead of one line)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

import nbvslr

SIZES = [5, 10, 20]


def _csv(path: Path, seed: int, shift: float) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 120)
    X = rng.normal(size=(120, 3)) + shift * y[:, None]  # (N, d)
    pd.DataFrame(X, columns=list("abc")).assign(label=y).to_csv(path, index=False)


def _raw(csv: Path) -> dict:
    return {"tasks": [{"name": "toy", "source": {"csv": str(csv)},
                       "target": {"column": "label", "positive": [1]},
                       "features": {"kind": "continuous"}}],
            "sizes": SIZES, "splits": 6, "seed": 1, "models": {"nb": {}, "lr": {}}}


# ------------------------------------------------------------- 1. stale data in one process


def test_a_csv_edited_between_two_runs_of_one_process_is_read_again(tmp_path):
    """nbvslr.run twice in one process, the CSV edited between: the second fits the new file."""
    _csv(tmp_path / "toy.csv", seed=0, shift=2.0)
    nbvslr.run(_raw(tmp_path / "toy.csv"), progress=False)
    _csv(tmp_path / "toy.csv", seed=1, shift=0.0)  # other rows, labels unrelated to X
    _csv(tmp_path / "fresh.csv", seed=1, shift=0.0)  # the same bytes, never read before
    again = nbvslr.run(_raw(tmp_path / "toy.csv"), progress=False).summary
    fresh = nbvslr.run(_raw(tmp_path / "fresh.csv"), progress=False).summary
    assert again["error_mean"].tolist() == fresh["error_mean"].tolist()


def test_a_sealed_run_records_the_sha256_of_the_file_it_fitted(tmp_path):
    """With out= and jobs=2, run.json names the edited file's sha256, not the first one's."""
    from nbvslr.data.csvsource import sha256_of

    csv = tmp_path / "toy.csv"
    _csv(csv, seed=0, shift=2.0)
    nbvslr.run(_raw(csv), out=tmp_path / "a", jobs=2, progress=False)
    _csv(csv, seed=1, shift=0.0)
    nbvslr.run(_raw(csv), out=tmp_path / "b", jobs=2, progress=False)
    info = json.loads((tmp_path / "b" / "toy" / "run.json").read_text())
    assert sha256_of(csv) in json.dumps(info)


def test_a_text_folder_edited_between_two_runs_of_one_process_is_read_again(tmp_path):
    """A text folder whose documents change between two runs in one process is read again."""
    def folder(root: Path, words: tuple[str, str]) -> None:
        for k, word in enumerate(words):
            (root / f"c{k}").mkdir(parents=True, exist_ok=True)
            for i in range(20):
                (root / f"c{k}" / f"d{i}.txt").write_text(f"{word} {'x' * (i % 3)} y{i % 4}")

    raw = {"tasks": [{"name": "docs", "source": {"folder": str(tmp_path / "docs")}}],
           "sizes": [4, 8], "splits": 4, "seed": 2, "models": {"nb": {}}}
    folder(tmp_path / "docs", ("alpha", "beta"))
    first = nbvslr.run(raw, progress=False).summary["error_mean"].tolist()
    for i in range(20):  # the class words now say nothing of the class
        for k in range(2):
            (tmp_path / "docs" / f"c{k}" / f"d{i}.txt").write_text(f"y{(i + k) % 4} z")
    second = nbvslr.run(raw, progress=False).summary["error_mean"].tolist()
    assert second != first
