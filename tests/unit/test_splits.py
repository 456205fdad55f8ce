"""Split drawing: both classes, the exact conditional law, seeds, nesting."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from nbvslr import splits
from nbvslr.errors import SizeError
from nbvslr.splits import (
    draw_nested_orders,
    draw_train_sets,
    full_seed,
    nested_train_sets,
    split_seeds,
    task_key,
)

Y_SMALL = np.array([1, 1, 0, 0, 0, 0, 0, 0], dtype=np.int8)  # N = 8, two positives


def _valid_subsets(y: np.ndarray, m: int) -> list[tuple[int, ...]]:
    return [
        s for s in itertools.combinations(range(y.size), m) if 0 < y[list(s)].sum() < m
    ]


def _assert_uniform(sets: np.ndarray, support: list[tuple[int, ...]]) -> None:
    counts = Counter(map(tuple, sets.tolist()))
    assert set(counts) <= set(support), "a training set outside the both-classes support"
    n, k = sets.shape[0], len(support)
    p = 1 / k
    sd = math.sqrt(n * p * (1 - p))
    worst = max(abs(counts.get(s, 0) - n * p) for s in support)
    assert worst < 5 * sd, f"subset frequencies off by {worst:.1f} (5 sd = {5 * sd:.1f})"


def test_task_key_is_stable():
    """The task hash is sha256-based and fixed: changing it would silently change all draws."""
    assert task_key("pima") == 2231437775
    assert task_key("adult-discrete") == 3516269246


def test_seeds_separate_draws_models_and_splits():
    """Draw and model seeds of one split differ, and differ across splits, sizes and tasks."""
    draw, model = split_seeds(0, "pima", 5, range(3))
    states = {tuple(s.generate_state(4)) for s in [*draw, *model]}
    draw6, _ = split_seeds(0, "pima", 6, range(3))
    drawl, _ = split_seeds(0, "liver", 5, range(3))
    states |= {tuple(s.generate_state(4)) for s in [*draw6, *drawl]}
    states.add(tuple(full_seed(0, "pima").generate_state(4)))
    assert len(states) == 13


def _numpy_draws(y: np.ndarray, m: int, seeds) -> np.ndarray:
    """The draw as numpy makes it, one split at a time (the compiled draw's oracle)."""
    return np.array([splits._draw_one(y, m, seeds[i]) for i in range(len(seeds))])


@pytest.mark.parametrize(
    ("n", "positives", "m", "seed", "n_splits"),
    [
        (50, 0.5, 5, 0, 200),
        (768, 0.35, 32, 3, 200),
        (48842, 0.24, 382, 2**33 + 1, 50),  # adult's size: Floyd's algorithm
        (48842, 0.24, 3000, 7, 5),  # N > 10000 and m > N // 20: numpy's tail shuffle
        (20000, 0.001, 2, 0, 200),  # most first tries miss a class: rejection
        (3000, 0.0004, 2, 1, 100),  # one positive: every try can fail (forced draw)
        (15, 0.3, 14, 2**70 + 5, 100),  # a seed wider than 64 bits; m = N - 1
    ],
)
def test_compiled_draw_is_numpys_draw(n, positives, m, seed, n_splits):
    """The compiled draw gives numpy's per-split ``Generator.choice`` rows, bit for bit,
    on both of numpy's ``choice`` paths, through rejections and the forced fallback."""
    rng = np.random.default_rng(n)
    y = (rng.random(n) < positives).astype(np.int64)
    y[:2] = [1, 0]
    draw, _ = split_seeds(seed, f"task-{n}", m, range(1000, 1000 + n_splits))
    got = draw_train_sets(y, m, draw)
    np.testing.assert_array_equal(got, _numpy_draws(y, m, draw))
    # a plain list of the same seeds takes numpy's path: the same rows again
    np.testing.assert_array_equal(draw_train_sets(y, m, list(draw)), got)


@pytest.mark.parametrize(
    ("counts", "m", "n_splits"),
    [
        ((30, 30, 30), 3, 200),  # most tries miss a class: rejection, some forced draws
        ((554, 571, 557, 572, 568, 558, 558, 566, 554, 562), 10, 100),  # optdigits: forced
        ((554, 571, 557, 572, 568, 558, 558, 566, 554, 562), 40, 100),  # a few tries
        ((2, 81, 61, 4), 8, 200),  # lymphography: two rare classes
        ((40, 40, 1), 4, 50),  # one row of class 2: every try can fail
        ((4000, 4000, 3000, 2), 600, 20),  # N > 10000, m > N // 20: the tail shuffle
    ],
)
def test_compiled_draw_of_k_classes_is_numpys_draw(counts, m, n_splits):
    """K > 2 classes: the compiled draw's rows are numpy's per-split rows, bit for bit,
    the forced draw included (it continues from the generator the tries left)."""
    y = np.repeat(np.arange(len(counts)), counts)
    np.random.default_rng(len(counts)).shuffle(y)
    draw, _ = split_seeds(5, f"k-{len(counts)}", m, range(n_splits))
    got = draw_train_sets(y, m, draw)
    np.testing.assert_array_equal(got, _numpy_draws(y, m, draw))
    np.testing.assert_array_equal(draw_train_sets(y, m, list(draw)), got)


@pytest.mark.parametrize("labels", [(-1, 0, 1), (0.0, 0.5, 1.0)])
def test_two_class_labels_other_than_0_and_1_are_drawn_by_numpy(labels):
    """Labels that are two classes to ``n_classes_of`` but not 0 and 1 (here three values):
    numpy's test (min != max) takes a set the compiled one (y == 1) refuses, so they are
    drawn by numpy, the rows they always got."""
    y = np.repeat(np.array(labels), 10)
    np.random.default_rng(0).shuffle(y)
    draw, _ = split_seeds(1, "odd", 2, range(200))
    np.testing.assert_array_equal(draw_train_sets(y, 2, draw), _numpy_draws(y, 2, draw))


def test_draws_outside_the_compiled_range_are_numpys():
    """Split indices the compiled seeding does not take (2**63 and above, negative) are drawn
    by numpy, as before: same rows, same errors."""
    y = np.array([1, 0] * 10)
    big, _ = split_seeds(0, "t", 3, [2**63, 2**64 + 5])
    np.testing.assert_array_equal(draw_train_sets(y, 3, big), _numpy_draws(y, 3, big))
    negative, _ = split_seeds(0, "t", 3, [-1])
    with pytest.raises(ValueError):
        draw_train_sets(y, 3, negative)


def test_three_classes_every_class_in_every_training_set():
    """Labels 0 .. K - 1 (K = 3) put every class in every training set, by rejection and,
    for a rare class, the forced draw; a size below K is a SizeError naming K."""
    three = np.array([1, 0, 2] * 10)
    draw, _ = split_seeds(0, "t", 3, range(200))
    got = draw_train_sets(three, 3, draw)
    assert all(set(three[row]) == {0, 1, 2} for row in got)
    rare = np.array([0] * 40 + [1] * 40 + [2])  # one row of class 2
    draw, _ = split_seeds(0, "t", 4, range(100))
    got = draw_train_sets(rare, 4, draw)
    assert (got == 80).any(axis=1).all()  # the forced draws hold the one row of class 2
    assert all(len(set(rare[row])) == 3 and len(set(row)) == 4 for row in got)
    draw2, _ = split_seeds(0, "t", 2, range(5))
    with pytest.raises(SizeError, match="K = 3"):
        draw_train_sets(three, 2, draw2)


def test_each_generator_is_default_rng():
    """The generators made from compiled seed states give numpy's own streams (normals,
    integers, uniforms), for SplitSeeds and for a subset taken from them."""
    _, model = split_seeds(2**40 + 7, "pima", 10, range(5, 300))

    def draws(gen):
        return [*gen.standard_normal(7).tolist(), *gen.integers(0, 10**9, 3).tolist(),
                gen.random()]

    want = [draws(np.random.default_rng(ss)) for ss in model]
    assert [draws(g) for g in splits.each_generator(model)] == want
    picked = model.take([3, 0, 250])
    assert [draws(g) for g in splits.each_generator(picked)] == [want[3], want[0], want[250]]
    assert [draws(g) for g in splits.each_generator(list(picked))] == [want[3], want[0],
                                                                        want[250]]


def test_block_grouping_does_not_change_draws():
    """Splits 0..9 drawn at once equal splits 0..3 and 4..9 drawn as two blocks."""
    y = np.array([1] * 10 + [0] * 30)
    whole = draw_train_sets(y, 7, split_seeds(3, "t", 7, range(10))[0])
    a = draw_train_sets(y, 7, split_seeds(3, "t", 7, range(4))[0])
    b = draw_train_sets(y, 7, split_seeds(3, "t", 7, range(4, 10))[0])
    np.testing.assert_array_equal(whole, np.vstack([a, b]))


@pytest.mark.parametrize("m", [2, 3, 6, 39])
def test_every_training_set_holds_both_classes(m):
    """Each training set has m distinct sorted rows of both classes and leaves a test row."""
    y = np.zeros(40, dtype=np.int8)
    y[17] = 1  # a single positive: most uniform draws miss it
    sets = draw_train_sets(y, m, split_seeds(0, "one-positive", m, range(300))[0])
    assert sets.shape == (300, m)
    assert (np.diff(sets, axis=1) > 0).all()
    assert ((sets >= 0) & (sets < 40)).all()
    labels = y[sets]
    assert (labels.max(axis=1) == 1).all() and (labels.min(axis=1) == 0).all()


def test_forced_fallback_holds_both_classes(monkeypatch):
    """With no rejection tries left, the forced draw still gives valid both-class sets."""
    monkeypatch.setattr(splits, "MAX_TRIES", 0)
    y = np.array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0])
    sets = draw_train_sets(y, 4, split_seeds(0, "t", 4, range(200))[0])
    assert (np.diff(sets, axis=1) > 0).all()
    assert ((y[sets].sum(axis=1) > 0) & (y[sets].sum(axis=1) < 4)).all()
    orders = draw_nested_orders(y, 6, 2, split_seeds(0, "t", 6, range(200), nested=True)[0])
    assert (y[orders[:, :2]].sum(axis=1) == 1).all()
    assert all(len(set(row)) == 6 for row in orders.tolist())


