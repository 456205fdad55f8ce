"""metrics: the test log-loss and Brier score of each split against scikit-learn's on the same
predictions, the training error, NaN where a rule has no probabilities, and the config, the
files and the tables of a run that measures them."""

from __future__ import annotations

import gzip
import json
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from sklearn.metrics import brier_score_loss, log_loss
from test_plain_ml_nb import _task as _rare_task
from text_corpus import DOCS, Y

import nbvslr
from nbvslr.analysis.metrics import LABELS
from nbvslr.cli import cli
from nbvslr.config import parse_config
from nbvslr.data.dataset import Dataset
from nbvslr.data.text import count_matrix
from nbvslr.errors import ConfigError, ResultsError
from nbvslr.models import ModelSpec, resolve_options, score_splits
from nbvslr.models.budget import DEFAULT_BUDGET
from nbvslr.models.design import get_design
from nbvslr.models.probabilities import EPSILON
from nbvslr.models.registry import lookup
from nbvslr.results.layout import SPLIT_COLUMNS, split_columns

ALL = ("error", "log_loss", "brier", "train_error")


def _spec(family: str, **options) -> ModelSpec:
    return ModelSpec(family, family, resolve_options(family, family, options))


def _seeds(S: int) -> list[np.random.SeedSequence]:
    return [np.random.SeedSequence(0, spawn_key=(s,)) for s in range(S)]


def _train(y: np.ndarray, m: int, S: int, seed: int = 2) -> np.ndarray:
    """S training sets of m distinct rows holding every class."""
    rng = np.random.default_rng(seed)
    K = int(y.max()) + 1
    out = []
    while len(out) < S:
        idx = np.sort(rng.choice(y.size, m, replace=False))
        if len(np.unique(y[idx])) == K:
            out.append(idx)
    return np.array(out)


