"""The sample-complexity study: m*, its interval, the fits, the sweep and the exact Bayes error."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from nbvslr.cli import cli
from nbvslr.config import parse_config
from nbvslr.data import load_task
from nbvslr.data.dataset import DataSettings, TaskSpec
from nbvslr.data.symmetric import bayes_error_of, feature_strength
from nbvslr.errors import ConfigError
from nbvslr.studies.mstar import bootstrap_m_star, fit_growth, m_star
from nbvslr.studies.sample_complexity import M_STAR_COLUMNS, parse_study


def _load(**params):
    spec = TaskSpec(name="sym", source={"synthetic": {"generator": "symmetric", **params}})
    return load_task(spec, DataSettings(download=False))


# --------------------------------------------------------------------------- m*


def test_m_star_interpolates_in_log_m_on_a_hand_made_curve():
    """First size within delta, refined between its neighbours linearly in log m."""
    ms = np.array([10.0, 20.0, 40.0, 80.0])
    D = np.array([0.3, 0.1, -0.1, -0.2])  # crosses half way between 20 and 40
    assert m_star(ms, D) == pytest.approx(math.sqrt(20 * 40))
    D2 = np.array([0.3, 0.3, 0.0, 0.1])  # exactly on the line at 40, then above again
    assert m_star(ms, D2) == pytest.approx(40.0)


def test_m_star_edge_cases_and_many_curves_at_once():
    """Already within at the first size: that size; never within: inf; rows independent."""
    ms = np.array([4.0, 8.0, 16.0])
    D = np.array([[-0.1, -0.2, -0.3], [0.2, 0.1, 0.05], [0.4, 0.0, -1]])
    out = m_star(ms, D)
    assert out[0] == 4.0 and out[1] == math.inf and out[2] == pytest.approx(8.0)
    assert m_star(ms, D[1:]).tolist() == out[1:].tolist()  # each row on its own
    with pytest.raises(ValueError, match="increasing"):
        m_star(np.array([8.0, 4.0]), np.array([0.1, -0.1]))
    with pytest.raises(ValueError, match="missing"):
        m_star(ms, np.array([0.2, np.nan, -0.1]))


def test_bootstrap_interval_covers_the_true_m_star():
    """Across simulated studies of a known curve, the 95% interval covers m* about 95%."""
    ms = np.geomspace(8, 1024, 15)
    true_mean = 0.1 + 2.0 / ms  # asymptote 0.1, excess 2/m
    target = 0.1 + 0.02
    truth = float(m_star(ms, true_mean - target))  # the grid's own m* of the true curve
    rng = np.random.default_rng(12)
    hits, runs = 0, 200
    for _ in range(runs):
        errors = [mu + 0.03 * rng.standard_normal(30) for mu in true_mean]
        _, low, high = bootstrap_m_star(ms, errors, target, rng, n_boot=300)
        hits += low <= truth <= high
    assert 0.88 <= hits / runs <= 0.995


def test_bootstrap_interval_narrows_with_more_splits():
    """Four times the splits give a clearly narrower interval (the width is not fixed)."""
    ms = np.geomspace(8, 1024, 15)
    mean = 0.1 + 2.0 / ms
    widths = []
    for n in (20, 320):
        rng = np.random.default_rng(3)
        errors = [mu + 0.03 * rng.standard_normal(n) for mu in mean]
        _, low, high = bootstrap_m_star(ms, errors, 0.12, rng, n_boot=400)
        widths.append(math.log(high / low))
    assert widths[1] < 0.5 * widths[0]


def test_fits_pick_the_law_that_made_the_data():
    """m* = a + b log n is fitted exactly and preferred; m* = a + b n likewise."""
    n = np.array([4, 8, 16, 32, 64, 128, 256])
    log_fit = fit_growth(n, 3 + 5 * np.log(n))
    assert log_fit["better"] == "log n" and log_fit["log_rss"] == pytest.approx(0, abs=1e-9)
    assert log_fit["log_b"] == pytest.approx(5) and log_fit["power_beta"] < 0.6
    lin_fit = fit_growth(n, 2 + 7 * n)
    assert lin_fit["better"] == "n" and lin_fit["lin_a"] == pytest.approx(2)
    assert lin_fit["power_beta"] == pytest.approx(1, abs=0.05)
    few = fit_growth([4, 8, 16], [10, math.inf, 30])  # two finite points: no fit
    assert few["points"] == 2 and few["better"] == "" and math.isnan(few["lin_b"])


# --------------------------------------------------------------------------- the sweep


def _config(task):
    return parse_config({"tasks": [task], "sizes": [4, 8], "splits": 2}, source="s.yaml")


def test_sweep_expands_one_task_per_value_with_its_own_name_and_splits():
    """features: [4, 16] gives tasks x-n4 and x-n16 with those features, the rest kept."""
    task = {"name": "x", "sweep": {"features": [4, 16]},
            "source": {"synthetic": {"generator": "symmetric", "rows": 100,
                                     "bayes_error": 0.2}}}
    config = _config(task)
    assert [t.name for t in config.tasks] == ["x-n4", "x-n16"]
    assert [t.source["synthetic"]["features"] for t in config.tasks] == [4, 16]
    assert all(t.source["synthetic"]["bayes_error"] == 0.2 for t in config.tasks)
    other = _config({**task, "sweep": {"rows": [100, 250]}})
    assert [t.name for t in other.tasks] == ["x-rows100", "x-rows250"]


@pytest.mark.parametrize("sweep, source, needle", [
    ({"features": [4, 4]}, None, "listed twice"),
    ({"features": []}, None, "non-empty list"),
    ({"features": [4], "rows": [10]}, None, "exactly one parameter"),
    ({"features": ["a"]}, None, "not a number"),
    ({"kind": ["continuous"]}, None, "cannot be swept"),
    ({"featurs": [4]}, None, "did you mean 'features'"),
    ({"features": [4]}, {"csv": "a.csv"}, "only a synthetic source"),
])
def test_bad_sweeps_are_one_line_errors(sweep, source, needle):
    """Every malformed sweep names the key and the fix, on one line."""
    task = {"name": "x", "sweep": sweep,
            "source": source or {"synthetic": {"generator": "symmetric", "bayes_error": 0.2}}}
    with pytest.raises(ConfigError) as err:
        _config(task)
    assert needle in str(err.value) and "\n" not in str(err.value)
    assert str(err.value).startswith("s.yaml: tasks[0]")


# --------------------------------------------------------------------------- exact Bayes error


@pytest.mark.parametrize("kind", ["continuous", "discrete"])
def test_bayes_error_is_held_fixed_for_every_n(kind):
    """bayes_error: the per-feature strength shrinks with n and the exact error stays put."""
    strengths = []
    for n in (1, 4, 32, 256):
        data = _load(kind=kind, rows=50, features=n, bayes_error=0.15, prior=0.4)
        assert data.notes["bayes_error"] == pytest.approx(0.15, abs=1e-9)
        strengths.append(data.notes["separation_per_feature" if kind == "continuous"
                                    else "agree_probability"])
    centre = 0.0 if kind == "continuous" else 0.5
    assert all(np.diff(np.abs(np.array(strengths) - centre)) < 0)


def test_bayes_error_matches_textbook_values():
    """One feature: Phi(-g/2) and 1 - q; many Gaussian features: Phi(-sqrt(n) g / 2)."""
    assert bayes_error_of("continuous", 1, 1.0) == pytest.approx(stats.norm.cdf(-0.5))
    assert bayes_error_of("continuous", 16, 0.5) == pytest.approx(stats.norm.cdf(-1.0))
    assert bayes_error_of("discrete", 1, 0.7) == pytest.approx(0.3)
    # three binary features, q = 0.8: the majority vote errs when at most 1 of 3 agrees
    assert bayes_error_of("discrete", 3, 0.8) == pytest.approx(stats.binom.cdf(1, 3, 0.8))
    # unequal prior, Gaussian: against scipy's normal CDF at the shifted threshold
    g, n, p = 0.4, 9, 0.3
    cut = math.log((1 - p) / p) / g
    want = (p * stats.norm.cdf((cut - n * g / 2) / 3)
            + (1 - p) * stats.norm.sf((cut + n * g / 2) / 3))
    assert bayes_error_of("continuous", n, g, p) == pytest.approx(want)
    assert feature_strength("continuous", 0.45) == pytest.approx(-2 * stats.norm.ppf(0.45))


@pytest.mark.parametrize("kind", ["continuous", "discrete"])
def test_drawn_data_has_the_stated_bayes_error(kind):
    """The Bayes rule's error on 200,000 drawn rows agrees with the exact value (4 s.e.)."""
    data = _load(kind=kind, rows=200_000, features=12, bayes_error=0.12, seed=5)
    X, y = np.asarray(data.X, dtype=float), data.y
    # the Bayes rule: the sign-weighted vote of the features, read off each class's means
    direction = np.sign(X[y == 1].mean(axis=0) - X[y == 0].mean(axis=0))  # (d,)
    score = (X - X.mean(axis=0)) @ direction
    error = np.mean((score > 0) != (y == 1))
    if kind == "discrete":  # 12 binary votes tie at 6: the tie errs half the time
        ties = score == 0
        error = np.mean(((score > 0) != (y == 1)) & ~ties) + 0.5 * np.mean(ties)
    se = math.sqrt(0.12 * 0.88 / y.size)
    assert abs(error - data.notes["bayes_error"]) < 4 * se


