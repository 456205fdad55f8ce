"""The benchmark's pieces on tiny inputs: the peer does the same work as our core, the
timers and FLOP counts are right, and ``bench.py --quick`` runs end to end."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks import bench, harness, panels  # noqa: E402
from benchmarks import metrics as metrics_bench  # noqa: E402
from nbvslr.models import resolve_options, score_splits  # noqa: E402

CONT = panels.PanelShape("tiny-cont", "continuous", 150, 0.4, 5, (), (2, 40))
DISC = panels.PanelShape("tiny-disc", "discrete", 300, 0.4, 5, (3, 4, 2, 3, 2), (2, 100))
# every level common in both classes: no quasi-separation, so LR's maximum is finite
CONCENTRATION = 20.0


def _peer_settings() -> harness.PeerSettings:
    # a tightly converged peer: on a non-separable set both fit the unique maximum
    nb, lr = resolve_options("nb", "nb", {}), resolve_options("lr", "lr", {})
    return harness.PeerSettings.matching(nb, lr, lr_tol=1e-10, lr_max_iter=10_000)


@pytest.mark.parametrize("shape", [CONT, DISC], ids=["continuous", "discrete"])
@pytest.mark.parametrize("family", ["nb", "lr"])
def test_peer_errors_match_core(shape: panels.PanelShape, family: str) -> None:
    """The scikit-learn peer fits the same models as our core (same test errors per split)."""
    data = panels.synthetic_dataset(shape, concentration=CONCENTRATION)
    m = shape.sizes[-1]
    idx, seeds = bench.splits_of(data, m, 10)
    ours = score_splits(bench.model_specs()[family], data, idx, seeds)
    peer = harness.PeerModel(data, family, _peer_settings())
    peer_err = np.array([peer.error(i) for i in idx])
    keep = ~ours["separable"] & ours["converged"]
    assert keep.sum() >= 5  # enough non-separable splits to compare
    # one test row may flip where a score is zero up to rounding
    assert np.abs(peer_err[keep] - ours["error"][keep]).max() <= 1.0 / (data.n_rows - m)
    agree = bench.agreement(ours, list(peer_err), family)
    assert agree["compared"] == keep.sum() and agree["max_abs_diff"] <= 1.0 / (data.n_rows - m)


def test_peer_settings_follow_core_options() -> None:
    """The peer's epsilon, smoothing and penalty are taken from the core's options."""
    nb = resolve_options("nb", "nb", {"smoothing": 2.0, "var_smoothing": 1e-6})
    lr = resolve_options("lr", "lr", {"C": 3.0})
    s = harness.PeerSettings.matching(nb, lr)
    assert (s.laplace, s.prior_smoothing, s.var_smoothing, s.lr_C) == (2.0, 2.0, 1e-6, 3.0)
    assert harness.PeerSettings.matching(nb, resolve_options("lr", "lr", {})).lr_C == np.inf


def test_time_loop_extrapolates_from_the_items_run() -> None:
    """A loop cut by its budget or cap is scaled to all items and labelled extrapolated."""
    t = harness.time_loop(lambda i: float(i), total=100, budget=10.0, max_items=4)
    assert (t.done, t.extrapolated, t.values) == (4, True, [0.0, 1.0, 2.0, 3.0])
    assert t.seconds == pytest.approx(t.measured * 25)
    full = harness.time_loop(lambda i: 0.0, total=3, budget=10.0)
    assert not full.extrapolated and full.seconds == full.measured


def test_newton_flops_counts_the_cheaper_form() -> None:
    """FLOPs per Newton step: primal 2 m w^2 + w^3/3 + 4 m w, dual when m is small."""
    f = harness.newton_flops(m=10, width=3, n_iter=np.array([2, 1]))
    primal = 2 * 10 * 9 + 27 / 3 + 4 * 10 * 3
    assert f["iterations"] == 3 and f["primal"] == pytest.approx(3 * primal)
    assert f["useful"] == pytest.approx(3 * primal)  # m > w: the primal is cheaper
    g = harness.newton_flops(m=3, width=50, n_iter=np.array([1]))
    assert g["useful"] == pytest.approx(g["dual"]) and g["dual"] < g["primal"]


def test_matmul_peak_and_memory_are_measured() -> None:
    """The matmul peak is a positive rate and traced memory sees a fresh 8 MB array."""
    peak = harness.matmul_peak(2, n=64, repeats=1)
    assert peak["peak"] > 0 and peak["peak"] == max(peak["blas"], peak["python_threads"])
    mib, arr = harness.traced_peak(lambda: np.ones(1_000_000))
    assert arr.size == 1_000_000 and 7.5 <= mib < 50
    assert harness.max_rss_mib() > 0


def test_synthetic_panels_have_the_real_shapes() -> None:
    """Synthetic stand-ins keep rows, attributes, levels and both classes of each panel."""
    for name in ("pima", "lenses", "voting"):
        shape = panels.panel_shape(name)
        data = panels.synthetic_dataset(shape)
        assert data.X.shape == (shape.n_rows, shape.n_features)
        assert 0 < data.n_positive < data.n_rows and data.notes["synthetic"]
        if shape.kind == "discrete":
            assert (data.X.max(axis=0) < np.array(shape.n_values)).all() and data.X.min() >= 0
        else:
            assert data.X.min() == 0.0 and data.X.max() == 1.0
    assert len(panels.PANELS) == 15 and panels.PANELS[8].name == "adult-discrete"


def test_bench_quick_runs_and_writes_json(tmp_path: Path, monkeypatch, capsys) -> None:
    """``bench.py --quick`` on synthetic panels exits 0, says so, and writes its numbers."""
    monkeypatch.setattr(bench, "plan", lambda quick: [("pima", (20,)), ("lenses", (10,))])
    out = tmp_path / "bench.json"
    code = bench.main(["--quick", "--synthetic", "--no-figure1", "--splits", "8",
                       "--json", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "SYNTHETIC" in printed and "| pima | 20 | lr |" in printed
    assert "| lenses | 10 | lr_l2 |" in printed and "lr_l2, 2 (task, m): speed-up" in printed
    report = json.loads(out.read_text())
    assert report["synthetic"] and len(report["rows"]) == 6  # 2 (task, m) x nb, lr, lr_l2
    assert all(r["ours_s_per_1000"] > 0 and r["peer"]["done"] >= 1 for r in report["rows"])
    assert "## The HMC sampler alone" in printed and report["sampler"]
    assert all(c["us_per_split"] > c["floor_us_per_split"] > 0 for c in report["sampler"])


def test_hmc_floor_counts_iterations_and_bounces() -> None:
    """The sampler's floor: 4 m P per chain-iteration plus 3 m per bounce."""
    bounces = np.array([[[2, 0, 5]], [[1, 1, 1]]])  # (S=2, chains=1, n_iter=3)
    assert harness.hmc_floor_flops(bounces, m=10, P=4) == 6 * 4 * 10 * 4 + 10 * 3 * 10


