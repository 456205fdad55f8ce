"""Random train/test splits: which rows train the models for (task, m, split).

The rule (Ng & Jordan, footnote 2): for each training-set size m, draw a random training
set of m rows that holds at least one example of each class; the test set is every other
row. Every model sees the same training sets (the comparison is paired).

Seeds
-----
Each (task, m, split) has its own ``SeedSequence(entropy=seed, spawn_key=(task_key, m,
split))``, where ``task_key`` is a stable hash of the task's name (sha256, never Python's
salted ``hash()``). Its child 0 draws the training set, its child 1 seeds the model (e.g. the
sampler of separating hyperplanes). Nothing depends on run order, so results are the same
whatever ``--jobs``, the backend, the grouping of splits into work units, or resuming.
``kernels.draws`` redoes numpy's seeding and drawing in compiled code, bit for bit.

The both-classes rule (every class, for K > 2)
----------------------------------------------
The exact law is "a uniform m-subset, conditioned on both classes being present". It is
drawn by rejection: draw uniform m-subsets until one holds both classes, at most
``MAX_TRIES`` times. Only when every try fails (probability ``P(one class)**MAX_TRIES``, e.g.
below 1e-5 for m = 2 on a task with 6 % positives) does the draw fall back to a forced one:
one positive and one negative drawn uniformly, then m - 2 rows uniformly from the rest. The
forced law slightly over-weights sets with few minority rows; it is used so rarely that the
mean error cannot move by a visible amount.

Labels ``0 .. K - 1`` with K > 2 follow the same rule with "every class present" for "both
classes present" (the draws are numpy's; the compiled kernel draws labels {0, 1} only), and
a forced draw starts with one row of each class in random order. A rare class makes the
forced draw common at small m (lymphography-4 has 2 rows of class 0): the law is then that
of "one row of each class, the rest uniform". A binary task draws exactly what it always did.

Nested mode
-----------
With ``nested=True`` each split index draws one random ordering of all rows, and the
training set of size m is its first m rows, so the sets of one split grow with m. The
ordering is a lazy Fisher-Yates shuffle (O(m) per split, whatever N is), drawn by rejection
until its prefix of the grid's smallest size holds both classes; every longer prefix then
holds both classes too. The law is thus exact at the smallest size and, at larger sizes,
that of a uniform m-subset whose first ``min_size`` rows (in random order) are of both
classes. The forced fallback puts one positive and one negative, in random order, at the
front.
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np

from nbvslr.errors import SizeError, setting_error

MIN_SIZE = 2
"""The smallest training set: one row of each class."""

MAX_TRIES = 100
"""Rejection tries before the forced both-classes draw."""

_FULL_KEY = 0
"""The ``m`` slot of the seed of a fit on all rows: no training size is 0."""

_NESTED_KEY = 1
"""The ``m`` slot of nested orderings: no training size is 1, and one ordering serves all m."""


def task_key(name: str) -> int:
    """A stable 32-bit integer for a task name (same on every machine and Python run)."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "little")


