"""The quasi direction does not depend on the basis it is computed in: ``max_margin_direction``
(the overlap rows' centred null space on the columns they use, batched by width) against the
same problem in the null space of all P columns, one split at a time (the code it replaced,
kept here as the reference)."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import nbvslr.models.lr.separation as separation
from nbvslr.data import load_task
from nbvslr.data.dataset import DataSettings, TaskSpec
from nbvslr.models import resolve_options
from nbvslr.models.design import get_design, level_directions
from nbvslr.models.evaluate import DIRECTION_RTOL
from nbvslr.models.lr.least_distance import ldp_matrices, least_distance
from nbvslr.models.registry import lookup
from nbvslr.splits import draw_train_sets, split_seeds

#: Shipped (task, m) of the three panels with quasi-separated sets, and the splits read.
SIZES = [("adult-discrete", 62), ("adult-discrete", 382), ("breast-cancer", 128),
         ("sick", 56), ("sick", 116)]
SPLITS = range(60)


@pytest.fixture(autouse=True)
def one_blas_thread():
    """BLAS on one thread, as a run's workers have it (threads make the many small
    eigendecompositions far slower on a busy machine)."""
    with threadpool_limits(1):
        yield


def full_basis_direction(Z1: np.ndarray, sign: np.ndarray, separated: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray]:
    """The direction problem in the null space of ``Z_R`` on all P columns, (S, P) and (S,):
    eigenvectors of ``Z_R^T Z_R``, the weights' norm by a Cholesky factor, one split at a
    time (``max_margin_direction`` as it was before the smaller basis)."""
    S, _, P = Z1.shape
    out = np.zeros((S, P))
    feasible = np.ones(S, dtype=bool)
    for a in range(S):
        q = separated[a]
        ZR = separation._distinct(Z1[a, ~q])[0]  # (r, P)
        ev, V = np.linalg.eigh(ZR.T @ ZR)
        N = V[:, ev <= ev[-1] * separation.RANK_RTOL]  # (P, k)
        L = np.linalg.cholesky(N[:-1].T @ N[:-1])  # (k, k)
        AQ = separation._distinct(sign[a, q, None] * Z1[a, q])[0]  # (n, P)
        G = np.linalg.solve(L, (AQ @ N).T).T  # (n, k) = A_Q N L^-T
        k = G.shape[1]
        E, f = ldp_matrices(G)
        y, ok, _ = least_distance(G)
        r = E @ y - f
        if not ok:
            feasible[a] = False
            continue
        out[a] = N @ np.linalg.solve(L.T, -r[:k] / r[k])
        feasible[a] = (AQ @ out[a]).min() >= 0.5
    return out, feasible


def _assert_same(new: np.ndarray, ref: np.ndarray, where) -> None:
    """Two stacks of directions (S, P) equal to 1e-9 of each split's largest weight."""
    scale = np.abs(ref).max(axis=1, keepdims=True)
    assert (np.abs(new - ref) <= 1e-9 * scale).all(), where


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """(design, Z1, sign, detected) of ``SPLITS`` at each of ``SIZES``."""
    settings = DataSettings(cache_dir=tmp_path_factory.mktemp("cache"), download=False)
    loaded, out = {}, {}
    with threadpool_limits(1):
        _detect_sizes(settings, loaded, out)
    return out


def _detect_sizes(settings: DataSettings, loaded: dict, out: dict) -> None:
    """Fill ``out`` with ``shipped``'s entries (``loaded`` the tasks' data by name)."""
    for task, m in SIZES:
        if task not in loaded:
            loaded[task] = load_task(TaskSpec(task), settings)
        data = loaded[task]
        opts = resolve_options("lr", "lr", {})
        entry = lookup("lr", data.kind)
        design = get_design(data, entry.design(data, opts))
        draw, _ = split_seeds(0, task, m, SPLITS)
        idx = draw_train_sets(data.y, m, draw)
        Z1, sign = design.rows(idx), design.sign[idx]
        found = separation.detect(Z1, sign, extra=level_directions(data, entry.design(data, opts)),
                                  rows=(design.unique_Z1, design.row_to_unique[idx]))
        out[task, m] = (design, Z1, sign, found)


