"""The curve guard: fabricated curves with known truth (real runs with broken settings:
tests/system/test_guard_runs.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from nbvslr.analysis import compare, stats
from nbvslr.cli import cli
from nbvslr.errors import ResultsError

MS = np.arange(2, 60, 3).astype(float)  # pima's grid: 20 sizes
# NB better first, LR better from m ~ 26 on (one crossover)
CROSSING = {"nb": 0.25 + 0.2 * np.exp(-MS / 8), "lr": 0.20 + 0.35 * np.exp(-MS / 15)}
# LR better everywhere (no crossover)
LR_AHEAD = {"nb": 0.30 + 0.2 * np.exp(-MS / 10), "lr": 0.20 + 0.2 * np.exp(-MS / 10)}


def fabricate(tasks: dict[str, dict], n: int, rng: np.random.Generator, sd: float = 0.1,
              rho: float = 0.5) -> compare.Tables:
    """summary and paired tables of ``n`` simulated splits per size.

    Split errors are ``curve[m] + sd * noise``, NB's and LR's noise correlated ``rho`` on the
    same split (a paired design), summarised with the formulas of ``nbvslr.analysis.stats``.
    """
    t = stats.t_quantile(0.975, n - 1)
    summaries, paired = [], []
    for task, curves in tasks.items():
        z1, z2 = rng.standard_normal((2, MS.size, n))  # (M, n) each
        errors = {"nb": curves["nb"][:, None] + sd * z1,
                  "lr": curves["lr"][:, None] + sd * (rho * z1 + np.sqrt(1 - rho**2) * z2)}
        for model, e in errors.items():
            mean, sd_ = e.mean(axis=1), e.std(axis=1, ddof=1)
            sem = sd_ / np.sqrt(n)
            summaries.append(pd.DataFrame({
                "task": task, "model": model, "family": model, "m": MS.astype(int),
                "n_splits": n, "error_mean": mean, "error_sd": sd_, "error_sem": sem,
                "ci_low": mean - t * sem, "ci_high": mean + t * sem}))
        d = errors["nb"] - errors["lr"]  # (M, n)
        mean, sem = d.mean(axis=1), d.std(axis=1, ddof=1) / np.sqrt(n)
        paired.append(pd.DataFrame({
            "task": task, "model_a": "nb", "model_b": "lr", "m": MS.astype(int),
            "n_splits": n, "diff_mean": mean, "diff_sem": sem,
            "ci_low": mean - t * sem, "ci_high": mean + t * sem}))
    return compare.Tables(pd.concat(summaries, ignore_index=True),
                        pd.concat(paired, ignore_index=True))


@pytest.fixture(scope="module")
def reference() -> compare.Tables:
    """A 1000-split reference of one crossing and one LR-ahead task."""
    return fabricate({"cross": CROSSING, "ahead": LR_AHEAD}, 1000, np.random.default_rng(0))


def _shifted(curves: dict, model: str, by: np.ndarray | float) -> dict:
    out = dict(curves)
    out[model] = curves[model] + by
    return out


# --------------------------------------------------------------------------- fabricated


def test_identical_curves_pass(reference):
    """A run compared with itself moves nowhere: every check passes with a zero change."""
    report = compare.compare(reference, reference)
    assert report.ok and report.violations == []
    points = [c for c in report.checks if c.kind == "point"]
    assert len(points) == 2 * 2 * MS.size
    assert all(c.change == 0 for c in points)
    assert report.counts()["crossover"] == 1  # the crossing task's crossover was checked
    assert "OK: all" in report.table()


@pytest.mark.slow
def test_noise_rarely_raises_an_alarm(reference):
    """Runs that differ from the reference only by noise (50 splits) almost never fail."""
    rng = np.random.default_rng(1)
    draws = 100
    alarms = sum(not compare.compare(reference, fabricate(
        {"cross": CROSSING, "ahead": LR_AHEAD}, 50, rng)).ok for _ in range(draws))
    # alpha = 0.01 over the whole comparison; 5 alarms in 100 would be a rate of 5 %
    assert alarms <= 4, f"{alarms} false alarms in {draws} noise-only runs"


@pytest.mark.slow
def test_noise_with_heavier_splits_still_passes(reference):
    """Noise is judged by each run's own sems: a noisier small run is not a shift."""
    rng = np.random.default_rng(2)
    alarms = sum(not compare.compare(reference, fabricate(
        {"cross": CROSSING, "ahead": LR_AHEAD}, 20, rng, sd=0.2)).ok for _ in range(40))
    assert alarms <= 3