def test_rejection_draw_is_the_exact_conditional_law():
    """Each both-classes m-subset is equally likely (the paper's conditional law)."""
    m = 3
    sets = draw_train_sets(Y_SMALL, m, split_seeds(1, "law", m, range(3000))[0])
    _assert_uniform(sets, _valid_subsets(Y_SMALL, m))


def test_positive_count_follows_the_conditioned_hypergeometric():
    """The number of positives per training set matches the law given both classes."""
    y = np.array([1] * 3 + [0] * 9)
    m, n_splits = 6, 4000
    sets = draw_train_sets(y, m, split_seeds(5, "hyper", m, range(n_splits))[0])
    got = np.bincount(y[sets].sum(axis=1), minlength=m + 1) / n_splits
    weights = np.array([math.comb(3, k) * math.comb(9, m - k) for k in range(m + 1)], float)
    weights[[0, m]] = 0.0  # one-class sets are excluded
    want = weights / weights.sum()
    sd = np.sqrt(want * (1 - want) / n_splits)
    assert np.all(np.abs(got - want) <= 5 * sd + 1e-12), (got, want)


def test_row_inclusion_frequency():
    """Each row is in a training set about as often as the conditional law says."""
    y = np.array([1] * 6 + [0] * 24)
    m, n_splits = 5, 4000
    sets = draw_train_sets(y, m, split_seeds(2, "freq", m, range(n_splits))[0])
    freq = np.bincount(sets.ravel(), minlength=y.size) / n_splits
    valid = _valid_subsets(y, m)
    expected = np.bincount(np.array(valid).ravel(), minlength=y.size) / len(valid)
    sd = np.sqrt(expected * (1 - expected) / n_splits)
    assert np.all(np.abs(freq - expected) < 5 * sd)
    # positives are rarer than negatives but over-represented by the conditioning
    assert expected[0] > m / y.size > expected[-1] * 0.9


