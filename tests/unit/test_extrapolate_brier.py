"""The Brier score past the grid: the all-rows Brier score in run.json (``asymptotic_brier``)
and the extrapolation of the Brier curves with its floor (docs/extrapolation.md)."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.metrics import brier_score_loss
from test_metrics import _continuous, _discrete, _probabilities, _spec, _text

import nbvslr
from nbvslr.analysis import extrapolate as ex
from nbvslr.analysis.metrics import for_metric
from nbvslr.cli import cli
from nbvslr.data.dataset import Dataset
from nbvslr.errors import ConfigError, ResultsError
from nbvslr.models import full_scores, score_full
from nbvslr.results import load_results


def _all_rows_reference(spec, data):
    """The all-rows fit's Brier terms per row, from its probabilities in plain numpy."""
    P = _probabilities(spec, data, np.arange(data.n_rows)[None, :])[0]  # (N, K)
    y = np.asarray(data.y, dtype=int)
    onehot = np.eye(P.shape[1])[y]
    terms = ((P - onehot) ** 2).sum(axis=1)
    return terms / 2.0 if P.shape[1] == 2 else terms  # two classes: (p1 - y)^2


@pytest.mark.parametrize(("make", "K", "family", "options"), [
    (_continuous, 2, "nb", {}), (_continuous, 2, "lr", {"C": 1.0}), (_discrete, 2, "nb", {}),
    (_continuous, 3, "nb", {}), (_discrete, 3, "lr", {"C": 1.0}),
    (_text, 2, "nb", {}), (_text, 3, "lr", {"C": 1.0}),
])
def test_all_rows_brier_is_sklearns_with_the_rows_standard_error(make, K, family, options):
    """full_scores' Brier score is scikit-learn's on the all-rows fit's probabilities (K
    classes: the squared distance to the one-hot label, in [0, 2]) and its standard error
    the rows' standard deviation over sqrt(N); the error is score_full's."""
    data = make(K)
    spec = _spec(family, **options)
    seed = np.random.SeedSequence(0)
    got = full_scores(spec, data, seed, metrics=("error", "brier"))
    P = _probabilities(spec, data, np.arange(data.n_rows)[None, :])[0]
    y = np.asarray(data.y, dtype=int)
    want = (brier_score_loss(y, P[:, 1], pos_label=1) if K == 2 else
            brier_score_loss(y, P, labels=list(range(K)), scale_by_half=False))
    assert got["brier"]["value"] == pytest.approx(want, rel=1e-9, abs=1e-12)
    terms = _all_rows_reference(spec, data)
    assert got["brier"]["sem"] == pytest.approx(terms.std(ddof=1) / math.sqrt(terms.size),
                                                rel=1e-9)
    assert got["error"] == score_full(spec, data, seed)
    assert "brier" not in full_scores(spec, data, seed)  # only when the run measures it


def test_all_rows_brier_is_none_with_the_reason_where_lr_separates_every_row():
    """The paper's LR on a separable all-rows set gives a direction, not probabilities: no
    Brier score (None, not a number made up) and the reason; L2-LR there has one."""
    X = np.array([[0.1, 0.2], [0.2, 0.1], [0.3, 0.3], [0.8, 0.9], [0.9, 0.7], [0.7, 0.8]])
    data = Dataset(name="sep", title="sep", X=X, y=np.array([0, 0, 0, 1, 1, 1], np.int8),
                   kind="continuous")
    got = full_scores(_spec("lr"), data, np.random.SeedSequence(0), ("error", "brier"))
    assert got["brier"]["value"] is None and got["brier"]["sem"] is None
    assert "linearly separable" in got["brier"]["reason"]
    l2 = full_scores(_spec("lr", separable="l2"), data, np.random.SeedSequence(0),
                     ("error", "brier"))
    assert 0.0 <= l2["brier"]["value"] < 0.25