def test_separation_fixed_lets_the_bayes_error_fall_with_n():
    """feature_error: each feature's own error is kept, so more features mean less error."""
    errors = [_load(kind="discrete", rows=50, features=n, feature_error=0.4).notes["bayes_error"]
              for n in (1, 4, 16, 64)]
    assert errors[0] == pytest.approx(0.4) and all(np.diff(errors) < 0)


def test_symmetric_source_rejects_both_or_neither_strength():
    """Exactly one of bayes_error and feature_error; a Bayes error above the minority share."""
    for params, needle in (({"bayes_error": 0.1, "feature_error": 0.3}, "exactly one"),
                           ({}, "exactly one"),
                           ({"bayes_error": 0.35, "prior": 0.3}, "below the smaller class")):
        with pytest.raises(ConfigError, match=needle):
            _load(**params)


# --------------------------------------------------------------------------- the command


def test_study_command_writes_the_tables_and_figure(tmp_path):
    """A tiny study end to end: m_star.csv has exactly the documented columns."""
    study = tmp_path / "study.yaml"
    study.write_text(
        "tasks:\n"
        "  - name: c\n"
        "    source: {synthetic: {generator: symmetric, rows: 600, bayes_error: 0.1}}\n"
        "    sweep: {features: [2, 4, 8]}\n"
        "sizes: [4, 8, 16, 32, 64, 128, 256]\n"
        "splits: 6\n"
        "study: {deltas: [0.05], bootstrap: 50}\n"
    )
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["sample-complexity", str(study), "--out", str(out),
                                   "--jobs", "1", "-q"])
    assert res.exit_code == 0, res.output
    assert "bayes-error-fixed, continuous, nb: better fit a + b" in res.output
    table = pd.read_csv(out / "m_star.csv")
    assert tuple(table.columns) == M_STAR_COLUMNS
    assert sorted(table["n_features"].unique()) == [2, 4, 8] and len(table) == 6
    assert (table["ci_low"] <= table["m_star"]).all()
    assert (table["m_star"] <= table["ci_high"]).all()
    tasks = pd.read_csv(out / "tasks.csv")
    assert np.allclose(tasks["bayes_error"], 0.1)
    assert (out / "m_star.png").stat().st_size > 10_000 and (out / "fits.csv").is_file()
    timings = json.loads((out / "study.json").read_text())["timings"]
    assert timings["sizes_resumed"] == 0 and timings["cpu_seconds"] > 0
    # --draw-only rebuilds the same tables from the saved runs, running nothing
    before = (out / "m_star.csv").read_bytes(), (out / "study.json").read_bytes()
    (out / "m_star.csv").unlink()
    res = CliRunner().invoke(cli, ["sample-complexity", str(study), "--out", str(out),
                                   "--draw-only"])
    assert res.exit_code == 0, res.output
    assert ((out / "m_star.csv").read_bytes(), (out / "study.json").read_bytes()) == before