def test_nested_sets_grow_with_m():
    """In nested mode the training set of each split at m is inside the one at m' > m."""
    y = np.array([1] * 10 + [0] * 50)
    draw = split_seeds(0, "nest", 0, range(50), nested=True)[0]
    small = nested_train_sets(y, 4, 4, draw)
    large = nested_train_sets(y, 20, 4, draw)
    for a, b in zip(small.tolist(), large.tolist(), strict=True):
        assert set(a) <= set(b)
    assert (y[small].min(axis=1) == 0).all() and (y[small].max(axis=1) == 1).all()
    # The ordering's prefix does not depend on how long a prefix is asked for.
    np.testing.assert_array_equal(
        draw_nested_orders(y, 30, 4, draw)[:, :9], draw_nested_orders(y, 9, 4, draw)
    )


def test_nested_seeds_do_not_depend_on_m():
    """Nested draw seeds are shared by all sizes; model seeds are not."""
    d5, m5 = split_seeds(0, "t", 5, range(2), nested=True)
    d9, m9 = split_seeds(0, "t", 9, range(2), nested=True)
    assert [s.spawn_key for s in d5] == [s.spawn_key for s in d9]
    assert [s.spawn_key for s in m5] != [s.spawn_key for s in m9]


def test_nested_smallest_size_has_the_conditional_law():
    """At the grid's smallest size nested sets follow the exact conditional law."""
    m = 3
    draw = split_seeds(4, "nest-law", 0, range(3000), nested=True)[0]
    sets = nested_train_sets(Y_SMALL, m, m, draw)
    _assert_uniform(sets, _valid_subsets(Y_SMALL, m))