def test_a_shifted_curve_fails_naming_task_model_and_m(reference):
    """LR's error raised by 0.1 from m = 29 on is reported at those sizes, LR only."""
    shift = np.where(MS >= 29, 0.1, 0.0)
    new = fabricate({"cross": CROSSING, "ahead": _shifted(LR_AHEAD, "lr", shift)}, 100,
                    np.random.default_rng(3))
    report = compare.compare(reference, new)
    assert not report.ok
    points = [c for c in report.violations if c.kind == "point"]
    assert {(c.task, c.model) for c in points} == {("ahead", "lr")}
    assert {c.m for c in points} <= set(MS[MS >= 29])
    assert len(points) >= 9  # of the 11 shifted sizes
    message = points[0].message()
    assert message.startswith(f"ahead: lr at m = {int(points[0].m)}:")
    assert "beyond the allowed" in message
    rows = {tuple(w[:4]): w[-1] for w in map(str.split, report.table().splitlines()) if w}
    assert rows[("ahead", "point", "lr", str(int(points[0].m)))] == "FAIL"


def test_a_small_shift_within_the_noise_passes(reference):
    """A shift of one combined sem is noise, not a change of shape."""
    new = fabricate({"cross": CROSSING, "ahead": _shifted(LR_AHEAD, "lr", 0.012)}, 100,
                    np.random.default_rng(4))
    assert compare.compare(reference, new).ok


def test_a_new_crossover_fails(reference):
    """NB becoming significantly better at large m, where the reference has LR ahead
    everywhere, is reported as a crossover the reference does not have."""
    late = np.where(MS >= 35, -0.15, 0.0)  # LR's advantage of 0.1 turns into NB's of 0.05
    new = fabricate({"cross": CROSSING, "ahead": _shifted(LR_AHEAD, "nb", late)}, 100,
                    np.random.default_rng(5))
    report = compare.compare(reference, new)
    shape = [c for c in report.violations if c.kind in ("sign", "end")]
    assert shape and all(c.task == "ahead" and c.model == "nb-lr" for c in shape)
    assert any(c.kind == "sign" and c.m >= 35 for c in shape)
    reversal = next(c for c in shape if c.kind == "sign")
    assert "a crossover the reference does not have" in reversal.message()
    assert f"at m = {int(reversal.m)}" in reversal.message()
    assert "nb better" in reversal.message()


def test_a_lost_crossover_fails(reference):
    """NB staying ahead at every size loses the reference's crossover: reported with its m."""
    flat = {"nb": CROSSING["nb"], "lr": CROSSING["nb"] + 0.05}
    new = fabricate({"cross": flat, "ahead": LR_AHEAD}, 100, np.random.default_rng(6))
    report = compare.compare(reference, new)
    cross = [c for c in report.violations if c.kind == "crossover"]
    assert len(cross) == 1 and cross[0].task == "cross" and cross[0].model == "nb-lr"
    assert cross[0].new == np.inf
    assert 20 < cross[0].m < 32  # the reference's crossover (true one at m ~ 26)
    assert "no crossover in 2..59" in cross[0].message()
    assert cross[0].message().startswith(f"cross: nb-lr at m = {cross[0].m:.1f}:")


def test_a_moved_crossover_fails_and_a_nearby_one_passes(reference):
    """A crossover moved from m ~ 26 to m ~ 45 fails; the same crossover again passes."""
    later = {"nb": CROSSING["nb"], "lr": CROSSING["lr"] + 0.03 * (MS < 45)}
    report = compare.compare(reference, fabricate({"cross": later}, 300,
                                                np.random.default_rng(7)))
    cross = [c for c in report.checks if c.kind == "crossover"]
    assert len(cross) == 1 and not cross[0].passed
    assert cross[0].new > cross[0].interval[1]
    again = compare.compare(reference, fabricate({"cross": CROSSING}, 300,
                                               np.random.default_rng(8)))
    assert [c.passed for c in again.checks if c.kind == "crossover"] == [True]


def _with_end(tables: compare.Tables, task: str, m: int, diff: float, sem: float) -> compare.Tables:
    paired = tables.paired.copy()
    row = (paired["task"] == task) & (paired["m"] == m)
    t = stats.t_quantile(0.975, int(paired.loc[row, "n_splits"].iloc[0]) - 1)
    paired.loc[row, ["diff_mean", "diff_sem", "ci_low", "ci_high"]] = [
        diff, sem, diff - t * sem, diff + t * sem]
    return compare.Tables(tables.summary, paired)


def test_an_end_tie_is_accepted_only_when_the_reference_effect_is_small(reference):
    """At the largest m the reference says LR better; a tie from a small run passes when
    that effect is within the new run's noise, and fails when it is far larger."""
    m = int(MS[-1])
    ref = _with_end(reference, "ahead", m, 0.02, 0.002)
    new = fabricate({"ahead": LR_AHEAD}, 50, np.random.default_rng(9))
    noisy_tie = compare.compare(ref, _with_end(new, "ahead", m, 0.001, 0.012))
    end = [c for c in noisy_tie.checks if c.kind == "end" and c.m == m]
    assert len(end) == 1 and end[0].passed
    ref = _with_end(reference, "ahead", m, 0.10, 0.002)
    sharp_tie = compare.compare(ref, _with_end(new, "ahead", m, 0.001, 0.004))
    end = [c for c in sharp_tie.violations if c.kind == "end"]
    assert len(end) == 1 and end[0].m == m
    assert "reference says lr better" in end[0].message()
    assert "new run says a tie" in end[0].message()