def _cfg(**more):
    return {"tasks": [{"name": "syn", "source": {"synthetic": {}}}],
            "sizes": [4, 8, 12, 20, 30, 45], "splits": 8,
            "models": {"nb": {}, "lr2": {"model": "lr", "separable": "l2"}}, **more}


def _rewrite_run_json(folder, info):
    """Replace a task's run.json and reseal its files (as a run of another version would
    have written them)."""
    old = hashlib.sha256((folder / "run.json").read_bytes()).hexdigest()
    (folder / "run.json").write_text(json.dumps(info))
    new = hashlib.sha256((folder / "run.json").read_bytes()).hexdigest()
    seal = folder / "files.sha256"
    seal.write_text(seal.read_text().replace(old, new))


def test_run_json_records_the_all_rows_brier_and_reads_it(tmp_path):
    """A run measuring the Brier score writes asymptotic_brier per model beside
    asymptotic_error, the saved results read it back; a run not measuring it writes no such
    key; a malformed one is refused by the reader with the field's name."""
    nbvslr.run(_cfg(), out=tmp_path / "b", progress=False, metrics=["error", "brier"])
    nbvslr.run(_cfg(), out=tmp_path / "e", progress=False)
    info = json.loads((tmp_path / "b/syn/run.json").read_text())
    assert set(info["asymptotic_brier"]) == set(info["asymptotic_error"]) == {"nb", "lr2"}
    for b in info["asymptotic_brier"].values():
        assert 0.0 <= b["value"] <= 1.0 and 0.0 < b["sem"] < 0.1
    task = load_results([tmp_path / "b"])[0]
    assert task.run_info["asymptotic_brier"] == info["asymptotic_brier"]
    assert "asymptotic_brier" not in json.loads((tmp_path / "e/syn/run.json").read_text())
    info["asymptotic_brier"]["nb"] = 0.2  # not {"value", "sem"}
    _rewrite_run_json(tmp_path / "b/syn", info)
    with pytest.raises(ResultsError, match="asymptotic_brier: expected a Brier score"):
        load_results([tmp_path / "b"])


def test_floor_of_brier_is_the_all_rows_score_less_two_of_its_standard_errors():
    """The floor: value - FLOOR_Z sem (the Brier score's own noise), 0 where the all-rows
    rule has no probabilities or the value is unknown, never below 0."""
    assert ex.floor_of_brier({"value": 0.15, "sem": 0.01}) == pytest.approx(0.13)
    assert ex.floor_of_brier({"value": 0.01, "sem": 0.02}) == 0.0
    assert ex.floor_of_brier({"value": None, "sem": None, "reason": "x"}) == 0.0
    assert ex.floor_of_brier(None) == 0.0


def test_a_brier_curve_falling_past_its_floor_is_held_at_it():
    """A curve still falling steeply at the grid's end, whose free fit would tend to 0, is
    fitted with its limit on the floor; its intervals and predictions stay in
    [floor, upper]."""
    m = np.array([4, 6, 9, 14, 20, 30, 45, 68, 100], dtype=float)
    y = 0.02 + 0.9 * m ** -0.5
    sem = np.full(m.size, 0.002)
    free = ex.choose(m, y, sem)
    assert ex.fit(free.family, m, y, sem).asymptote[0] < 0.05
    summary = {"nb": (m, y, sem), "lr": (m, y + 0.01, sem)}
    e = ex.extrapolate(summary, ("nb", "lr"), 5000, rng=np.random.default_rng(0), n_boot=50,
                       floor={"nb": 0.08, "lr": 0.08}, metric="brier")
    assert e.asymptote["nb"] == pytest.approx(0.08)
    assert e.asymptote_interval["nb"][0] >= 0.08 - 1e-12
    p = e.predict("nb", [150, 300])
    assert np.all(p["low"] >= 0.08 - 1e-12) and np.all(p["high"] <= 1.0)