@pytest.mark.parametrize("m", [1, 8, 9])
def test_sizes_outside_two_to_n_minus_one_are_refused(m):
    """m < 2 or m >= N (no test row) is a programming error here (config checks it first)."""
    with pytest.raises(ValueError, match="sizes: "):
        draw_train_sets(Y_SMALL, m, split_seeds(0, "t", 2, range(1))[0])


def test_one_class_data_is_refused():
    """Data with a single class cannot give both-class training sets."""
    with pytest.raises(ValueError, match="both classes"):
        draw_train_sets(np.zeros(10), 3, split_seeds(0, "t", 3, range(1))[0])


def test_split_seeds_are_made_fresh_on_every_read():
    """A seed read twice is two unspawned SeedSequences with the documented key; spawning
    from one read leaves the next read untouched; slices keep the split numbers."""
    from nbvslr.splits import split_seeds, task_key

    draw, model = split_seeds(3, "pima", 20, range(10, 15))
    assert len(model) == 5
    first = model[2]
    first.spawn(2)
    again = model[np.int64(2)]
    assert again is not first and again.n_children_spawned == 0
    assert again.spawn_key == (task_key("pima"), 20, 12, 1) and again.entropy == 3
    assert draw[0].spawn_key == (task_key("pima"), 20, 10, 0)
    sub = model[1:3]
    assert [s.spawn_key[2] for s in sub] == [11, 12]
    assert (np.random.default_rng(sub[1]).random(3) == np.random.default_rng(again).random(3)).all()