class SplitSeeds(Sequence[np.random.SeedSequence]):
    """The seeds of a run of splits, each made when it is read.

    Item i is ``SeedSequence(entropy, spawn_key=(key, m, splits[i], child))``, built anew
    on every read: no reader sees children another one spawned, and a seed never read costs
    nothing (a model that needs none, like naive Bayes, or LR on a split that is not
    separable, reads none). Slicing gives the seeds of a sub-range.
    """

    def __init__(self, entropy: int, key: int, m: int, splits: Sequence[int], child: int):
        self._entropy, self._key, self._m, self._child = entropy, key, m, child
        self._splits = splits

    def __len__(self) -> int:
        return len(self._splits)

    @overload
    def __getitem__(self, i: int) -> np.random.SeedSequence: ...

    @overload
    def __getitem__(self, i: slice) -> SplitSeeds: ...

    def __getitem__(self, i: int | slice) -> np.random.SeedSequence | SplitSeeds:
        if isinstance(i, slice):
            return SplitSeeds(self._entropy, self._key, self._m, self._splits[i], self._child)
        split = int(self._splits[operator.index(i)])
        return np.random.SeedSequence(
            self._entropy, spawn_key=(self._key, self._m, split, self._child)
        )

    def take(self, indices: Sequence[int]) -> SplitSeeds:
        """The seeds at positions ``indices`` (e.g. the separable splits of a block)."""
        picked = [int(self._splits[operator.index(i)]) for i in indices]
        return SplitSeeds(self._entropy, self._key, self._m, picked, self._child)

    def compiled(self) -> bool:
        """Whether ``kernels.draws`` can rebuild these seeds: at least one, every split index
        in [0, 2**63) (numpy's SeedSequence takes any integer >= 0; the runner's are below
        ``config.MAX_SPLITS``)."""
        if not len(self._splits):
            return False
        return 0 <= min(self._splits) and max(self._splits) < 2**63

    def entropy_words(self) -> tuple[np.ndarray, np.ndarray, int]:
        """What ``kernels.draws.draw_sets`` needs to rebuild these seeds in compiled code.

        Returns
        -------
        prefix : ndarray of uint64
            The 32-bit entropy words shared by every seed: the base seed (zero-padded to
            the pool size, as ``SeedSequence`` pads it when a spawn key follows), the task
            key and m.
        splits : ndarray of shape (S,), int64
        child : int
        """
        from nbvslr.kernels.draws import POOL_SIZE, int_words

        words = int_words(self._entropy)
        words += [0] * (POOL_SIZE - len(words))
        words += int_words(self._key) + int_words(self._m)
        splits = np.fromiter((int(s) for s in self._splits), dtype=np.int64)
        return np.array(words, dtype=np.uint64), splits, self._child


def split_seeds(
    seed: int, task: str, m: int, splits: Sequence[int], *, nested: bool = False
) -> tuple[SplitSeeds, SplitSeeds]:
    """Seeds for the split draws and for the models, one of each per split index.

    Parameters
    ----------
    seed : int
        The run's base seed (``>= 0``).
    task : str
        Task name.
    m : int
        Training-set size.
    splits : sequence of int
        Split indices (e.g. ``range(250, 500)`` for one block).
    nested : bool
        Nested orderings are shared by all sizes, so their draw seed does not depend on m;
        the model seed always does.

    Returns
    -------
    draw : SplitSeeds, one SeedSequence per split
    model : SplitSeeds, one SeedSequence per split
    """
    key = task_key(task)
    draw_m = _NESTED_KEY if nested else m
    return SplitSeeds(seed, key, draw_m, splits, 0), SplitSeeds(seed, key, m, splits, 1)


def each_generator(seeds: Sequence[np.random.SeedSequence]) -> Iterator[np.random.Generator]:
    """``np.random.default_rng(seed)`` for each seed in turn: the same streams, bit for bit.

    For ``SplitSeeds`` the PCG64 states are computed in compiled code (``kernels.draws``)
    and set on one reused generator, several times quicker than numpy's ``SeedSequence``
    and ``default_rng`` (benchmarks/RESULTS.md). The generator yielded is valid until the
    next one is asked for: draw from it, do not keep it.
    """
    if not (isinstance(seeds, SplitSeeds) and seeds.compiled()):
        for ss in seeds:
            yield np.random.default_rng(ss)
        return
    from nbvslr.kernels.draws import seed_states

    states = seed_states(*seeds.entropy_words())  # (S, 4): state and inc, high words first
    bits = np.random.PCG64()
    gen = np.random.Generator(bits)
    for s_hi, s_lo, i_hi, i_lo in states.tolist():
        bits.state = {"bit_generator": "PCG64",
                      "state": {"state": (s_hi << 64) | s_lo, "inc": (i_hi << 64) | i_lo},
                      "has_uint32": 0, "uinteger": 0}
        yield gen


def full_seed(seed: int, task: str) -> np.random.SeedSequence:
    """The model seed of the fit on all rows (the asymptotic-error estimate)."""
    return np.random.SeedSequence(seed, spawn_key=(task_key(task), _FULL_KEY, 0, 1))


def n_classes_of(y: np.ndarray) -> int:
    """K of labels ``y`` (N,) in ``0 .. K - 1``: 2 for binary labels, else ``max + 1``."""
    return max(2, int(np.max(y)) + 1) if np.size(y) else 2


def _all_classes(labels: np.ndarray, n_classes: int) -> bool:
    """Whether ``labels`` (k,) hold every class (for K = 2 the test the draws always made)."""
    if n_classes == 2:
        return bool(labels.min() != labels.max())
    return bool(np.bincount(labels, minlength=n_classes).all())


