"""Which training rows a linear classifier can separate: overlap, complete or quasi.

For a two-class training set with rows ``z_i`` (trailing 1, the intercept) and signs
``s_i``, let ``A = sign * Z1`` (m, P). Its *recession cone* is ``{v : A v >= 0}``: the
directions along which no training row's margin ever decreases. The rows that some ``v`` of
the cone gives a strictly positive margin form one largest set Q (the sum of two cone
directions is one, so the union of what each separates is separated by their sum); the rest
R = ``not Q`` are the *overlap rows*. Albert & Anderson (1984):

- ``overlap`` (Q empty): the maximum-likelihood fit exists;
- ``complete`` (Q = every row): the set is linearly separable (LR's separable-set rule);
- ``quasi`` (otherwise): no maximum-likelihood fit exists, yet no hyperplane separates the
  set: the weights of the directions that separate Q run off to infinity, those of R stay
  finite (the estimator: ``nbvslr.models.lr.entry``).

How it is decided (``detect``), exactly and without reading where a solver stopped
(``FIRST_STEPS`` Newton steps on every row settle most separable and overlapping sets, by
the certificates of step 2: on a one-hot design after step 1, for the splits it peeled
nothing from or left a rest of one class, and for the others (``CUT_STEPS`` steps) only by
the separability certificate and only where no distinct row is a training row of both
classes (such a pair is never separated), since a split it peeled is not overlapping and its
fit on all rows of a quasi set would run off; on a dense design before step 1, for every
split):

1. ``pure_rows`` peels the rows that one column separates: a column whose non-zero entries
   among the remaining rows of ``A`` all have one sign is a cone direction of those rows
   (``+-e_j``), and the rows where it is non-zero are in Q (on a one-hot design: a level
   seen in one class only). Repeated on what is left, until no column is pure; a direction
   of the remaining rows plus a large multiple of the earlier directions is a direction of
   all rows, so every peeled row is in Q.
2. The remaining rows R are fitted by Newton (``newton.fit_newton``, the peeled rows
   zeroed). If the remaining rows are separable (Newton's certificate: every margin > 0)
   the whole set is ``complete``. If Newton converged with every ``sigma(-mu_i) >=
   CERTIFICATE_FLOOR`` on R, the weights ``lambda_i = sigma(-mu_i) > 0`` certify (Gordan's
   alternative) that no direction of the cone separates any row of R: for ``v`` with
   ``A_R v >= 0``, ``sum_R lambda_i A_i v = -g . v`` is at most ``tol m ||v||_1`` (g the
   gradient), so ``sum_R A_i v <= tol m ||v||_1 / CERTIFICATE_FLOOR`` = ``1e-4 m ||v||_1``
   at the defaults, far below the margin of any direction that separates a row of a design
   of small integers. A converged fit with rows below the floor (very confident rows of an
   overlap set) is certified when one more Newton step moves no margin by more than
   ``STEP_FLOOR``: at a fit that runs off, each step adds about 1 to the separated rows'
   margins. Q is then exactly the peeled rows: ``overlap`` if none, else ``quasi``.
3. Otherwise (Newton capped, a row fitted with ``sigma(-mu_i)`` below the floor, or a
   separation that no single column shows) a guess is tried first: the rows the fit left
   below the floor, or, for a fit of R still running after ``EARLY_STEPS`` and, if that
   guess fails or is empty, after ``GUESS_STEPS`` steps (the fit resumed from its iterate;
   a rest that overlaps converges within them; one with a separation the peel missed runs
   off), the rows one more step moves by more than ``GUESS_MOVE``. The guess stands only if the
   fit of the other rows is certified as above and the direction problem of the guessed
   rows is feasible (a direction that separates them: both proofs); else the linear
   program of Konis (2007) decides on the remaining rows (``separated_rows_lp``; the LPs of
   LP_BATCH splits solved as one block-diagonal program, ``separated_rows_many``): maximise
   ``sum_i t_i`` subject to ``A v >= t``, ``0 <= t <= 1``; at its optimum ``t_i = 1``
   exactly on Q (scale a direction that separates Q until every margin there is >= 1) and
   0 elsewhere. The LP holds its
   constraints to a feasibility tolerance (HiGHS: 1e-7); rows it takes that the exact
   direction problem (``max_margin_direction``) cannot separate (continuous rows nearly,
   not exactly, separable) are not counted: only the peeled rows are then.

Cost: the peel is a few passes over the training rows' non-zeros (read from the design's
distinct rows, ``pure_rows``'s ``rows``; compiled, ``kernels.peel``); the Newton fit of R
is the fit the estimator needs anyway (and converges in a handful of steps, where the fit of all
rows of a quasi set runs off until the gradient criterion stops it); the LP (scipy's HiGHS)
runs only for the splits steps 1-2 leave undecided (docs/results.md has the shares).

``max_margin_direction`` computes the direction in which the quasi fit's weights run off.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from nbvslr.models.budget import DEFAULT_BUDGET, Budget
from nbvslr.models.lr.least_distance import KKT_RTOL, least_distance
from nbvslr.models.lr.newton import fit_newton, reads_stack, sigmoid_neg

#: The codes of ``Detected.code`` (and ``Fit.separation``); ``NOT_ASSESSED`` for a fit that
#: does not ask (naive Bayes, a penalised LR, K classes).
NOT_ASSESSED, OVERLAP, COMPLETE, QUASI = -1, 0, 1, 2
#: The names the splits table writes, by code (``NOT_ASSESSED`` writes an empty field).
NAMES = {NOT_ASSESSED: "", OVERLAP: "overlap", COMPLETE: "complete", QUASI: "quasi"}
#: Newton steps on every row first (``detect``; on a one-hot design, of the splits the peel
#: leaves whole or with a rest of one class): a split separable or overlapping that Newton
#: settles within them ends there (its fit is the one Newton would end with; a complete
#: split decided later is refitted on all rows at the end, to the same iterate).
FIRST_STEPS = 10
#: Newton steps on every row of a split the peel cut whose rows are never seen in both
#: classes (``detect``): a complete one is certified within them (at most 5 steps on the
#: shipped lymphography, 1 on promoters); a quasi one runs off, so they are its waste.
CUT_STEPS = 5
#: ``detect`` peels before Newton's first steps on a design given as distinct rows with at
#: most this share of non-zero entries (or with reference levels to try): a one-hot design.
PEEL_DENSITY = 0.3
#: The Newton steps of the first fit of a split's rest (``detect``): a rest that overlaps
#: converges within them (at most 10 steps on the shipped discrete panels), one with a
#: separation the peel missed runs off and is stopped there; the rows one more step moves by
#: more than ``GUESS_MOVE`` (about 1 a step on the separated rows, a vanishing change on the
#: others) are the guess. Both are checked by the guess's two proofs (else the LP): they set
#: the cost, not the answer.
GUESS_STEPS = 10
GUESS_MOVE = 0.5
#: The first steps of that fit: a rest that one more step then shows running off (rows it
#: moves by more than ``GUESS_MOVE``) is guessed after them (on adult (discrete), every
#: third size, the same rows as after ``GUESS_STEPS`` on 98% of the splits guessed then);
#: the others resume to ``GUESS_STEPS``. Checked as the guess is: the cost, not the answer.
EARLY_STEPS = 7
#: Which step decided a split (``Detected.how``).
PEEL, GUESS, LP = 0, 1, 2
#: The smallest ``sigma(-mu_i)`` of a row of R that the overlap certificate accepts (a
#: smaller one sends the split to the LP: it changes the cost, not the answer).
CERTIFICATE_FLOOR = 1e-6
#: The loosest tolerance of ``detect``'s Newton fits, whatever LR's ``tol`` (a looser one is
#: lowered to it): the certificate's bound ``tol m ||v||_1 / CERTIFICATE_FLOOR`` rules out a
#: separating direction only while ``tol`` is small (at 1e-6 it certifies fits running off
#: along a direction the peel missed), so which rows are separated, and the predictions,
#: do not move with the option.
CERTIFICATE_TOL = 1e-10
#: The certificate's second form: the largest margin change of one more Newton step from a
#: converged fit of R (``detect``); a change, not a size: the cost of a split, not its answer.
STEP_FLOOR = 1e-3
#: The null space of the overlap rows in ``max_margin_direction``: eigenvalues of their
#: centred Gram matrix on the columns they use at most this times the largest (a design of
#: small integers has none between about 1e-14 and 1e-4 of it).
RANK_RTOL = 1e-10


@dataclass(frozen=True)
class Detected:
    """What ``detect`` finds for S training sets.

    code : (S,) int8, ``OVERLAP``, ``COMPLETE`` or ``QUASI``.
    separated : (S, m) bool, the rows in Q (every row of a complete set, none of an overlap).
    theta : (S, P) the Newton fit of the overlap rows R (of every row for an overlap set);
        for a complete set, a strictly separating hyperplane (Newton's certified iterate
        on all rows, the start of the separable-set sampler).
    direction : (S, P) ``max_margin_direction`` of a quasi set (0 for the others).
    n_iter : (S,) int64 Newton steps of the fit kept in ``theta``.
    converged : (S,) bool, its gradient criterion met.
    how : (S,) int8, which step decided: ``PEEL`` (the peel and the certificate), ``GUESS``
        (step 2's guess, certified) or ``LP``.
    """

    code: np.ndarray
    separated: np.ndarray
    theta: np.ndarray
    direction: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    how: np.ndarray


# --------------------------------------------------------------------------- the steps
def pure_rows(Z1: np.ndarray | None, sign: np.ndarray, extra: np.ndarray | None = None,
              rows: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """The rows that pure columns peel off (step 1 of the module docstring), (S, m) bool.

    Z1 : (S, m, P) rows with the intercept column; sign : (S, m) in {-1, +1}; extra : (P, L)
    more directions to try as columns (the reference levels of a one-hot design coded
    without them, ``design.level_directions``). ``rows`` = (U, ids), U (u, P) and ids (S, m)
    with ``Z1[a, i] == U[ids[a, i]]``: the same peel read from the distinct rows' non-zeros
    (Z1 may then be None), without a pass over the dense stack. The rounds of the peel run
    compiled (``kernels.peel``; the rows peeled do not depend on the order of the columns).
    """
    # compiled (numba): imported where it runs, as the other kernels
    from nbvslr.kernels.peel import peel_rows

    if rows is None:
        S, m, P = Z1.shape
        ptr, cols, positive, width = _entries(Z1.reshape(S * m, P), extra)
        ids = np.arange(S * m, dtype=np.int64).reshape(S, m)
    else:
        ptr, cols, positive, width = _distinct_entries(rows[0], extra)
        ids = np.ascontiguousarray(rows[1], dtype=np.int64)
    out = np.zeros(ids.shape, dtype=bool)
    peel_rows(ptr, cols, positive, ids, np.ascontiguousarray(sign > 0), width, out)
    return out


def _entries(U: np.ndarray, extra: np.ndarray | None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The non-zeros of the rows U (u, P) and their products with ``extra`` (P, L), row by
    row: ptr (u + 1,), their columns (nnz,), whether each is > 0 (nnz,), and the width
    P + L."""
    Us = U if extra is None else np.concatenate([U, U @ extra], axis=1)  # (u, W)
    r, c = np.nonzero(Us)  # row-major: each row's non-zeros together
    ptr = np.zeros(Us.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=Us.shape[0]), out=ptr[1:])
    return ptr, c.astype(np.int64), Us[r, c] > 0, Us.shape[1]


