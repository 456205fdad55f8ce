"""studies/fidelity/fidelity_study.py: distances to the paper, paired shifts and the model
ahead at the end."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "studies" / "fidelity"))
import fidelity_study  # noqa: E402

from nbvslr.analysis.fidelity import paper_curve  # noqa: E402


def _write(folder: Path, rows: list[dict]) -> None:
    folder.mkdir(parents=True)
    table = pd.DataFrame(rows)
    for col, value in (("separable", False), ("n_iter", 0), ("converged", True)):
        table[col] = value
    table.to_csv(folder / "splits.csv.gz", index=False)


def test_distance_shift_and_model_ahead_on_a_known_curve(tmp_path, capsys):
    """A model 0.01 above the paper's NB is 0.010 away; its variant on the paper is 0 away,
    shifted by -0.010; the table says so, with the paper's model ahead at the largest m."""
    paper = paper_curve("pima")
    rng = np.random.default_rng(0)
    rows = []
    for m, nb, lr in paper[["m", "nb", "lr"]].itertuples(index=False):
        for split in range(20):
            noise = 0.01 * rng.standard_normal()  # shared by the models of one split
            for model, family, err in (("nb", "nb", nb + 0.01), ("lr", "lr", lr),
                                       ("nb_x", "nb", nb)):
                rows.append(dict(task="pima", model=model, family=family, m=int(m),
                                 split=split, error=err + noise))
    _write(tmp_path / "pima", rows)
    table, fam = fidelity_study.load([tmp_path / "pima"])
    out = {r["model"]: r for r in fidelity_study.task_rows(table, fam, paper.set_index("m"))}
    assert out["nb"]["dist"] == pytest.approx(0.010, abs=0.006)
    assert out["nb_x"]["shift"] == pytest.approx(-0.010, abs=1e-12)
    assert out["nb_x"]["half"] < 1e-9  # the noise is paired: the shift is exact
    assert out["nb_x"]["paper_end"] == "lr" and out["lr"]["paper_end"] == "lr"
    assert fidelity_study.main([f"run={tmp_path}"]) == 0
    text = capsys.readouterr().out
    assert "| nb_x |" in text and "-0.010 [-0.010, -0.010]" in text
    assert "#### pairs over the tasks of run" in text