def test_missing_sizes_models_and_tasks_are_violations(reference):
    """A size dropped from the grid, or a task without a reference, is never silently
    skipped."""
    summary = reference.summary
    keep = ~((summary["task"] == "ahead") & (summary["model"] == "lr") & (summary["m"] == 59))
    renamed = summary.assign(task=summary["task"].replace({"cross": "other"}))
    new = compare.Tables(renamed[keep.to_numpy()], reference.paired.iloc[0:0])
    report = compare.compare(reference, new)
    missing = [c.message() for c in report.violations if c.kind == "missing"]
    assert any(msg.startswith("ahead: lr at m = 59: in the reference but not the new run")
               for msg in missing)
    assert any(msg.startswith("other:") and "no reference" in msg for msg in missing)
    assert report.not_compared == ("cross",)


def test_one_split_per_size_is_refused(reference):
    """Without a standard error there is no tolerance: a ResultsError, not a pass."""
    summary = reference.summary.assign(n_splits=1, error_sem=np.nan)
    with pytest.raises(ResultsError, match="at least 2 splits"):
        compare.compare(reference, compare.Tables(summary, reference.paired.iloc[0:0]))


def test_thresholds_follow_the_documented_bonferroni_rule():
    """The module docstring's numbers: 714 points at 100 splits give z = 4.85."""
    z = compare.bonferroni_z(0.01 / 3, 714, 100)
    assert z == pytest.approx(4.85, abs=0.005)
    assert compare.bonferroni_z(0.01 / 3, 714) == pytest.approx(4.58, abs=0.005)
    assert compare.bonferroni_z(0.01 / 3, 714, 1000) < z
    with pytest.raises(ResultsError):
        compare.bonferroni_z(0.01, 10, 1)


def test_a_stated_z_and_floor_are_used(reference):
    """``z`` and ``floor`` given by the caller set every point's tolerance."""
    new = fabricate({"cross": CROSSING}, 50, np.random.default_rng(10))
    report = compare.compare(reference, new, z=3.0, floor=0.01)
    point = next(c for c in report.checks if c.kind == "point")
    row = lambda t, i: t.summary.set_index(["task", "model", "m"]).loc[  # noqa: E731
        ("cross", point.model, int(point.m)), "error_sem"]
    s = np.hypot(row(reference, 0), row(new, 1))
    assert point.tolerance == pytest.approx(3.0 * s + 0.01)
    assert report.z == report.z_sign == 3.0


# --------------------------------------------------------------------------- folders, CLI


def _write(tables: compare.Tables, out: Path) -> Path:
    for task, part in tables.summary.groupby("task"):
        folder = out / str(task)
        folder.mkdir(parents=True)
        part.to_csv(folder / "summary.csv", index=False)
        tables.paired[tables.paired["task"] == task].to_csv(folder / "paired.csv", index=False)
    return out


def test_compare_reads_results_folders(reference, tmp_path):
    """Folders of summary.csv and paired.csv give the same report as the tables."""
    ref_dir = _write(reference, tmp_path / "ref")
    new = fabricate({"cross": CROSSING, "ahead": _shifted(LR_AHEAD, "lr", 0.1)}, 100,
                    np.random.default_rng(11))
    new_dir = _write(new, tmp_path / "new")
    from_folders = compare.compare(ref_dir, new_dir)
    from_tables = compare.compare(reference, new)
    assert from_folders.messages() == from_tables.messages() and not from_folders.ok
    one_task = compare.compare(ref_dir / "cross", new_dir / "cross")
    assert one_task.tasks == ("cross",) and one_task.ok


def test_compare_command_prints_the_table_and_sets_the_exit_code(reference, tmp_path):
    """`nbvslr compare` exits 0 when curves hold, 1 with the table when one moved, 1 with
    one line for a folder without results."""
    ref_dir = _write(reference, tmp_path / "ref")
    same = CliRunner().invoke(cli, ["compare", str(ref_dir), str(ref_dir)])
    assert same.exit_code == 0, same.output
    assert "OK: all" in same.output
    new = fabricate({"cross": CROSSING, "ahead": _shifted(LR_AHEAD, "lr", 0.1)}, 100,
                    np.random.default_rng(12))
    moved = CliRunner().invoke(cli, ["compare", str(ref_dir), str(_write(new, tmp_path / "n"))])
    assert moved.exit_code == 1
    assert "FAILED" in moved.output and "ahead" in moved.output
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = CliRunner().invoke(cli, ["compare", str(ref_dir), str(empty)])
    assert bad.exit_code == 2  # a usage error, as a folder that does not exist
    assert "holds no task results" in bad.output
    assert "Traceback" not in bad.output
