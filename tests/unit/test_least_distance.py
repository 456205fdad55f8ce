"""The quasi direction's least-distance problem: certified optimal, whatever scipy's ``nnls``
returns, independent of the solver's knobs, and unchanged where ``nnls`` was already right."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog, lsq_linear, nnls

import nbvslr.models.lr.least_distance as ld
import nbvslr.models.lr.separation as separation
from nbvslr.data import load_task
from nbvslr.data.dataset import DataSettings, TaskSpec
from nbvslr.models import resolve_options
from nbvslr.models.design import get_design, level_directions
from nbvslr.models.evaluate import DIRECTION_RTOL
from nbvslr.models.registry import lookup
from nbvslr.splits import draw_train_sets, split_seeds

#: Splits of the shipped panels (run seed 0, as ``nbvslr run`` draws them) whose direction
#: problem, in ``max_margin_direction``'s basis, scipy 1.17.1's ``nnls`` answers with a
#: feasible point far from optimal (found with ``kkt_violation``: some of each size's;
#: for sick, every such split among ``FIRST`` below).
NNLS_MISSES = {("sick", 116): (104, 119), ("sick", 56): (119, 128),
               ("adult-discrete", 382): (6, 34, 47, 58), ("breast-cancer", 72): (374, 865)}
#: The splits ``test_lawson_hanson_alone_gives_nnls_certified_directions`` reads.
FIRST = range(100, 140)


def _objective(G: np.ndarray, y: np.ndarray) -> float:
    """``||x||^2`` of the NNLS point ``y`` (n,) of ``G`` (n, k)."""
    E, f = ld.ldp_matrices(G)
    r = E @ y - f
    x = -r[:-1] / r[-1]
    return float(x @ x)


def _random_problems(count: int = 40):
    """Least-distance problems with small-integer rows, as a one-hot design gives: many
    ties, dependent rows, some infeasible."""
    rng = np.random.default_rng(7)
    for _ in range(count):
        n, k = rng.integers(3, 40), rng.integers(2, 12)
        yield rng.integers(-1, 3, size=(n, k)).astype(float)


def test_the_check_rejects_a_feasible_point_that_is_not_optimal():
    """``kkt_violation`` fails a feasible point with a positive multiplier on a slack
    constraint and passes the optimum."""
    G = np.array([[1.0, 0.0], [1.0, 1.0]])  # x1 >= 1, x1 + x2 >= 1: optimum (1, 0)
    assert ld.kkt_violation(G, np.array([0.0, 1.0 / 3.0]))[1] > 0.1  # x = (1, 1), feasible
    assert ld.kkt_violation(G, np.array([0.5, 0.0])) == (True, 0.0)
    assert ld.kkt_violation(G, np.array([0.2, 0.0]))[1] > 0.1  # x = (0.25, 0): infeasible


def test_lawson_hanson_is_optimal_and_agrees_with_scipys_lp_and_bvls():
    """Our Lawson-Hanson passes the KKT check, says infeasible exactly when scipy's LP finds
    ``G x >= 1`` infeasible, and reaches bvls's objective (never more)."""
    seen = {True: 0, False: 0}
    for G in _random_problems():
        E, f = ld.ldp_matrices(G)
        y = ld.lawson_hanson(E, f)
        feasible, bad = ld.kkt_violation(G, y)
        assert bad <= ld.KKT_RTOL
        lp = linprog(np.zeros(G.shape[1]), A_ub=-G, b_ub=-np.ones(G.shape[0]),
                     bounds=[(None, None)] * G.shape[1], method="highs")
        assert feasible == (lp.status == 0)
        seen[bool(feasible)] += 1
        if feasible:
            ref = lsq_linear(E, f, bounds=(0, np.inf), method="bvls", tol=1e-14).x
            assert _objective(G, y) <= _objective(G, ref) * (1 + 1e-9)
    assert min(seen.values()) >= 5  # both kinds were exercised


def test_nnls_answer_kept_bit_for_bit_where_it_is_optimal():
    """Where scipy's ``nnls`` point passes the check, ``least_distance`` returns it
    unchanged (the committed directions do not move)."""
    for G in _random_problems():
        E, f = ld.ldp_matrices(G)
        y0, _ = nnls(E, f, maxiter=50 * E.shape[1])
        if ld.kkt_violation(G, y0)[1] <= ld.KKT_RTOL:
            assert np.array_equal(ld.least_distance(G)[0], y0)


