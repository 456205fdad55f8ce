"""The Efron study's theory (studies/efron/efron.py): the exact error of a rule, the two
asymptotic covariances, and the asymptotic relative efficiency they give."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "studies" / "efron"))
import efron  # noqa: E402

#: Efron (1975), Table 1: the efficiency of logistic regression relative to normal
#: discrimination, equal priors, at Delta = 0.5, 1, ..., 4.
EFRON = {0.5: 1.000, 1.0: 0.995, 1.5: 0.968, 2.0: 0.899, 2.5: 0.786, 3.0: 0.641,
         3.5: 0.486, 4.0: 0.343}


def test_exact_error_of_the_bayes_rule_and_of_a_worse_one():
    """The Bayes rule delta x_1 errs Phi(-delta/2); a rule along x_2 alone is a coin flip."""
    from scipy.stats import norm

    for delta in (1.0, 3.0):
        bayes = np.array([delta, 0.0, 0.0])
        assert efron.exact_errors(bayes, delta) == pytest.approx(norm.cdf(-delta / 2))
        assert efron.exact_errors(np.array([0.0, 1.0, 0.0]), delta) == pytest.approx(0.5)


def test_lr_covariance_is_the_inverse_of_a_sampled_fisher_information():
    """The quadrature's Fisher information of LR matches one averaged over 400,000 rows."""
    rng = np.random.default_rng(0)
    delta, d, n = 2.0, 2, 400_000
    y = rng.integers(0, 2, n)
    X = rng.standard_normal((n, d))
    X[:, 0] += (y - 0.5) * delta
    p = 1 / (1 + np.exp(-delta * X[:, 0]))
    Z = np.c_[X, np.ones(n)]
    info = (Z * (p * (1 - p))[:, None]).T @ Z / n
    np.testing.assert_allclose(np.linalg.inv(efron.lr_covariance(delta, d)), info, atol=3e-3)


@pytest.mark.parametrize("d", [1, 3])
def test_are_is_efrons_table_for_any_number_of_features(d):
    """tr(H V_LDA) / tr(H V_LR) reproduces Efron's tabulated efficiencies to 3 decimals, and
    does not depend on the number of features."""
    got = {delta: round(efron.are(delta, d)["are"], 3) for delta in EFRON}
    assert got == EFRON


@pytest.mark.parametrize("args, word", [(["--splits", "0"], "--splits"),
                                        (["--splits", "1"], "--splits"),
                                        (["--features", "0"], "--features")])
def test_too_few_splits_or_features_is_a_one_line_error(tmp_path, capsys, args, word):
    """--splits below 2 (no standard error) or --features below 1 stop before any work
    with one usage line naming the option, not a traceback from deep in the study."""
    with pytest.raises(SystemExit) as stop:
        efron.main(["--out", str(tmp_path / "out"), *args])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert word in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_small_study_writes_its_tables_and_no_rule_beats_bayes(tmp_path):
    """A small run of the study (one separation, two sizes, 30 training sets) writes
    efron.csv, are.csv, efron.png and study.json; every fitted rule's exact error is at
    least the Bayes error, so both excess errors are >= 0."""
    from scipy.stats import norm

    delta = 2.0
    got = efron.measure(delta, 2, 10, 30, 0)
    bayes = norm.cdf(-delta / 2)
    assert got["lda"].shape == got["lr"].shape == (30,)
    assert (got["lda"] >= bayes - 1e-12).all() and (got["lr"] >= bayes - 1e-12).all()
    table = efron.run(tmp_path, deltas=(delta,), sizes=(10, 40), splits=30)
    assert [p.name for p in sorted(tmp_path.iterdir())] == [
        "are.csv", "efron.csv", "efron.png", "study.json"]
    assert list(table["m"]) == [10, 40] and (table["splits"] == 30).all()
    assert (table[["excess_lda", "excess_lr"]] >= 0).all().all()