def _forced_order(y: np.ndarray, rng: np.random.Generator, k: int) -> np.ndarray:
    """First k rows of an ordering that starts with one positive and one negative (K > 2:
    one row of each class, in random order).

    Returns ndarray of shape (k,), k >= K.
    """
    K = n_classes_of(y)
    if K > 2:
        heads = np.array([c[rng.integers(c.size)]
                          for c in (np.flatnonzero(y == j) for j in range(K))])
        heads = heads[rng.permutation(K)]
        rest = np.setdiff1d(np.arange(y.size), heads, assume_unique=True)
        return np.concatenate([heads, rest[rng.permutation(rest.size)[: k - K]]])
    pos = np.flatnonzero(y == 1)
    neg = np.flatnonzero(y != 1)
    pair = np.array([pos[rng.integers(pos.size)], neg[rng.integers(neg.size)]])
    pair = pair[rng.permutation(2)]
    rest = np.setdiff1d(np.arange(y.size), pair, assume_unique=True)
    return np.concatenate([pair, rest[rng.permutation(rest.size)[: k - 2]]])


def check_size(m: int, n_rows: int, task: str = "the data", source: str | None = None,
               n_classes: int = 2) -> None:
    """The one rule of a training-set size: ``max(MIN_SIZE, K) <= m <= N - 1`` (one row of
    each of the K classes to train on, at least one row to test on); ``SizeError``
    otherwise."""
    if m < MIN_SIZE:
        raise setting_error(
            "sizes", f"a training set needs at least {MIN_SIZE} rows, one per class", m,
            f"use sizes >= {MIN_SIZE}", source, SizeError)
    if m < n_classes:
        raise setting_error(
            "sizes", f"a training set of {task} needs at least K = {n_classes} rows, one per "
            "class", m, f"use sizes >= {n_classes}", source, SizeError)
    if m > n_rows - 1:
        # the size leads the message, so the value is not repeated after it ("")
        raise setting_error(
            "sizes", f"{m} is too large for {task}: a training set can take at most "
            f"{n_rows - 1} of its {n_rows} rows, as at least one row must be left to test on",
            "", f"use sizes of at most {n_rows - 1}", source, SizeError)


def _check(y: np.ndarray, m: int) -> None:
    n_pos = int(np.count_nonzero(y == 1))
    if n_pos == 0 or n_pos == y.size:
        raise ValueError("both classes must be present in the data")
    K = n_classes_of(y)
    if K > 2 and not np.bincount(y, minlength=K).all():
        raise ValueError(f"every class 0 .. {K - 1} must be present in the data")
    check_size(m, y.size, n_classes=K)


def draw_train_sets(
    y: np.ndarray, m: int, seeds: Sequence[np.random.SeedSequence]
) -> np.ndarray:
    """Training sets of m rows, each holding every class (see the module docstring).

    Parameters
    ----------
    y : ndarray of shape (N,)
        Labels in {0, 1}, both present; or ``0 .. K - 1``, each present.
    m : int
        Training-set size, ``max(2, K) <= m <= N - 1`` (at least one test row).
    seeds : sequence of SeedSequence, length S
        One draw seed per split.

    Returns
    -------
    train_idx : ndarray of shape (S, m), int64
        Row indices, sorted within each split; the test set is every other row.
    """
    y = np.asarray(y)
    _check(y, m)
    out = np.empty((len(seeds), m), dtype=np.int64)  # (S, m)
    K = n_classes_of(y)
    # two classes: the kernel tests y == 1, numpy's test (min != max) only on labels 0 and
    # 1 (labels such as -1, 0, 1 are two "classes" to n_classes_of, three to min != max)
    coded = K > 2 or bool(np.all((y == 0) | (y == 1)))
    if not (isinstance(seeds, SplitSeeds) and seeds.compiled() and coded):
        for i, ss in enumerate(seeds):
            out[i] = _draw_one(y, m, ss)
        return out
    from nbvslr.kernels.draws import draw_sets

    prefix, splits, child = seeds.entropy_words()
    S = len(seeds)
    failed = np.zeros(S, dtype=bool)
    states = np.zeros((S, 6), dtype=np.uint64)
    codes = np.ascontiguousarray(y == 1 if K == 2 else y, dtype=np.int64)  # (N,)
    draw_sets(codes, m, K, prefix, splits, child, MAX_TRIES, out, failed, states)
    out.sort(axis=1)
    if failed.any():  # every try missed a class: the forced draw, from where they left off
        bits = np.random.PCG64()
        gen = np.random.Generator(bits)
        for i in np.flatnonzero(failed):
            s_hi, s_lo, i_hi, i_lo, has32, word = states[i].tolist()
            bits.state = {"bit_generator": "PCG64",
                          "state": {"state": (s_hi << 64) | s_lo, "inc": (i_hi << 64) | i_lo},
                          "has_uint32": has32, "uinteger": word}
            out[i] = np.sort(_forced_order(y, gen, m))
    return out