def test_study_section_errors_are_one_line():
    """An unknown study key or a bad delta is named with its fix, before anything runs."""
    base = {"tasks": [{"name": "c", "source": {"synthetic": {"generator": "symmetric",
                                                             "bayes_error": 0.1}}}],
            "sizes": [4]}
    with pytest.raises(ConfigError, match="study.delta: unknown key, did you mean 'deltas'"):
        parse_study({**base, "study": {"delta": [0.1]}}, source="s.yaml")
    with pytest.raises(ConfigError, match=r"study.deltas: must be a non-empty list"):
        parse_study({**base, "study": {"deltas": [0]}}, source="s.yaml")
    with pytest.raises(ConfigError, match="pima is not a synthetic task"):
        parse_study({**base, "tasks": ["pima"]}, source="s.yaml")


def test_shipped_study_file_is_valid():
    """studies/sample-complexity.yaml parses: four sweeps of seven n, two deltas."""
    from pathlib import Path

    from nbvslr.studies.sample_complexity import load_study

    path = Path(__file__).resolve().parents[2] / "studies" / "sample-complexity.yaml"
    study = load_study(path)
    assert len(study.config.tasks) == 28 and len(study.deltas) == 2
    grid = np.array(study.config.grids[0], dtype=float)
    assert np.all(np.diff(np.log(grid)) < 0.5)  # geometric, ratio about sqrt(2)


def test_the_figure_of_one_column_keeps_its_title_inside():
    """A study of one task (one column of panels) wraps the figure's title inside the
    figure: written on one line it was cut at both edges."""
    from nbvslr.studies.sample_complexity import figure, fits_table

    rows = [{"variant": "bayes-error-fixed", "family": "continuous", "model": model,
             "model_family": model, "n_features": n, "delta": 0.05,
             "m_star": scale * n, "ci_low": 0.8 * scale * n, "ci_high": 1.2 * scale * n}
            for model, scale in (("nb", 3.0), ("lr", 10.0)) for n in (4, 8, 16)]
    m_stars = pd.DataFrame(rows)
    fig = figure(m_stars, fits_table(m_stars), [0.05])
    title = fig._suptitle
    assert "\n" in title.get_text()
    assert " ".join(title.get_text().split()) == (
        "m*: training-set size within δ of the asymptotic error (95% bootstrap intervals)")
    for dpi in (100, 150):  # the figure's and the file's
        fig.set_dpi(dpi)
        fig.draw_without_rendering()
        box = title.get_window_extent()
        assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1