def test_shipped_directions_equal_the_full_basis_ones(shipped):
    """On the shipped quasi splits, the direction ``detect`` keeps equals the full-basis
    one to 1e-9, and both give every distinct row of the design the same sign."""
    seen = 0
    for (task, m), (design, Z1, sign, found) in shipped.items():
        quasi = np.flatnonzero(found.code == separation.QUASI)
        assert quasi.size >= 20, (task, m)
        ref, feasible = full_basis_direction(Z1[quasi], sign[quasi], found.separated[quasi])
        assert feasible.all(), (task, m)
        new = found.direction[quasi]
        _assert_same(new, ref, (task, m))
        tau = DIRECTION_RTOL * np.abs(ref).sum(axis=1, keepdims=True)
        s_new, s_ref = new @ design.unique_Z1.T, ref @ design.unique_Z1.T
        assert np.array_equal(np.where(np.abs(s_new) > tau, np.sign(s_new), 0.0),
                              np.where(np.abs(s_ref) > tau, np.sign(s_ref), 0.0)), (task, m)
        seen += quasi.size
    assert seen >= 200


def test_the_batches_give_each_split_its_own_direction(shipped):
    """A split's direction is the same (to rounding) whichever splits share its call."""
    _, Z1, sign, found = shipped["adult-discrete", 382]
    quasi = np.flatnonzero(found.code == separation.QUASI)
    together, _ = separation.max_margin_direction(Z1[quasi], sign[quasi],
                                                  found.separated[quasi])
    for j in (0, quasi.size // 2, quasi.size - 1):
        a = quasi[j]
        alone, _ = separation.max_margin_direction(Z1[a:a + 1], sign[a:a + 1],
                                                   found.separated[a:a + 1])
        _assert_same(alone, together[j:j + 1], j)


def _random_sets(count: int = 60):
    """Direction problems of small-integer rows, one-hot like and dense: R a random set of
    rows (some repeated, some using the intercept only), Q rows using columns R uses and
    columns it does not; some infeasible."""
    rng = np.random.default_rng(11)
    for t in range(count):
        S, m, P = 4, int(rng.integers(6, 30)), int(rng.integers(3, 12))
        if t % 3 == 2:  # dense rows
            Z1 = rng.integers(-3, 4, size=(S, m, P)).astype(float)
        else:  # sparse rows of 0/1
            Z1 = (rng.random((S, m, P)) < 0.3).astype(float)
        Z1[:, :, -1] = 1.0
        separated = rng.random((S, m)) < 0.5
        separated[:, 0], separated[:, 1] = True, False  # Q and R both non-empty
        if t % 5 == 0:  # an overlap row repeated, and one with the intercept only
            Z1[:, 2] = Z1[:, 1]
            separated[:, 2] = False
            Z1[:, 3, :-1] = 0.0
            separated[:, 3] = False
        if t % 7 == 0:  # R uses the intercept only: C is empty
            Z1[~separated, :-1] = 0.0
        hidden = rng.random((S, m, 1)) < 0.4  # columns R does not use, for some Q rows
        Z1[:, :, :2] *= np.where(separated[:, :, None], 1.0, 0.0)
        Z1[:, :, :2] *= hidden
        sign = np.where(rng.random((S, m)) < 0.5, -1.0, 1.0)
        yield Z1, sign, separated


def test_random_problems_agree_with_the_full_basis():
    """On random problems (one-hot like and dense, repeated rows, an empty C, infeasible
    ones), the same feasibility and, where feasible, the same direction as the full basis."""
    seen = {True: 0, False: 0}
    for t, (Z1, sign, separated) in enumerate(_random_sets()):
        new, ok = separation.max_margin_direction(Z1, sign, separated)
        ref, ok_ref = full_basis_direction(Z1, sign, separated)
        assert np.array_equal(ok, ok_ref), t
        _assert_same(new[ok], ref[ok], t)
        assert (new[~ok] == 0.0).all(), t
        for flag in (True, False):
            seen[flag] += int((ok == flag).sum())
    assert min(seen.values()) >= 20  # both kinds were exercised