def test_a_non_optimal_nnls_point_is_repaired(monkeypatch):
    """When ``nnls`` returns a feasible, non-optimal point, ``least_distance`` returns the
    optimum instead (Lawson-Hanson's, checked)."""
    G = np.array([[1.0, 0.0], [1.0, 1.0], [2.0, 0.0]])  # optimum x = (1, 0): ||x||^2 = 1
    monkeypatch.setattr(ld, "nnls", lambda E, f, maxiter: (np.array([0.0, 1.0 / 3.0, 0.0]),
                                                           0.0))
    y, feasible, bad = ld.least_distance(G)
    assert feasible and bad <= ld.KKT_RTOL
    assert _objective(G, y) == pytest.approx(1.0, rel=1e-12)


@pytest.fixture(scope="module")
def shipped_misses(tmp_path_factory):
    """(data, design, levels, Z1, sign, detected) of the ``NNLS_MISSES`` splits, per
    (task, m)."""
    settings = DataSettings(cache_dir=tmp_path_factory.mktemp("cache"), download=False)
    out = {}
    loaded = {}
    for (task, m), splits in NNLS_MISSES.items():
        if task not in loaded:
            loaded[task] = load_task(TaskSpec(task), settings)
        data = loaded[task]
        opts = resolve_options("lr", "lr", {})
        entry = lookup("lr", data.kind)
        design = get_design(data, entry.design(data, opts))
        draw, _ = split_seeds(0, task, m, list(splits))
        idx = draw_train_sets(data.y, m, draw)
        Z1, sign = design.rows(idx), design.sign[idx]
        levels = level_directions(data, entry.design(data, opts))
        found = separation.detect(Z1, sign, extra=levels,
                                  rows=(design.unique_Z1, design.row_to_unique[idx]))
        out[task, m] = (data, design, levels, Z1, sign, found)
    return out


def _kkt_in_v(Z1: np.ndarray, sign: np.ndarray, q: np.ndarray, v: np.ndarray) -> float:
    """An independent optimality check of a direction ``v`` (P,) in the original
    coordinates: ``min ||w||^2 / 2`` s.t. ``A_Q v >= 1``, ``Z_R v = 0`` (``v = (w, b)``).
    Returns the residual of stationarity ``(w, 0) = A_act^T lam + Z_R^T mu`` (lam >= 0 on the
    active rows of Q, mu free), relative to ``||w||``; ``inf`` if ``v`` is not feasible."""
    AQ = sign[q, None] * Z1[q]
    ZR = Z1[~q]
    if not ((AQ @ v).min() >= 1 - 1e-9 and np.abs(ZR @ v).max() <= 1e-9 * np.abs(v).sum()):
        return np.inf
    act = AQ[np.abs(AQ @ v - 1.0) <= 1e-8]
    B = np.concatenate([act, ZR]).T  # (P, a + r)
    lo = np.r_[np.zeros(len(act)), np.full(len(ZR), -np.inf)]
    grad = np.r_[v[:-1], 0.0]
    res = lsq_linear(B, grad, bounds=(lo, np.inf), method="bvls", tol=1e-14)
    return float(np.linalg.norm(B @ res.x - grad) / np.linalg.norm(v[:-1]))


def test_shipped_splits_where_nnls_stops_early_get_the_optimal_direction(shipped_misses,
                                                                          monkeypatch):
    """On the shipped splits where scipy's ``nnls`` returns a non-optimal point, the
    direction passes an independent KKT check in the original coordinates, the one
    ``nnls``'s point gives (the old code's) fails it, and where that one is feasible its
    ``||w||^2`` is above the direction's."""
    kinds = set()
    for (task, m), (_, _, _, Z1, sign, found) in shipped_misses.items():
        q = found.separated
        assert (found.code == separation.QUASI).all()
        for a in range(Z1.shape[0]):
            assert _kkt_in_v(Z1[a], sign[a], q[a], found.direction[a]) <= 1e-8, (task, m, a)
        with monkeypatch.context() as mp:  # the old solver: scipy's nnls point, unchecked
            mp.setattr(separation, "least_distance", _unchecked_nnls)
            old, _ = separation.max_margin_direction(Z1, sign, q)
        for a in range(Z1.shape[0]):
            v, v_old = found.direction[a], old[a]
            bad = _kkt_in_v(Z1[a], sign[a], q[a], v_old)
            assert bad > 1e-4, (task, m, a)
            if np.isfinite(bad):  # feasible, not optimal
                assert v[:-1] @ v[:-1] < v_old[:-1] @ v_old[:-1] * (1 - 1e-6), (task, m, a)
                kinds.add("feasible")
            else:
                kinds.add("infeasible")
    assert kinds == {"feasible", "infeasible"}  # both kinds of miss are exercised


def _unchecked_nnls(G: np.ndarray, **_knobs) -> tuple[np.ndarray, bool, float]:
    """The old direction solver: scipy's ``nnls`` point, feasible when ``r[k] < 0``."""
    E, f = ld.ldp_matrices(G)
    y, _ = nnls(E, f, maxiter=50 * E.shape[1])
    return y, bool((E @ y - f)[-1] < 0), 0.0