def _draw_one(y: np.ndarray, m: int, ss: np.random.SeedSequence) -> np.ndarray:
    """One split's training set, drawn by numpy (``kernels.draws`` draws the same rows).

    Returns ndarray of shape (m,), int64, sorted.
    """
    rng = np.random.default_rng(ss)
    K = n_classes_of(y)
    for _ in range(MAX_TRIES):
        idx = rng.choice(y.size, size=m, replace=False, shuffle=False)
        if _all_classes(y[idx], K):  # every class present
            break
    else:
        idx = _forced_order(y, rng, m)
    return np.sort(idx)


def _ordering_prefix(rng: np.random.Generator, n: int, start: int, k: int, swaps: dict) -> list:
    """Positions ``start .. k - 1`` of a lazy Fisher-Yates shuffle of ``range(n)``.

    Step i swaps position i with a uniform position j in [i, n); ``swaps`` holds the moved
    entries, so the cost is O(k), not O(n). One uniform double is consumed per position, in
    order, so a prefix never depends on how far the shuffle is carried.
    """
    i = np.arange(start, k)
    js = i + np.floor(rng.random(k - start) * (n - i)).astype(np.int64)  # uniform in [i, n)
    out = []
    for a, b in zip(i.tolist(), js.tolist(), strict=True):
        vb = swaps.get(b, b)
        swaps[b] = swaps.get(a, a)
        out.append(vb)
    return out


def draw_nested_orders(
    y: np.ndarray, k: int, min_size: int, seeds: Sequence[np.random.SeedSequence]
) -> np.ndarray:
    """The first k rows of one random ordering per split, for nested training sets.

    The training set of size m of split s is ``orders[s, :m]`` for every m <= k, and the
    prefix of a split's ordering is the same whatever k is asked for.

    Parameters
    ----------
    y : ndarray of shape (N,)
        Labels in {0, 1}, both present.
    k : int
        Prefix length to return, ``min_size <= k <= N - 1``.
    min_size : int
        The grid's smallest size: the ordering is drawn until its first ``min_size`` rows
        hold both classes (``>= 2``).
    seeds : sequence of SeedSequence, length S
        One draw seed per split index, the same for every m.

    Returns
    -------
    orders : ndarray of shape (S, k), int64
        In draw order (not sorted): prefixes are the nested training sets.
    """
    y = np.asarray(y)
    _check(y, min_size)
    _check(y, k)
    if k < min_size:
        raise ValueError(f"k ({k}) must be >= min_size ({min_size})")
    n = y.size
    K = n_classes_of(y)
    out = np.empty((len(seeds), k), dtype=np.int64)  # (S, k)
    for s, ss in enumerate(seeds):
        rng = np.random.default_rng(ss)
        for _ in range(MAX_TRIES):
            swaps: dict[int, int] = {}
            head = _ordering_prefix(rng, n, 0, min_size, swaps)
            if _all_classes(y[head], K):  # every class in the smallest prefix
                tail = _ordering_prefix(rng, n, min_size, k, swaps)
                break
        else:
            forced = _forced_order(y, rng, k)
            head, tail = forced[:min_size].tolist(), forced[min_size:].tolist()
        out[s, :min_size] = head
        out[s, min_size:] = tail
    return out


def nested_train_sets(
    y: np.ndarray, m: int, min_size: int, seeds: Sequence[np.random.SeedSequence]
) -> np.ndarray:
    """Nested training sets of size m: the sorted first m rows of each split's ordering.

    Returns ndarray of shape (S, m), int64.
    """
    return np.sort(draw_nested_orders(y, m, min_size, seeds), axis=1)