def test_softmax_dense_newton_peer_reaches_the_newton_cg_fit():
    """benchmarks/softmax_solvers.py's dense Newton solves the same penalised softmax
    problem as Newton-CG: the class probabilities agree to 1e-7 on a small three-class set."""
    from benchmarks.softmax_solvers import dense_newton
    from nbvslr.models.lr.softmax import fit_softmax

    rng = np.random.default_rng(0)
    y = np.arange(60) % 3
    Z1 = np.concatenate([rng.normal(size=(60, 3)) + np.eye(3)[y], np.ones((60, 1))], axis=1)
    cg = fit_softmax(Z1[None], y[None], 3, C=1.0).theta[0]
    dense = dense_newton(Z1[None], y[None], 3, 1.0)[0]

    def probs(theta):
        s = Z1 @ theta.T
        e = np.exp(s - s.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    np.testing.assert_allclose(probs(dense), probs(cg), atol=1e-7)


def test_extrapolation_benchmark_measures_both_reports(tmp_path) -> None:
    """benchmarks/extrapolation.py times the report without and with the section on a
    results folder and prints their ratio."""
    from results_factory import fabricate

    from benchmarks import extrapolation

    fabricate(tmp_path, sizes=(2, 4, 6, 8, 12, 16, 24, 32), n_splits=20)
    out = extrapolation.measure(tmp_path, repeats=1, quick=True)
    assert out["tasks"] == 1 and out["draws"] == 20
    assert out["report_extrapolate"] > 0 and out["section"] > 0
    assert out["ratio"] == out["report_extrapolate"] / out["report"]


def test_discriminant_peer_fits_the_same_models() -> None:
    """The LDA / QDA peer (scikit-learn, our prior) gives our test errors on splits where
    every covariance is non-singular (pima, m = 59: d = 8)."""
    from benchmarks import discriminant
    from nbvslr.data import DataSettings, TaskSpec, load_task
    from nbvslr.splits import draw_train_sets, split_seeds

    data = load_task(TaskSpec("pima"), DataSettings())
    draw, seeds = split_seeds(0, data.name, 59, range(8))
    idx = draw_train_sets(np.asarray(data.y), 59, draw)
    for spec in discriminant.specs().values():
        ours = score_splits(spec, data, idx, seeds)["error"]
        peer = discriminant.Peer(data, spec)
        theirs = np.array([peer.error(i) for i in idx])
        assert peer.regularised == peer.refused == 0
        # a test row whose score is zero up to rounding may fall either way
        assert np.abs(ours - theirs).max() <= 1.0 / (data.n_rows - 59) + 1e-12


def test_discriminant_arithmetic_and_float32_measure_what_they_say() -> None:
    """``--arithmetic`` splits both sides' times into positive parts with the products'
    FLOPs, and ``--float32``'s rigorous bound holds (the float32 product's error never
    exceeds it) and certifies at least as much as the cheaper grouped one."""
    from benchmarks import discriminant
    from nbvslr.data import DataSettings, TaskSpec, load_task

    data = load_task(TaskSpec("pima"), DataSettings())
    for spec in discriminant.specs().values():
        r = discriminant.arithmetic(data, 20, 8, spec, peer_splits=2)
        assert min(r["ours_fit"], r["ours_count"], r["peer_fit"], r["peer_predict"]) > 0
        P = 9 if spec.family == "lda" else 8 + 36 + 1
        assert r["ours_count_gflop"] == 2.0 * 768 * P * 1000 / 1e9  # pima's rows are distinct
        f = discriminant.float32_certified(data, 20, 8, spec)
        assert f["err_over_bound"] <= 1.0
        assert 0.0 <= f["grouped"] <= f["exact"] <= 1.0


def test_metrics_bench_times_both_variants() -> None:
    """benchmarks/metrics.py times a config with [error] and with every metric, pairs them
    and tabulates the ratio."""
    config = {"tasks": [{"name": "syn", "source": {"synthetic": {}}}], "sizes": [4, 8],
              "splits": 5}
    row = metrics_bench.measure("syn", config, 2)
    assert len(row["base_s"]) == len(row["all_s"]) == 2
    assert all(t > 0 for t in row["base_s"] + row["all_s"])
    assert row["median_ratio"] > 0
    assert "| syn | " in metrics_bench.table([row])


def test_figure1_parts_times_the_data_and_nb(capsys) -> None:
    """benchmarks/figure1_parts.py loads the panels it is given and times NB over their
    grids (a few splits here)."""
    from benchmarks import figure1_parts

    assert figure1_parts.main(["--splits", "3", "--repeat", "1", "lenses", "voting"]) == 0
    out = capsys.readouterr().out
    assert "data load, 2 tasks:" in out
    assert "nb lenses" in out and "nb voting" in out and "nb, all 2 panels:" in out
