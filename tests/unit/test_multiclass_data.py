"""Tasks of more than two classes: targets, built-in recipes, sizes and splits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nbvslr.data import MULTICLASS_TASKS, load_task, validate_task
from nbvslr.data.dataset import DataSettings, TaskSpec
from nbvslr.errors import ConfigError, DataError, SizeError
from nbvslr.splits import check_size, draw_train_sets, nested_train_sets, split_seeds

TABLE = "f,cls\n1,b\n2,a\n3,c\n4,b\n5,a\n6,c\n7,b\n"


def _load(tmp_path: Path, text: str, **kw):
    path = tmp_path / "d.csv"
    path.write_text(text)
    spec = TaskSpec(name="mine", source={"csv": str(path)}, **kw)
    validate_task(spec)
    return load_task(spec, DataSettings(cache_dir=tmp_path / "cache", download=False))


def test_column_without_positive_keeps_every_class(tmp_path):
    """A target of three values and no positive: K = 3, codes in sorted value order."""
    data = _load(tmp_path, TABLE, target={"column": "cls"})
    assert data.n_classes == 3 and data.multiclass and data.classes == ("a", "b", "c")
    np.testing.assert_array_equal(data.y, [1, 0, 2, 1, 0, 2, 1])
    assert data.y.dtype == np.int8 and data.notes["classes"] == ["a", "b", "c"]


def test_classes_keeps_those_rows_in_listed_order(tmp_path):
    """classes: [c, a] keeps only rows of c and a; two classes listed make a binary task
    with the second listed as class 1; three keep their listed order."""
    two = _load(tmp_path, TABLE, target={"column": "cls", "classes": ["c", "a"]})
    assert two.n_classes == 2 and not two.multiclass and two.classes == ()
    np.testing.assert_array_equal(two.y, [1, 0, 1, 0])  # rows a, c, a, c
    assert two.notes["positive"] == ["a"] and two.notes["negative"] == ["c"]
    three = _load(tmp_path, TABLE, target={"column": "cls", "classes": ["c", "b", "a"]})
    np.testing.assert_array_equal(three.y, [1, 2, 0, 1, 2, 0, 1])


def test_binary_column_and_positive_unchanged(tmp_path):
    """A two-valued column, and positive on a three-valued one, stay binary tasks."""
    data = _load(tmp_path, "f,t\n1,no\n2,yes\n3,no\n", target={"column": "t"})
    assert data.classes == () and list(data.y) == [0, 1, 0]
    pos = _load(tmp_path, TABLE, target={"column": "cls", "positive": ["a"]})
    assert pos.classes == () and list(pos.y) == [0, 1, 0, 0, 1, 0, 0]


@pytest.mark.parametrize(
    ("target", "error", "pattern"),
    [
        ({"column": "cls", "classes": ["a"]}, ConfigError, "target.classes: must list at least"),
        ({"column": "cls", "classes": ["a", "a"]}, ConfigError, "lists a value twice"),
        ({"column": "cls", "classes": ["a", "b"], "positive": ["a"]}, ConfigError,
         "give positive or classes, not both"),
        ({"column": "cls", "classes": ["a", "zz"]}, DataError, "value 'zz' never occurs"),
    ],
)
def test_bad_classes_are_one_line_errors(tmp_path, target, error, pattern):
    """A classes list that cannot work is one line naming target.classes or target."""
    with pytest.raises(error, match=pattern) as info:
        _load(tmp_path, TABLE, target=target)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("name", "shape", "counts"),
    [
        ("optdigits-10", (5620, 62), [554, 571, 557, 572, 568, 558, 558, 566, 554, 562]),
        ("lymphography-4", (148, 18), [2, 81, 61, 4]),
        ("lenses-3", (24, 4), [4, 5, 15]),
    ],
)
def test_builtin_multiclass_tasks(name, shape, counts):
    """The three built-in tasks read the shipped files with every class: their row and
    class counts (optdigits.names, lymphography.names, lenses.names), a grid from K."""
    assert name in MULTICLASS_TASKS
    data = load_task(TaskSpec(name), DataSettings())
    assert data.X.shape == shape and data.n_classes == len(counts)
    np.testing.assert_array_equal(np.bincount(data.y), counts)
    assert data.sizes[0] == data.n_classes and data.sizes[-1] <= data.n_rows - 1


def test_size_below_k_names_k():
    """A training set smaller than K is a one-line SizeError that names K."""
    with pytest.raises(SizeError, match=r"K = 4 rows, one per class.*use sizes >= 4"):
        check_size(3, 100, "lymphography-4", n_classes=4)
    check_size(4, 100, "lymphography-4", n_classes=4)


def test_nested_orders_hold_every_class():
    """Nested training sets of three classes hold every class from the smallest size."""
    y = np.array([0, 1, 2] * 20)
    draw, _ = split_seeds(0, "t", 3, range(50), nested=True)
    sets = nested_train_sets(y, 3, 3, draw)
    assert all(set(y[row]) == {0, 1, 2} for row in sets)


def test_binary_draws_unchanged_by_the_k_class_rule():
    """Binary labels take the compiled draw: the same rows whatever the new K-class code."""
    y = np.array([0, 1] * 30)
    draw, _ = split_seeds(5, "pima", 4, range(40))
    got = draw_train_sets(y, 4, draw)
    again = draw_train_sets(y, 4, list(draw))  # numpy's path, the reference
    np.testing.assert_array_equal(got, again)


def test_more_than_the_class_limit_says_how_to_fix_it(tmp_path):
    """A column of more classes than the limit points to target.classes; listing more than
    the limit there is refused naming target.classes and the limit, not the column."""
    from nbvslr.data.csvsource import MAX_CLASSES

    n = MAX_CLASSES + 10
    table = "f,cls\n" + "".join(f"{i},c{i % n}\n" for i in range(3 * n))
    with pytest.raises(DataError, match="list the classes to keep in target.classes"):
        _load(tmp_path, table, target={"column": "cls"})
    every = [f"c{k}" for k in range(n)]
    with pytest.raises(DataError, match=rf"target.classes: lists {n} classes.*at most "
                                        rf"{MAX_CLASSES} classes in target.classes"):
        _load(tmp_path, table, target={"column": "cls", "classes": every})
    kept = _load(tmp_path, table, target={"column": "cls", "classes": every[:MAX_CLASSES]})
    assert kept.n_classes == MAX_CLASSES