def test_a_k_class_brier_curve_is_fitted_up_to_two():
    """A K-class Brier score lies in [0, 2]: a curve above 1 is fitted with upper=2 (and
    refused as no rate with the default upper of 1)."""
    m = np.array([4, 6, 9, 14, 20, 30, 45, 68, 100], dtype=float)
    y = 0.6 + 1.2 * m ** -0.4
    sem = np.full(m.size, 0.005)
    assert np.isnan(ex.fit("pow3", m, y, sem).asymptote[0])
    cf = ex.fit("pow3", m, y, sem, floor=0.3, upper=2.0)
    assert cf.asymptote[0] == pytest.approx(0.6, abs=0.02)
    run_info = {"task": {"classes": ["a", "b", "c"]}}
    assert ex.upper_of("brier", run_info) == 2.0
    assert ex.upper_of("error", run_info) == ex.upper_of("brier", {"task": {}}) == 1.0


def test_brier_extrapolation_uses_the_all_rows_brier_as_its_floor(tmp_path):
    """Results.metric("brier").extrapolation() fits the Brier curves, the floor of each
    model its all-rows Brier score less two of its standard errors, and shows that score
    beside the limit; the report's section is headed by the Brier score's floor."""
    r = nbvslr.run(_cfg(), out=tmp_path, progress=False, metrics=["error", "brier"])
    table = r.metric("brier").extrapolation(n_boot=20)
    full = r.tasks[0].run_info["asymptotic_brier"]
    for _, row in table.iterrows():
        assert row["all_rows"] == pytest.approx(full[row["model"]]["value"])
    view = for_metric(load_results([tmp_path])[0], "brier")
    e = ex.task_extrapolation(view, n_boot=20)
    assert e.metric == "brier"
    for model in ("nb", "lr2"):
        assert e.floor[model] == pytest.approx(ex.floor_of_brier(full[model]))
        assert e.asymptote[model] >= e.floor[model] - 1e-12
    text = r.metric("brier").report(extrapolate=True, notes=True)
    assert "below the test Brier score when trained and scored on all rows" in text


def test_an_old_run_json_without_the_all_rows_brier_refuses_its_extrapolation(tmp_path):
    """A run made before run.json recorded asymptotic_brier still reads, its Brier tables
    are made, and extrapolating its Brier score is refused with the reason and the fix
    (no floor-less fit); its test error still extrapolates."""
    nbvslr.run(_cfg(), out=tmp_path, progress=False, metrics=["error", "brier"])
    path = tmp_path / "syn/run.json"
    info = json.loads(path.read_text())
    del info["asymptotic_brier"]
    _rewrite_run_json(tmp_path / "syn", info)
    r = nbvslr.load(tmp_path)
    assert len(r.metric("brier").summary)
    with pytest.raises(ResultsError, match="no all-rows Brier score .* rerun the config"):
        r.metric("brier").extrapolation(n_boot=10)
    assert "run.json has no all-rows Brier score" in r.metric("brier").report(extrapolate=True)
    assert set(r.extrapolation(n_boot=10)["model"]) == {"nb", "lr2"}


def test_log_loss_and_training_error_are_still_not_extrapolated():
    """check_extrapolable refuses the log-loss and the training error with their reasons and
    allows the test error and the Brier score."""
    with pytest.raises(ConfigError, match="log-loss curves need not fall"):
        ex.check_extrapolable("log_loss")
    with pytest.raises(ConfigError, match="the training error rises with m"):
        ex.check_extrapolable("train_error")
    ex.check_extrapolable("error")
    ex.check_extrapolable("brier")