def _signs(design, v: np.ndarray) -> np.ndarray:
    """(S, U) the sign a direction (S, P) gives each distinct row (0 within the band)."""
    s = v @ design.unique_Z1.T
    tau = DIRECTION_RTOL * np.abs(v).sum(axis=1, keepdims=True)
    return np.where(np.abs(s) > tau, np.sign(s), 0.0)


def test_the_direction_does_not_depend_on_the_solvers_knobs(shipped_misses, monkeypatch):
    """Two settings of the check's tolerance and of Lawson-Hanson's step cap, and Lawson-
    Hanson alone against ``nnls`` then the check, give the same direction (1e-9) and the
    same sign on every distinct row of the design."""
    for (task, m), (_, design, _, Z1, sign, found) in shipped_misses.items():
        q = found.separated
        base, _ = separation.max_margin_direction(Z1, sign, q)
        others = [separation.max_margin_direction(Z1, sign, q, kkt_rtol=1e-11,
                                                  max_iter=10_000)[0],
                  separation.max_margin_direction(Z1, sign, q, kkt_rtol=1e-7,
                                                  max_iter=200)[0]]
        with monkeypatch.context() as mp:  # nnls never passes: Lawson-Hanson on every split
            mp.setattr(ld, "nnls", lambda E, f, maxiter: (np.zeros(E.shape[1]), 0.0))
            others.append(separation.max_margin_direction(Z1, sign, q)[0])
        for other in others:
            np.testing.assert_allclose(other, base, rtol=1e-9, atol=1e-9 * np.abs(base).max())
            assert np.array_equal(_signs(design, other), _signs(design, base)), (task, m)


def _first_quasi(shipped_misses):
    """For each shipped size: its ``FIRST`` splits' stack Z1, signs, ``detect``'s answer
    (from the design's distinct rows) and the positions of the quasi-separated splits."""
    for (task, m), (data, design, levels, *_rest) in shipped_misses.items():
        draw, _ = split_seeds(0, task, m, FIRST)
        idx = draw_train_sets(data.y, m, draw)
        Z1, sign = design.rows(idx), design.sign[idx]
        found = separation.detect(Z1, sign, extra=levels,
                                  rows=(design.unique_Z1, design.row_to_unique[idx]))
        yield (task, m), (Z1, sign, found, np.flatnonzero(found.code == separation.QUASI))


def test_lawson_hanson_alone_gives_nnls_certified_directions(shipped_misses, monkeypatch):
    """On 40 splits of each shipped size (``FIRST``), Lawson-Hanson alone reaches the
    directions the checked solver gives (the answer, not one solver's path), and these equal
    the old unchecked ``nnls`` directions bit for bit except on its known misses."""
    seen_moved = 0
    for (task, m), (Z1, sign, found, quasi) in _first_quasi(shipped_misses):
        assert quasi.size >= 10
        with monkeypatch.context() as mp:
            mp.setattr(ld, "nnls", lambda E, f, maxiter: (np.zeros(E.shape[1]), 0.0))
            alone, _ = separation.max_margin_direction(Z1[quasi], sign[quasi],
                                                       found.separated[quasi])
        base = found.direction[quasi]
        np.testing.assert_allclose(alone, base, rtol=1e-9, atol=1e-9 * np.abs(base).max())
        with monkeypatch.context() as mp:  # the old solver: bit for bit but on its misses
            mp.setattr(separation, "least_distance", _unchecked_nnls)
            old, _ = separation.max_margin_direction(Z1[quasi], sign[quasi],
                                                     found.separated[quasi])
        moved = np.asarray(FIRST)[quasi[(old != base).any(axis=1)]]
        assert set(moved) <= set(NNLS_MISSES[task, m]), (task, m, moved)
        seen_moved += moved.size
    assert seen_moved >= 1  # sick's splits 104, 119 and 128 are among them


def test_the_direction_from_the_stack_equals_the_direction_from_the_distinct_rows(
        shipped_misses):
    """``max_margin_direction`` given the stack (``rescale: training``'s path) reads a row
    repeated in a split's separated rows as one constraint, as it does given the design's
    distinct rows: the same directions, bit for bit, on the shipped splits (the stack's
    repeats were kept as constraints of their own, a larger problem that ``nnls`` answered
    otherwise)."""
    for (task, m), (Z1, sign, found, q) in _first_quasi(shipped_misses):
        stack, _ = separation.max_margin_direction(Z1[q], sign[q], found.separated[q])
        np.testing.assert_array_equal(stack, found.direction[q], err_msg=f"{task} {m}")