#: ``_entries`` of the last distinct rows and directions ``_distinct_entries`` was given:
#: the rows U held (their identity names them: a design's distinct rows are one object for
#: every block of splits a task fits), the directions copied (made again for each block).
#: One tuple, read once and replaced whole, so that threads fitting different designs at
#: once (``--backend threading``) never read one design's key with another's entries.
_LAST: tuple | None = None


#: ``_distinct_nonzeros`` of the last distinct rows it was given (held, as ``_LAST``).
_LAST_NZ: tuple | None = None


def _distinct_nonzeros(U: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-zeros of the rows U (u, P), row by row: ptr (u + 1,), their columns and
    values (nnz,) (columns increasing within a row), kept for the next call with U."""
    global _LAST_NZ
    last = _LAST_NZ  # one read: another thread may replace it
    if last is not None and last[0] is U:
        return last[1]
    r, c = np.nonzero(U)
    ptr = np.zeros(U.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=U.shape[0]), out=ptr[1:])
    found = (ptr, c.astype(np.int64), U[r, c])
    _LAST_NZ = (U, found)
    return found


def _distinct_entries(U: np.ndarray, extra: np.ndarray | None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``_entries(U, extra)``, kept for the next call with the same U and extra."""
    global _LAST
    last = _LAST  # one read: another thread may replace it while this one compares
    if last is not None and last[0] is U and (
            extra is None if last[1] is None
            else extra is not None and np.array_equal(last[1], extra)):
        return last[2]
    found = _entries(U, extra)
    _LAST = (U, None if extra is None else extra.copy(), found)
    return found


def _distinct(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``rows`` (n, P) and each row's index among them, (k,) and (n,),
    ordered by their keys, the products with a fixed vector of square roots of integers
    (``_keys``), each key's first row first. A key is not unique (sqrt(4) + sqrt(9) =
    sqrt(25): one-hot rows of columns 2 and 7 and of column 23 share one), so rows sharing
    a key are told apart exactly, each its own distinct row."""
    key = rows @ np.sqrt(np.arange(2.0, rows.shape[1] + 2.0))
    _, first, back = np.unique(key, return_index=True, return_inverse=True)
    back = back.reshape(-1)
    if np.array_equal(rows[first][back], rows):  # no two rows share a key
        return rows[first], back
    exact = np.unique(rows, axis=0, return_inverse=True)[1].reshape(-1)  # (n,) exact ids
    order = np.lexsort((np.arange(key.size), exact, key))  # by key, row, occurrence
    k, e = key[order], exact[order]
    first = np.ones(key.size, dtype=bool)
    first[1:] = (k[1:] != k[:-1]) | (e[1:] != e[:-1])
    back = np.empty(key.size, dtype=np.int64)
    back[order] = np.cumsum(first) - 1
    return rows[order[first]], back


def _repeated_both(ids: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """Whether some distinct row is a training row of both classes, (S,) bool: ids (S, m)
    each training row's index among the distinct rows, sign (S, m)."""
    key = np.sort(2 * ids.astype(np.int64) + (sign > 0), axis=1)  # (S, m) a row's two keys
    return ((key[:, 1:] != key[:, :-1]) & (key[:, 1:] // 2 == key[:, :-1] // 2)).any(axis=1)


def overlap_certified(mu: np.ndarray, rows: np.ndarray, converged: np.ndarray) -> np.ndarray:
    """Step 2's certificate that no row of ``rows`` (S, m) can be separated, (S,) bool:
    the fit of those rows converged and each has ``sigma(-mu_i) >= CERTIFICATE_FLOOR``,
    ``mu`` (S, m) its margins ``sign * (z_i . theta)``."""
    p = sigmoid_neg(mu)
    return converged & ((p >= CERTIFICATE_FLOOR) | ~rows).all(axis=1) & rows.any(axis=1)


def _lp_block(A: np.ndarray):
    """The LP of ``separated_rows_lp`` for ``A`` (m, P): its constraint block
    ``[-rows, I]`` (k, c + k) over the columns ``cols`` some row uses and the distinct rows
    (repeated rows one constraint), and each row's index among them (m,)."""
    cols = np.flatnonzero((A != 0.0).any(axis=0))
    rows, back = _distinct(A[:, cols])
    k = rows.shape[0]
    block = sp.hstack([sp.csr_matrix(-rows), sp.identity(k, format="csr")],
                      format="csr")  # t - A v <= 0 (sparse: k may be every row of the data)
    return block, cols, back


def _solve_lp(blocks: list) -> np.ndarray:
    """The optimum ``[v, t]`` of the LPs of ``blocks`` (``_lp_block``'s) side by side, one
    block-diagonal program (each LP's variables and constraints its own: the optimum is
    each one's, and its ``t`` unique)."""
    a_ub = blocks[0] if len(blocks) == 1 else sp.block_diag(blocks, format="csr")
    widths = [(b.shape[1] - b.shape[0], b.shape[0]) for b in blocks]  # (columns, k)
    cost = np.concatenate([np.r_[np.zeros(c), -np.ones(k)] for c, k in widths])
    lower = np.concatenate([np.r_[np.full(c, -np.inf), np.zeros(k)] for c, k in widths])
    upper = np.concatenate([np.r_[np.full(c, np.inf), np.ones(k)] for c, k in widths])
    res = linprog(cost, A_ub=a_ub, b_ub=np.zeros(a_ub.shape[0]),
                  bounds=np.stack([lower, upper], axis=1), method="highs")
    if res.status != 0:  # bounded and feasible (v = 0, t = 0): only a solver failure
        raise ArithmeticError(f"the separation LP failed: {res.message}")
    return res.x


def separated_rows_lp(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Step 3: the rows of ``A = sign * Z1`` (m, P) that a cone direction separates, (m,)
    bool, and such a direction (P,), by the LP ``max sum t, A v >= t, 0 <= t <= 1``
    (repeated rows one constraint, columns no row uses left out)."""
    block, cols, back = _lp_block(A)
    x = _solve_lp([block])
    v = np.zeros(A.shape[1])
    v[cols] = x[:cols.size]
    return (x[cols.size:] > 0.5)[back], v


#: Splits whose LPs ``separated_rows_many`` solves as one program: each LP alone spends
#: most of its time in scipy's set-up around HiGHS (about 2.7 ms a split on Figure 1's
#: continuous panels, 1.3 ms in programs of 16; benchmarks/RESULTS.md).
LP_BATCH = 16


def separated_rows_many(As: list[np.ndarray]) -> list[np.ndarray]:
    """``separated_rows_lp``'s rows of each ``A`` of ``As``, LP_BATCH LPs a program (the
    rows each LP separates are its own: its optimal ``t`` is unique, 1 on them, 0
    elsewhere)."""
    out: list[np.ndarray] = []
    for lo in range(0, len(As), LP_BATCH):
        made = [_lp_block(A) for A in As[lo:lo + LP_BATCH]]
        x = _solve_lp([block for block, _, _ in made])
        at = 0
        for block, cols, back in made:
            k = block.shape[0]
            out.append((x[at + cols.size:at + cols.size + k] > 0.5)[back])
            at += cols.size + k
    return out


def detect(
    Z1: np.ndarray | None,
    sign: np.ndarray,
    *,
    tol: float = 1e-10,
    max_iter: int = 100,
    budget: Budget = DEFAULT_BUDGET,
    extra: np.ndarray | None = None,
    rows: tuple[np.ndarray, np.ndarray] | None = None,
) -> Detected:
    """Overlap, complete or quasi for S training sets (the module docstring's steps).

    Z1 : (S, m, P) training rows, trailing column of ones; sign : (S, m) ``2 y - 1``.
    ``tol`` (lowered to ``CERTIFICATE_TOL`` if looser) and ``max_iter`` are the Newton fits'
    (``newton.fit_newton``); ``extra`` (P, L) and ``rows`` (the distinct rows U and each
    row's index in them, (S, m)) as for ``pure_rows``; with ``rows``, Z1 may be None (the
    rows a step reads are then gathered from U for the splits it reads them of).
    """
    # compiled (numba): imported where they run, as the other kernels
    from nbvslr.kernels.sparse_gram import listed_rows, sparse_matvec

    if Z1 is not None:
        Z1 = np.asarray(Z1, dtype=np.float64)
    sign = np.asarray(sign, dtype=np.float64)
    S, m, P = Z1.shape if Z1 is not None else rows[1].shape + rows[0].shape[1:]
    tol = min(tol, CERTIFICATE_TOL)  # the certificate's bound needs it (CERTIFICATE_TOL)
    newton = dict(tol=tol, max_iter=max_iter, budget=budget)
    code = np.full(S, OVERLAP, dtype=np.int8)
    theta = np.zeros((S, P))
    direction = np.zeros((S, P))
    n_iter = np.zeros(S, dtype=np.int64)
    converged = np.zeros(S, dtype=bool)
    how = np.full(S, PEEL, dtype=np.int8)
    ready = np.zeros(S, dtype=bool)  # complete, theta already a certified iterate

    def stack(splits):  # Z1[splits], gathered from the distinct rows without Z1
        return Z1[splits] if Z1 is not None else rows[0][rows[1][splits]]

    def peel(splits: np.ndarray) -> np.ndarray:  # pure_rows of some splits, (s, m)
        if rows is None:
            return pure_rows(Z1[splits], sign[splits], extra)
        return pure_rows(None, sign[splits], extra, rows=(rows[0], rows[1][splits]))

    # on a design with levels (sparse rows, given as distinct rows), the peel first (cheap);
    # then a few Newton steps on every row of the splits it leaves whole, or with a rest of
    # one class (complete): most of those end there, separable (certified) or overlapping
    # (converged and certified), with the fit Newton would end with anyway. Any other split
    # the peel cut is not overlapping, and its fit on all rows runs off: it goes straight to
    # the fit of its rest. On a dense design the peel rarely finds a row and reads every
    # entry: it runs after the first steps, on the splits they leave
    early = rows is not None and (
        extra is not None or np.count_nonzero(rows[0]) <= PEEL_DENSITY * rows[0].size)
    separated = peel(np.arange(S)) if early else np.zeros((S, m), dtype=bool)  # (S, m)
    kept = ~separated
    two = (kept & (sign > 0)).any(axis=1) & (kept & (sign < 0)).any(axis=1)  # both classes
    whole_or_one = ~separated.any(axis=1) | ~two
    # a cut split with no training row repeated with both signs (such a pair is never
    # separated) may still be complete: it tries CUT_STEPS steps on all rows too, and only
    # their separability certificate ends it there (one fit on all rows, instead of the fit
    # of its rest and then the fit on all rows that a complete set's sampler starts from); a
    # quasi one goes on to the fit of its rest as the other cut splits
    hopeful = ~_repeated_both(rows[1], sign) & ~whole_or_one if early else np.zeros(S, bool)
    sure = np.zeros(S, dtype=bool)
    for group, steps, whole in ((np.flatnonzero(whole_or_one), FIRST_STEPS, True),
                                (np.flatnonzero(hopeful), CUT_STEPS, False)):
        if not group.size:
            continue
        Zp, sp = ((Z1, sign) if group.size == S and Z1 is not None
                  else (stack(group), sign[group]))
        first = fit_newton(Zp, sp, stop_when_separable=True, tol=tol,
                           max_iter=min(max_iter, steps), budget=budget)
        ok = first.separable
        if whole:  # or overlapping (certified): a split the peel cut is not
            mu = sp * np.matmul(Zp, first.theta[:, :, None])[:, :, 0]  # (s, m)
            ok = ok | overlap_certified(mu, np.ones((group.size, m), dtype=bool),
                                        first.converged)
        sure[group[ok]] = True
        code[group[first.separable]] = COMPLETE
        ready[group[first.separable]] = True
        theta[group[ok]], n_iter[group[ok]], converged[group[ok]] = (
            first.theta[ok], first.n_iter[ok], first.converged[ok])
    if not early:
        rest = np.flatnonzero(~sure)
        separated[rest] = peel(rest)
    every = separated.all(axis=1) & ~sure  # peeled to the last row: complete
    code[every] = COMPLETE

    # the distinct rows with a row of zeros after them, and each training row's index
    zero = None if rows is None else (np.concatenate([rows[0], np.zeros((1, P))]), rows[1])

    def rest_nonzeros(splits: np.ndarray):
        """The non-zeros of the rows not separated (``fit_newton``'s ``nonzeros``), read
        from the distinct rows' (none without them)."""
        if zero is None:
            return None
        return listed_rows(*_distinct_nonzeros(rows[0]),
                           np.ascontiguousarray(rows[1][splits], dtype=np.int64),
                           separated[splits])

    def rest_of(splits: np.ndarray):
        """The rows not separated of some splits, as ``fit_rest`` fits them: (the stack
        (s, m, P), the separated rows zeroed, the others as in Z1; its non-zeros, None
        without the distinct rows). Where Newton reads none of its entries
        (``newton.reads_stack``) the stack is a stand-in of its shape, not gathered, and
        the margins are read from the non-zeros (``margins``); the third item says whether
        the stack was gathered."""
        live = ~separated[splits]
        nz = rest_nonzeros(splits)
        if nz is not None and not reads_stack(m, P, nz[2]):
            return np.broadcast_to(0.0, (splits.size, m, P)), nz, False
        if zero is None:
            Zr = Z1[splits]
            Zr *= live[:, :, None]
        else:  # one gather from the distinct rows, a separated row read as the zero row
            Zr = zero[0][np.where(live, zero[1][splits], zero[0].shape[0] - 1)]
        return Zr, nz, True

    def part(rest, sel: np.ndarray):
        """``rest_of`` of the splits ``sel`` (indices into the splits it was made for)."""
        Zr, nz, gathered = rest
        Zr = Zr[sel] if gathered else np.broadcast_to(0.0, (sel.size,) + Zr.shape[1:])
        return Zr, None if nz is None else tuple(a[sel] for a in nz), gathered

    def margins(splits: np.ndarray, rest, th: np.ndarray) -> np.ndarray:
        """``sign * (z_i . th)`` of the splits' rows (s, m), the separated ones 0: from the
        stack, or from the non-zeros where the stack is a stand-in (what decides with them
        is checked: a certificate or a guess, the cost of a split, not its answer)."""
        Zr, nz, gathered = rest
        if not gathered:
            return sign[splits] * sparse_matvec(*nz, th)
        return sign[splits] * np.matmul(Zr, th[:, :, None])[:, :, 0]

    def fit_rest(splits: np.ndarray, stop: bool = False, cap: int | None = None,
                 start: tuple[np.ndarray, int] | None = None):
        """Newton on the rows not separated: the fit, its certificate and the rows it
        fitted (``rest_of``: what a later step reads of the rows not separated); ``cap``
        steps at most instead of ``max_iter``; ``start`` = (theta (s, P), k): the fit
        resumed from its iterate after k steps (Newton's step reads the iterate only, so
        the iterates are those of the fit run without the stop; ``n_iter`` counts the k)."""
        rest = rest_of(splits)
        res = fit_newton(rest[0], sign[splits], stop_when_separable=stop,
                         rows=~separated[splits], nonzeros=rest[1],
                         theta0=None if start is None else start[0],
                         **(newton if cap is None else {**newton, "max_iter": cap}))
        theta[splits], converged[splits] = res.theta, res.converged
        n_iter[splits] = res.n_iter + (0 if start is None else start[1])
        ok = overlap_certified(margins(splits, rest, res.theta), ~separated[splits],
                               res.converged)
        return res, ok & ~res.separable, rest

    def one_step(splits: np.ndarray, theta0: np.ndarray, rest):
        """One more Newton step of the rest's fit from ``theta0`` (s, P): each row's margin
        change (s, m) and whether a step was taken (s,); ``rest`` the rows ``fit_rest``
        fitted."""
        step = fit_newton(rest[0], sign[splits], rows=~separated[splits], tol=0.0,
                          max_iter=1, theta0=theta0, budget=budget, nonzeros=rest[1])
        moved = margins(splits, rest, step.theta - theta0)
        return moved, (step.theta != theta0).any(axis=1)

    def settled(splits: np.ndarray, res, ok: np.ndarray, rest) -> np.ndarray:
        """The certificate's second form, for converged fits with rows below the floor (an
        overlap set with very confident rows): one more Newton step moves no margin by more
        than STEP_FLOOR (at a divergent fit it adds about 1 to the separated rows'); ``rest``
        the rows ``fit_rest`` fitted."""
        out = np.zeros(splits.size, dtype=bool)
        weak = np.flatnonzero(~ok & ~res.separable & res.converged)
        if not weak.size:
            return out
        moved, taken = one_step(splits[weak], res.theta[weak], part(rest, weak))
        out[weak] = (np.abs(moved) <= STEP_FLOOR).all(axis=1) & taken
        return out

    def direction_of(splits: np.ndarray):
        """``max_margin_direction`` of some splits, read from the distinct rows if given."""
        if rows is None:
            return max_margin_direction(Z1[splits], sign[splits], separated[splits])
        return max_margin_direction(None, sign[splits], separated[splits],
                                    rows=(rows[0], rows[1][splits]))

    def decide(splits: np.ndarray, res, ok: np.ndarray, rest, cap: int, final: bool):
        """Steps 2-3 after a fit of the splits' rests (``fit_rest`` with at most ``cap``
        steps: ``res``, ``ok``, ``rest``): the splits it decides, and the guesses (below)
        tried. Returns the splits left to the LP and, unless ``final``, the positions in
        ``splits`` of those still running at the cap whose guess failed or that had none
        (their fit is to be resumed: the LP only after the last cap)."""
        ok = ok | settled(splits, res, ok, rest)
        code[splits[res.separable]] = COMPLETE  # the rest separable too
        # a split that peeled nothing and that Newton certified: its iterate is the start
        ready[splits[res.separable & ~separated[splits].any(axis=1)]] = True
        code[splits[ok]] = np.where(separated[splits[ok]].any(axis=1), QUASI, OVERLAP)
        # undecided: guess that the rows the fit left with sigma(-mu) below the floor are
        # separated, or for a fit stopped at the cap (running off), the rows one more step
        # moves by more than GUESS_MOVE; the fit of the others must then be certified, and
        # the direction problem of all of them feasible (a direction that separates them),
        # else the LP. (Every split left here is fitted again from the start once decided:
        # where this fit stopped changes the cost only.)
        left = ~ok & ~res.separable
        mu = margins(splits, rest, res.theta)  # read on R only
        guess = sigmoid_neg(mu) < CERTIFICATE_FLOOR
        running = left & ~res.converged & (res.n_iter == cap)
        capped = np.flatnonzero(running)
        if capped.size:
            guess[capped] = one_step(splits[capped], res.theta[capped],
                                     part(rest, capped))[0] > GUESS_MOVE
        guess &= ~separated[splits] & left[:, None]
        has = guess.any(axis=1)
        failed = np.zeros(splits.size, dtype=bool)
        if has.any():
            tried = splits[has]
            before = separated[tried].copy()
            separated[tried] |= guess[has]
            # before the last cap, the check's fit is capped too (a guess that misses rows
            # runs off): a correct guess it leaves unconverged is only tried again later
            ok2 = fit_rest(tried, cap=None if final else GUESS_STEPS)[1]
            code[tried[ok2]] = QUASI
            how[tried[ok2]] = GUESS
            separated[tried[~ok2]] = before[~ok2]
            failed[has] = ~ok2
        out = left & (failed | ~has)
        if final:
            return splits[out], np.empty(0, dtype=np.int64)
        return splits[out & ~running], np.flatnonzero(out & running)

    # the rest of each split fitted by Newton (the peeled rows zeroed); a split that peels
    # nothing is the plain fit of all its rows. First EARLY_STEPS steps: a fit that one more
    # step shows running off is guessed then; the others (and wrong guesses) resume to
    # GUESS_STEPS, the iterates of one uninterrupted fit (the guesses are checked: where
    # the fits stop changes the cost only)
    todo = np.flatnonzero(~every & ~sure)
    lp = np.empty(0, dtype=np.int64)
    if todo.size:
        cap = min(max_iter, GUESS_STEPS)
        early = min(cap, EARLY_STEPS)
        res, ok, rest = fit_rest(todo, stop=True, cap=early)
        lp, back = decide(todo, res, ok, rest, early, final=early == cap)
        del rest
        if back.size:
            res, ok, rest = fit_rest(todo[back], stop=True, cap=cap - early,
                                     start=(res.theta[back], early))
            lp = np.concatenate([lp, decide(todo[back], res, ok, rest, cap - early,
                                            final=True)[0]])
            del rest
    # the directions of the quasi sets; a guessed one without a direction goes to the LP
    quasi = np.flatnonzero(code == QUASI)
    direction[quasi], feasible = direction_of(quasi)
    wrong = quasi[~feasible]  # a wrong guess (or, never seen, rounding on peeled rows)
    separated[wrong] = peel(wrong)
    lp = np.sort(np.concatenate([lp, wrong]))
    found = separated_rows_many([sign[i, ~separated[i], None] * stack(i)[~separated[i]]
                                 for i in lp])  # the LP on the rows left after the peel
    for i, q in zip(lp, found, strict=True):
        how[i] = LP
        separated[i, np.flatnonzero(~separated[i])[q]] = True
        code[i] = COMPLETE if separated[i].all() else QUASI if separated[i].any() else OVERLAP
    again = lp[code[lp] == QUASI]  # the fit of its overlap rows, and its direction
    if again.size:
        fit_rest(again)
        direction[again], feasible = direction_of(again)
        # rows the LP took within its feasibility tolerance (1e-7) that no exact direction
        # separates (continuous rows nearly, not exactly, separable): only the peel's rows,
        # which are separated by construction, count
        doubt = again[~feasible]
        if doubt.size:
            separated[doubt] = peel(doubt)
            code[doubt] = np.where(separated[doubt].any(axis=1), QUASI, OVERLAP)
            fit_rest(doubt)
            still = doubt[code[doubt] == QUASI]
            direction[still], _ = direction_of(still)
    again = lp[code[lp] == OVERLAP]  # the fit of all rows (the LP found none separated)
    if again.size:
        fit_rest(again)
    separated[code == COMPLETE] = True
    separated[code == OVERLAP] = False
    direction[code != QUASI] = 0.0
    # a complete set: Newton's certified iterate on all rows (the sampler's start), as the
    # separable-set rule has always started from
    done = np.flatnonzero((code == COMPLETE) & ~ready)
    if done.size:
        res = fit_newton(stack(done), sign[done], stop_when_separable=True, **newton)
        theta[done], n_iter[done], converged[done] = res.theta, res.n_iter, res.converged
        for a in np.flatnonzero(~res.separable):  # certified by the peel or the LP only
            theta[done[a]] = separated_rows_lp(sign[done[a], :, None] * stack(done[a]))[1]
    return Detected(code, separated, theta, direction, n_iter, converged, how)


# --------------------------------------------------------------------------- the direction
def max_margin_direction(Z1: np.ndarray | None, sign: np.ndarray, separated: np.ndarray,
                         rank_rtol: float | None = None, kkt_rtol: float | None = None,
                         max_iter: int | None = None,
                         rows: tuple[np.ndarray, np.ndarray] | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """The direction in which a quasi set's penalised fit runs off as the penalty vanishes,
    (S, P): ``v* = argmin ||w||^2`` subject to ``A_i v >= 1`` on the separated rows Q and
    ``z_i . v = 0`` on the overlap rows R, ``v = (w, b)`` with the intercept b unpenalised
    (Rosset, Zhu & Hastie 2004, on the rows Q and within the recession cone, where every
    direction has ``A_R v = 0``).

    Z1 : (S, m, P); sign : (S, m); separated : (S, m) bool, Q of each split (non-empty, not
    every row). Returns the directions and whether each problem was feasible (False: some
    row of Q cannot be separated with ``z_i . v = 0`` on the others; its direction is 0).
    ``rank_rtol``: eigenvalues of the overlap rows' centred Gram matrix (below) at most
    ``rank_rtol`` times the largest are 0 (None: ``RANK_RTOL``); ``kkt_rtol`` the optimality
    check's tolerance (None: ``KKT_RTOL``), ``max_iter`` the fallback solver's step cap
    (``least_distance``). ``rows`` = (U, ids), U (u, P) and ids (S, m) with ``Z1[a, i] ==
    U[ids[a, i]]``: the same problems read from the distinct rows (Z1 may then be None),
    without the stack.

    Exactly, with no step size or stopping tolerance, in a basis of the directions with
    ``Z_R v = 0`` that is orthonormal in w: the weight columns split into C (used by some
    row of R), F (used by rows of Q only) and the rest (used by no row: their weight is 0 at
    the optimum). With ``X`` the rows of R on C and ``xbar`` their mean, ``X w_C + b = 0``
    on R is ``(X - xbar) w_C = 0`` with ``b = -xbar . w_C``: ``w_C = N u`` over an
    orthonormal basis N (c, k) of the null space of the centred rows (eigenvectors of their
    Gram matrix ``(X - xbar)^T (X - xbar)``, c by c), and ``w_F`` is free. In ``x = (w_F,
    u)``, ``||w||^2 = ||x||^2`` and row i of Q reads ``G_i x >= 1``, ``G_i = (A_iF, (A_iC -
    s_i xbar) N)`` (s_i its sign, the intercept column of A); then the least-distance problem
    ``min ||x||`` s.t. ``G x >= 1`` by the non-negative least squares of Lawson & Hanson
    (1974, ch. 23; a finite active-set method): ``y >= 0`` minimising ``|| [G^T; 1^T] y - e
    ||`` has residual ``r``, and ``x = -r[:-1] / r[-1]``, its optimality checked by the KKT
    conditions (``least_distance``: scipy's ``nnls``, and where its point fails the check at
    ``kkt_rtol``, our own Lawson-Hanson with at most ``max_iter`` steps). A split's repeated
    rows of Q are one constraint. The optimum does not depend on the basis: any other gives
    it up to rounding (``tests/unit/test_direction_basis.py`` checks it against the basis of
    all P columns' null space). The Gram matrices, the rows G and the directions are made by
    compiled passes over all splits (``kernels.direction``), the eigendecompositions batched
    over the splits whose C has the same size, the least-distance problems solved one split
    at a time.
    """
    # compiled (numba): imported where it runs, as the other kernels
    from nbvslr.kernels.direction import directions, least_margins, stack_problems

    rank_rtol = RANK_RTOL if rank_rtol is None else rank_rtol  # read at the call
    kkt_rtol = KKT_RTOL if kkt_rtol is None else kkt_rtol
    if rows is None:  # the stack's distinct rows (a row repeated is one constraint)
        S, m, P = Z1.shape
        U, ids = _distinct(np.ascontiguousarray(Z1, dtype=np.float64).reshape(S * m, P))
        ids = ids.reshape(S, m)
    else:
        U, ids = rows[0], np.ascontiguousarray(rows[1], dtype=np.int64)
        (S, m), P = ids.shape, U.shape[1]
    separated = np.ascontiguousarray(separated, dtype=bool)
    out = np.zeros((S, P))
    feasible = np.ones(S, dtype=bool)
    if not S:
        return out, feasible
    used, c_ptr, mean, nt_off, NT, k = _overlap_null_spaces(U, ids, separated, rank_rtol)
    keys = _keys(U) if rows is not None else U @ np.sqrt(np.arange(2.0, P + 2.0))  # (u,)
    AQ, ptr = _distinct_separated(U, ids, keys, sign, separated)  # (n, P) distinct rows
    in_q = np.logical_or.reduceat(AQ[:, :-1] != 0.0, ptr[:-1], axis=0)  # (S, P - 1)
    free = in_q & ~used  # F: columns Q uses and R does not
    nfree = free.sum(axis=1)
    width = nfree + k
    rows = np.diff(ptr)
    g_off = np.zeros(S + 1, dtype=np.int64)
    np.cumsum(rows * width, out=g_off[1:])
    G = np.empty(g_off[-1])
    stack_problems(AQ, ptr, free, used, c_ptr, mean, nt_off, NT, k, g_off, G)
    y = np.zeros(AQ.shape[0])
    for a in range(S):  # the least-distance problems, certified optimal
        Ga = G[g_off[a]:g_off[a + 1]].reshape(rows[a], width[a])
        ya, feasible[a], _ = least_distance(Ga, rtol=kkt_rtol, max_iter=max_iter)
        y[ptr[a]:ptr[a + 1]] = ya
    # infeasible: some row of Q cannot be separated (its direction stays 0)
    directions(G, g_off, width, nfree, y, ptr, free, used, c_ptr, mean, nt_off, NT,
               feasible, out)
    low = np.empty(S)
    least_margins(AQ, ptr, out, low)
    feasible &= low >= 0.5  # >= 1 but for rounding
    return out, feasible


def _overlap_null_spaces(U: np.ndarray, ids: np.ndarray, separated: np.ndarray,
                         rank_rtol: float):
    """For each split of ``max_margin_direction`` (its rows ``U[ids]``, U (u, P) the
    distinct rows, ids (S, m)), the weight columns C its overlap rows use,
    their mean on C and an orthonormal basis N of the null space of the centred rows:
    used (S, P - 1) bool (C), c_ptr (S + 1,) and mean (flat: split a's c means at
    ``c_ptr[a]``), nt_off (S,) and NT (flat: split a's N transposed, (k_a, c_a) row-major at
    ``nt_off[a]``), k (S,) int64 (the null spaces' dimensions). The Gram matrices are made
    by one compiled pass (``kernels.direction``), the eigendecompositions stacked by c."""
    from nbvslr.kernels.direction import overlap_columns, overlap_grams

    S, P = ids.shape[0], U.shape[1]
    used = np.zeros((S, P - 1), dtype=bool)
    count = np.zeros(S, dtype=np.int64)
    overlap_columns(U, ids, separated, used, count)
    width = used.sum(axis=1)
    c_ptr = np.zeros(S + 1, dtype=np.int64)
    np.cumsum(width, out=c_ptr[1:])
    g_ptr = np.zeros(S + 1, dtype=np.int64)
    np.cumsum(width * width, out=g_ptr[1:])
    mean = np.zeros(c_ptr[-1])
    gram = np.zeros(g_ptr[-1])
    overlap_grams(U, ids, separated, used, count, c_ptr, mean, g_ptr, gram)
    k = np.zeros(S, dtype=np.int64)
    nt_off = np.zeros(S, dtype=np.int64)
    parts, at = [], 0
    for c in np.unique(width[width > 0]):
        group = np.flatnonzero(width == c)
        stack = gram[g_ptr[group][:, None] + np.arange(c * c)].reshape(-1, c, c)
        ev, V = np.linalg.eigh(stack)  # ascending
        null = ev <= ev[:, -1:] * rank_rtol  # (g, c)
        k[group] = null.sum(axis=1)
        nt_off[group] = at + c * (np.cumsum(k[group]) - k[group])
        block = V.transpose(0, 2, 1)[null]  # (sum k, c): each split's null vectors, rows
        parts.append(block.reshape(-1))
        at += block.size
    NT = np.concatenate(parts) if parts else np.zeros(0)
    return used, c_ptr, mean, nt_off, NT, k


def _distinct_separated(U: np.ndarray, ids: np.ndarray, keys: np.ndarray, sign: np.ndarray,
                        separated: np.ndarray):
    """The distinct rows of ``A_Q = sign * Z1`` on each split's separated rows, all splits
    at once (the rows ``Z1[a, i] = U[ids[a, i]]``, U (u, P), ids (S, m); keys (u,) U's rows'
    keys as ``_distinct`` makes them): (n, P), split a's in rows ``ptr[a]:ptr[a + 1]`` (ptr
    (S + 1,)), ordered as ``_distinct`` orders them (by key, each row's first occurrence);
    only those rows are gathered (a row's key times its sign is the key of its row of A,
    exactly)."""
    S, m = ids.shape
    at = np.flatnonzero(separated)  # split * m + row, by split then row
    row = ids.reshape(-1).take(at)
    key = keys.take(row) * sign.reshape(-1).take(at)
    split = at // m
    # a row of A exactly: its distinct row of U and its sign (keys are not unique:
    # ``_distinct``); stable: a key's first row first, rows sharing a key each kept
    exact = 2 * row + (sign.reshape(-1).take(at) > 0)
    order = np.lexsort((exact, key, split))
    key, split, exact = key[order], split[order], exact[order]
    first = np.ones(order.size, dtype=bool)
    first[1:] = (key[1:] != key[:-1]) | (split[1:] != split[:-1]) | (exact[1:] != exact[:-1])
    pick = order[first]
    A = U.take(row.take(pick), axis=0)
    A *= sign.reshape(-1).take(at.take(pick))[:, None]
    ptr = np.zeros(S + 1, dtype=np.int64)
    np.cumsum(np.bincount(split[first], minlength=S), out=ptr[1:])
    return A, ptr


#: ``_keys`` of the last distinct rows it was given (held, as ``_LAST``).
_LAST_KEYS: tuple | None = None


def _keys(U: np.ndarray) -> np.ndarray:
    """Each row's key ``U @ sqrt(2, 3, ..., P + 1)`` (u,), as ``_distinct`` keys rows, kept
    for the next call with the same U (a design's distinct rows)."""
    global _LAST_KEYS
    last = _LAST_KEYS  # one read: another thread may replace it
    if last is not None and last[0] is U:
        return last[1]
    key = U @ np.sqrt(np.arange(2.0, U.shape[1] + 2.0))
    _LAST_KEYS = (U, key)
    return key
