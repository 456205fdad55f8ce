"""Learning curves past the grid: the families' fits, the choice by extrapolation, the
predicted crossover and its interval, and the report's section."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from results_factory import fabricate

from nbvslr.analysis import extrapolate as ex
from nbvslr.cli import cli
from nbvslr.results import load_task

M = np.array([2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128], dtype=float)
SEM = np.full(M.size, 0.005)

TRUE = {
    "pow3": (lambda m: 0.10 + 0.40 * m ** -0.7, 0.10),
    "exp3": (lambda m: 0.15 + 0.30 * np.exp(-0.05 * m), 0.15),
    "mmf4": (lambda m: (0.5 * 20 + 0.12 * m**1.3) / (20 + m**1.3), 0.12),
    "wbl4": (lambda m: 0.20 - (-0.25) * np.exp(-0.2 * m**0.8), 0.20),
}


@pytest.mark.parametrize("family", list(ex.FAMILIES))
def test_each_family_recovers_its_own_curve(family):
    """A noiseless curve of a family is fitted by that family: the predictions at the sizes
    and the asymptote come back."""
    curve, limit = TRUE[family]
    fit = ex.fit(family, M, curve(M), SEM)
    assert np.max(np.abs(fit.predict(M)[0] - curve(M))) < 2e-3
    assert fit.asymptote[0] == pytest.approx(limit, abs=0.01)


def test_fits_of_many_curves_equal_the_fits_one_by_one():
    """A batch of curves (bootstrap resamples) is fitted as each curve alone would be."""
    rng = np.random.default_rng(0)
    Y = TRUE["pow3"][0](M)[None, :] + rng.normal(0, 0.004, (5, M.size))
    batch = ex.fit("mmf4", M, Y, SEM)
    for i in range(5):
        one = ex.fit("mmf4", M, Y[i], SEM)
        np.testing.assert_allclose(batch.predict(M)[i], one.predict(M)[0], atol=1e-12)


def test_a_curve_no_error_rate_limit_fits_has_no_fit():
    """Means above 1 or below 0 (not error rates) get NaN parameters, never a limit outside
    [0, 1], and no family is chosen for them."""
    for y in (np.full(M.size, 1.2), np.full(M.size, -0.1)):
        for family in ex.FAMILIES:
            assert np.isnan(ex.fit(family, M, y, SEM).asymptote).all()
        with pytest.raises(ValueError, match="no family fits"):
            ex.choose(M, y, SEM)


def test_asymptotes_stay_error_rates():
    """A curve still falling steeply cannot be fitted with a limit below 0."""
    m = M[:6]
    y = 0.5 - 0.08 * np.log(m)  # would run below 0 if followed
    for family in ex.FAMILIES:
        assert 0.0 <= ex.fit(family, m, y, SEM[:6]).asymptote[0] <= 1.0


def test_choice_prefers_the_family_that_extrapolates():
    """An exponential curve is best predicted from its smaller sizes by exp3, not by the
    4-parameter families that fit the smaller sizes as well."""
    c = ex.choose(M, TRUE["exp3"][0](M), SEM)
    assert c.family == "exp3"
    assert c.scores["exp3"] == min(c.scores.values()) and c.n_fit == 8
    assert ex.choose(M[:5], TRUE["exp3"][0](M[:5]), SEM[:5]).n_fit == 4  # the fewest
    with pytest.raises(ValueError, match="at least 5"):
        ex.choose(M[:4], TRUE["exp3"][0](M[:4]), SEM[:4])


def _pair(nb, lr, m=M):
    return {"nb": (m, nb(m), SEM[: m.size]), "lr": (m, lr(m), SEM[: m.size])}


def test_crossover_past_the_grid_is_predicted_where_the_fitted_curves_cross():
    """NB fast to 0.2, LR slow to 0.1 (both pow3): they cross past the grid, where the true
    curves do; a pair that never crosses gives None before the horizon."""
    def nb(m):
        return 0.20 + 0.20 * m ** -1.0

    def lr(m):
        return 0.10 + 1.50 * m ** -0.5

    def nb_high(m):
        return 0.30 + 0.20 * m ** -1.0

    grid = np.geomspace(128, 5000, 20000)
    true = grid[np.argmax(nb(grid) - lr(grid) > 0)]
    assert 150 < true < 400  # past the grid's 128
    out = ex.extrapolate(_pair(nb, lr), ("nb", "lr"), horizon=5000)
    assert out.crossover == pytest.approx(true, rel=0.05)
    assert out.asymptote["nb"] == pytest.approx(0.20, abs=0.01)
    assert out.asymptote["lr"] == pytest.approx(0.10, abs=0.02)
    never = ex.extrapolate(_pair(nb_high, lr), ("nb", "lr"), horizon=5000)
    assert never.crossover is None and never.horizon == 5000


def test_bootstrap_intervals_cover_the_estimate_and_repeat_with_the_seed():
    """Resampling the splits gives intervals around the point estimates; the same seed the
    same intervals."""
    rng = np.random.default_rng(1)
    n = 60
    per = {"nb": TRUE["pow3"][0](M)[:, None] + rng.normal(0, 0.03, (M.size, n)),
           "lr": TRUE["exp3"][0](M)[:, None] + rng.normal(0, 0.03, (M.size, n))}
    summary = {k: (M, v.mean(axis=1), v.std(axis=1, ddof=1) / np.sqrt(n))
               for k, v in per.items()}
    runs = [ex.extrapolate(summary, ("nb", "lr"), 1000, per, n_boot=50,
                           rng=np.random.default_rng(7)) for _ in range(2)]
    assert runs[0] == runs[1]
    for model in ("nb", "lr"):
        lo, hi = runs[0].asymptote_interval[model]
        assert lo <= runs[0].asymptote[model] + 0.01 and runs[0].asymptote[model] - 0.01 <= hi
        assert hi - lo < 0.2


def test_task_extrapolation_and_report_section(tmp_path):
    """A saved task is extrapolated from its files; `nbvslr report --extrapolate` appends
    the section, with intervals where the splits were kept."""
    folder = fabricate(tmp_path, sizes=(2, 4, 6, 8, 12, 16, 24, 32), n_splits=40)
    e = ex.task_extrapolation(load_task(folder), n_boot=30)
    assert e.model_a == "nb" and e.last_m == 32 and e.horizon == 500
    assert all(e.asymptote_interval[m] is not None for m in ("nb", "lr"))
    result = CliRunner().invoke(cli, ["report", str(tmp_path), "--extrapolate", "--no-paper"])
    assert result.exit_code == 0, result.output
    assert "Beyond the grid" in result.output
    section = result.output.split("Beyond the grid")[1]
    row = next(line for line in section.splitlines() if line.startswith("| toy |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert len(cells) == 8 and cells[1] in ex.FAMILIES and cells[4] in ex.FAMILIES
    assert "[" in cells[2] and "[" in cells[5]  # the asymptotes' intervals
    plain = CliRunner().invoke(cli, ["report", str(tmp_path), "--no-paper"])
    assert "Beyond the grid" not in plain.output
    csv = CliRunner().invoke(cli, ["report", str(tmp_path), "--format", "csv", "--extrapolate"])
    assert csv.exit_code == 2 and "use it without --format csv" in csv.output


def test_one_split_gives_no_interval(tmp_path):
    """With one split per size there is nothing to resample: point estimates only."""
    folder = fabricate(tmp_path, n_splits=1)
    e = ex.task_extrapolation(load_task(folder), n_boot=30)
    assert e.asymptote_interval == {"nb": None, "lr": None} and e.crossover_interval is None


def test_too_short_a_grid_is_one_line_in_the_section(tmp_path):
    """A task with too few sizes to choose a family gets its reason in the section, not an
    error for the whole report."""
    fabricate(tmp_path, sizes=(2, 4, 8, 16), n_splits=20)  # 4 sizes, 5 needed
    result = CliRunner().invoke(cli, ["report", str(tmp_path), "--extrapolate", "--no-paper"])
    assert result.exit_code == 0, result.output
    assert "4 sizes are too few to choose and fit a learning curve" in result.output