def test_a_brier_curve_missing_splits_is_not_extrapolated(tmp_path):
    """The paper's LR has no Brier score on separable training sets: its Brier curve is a
    mean over the other splits, a subset changing with m, and its extrapolation is refused
    naming the model and the sizes (the report keeps the reason in the task's row)."""
    r = nbvslr.run(_cfg(models={"nb": {}, "lr": {}}), out=tmp_path, progress=False,
                   metrics=["error", "brier"])
    assert r.metric("brier").summary.query("model == 'lr'")["n_splits"].min() < 8
    with pytest.raises(ResultsError, match="lr has no test Brier score on some splits at"):
        r.metric("brier").extrapolation(n_boot=10)
    assert "not a learning curve to extrapolate" in r.metric("brier").report(extrapolate=True)
    assert set(r.extrapolation(n_boot=10)["model"]) == {"nb", "lr"}
    both = nbvslr.run(_cfg(models={"nb": {}, "lr": {}, "lr2": {"model": "lr",
                                                               "separable": "l2"}},
                           compare=[["nb", "lr"], ["nb", "lr2"]]),
                      progress=False, metrics=["error", "brier"])
    # by default the first pair whose Brier curves are complete
    assert set(both.metric("brier").extrapolation(n_boot=10)["model"]) == {"nb", "lr2"}


def test_the_cli_extrapolates_the_brier_score_in_markdown_and_html(tmp_path):
    """nbvslr report --extrapolate --metric brier: exit 0, the section past the grid with
    the all-rows Brier score in Markdown and in the HTML page; --metric log_loss is still
    one line and exit 2."""
    nbvslr.run(_cfg(), out=tmp_path / "r", progress=False, metrics=["error", "brier"])
    runner = CliRunner()
    out = runner.invoke(cli, ["report", str(tmp_path / "r"), "--metric", "brier",
                              "--extrapolate", "--n-boot", "20", "--no-paper"])
    assert out.exit_code == 0, out.output
    assert "Beyond the grid" in out.output
    assert "below the test Brier score when trained and scored on all rows" in out.output
    page = tmp_path / "r.html"
    out = runner.invoke(cli, ["report", str(tmp_path / "r"), "--metric", "brier",
                              "--extrapolate", "--n-boot", "20", "--format", "html",
                              "-o", str(page)])
    assert out.exit_code == 0, out.output
    assert "Beyond the grid" in page.read_text()
    out = runner.invoke(cli, ["report", str(tmp_path / "r"), "--metric", "log_loss",
                              "--extrapolate"])
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1


def test_one_refused_task_leaves_the_others_rows_with_its_reason(tmp_path):
    """Results.extrapolation() of several tasks, one of them refused (here run.json without
    the all-rows Brier score), gives the others' rows as before and one row for the refused
    task with its reason, as the report's n/a row does; refusing every task raises."""
    two = [{"name": "syn", "source": {"synthetic": {}}},
           {"name": "old", "source": {"synthetic": {}}}]
    nbvslr.run(_cfg(tasks=two), out=tmp_path, progress=False, metrics=["error", "brier"])
    info = json.loads((tmp_path / "old/run.json").read_text())
    del info["asymptotic_brier"]
    _rewrite_run_json(tmp_path / "old", info)
    brier = nbvslr.load(tmp_path).metric("brier")
    table = brier.extrapolation(n_boot=10)
    fitted = table[table["task"] == "syn"]
    assert set(fitted["model"]) == {"nb", "lr2"} and (fitted["reason"] == "").all()
    assert fitted["asymptote"].notna().all()
    refused = table[table["task"] == "old"]
    assert len(refused) == 1 and refused["asymptote"].isna().all()
    assert "no all-rows Brier score" in refused["reason"].iloc[0]
    at = brier.extrapolation(n_boot=10, at=[100])
    assert at[at["task"] == "syn"]["predicted"].notna().all()
    assert "no all-rows Brier score" in at[at["task"] == "old"]["reason"].iloc[0]
    info = json.loads((tmp_path / "syn/run.json").read_text())
    del info["asymptotic_brier"]
    _rewrite_run_json(tmp_path / "syn", info)
    with pytest.raises(ResultsError, match="no all-rows Brier score"):
        nbvslr.load(tmp_path).metric("brier").extrapolation(n_boot=10)