def _continuous(K: int = 2, n: int = 150, d: int = 4, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    X = np.clip(0.5 + 0.15 * rng.standard_normal((n, d)) + 0.1 * y[:, None], 0, 1)
    return Dataset(name="c", title="c", X=X, y=y.astype(np.int8), kind="continuous",
                   classes=tuple(map(str, range(K))) if K > 2 else ())


def _discrete(K: int = 2, n: int = 160, seed: int = 1) -> Dataset:
    rng = np.random.default_rng(seed)
    n_values = (2, 3, 4)
    y = rng.integers(0, K, n)
    X = np.stack([np.minimum(rng.integers(0, k, n) + (y if j else 0), k - 1)
                  for j, k in enumerate(n_values)], axis=1)
    return Dataset(name="d", title="d", X=X, y=y.astype(np.int8), kind="discrete",
                   n_values=n_values, classes=tuple(map(str, range(K))) if K > 2 else ())


def _probabilities(spec: ModelSpec, data: Dataset, train: np.ndarray) -> list[np.ndarray]:
    """Each split's class probabilities (n_rows, K) from its fitted parameters, one split at
    a time, in plain numpy: the reference the batched metrics are checked against."""
    entry = lookup(spec.family, data.kind, data.multiclass)
    design = get_design(data, entry.design(data, spec.options))
    fit = entry.fit(data, design, train, spec.options, _seeds(len(train)), DEFAULT_BUDGET)
    Z1 = (sp.hstack([design.Z, np.ones((data.n_rows, 1))]).toarray()
          if data.kind == "text" else design.Z1)
    out = []
    for theta in fit.theta:
        if theta.ndim == 1:
            s = Z1 @ theta
            p1 = 1.0 / (1.0 + np.exp(-s))
            out.append(np.stack([1.0 - p1, p1], axis=1))
        else:
            s = Z1 @ theta.T  # (N, K)
            e = np.exp(s - s.max(axis=1, keepdims=True))
            out.append(e / e.sum(axis=1, keepdims=True))
    return out


def _check_against_sklearn(spec: ModelSpec, data: Dataset, train: np.ndarray) -> None:
    got = score_splits(spec, data, train, _seeds(len(train)), metrics=ALL)
    y = np.asarray(data.y, dtype=int)
    K = data.n_classes
    for s, P in enumerate(_probabilities(spec, data, train)):
        test = np.setdiff1d(np.arange(data.n_rows), train[s])
        clipped = np.clip(P[test], EPSILON, 1 - EPSILON)
        if K == 2:
            want_loss = log_loss(y[test], clipped[:, 1], labels=[0, 1])
            want_brier = brier_score_loss(y[test], P[test, 1], pos_label=1)
        else:
            want_loss = log_loss(y[test], clipped / clipped.sum(axis=1, keepdims=True),
                                 labels=list(range(K)))
            want_brier = brier_score_loss(y[test], P[test], labels=list(range(K)),
                                          scale_by_half=False)
        np.testing.assert_allclose(got["log_loss"][s], want_loss, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(got["brier"][s], want_brier, rtol=1e-9, atol=1e-12)
        # training error: t tied top classes count (t - 1) / t, as the test error counts
        Pt = P[train[s]]
        top = Pt >= Pt.max(axis=1, keepdims=True) * (1 - 1e-12)
        wrong = 1.0 - top[np.arange(len(Pt)), y[train[s]]] / top.sum(axis=1)
        assert got["train_error"][s] == pytest.approx(wrong.mean(), abs=1e-12)


@pytest.mark.parametrize(("make", "family", "options"), [
    (_continuous, "nb", {}), (_continuous, "lr", {"C": 1.0}), (_continuous, "lda", {}),
    (_discrete, "nb", {}), (_discrete, "lr", {"C": 1.0}),
])
def test_two_class_metrics_are_sklearns(make, family, options):
    """Two classes: log-loss and Brier score of each split equal scikit-learn's log_loss and
    brier_score_loss of the same split's probabilities on its test rows."""
    data = make()
    _check_against_sklearn(_spec(family, **options), data, _train(data.y, 12, 7))


@pytest.mark.parametrize("make", [_continuous, _discrete])
@pytest.mark.parametrize(("family", "options"), [("nb", {}), ("lr", {"C": 1.0})])
def test_k_class_metrics_are_sklearns(make, family, options):
    """K = 3 classes: log-loss equals log_loss with the K columns; the Brier score is the
    squared distance to the one-hot label, sklearn's brier_score_loss(scale_by_half=False)."""
    data = make(K=3)
    _check_against_sklearn(_spec(family, **options), data, _train(data.y, 15, 6))


def _text(K: int) -> Dataset:
    X, vocab = count_matrix(DOCS)
    y = Y.copy() if K == 2 else np.arange(len(DOCS)) % K
    return Dataset(name="t", title="t", X=sp.csr_matrix(X, dtype=np.float64),
                   y=y.astype(np.int8), kind="text", feature_names=tuple(vocab),
                   classes=tuple(map(str, range(K))) if K > 2 else (),
                   text_options={"vocabulary": "all", "min_df": 1, "max_features": None})


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize(("family", "options"), [("nb", {}), ("lr", {"C": 1.0})])
def test_text_metrics_are_sklearns(K, family, options):
    """Text tasks (sparse counts), two and three classes: the same metrics as sklearn's."""
    data = _text(K)
    _check_against_sklearn(_spec(family, **options), data, _train(data.y, 6, 5))


def test_sampled_separable_splits_have_no_probabilities():
    """The paper's LR on a separable training set (hyperplanes sampled: no scale) gets NaN
    log-loss and Brier score, a training error of 0, and the same test error as without
    the metrics, bit for bit."""
    data = _continuous()
    train = _train(data.y, 5, 8)
    spec = _spec("lr")
    got = score_splits(spec, data, train, _seeds(8), metrics=ALL)
    plain = score_splits(spec, data, train, _seeds(8))
    assert got["separable"].any()
    np.testing.assert_array_equal(got["error"], plain["error"])
    assert np.isnan(got["log_loss"][got["separable"]]).all()
    assert np.isnan(got["brier"][got["separable"]]).all()
    assert (got["train_error"][got["separable"]] == 0).all()
    assert np.isfinite(got["log_loss"][~got["separable"]]).all()


def test_mle_rule_on_separable_splits_has_no_probabilities():
    """separable: mle keeps the capped Newton iterate (not converged): no probabilities."""
    data = _continuous()
    train = _train(data.y, 5, 8)
    got = score_splits(_spec("lr", separable="mle"), data, train, _seeds(8), metrics=ALL)
    assert got["separable"].any()
    assert np.isnan(got["log_loss"][~got["converged"]]).all()


@pytest.mark.parametrize("K", [2, 3])
def test_plain_ml_nb_log_loss_is_exact_and_clipped(K):
    """Plain ML naive Bayes (smoothing: 0): the log-loss is that of the exact posterior
    (fractions; a row of probability 0 in every class uniform), a true class of probability
    0 counting -log(EPSILON): finite only by the clipping."""
    data = _rare_task(K)
    train = _train(np.asarray(data.y), 10, 4, seed=3)
    got = score_splits(_spec("nb", smoothing=0.0), data, train, _seeds(4), metrics=ALL)
    X, y = data.X, np.asarray(data.y, dtype=int)
    zero_seen = False
    for s, idx in enumerate(train):
        Xt, yt = X[idx], y[idx]
        losses = []
        for i in np.setdiff1d(np.arange(len(y)), idx):
            p = []
            for c in range(K):
                rows = Xt[yt == c]
                prob = Fraction(len(rows), len(idx))
                for j in range(X.shape[1]):
                    prob *= Fraction(int((rows[:, j] == X[i, j]).sum()), len(rows))
                p.append(prob)
            total = sum(p)
            post = float(p[y[i]] / total) if total else 1.0 / K
            zero_seen |= post == 0
            losses.append(-math.log(min(max(post, EPSILON), 1 - EPSILON)))
        assert got["log_loss"][s] == pytest.approx(np.mean(losses), rel=1e-9)
    assert zero_seen  # the fixture does reach a true class of probability 0
    assert np.isfinite(got["log_loss"]).all()


def _cfg(**more):
    return {"tasks": [{"name": "syn", "source": {"synthetic": {}}}], "sizes": [4, 12],
            "splits": 6, **more}


def test_metrics_key_is_checked_and_the_default_is_unchanged():
    """metrics: unknown names are refused in one line with a hint; the default is [error]
    and leaves run.json's config as it was; error is always measured, first."""
    with pytest.raises(ConfigError, match=r"metrics: unknown metric, did you mean 'log_loss'"):
        parse_config(_cfg(metrics=["error", "logloss"]))
    with pytest.raises(ConfigError, match="not a list of metrics"):
        parse_config(_cfg(metrics=[]))
    assert parse_config(_cfg()).metrics == ("error",)
    assert "metrics" not in parse_config(_cfg()).to_dict()
    assert parse_config(_cfg(metrics=["brier", "log_loss"])).metrics == (
        "error", "log_loss", "brier")


def test_a_run_writes_a_column_per_metric_and_the_same_errors(tmp_path):
    """A run measuring every metric writes them after error in splits.csv.gz, keeps the
    test errors (and summary.csv, paired.csv) of the default run byte for byte, resumes
    from its checkpoints, and records the splits without probabilities in run.json."""
    plain = nbvslr.run(_cfg(), out=tmp_path / "a", progress=False)
    every = nbvslr.run(_cfg(), out=tmp_path / "b", progress=False, metrics=list(ALL))
    assert list(plain.splits.columns) == list(SPLIT_COLUMNS)
    assert list(every.splits.columns) == list(split_columns(ALL))
    pd.testing.assert_series_equal(plain.splits["error"], every.splits["error"])
    for name in ("summary.csv", "paired.csv"):
        assert (tmp_path / "a/syn" / name).read_bytes() == (tmp_path / "b/syn" / name).read_bytes()
    info = json.loads((tmp_path / "b/syn/run.json").read_text())
    assert info["config"]["metrics"] == list(ALL)
    sep = every.splits[every.splits["separable"] & (every.splits["model"] == "lr")]
    assert len(sep) and sep["log_loss"].isna().all()
    assert info["no_probabilities"]["lr"]["splits"] == len(sep)
    assert "separable" in info["no_probabilities"]["lr"]["reason"]
    again = nbvslr.run(_cfg(), out=tmp_path / "b", progress=False, metrics=list(ALL))
    before = gzip.decompress((tmp_path / "b/syn/splits.csv.gz").read_bytes())
    assert again.tasks[0].run_info["timings"]["resumed_sizes"] == [4, 12]
    assert before == gzip.decompress((tmp_path / "b/syn/splits.csv.gz").read_bytes())


def test_metric_tables_are_the_error_tables_of_that_column(tmp_path):
    """Results.metric(name): summary and paired are those of the metric's column, computed
    as for the error (NaN splits left out); a metric not measured is one ResultsError."""
    models = {"nb": {}, "lr": {}, "lr_c": {"model": "lr", "C": 1.0}}
    r = nbvslr.run(_cfg(models=models), progress=False, metrics=list(ALL))
    for name in ALL[1:]:
        view = r.splits.drop(columns=[c for c in ALL if c != name]).rename(
            columns={name: "error"})
        got = r.metric(name).summary
        assert got.loc[got["n_splits"] == 0, "error_mean"].isna().all()  # no value at all
        got = got[got["n_splits"] > 0]
        want = view[view["error"].notna()].groupby(["model", "m"])["error"].agg(["mean", "count"])
        np.testing.assert_allclose(got["error_mean"].to_numpy(), want["mean"].to_numpy(),
                                   rtol=1e-12)
        np.testing.assert_array_equal(got["n_splits"].to_numpy(), want["count"].to_numpy())
    assert r.metric("log_loss").paired["n_splits"].max() <= 6
    plain = nbvslr.run(_cfg(), progress=False)
    with pytest.raises(ResultsError, match="no log_loss in the splits"):
        plain.metric("log_loss")


def test_plot_and_report_take_a_metric(tmp_path):
    """nbvslr plot --metric and report --metric draw and tabulate a measured metric, and a
    metric the run did not measure is one line and a non-zero exit."""
    nbvslr.run(_cfg(), out=tmp_path, progress=False, metrics=list(ALL))
    nbvslr.run({**_cfg(), "tasks": [{"name": "only", "source": {"synthetic": {}}}]},
               out=tmp_path / "plain", progress=False)
    runner = CliRunner()
    out = runner.invoke(cli, ["plot", str(tmp_path / "syn"), "--metric", "brier", "-o",
                               str(tmp_path / "b.png")])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "b.png").stat().st_size > 0
    out = runner.invoke(cli, ["report", str(tmp_path / "syn"), "--metric", "log_loss"])
    assert out.exit_code == 0, out.output
    assert "Metric: test log-loss" in out.output
    assert "have no log_loss" in out.output  # the separable splits of the paper's LR
    out = runner.invoke(cli, ["report", str(tmp_path / "plain"), "--metric", "log_loss"])
    assert out.exit_code != 0
    assert "no log_loss in the splits" in out.output and "Traceback" not in out.output


def test_metric_report_refuses_extrapolation_and_names_the_metric(tmp_path):
    """--extrapolate with the log-loss or the training error: one line giving that metric's
    reason, exit 2, before any results are read; Results.metric(name).report() is headed
    by the metric's name."""
    r = nbvslr.run(_cfg(), out=tmp_path, progress=False, metrics=list(ALL))
    assert r.metric("brier").report(notes=False).startswith("Metric: test Brier score")
    assert not r.report(notes=False).startswith("Metric:")
    reasons = {"log_loss": "log-loss curves need not fall",
               "train_error": "the training error rises with m"}
    for metric, reason in reasons.items():
        for fmt in ("markdown", "html"):
            out = CliRunner().invoke(cli, ["report", str(tmp_path / "nowhere"), "--metric",
                                           metric, "--extrapolate", "--format", fmt,
                                           "-o", str(tmp_path / "r")])
            assert out.exit_code == 2, out.output
            assert reason in out.output
            assert "extrapolate the test error or the Brier score instead" in out.output
            assert len(out.output.strip().splitlines()) == 1 and "Traceback" not in out.output
        assert not (tmp_path / "r").exists()


def test_api_refuses_to_extrapolate_another_metric():
    """Results.metric(name).extrapolation() and .report(extrapolate=True) refuse the
    log-loss and the training error with their reasons (they used to fit the log-loss or
    the rising training error with curves that fall to a limit); the error's and the Brier
    score's still work."""
    sizes = [4, 8, 12, 20, 30, 45]
    r = nbvslr.run(_cfg(sizes=sizes, splits=8,
                        models={"nb": {}, "lr2": {"model": "lr", "separable": "l2"}}),
                   progress=False, metrics=list(ALL))
    for metric in ("log_loss", "train_error"):
        view = r.metric(metric)
        with pytest.raises(ConfigError, match=f"no extrapolation of the {LABELS[metric]}: "):
            view.extrapolation()
        with pytest.raises(ConfigError, match="extrapolate the test error or the Brier"):
            view.report(extrapolate=True)
    assert set(r.extrapolation()["model"]) == {"nb", "lr2"}
    assert set(r.metric("brier").extrapolation()["model"]) == {"nb", "lr2"}
    assert set(r.metric("error").extrapolation()["model"]) == {"nb", "lr2"}


def test_k_class_text_metrics_in_small_passes_are_the_same(monkeypatch):
    """K-class text rules scored a few at a time (a small TILE, as on 20 Newsgroups) give
    the numbers of one pass."""
    from nbvslr.models import probabilities

    data = _text(3)
    train = _train(data.y, 6, 5)
    spec = _spec("nb")
    whole = score_splits(spec, data, train, _seeds(5), metrics=ALL)
    monkeypatch.setattr(probabilities, "TILE", 2 * data.n_rows * 3)  # two rules a pass
    parts = score_splits(spec, data, train, _seeds(5), metrics=ALL)
    for key in ALL:
        np.testing.assert_array_equal(whole[key], parts[key])


@pytest.mark.parametrize(("family", "options"), [("nb", {}), ("lr", {"C": 1.0})])
def test_two_class_text_metrics_in_one_pass_are_the_separate_passes(family, options):
    """Two-class text rules: the one pass that makes each score once
    (text_heldout_metrics) gives text_errors' errors exactly and text_metrics' log-loss,
    Brier score and training error (their sums in another order)."""
    from nbvslr.models.probabilities import text_heldout_metrics, text_metrics
    from nbvslr.models.text.entry import text_errors

    data = _text(2)
    spec = _spec(family, **options)
    entry = lookup(spec.family, data.kind, data.multiclass)
    design = get_design(data, entry.design(data, spec.options))
    train = _train(data.y, 6, 9)
    theta = entry.fit(data, design, train, spec.options, _seeds(9), DEFAULT_BUDGET).theta
    one = text_heldout_metrics(design, theta, train)
    np.testing.assert_array_equal(one["error"], text_errors(design, theta, train, 0.0))
    loss, brier, train_error = text_metrics(design, theta, train, 0.0)
    np.testing.assert_allclose(one["log_loss"], loss, rtol=1e-12)
    np.testing.assert_allclose(one["brier"], brier, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(one["train_error"], train_error)
    got = score_splits(spec, data, train, _seeds(9), metrics=ALL)
    np.testing.assert_array_equal(got["log_loss"], one["log_loss"])  # the run's own path


def test_splits_file_levels_default_six_metrics_four(tmp_path):
    """splits.csv.gz is the CSV of the run's table, gzipped at level 6 for the default
    [error] run (its bytes as before) and at 4 with the metric columns."""
    from nbvslr.results.files import csv_bytes, gz_bytes

    for name, metrics, level in (("a", None, 6), ("b", list(ALL), 4)):
        r = nbvslr.run(_cfg(), out=tmp_path / name, progress=False, metrics=metrics)
        data = (tmp_path / name / "syn/splits.csv.gz").read_bytes()
        assert data == gz_bytes(csv_bytes(r.splits), level)


def test_metric_intervals_are_clipped_to_the_metrics_own_range(tmp_path):
    """A metric's intervals are clipped to what its mean can be, not to the error's [0, 1]:
    the log-loss's means above 1 keep t intervals around them (and their paired
    differences beyond plus or minus 1), the K-class Brier score's reach up to 2."""
    from nbvslr.analysis import stats

    cfg = {"tasks": [{"name": "syn", "source": {"synthetic": {}}}],
           "sizes": [4, 8, 12, 20], "splits": 8,
           "models": {"nb": {}, "lr2": {"model": "lr", "separable": "l2"}}}
    r = nbvslr.run(cfg, out=tmp_path, progress=False, metrics=["error", "log_loss"])
    s = r.metric("log_loss").summary
    assert (s["error_mean"] > 1).any()  # the case the error's clip got wrong
    assert ((s["ci_low"] < s["error_mean"]) & (s["error_mean"] < s["ci_high"])).all()
    p = r.metric("log_loss").paired
    assert (p["diff_mean"].abs() > 1).any()
    assert ((p["ci_low"] < p["diff_mean"]) & (p["diff_mean"] < p["ci_high"])).all()
    assert stats.value_range({"metric": "brier", "task": {"classes": ["a", "b", "c"]}}) \
        == (0.0, 2.0)
    assert stats.value_range({"metric": "brier", "task": {"classes": ["a", "b"]}}) == (0, 1)
    assert stats.value_range({}) == (0.0, 1.0)
    assert stats.value_range({"metric": "log_loss"})[1] == np.inf
