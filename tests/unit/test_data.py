"""The 15 built-in tasks, loaded from the offline mirror: counts, encodings, choices."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import nbvslr.data
from nbvslr.data import (
    BUILTIN_TASKS,
    get_recipe,
    load_task,
    resolve_choices,
    validate_task,
)
from nbvslr.data.dataset import DataSettings, TaskSpec
from nbvslr.data.parse import read_rows, split_line
from nbvslr.data.recipes import Parse
from nbvslr.errors import ConfigError, DataError

# (rows, features, positives) under the default choices. Every number follows from
# nbvslr/data/uci/SOURCES.md "Checks" and the .names files, not from the recipes:
#   adult: 32561 + 16281 rows pooled, 7841 + 3846 ">50K"; 6 continuous, 8 nominal attributes.
#   optdigits: 0v1 = 376+178 zeros + 389+182 ones; 2v3 = 380+177 twos + 389+183 threes;
#     features = 64 pixels less those constant over the pair (checked separately below).
#   ionosphere: 34 attributes less attribute 2 (0 in every row); 225 'g'.
#   liver: selector 2 (200 rows) is the positive class.
#   lymphography: 81 metastases among 148; lenses: 4 hard among 24;
#   sick: 29 attributes - 7 continuous - TBG-measured (constant 'f'); 231 sick of 3772.
EXPECTED = {
    "pima": (768, 8, 268),
    "adult-continuous": (48842, 6, 11687),
    "boston": (506, 13, 250),
    "optdigits-0v1": (1125, 52, 571),
    "optdigits-2v3": (1129, 57, 572),
    "ionosphere": (351, 33, 225),
    "liver": (345, 6, 200),
    "sonar": (208, 60, 111),
    "adult-discrete": (48842, 8, 11687),
    "promoters": (106, 57, 53),
    "lymphography": (148, 18, 81),
    "breast-cancer": (286, 9, 85),
    "lenses": (24, 4, 4),
    "sick": (3772, 21, 231),
    "voting": (435, 16, 168),
}

# The paper's m-grids (PAPER.md table): start, stop (inclusive), step.
PAPER_GRIDS = {
    "pima": (2, 59, 3), "adult-continuous": (2, 30, 1), "boston": (2, 59, 3),
    "optdigits-0v1": (2, 154, 8), "optdigits-2v3": (2, 154, 8), "ionosphere": (2, 97, 5),
    "liver": (2, 59, 3), "sonar": (2, 102, 5), "adult-discrete": (2, 382, 20),
    "promoters": (2, 97, 5), "lymphography": (2, 135, 7), "breast-cancer": (2, 268, 14),
    "lenses": (2, 23, 1), "sick": (2, 116, 6), "voting": (2, 70, 2),
}  # fmt: skip


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> DataSettings:
    """The defaults a fresh installation has: the shipped files, an empty cache, no mirror,
    no downloads."""
    return DataSettings(cache_dir=tmp_path_factory.mktemp("cache"), download=False)


@pytest.fixture(scope="module")
def loaded(settings):
    """Every built-in task under its default choices, loaded once."""
    return {name: load_task(TaskSpec(name), settings) for name in BUILTIN_TASKS}


def test_builtin_tasks_in_panel_order():
    """The task list is the paper's 15 panels, in Figure 1's order."""
    assert BUILTIN_TASKS == tuple(EXPECTED)


@pytest.mark.parametrize("name", BUILTIN_TASKS)
def test_counts_match_the_sources(loaded, name):
    """Rows, features and positives of each task follow from SOURCES.md and the recipe."""
    data = loaded[name]
    assert (data.n_rows, data.n_features, data.n_positive) == EXPECTED[name]
    assert get_recipe(name).known == EXPECTED[name]  # what `nbvslr datasets` shows


@pytest.mark.parametrize("name", BUILTIN_TASKS)
def test_arrays_have_the_promised_types(loaded, name):
    """X is float64 in [0, 1] (continuous) or int64 codes below n_values (discrete); y int8."""
    data = loaded[name]
    assert data.y.dtype == np.int8 and set(np.unique(data.y)) == {0, 1}
    assert data.X.shape == (data.n_rows, len(data.feature_names))
    if data.kind == "continuous":
        assert data.X.dtype == np.float64 and data.n_values == ()
        np.testing.assert_array_equal(data.X.min(axis=0), 0.0)
        np.testing.assert_array_equal(data.X.max(axis=0), 1.0)
    else:
        assert data.X.dtype == np.int64 and len(data.n_values) == data.n_features
        assert data.X.min() >= 0
        # Every level of every column occurs: codes are exactly 0 .. n_values - 1.
        for j, k in enumerate(data.n_values):
            assert k >= 2
            np.testing.assert_array_equal(np.unique(data.X[:, j]), np.arange(k))


@pytest.mark.parametrize("name", BUILTIN_TASKS)
def test_grid_title_and_provenance(loaded, name):
    """sizes/x_range are the paper's; notes hold the resolved choices and files' sha256."""
    data = loaded[name]
    start, stop, step = PAPER_GRIDS[name]
    assert data.sizes == tuple(range(start, stop + 1, step))
    assert data.x_range[0] == 0.0 and data.x_range[1] >= stop
    recipe = get_recipe(name)
    assert data.title == recipe.panel_title(data.notes["target"]["rule"])
    assert data.notes["choices"] == resolve_choices(recipe, {})
    assert {f["sha256"] for f in data.notes["files"]} <= {f.sha256 for f in recipe.files}
    assert all(f["source"] == "shipped" for f in data.notes["files"])


def test_every_open_choice_has_a_reason():
    """Each choice the paper leaves open carries a one-line reason and lists its default."""
    for name in BUILTIN_TASKS:
        for key, choice in get_recipe(name).choices.items():
            assert choice.reason and "\n" not in choice.reason, (name, key)
            assert choice.value in choice.options, (name, key)


def test_scaling_uses_the_whole_dataset(loaded, mirror):
    """pima's X is (raw - column min) / (column max - column min) over all 768 rows."""
    raw = np.loadtxt(mirror / "pima" / "pima-indians-diabetes.data", delimiter=",")[:, :8]
    expected = (raw - raw.min(axis=0)) / (raw.max(axis=0) - raw.min(axis=0))
    np.testing.assert_allclose(loaded["pima"].X, expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(loaded["pima"].y, raw_class(mirror))


def raw_class(mirror: Path) -> np.ndarray:
    return np.loadtxt(mirror / "pima" / "pima-indians-diabetes.data", delimiter=",")[:, 8]


def test_optdigits_drops_exactly_the_constant_pixels(loaded, mirror):
    """optdigits 0v1 keeps the 64 pixels less those with one value over the 1125 images."""
    raw = np.vstack([
        np.loadtxt(mirror / "optdigits" / f, delimiter=",", dtype=int)
        for f in ("optdigits.tra", "optdigits.tes")
    ])
    pair = raw[np.isin(raw[:, -1], (0, 1))]
    constant = [f"px{j}" for j in range(64) if np.unique(pair[:, j]).size == 1]
    data = loaded["optdigits-0v1"]
    assert data.notes["columns_dropped"] == constant
    assert data.n_features == 64 - len(constant)


def test_voting_keeps_did_not_vote_as_a_level(loaded):
    """voting: '?' is a third value of every vote (y, n, did not vote)."""
    assert loaded["voting"].n_values == (3,) * 16


@pytest.mark.parametrize(
    ("name", "overrides", "expected"),
    [
        ("adult-continuous", {"pool": False}, (32561, 6, 7841)),  # adult.data only
        ("lenses", {"target": "soft-vs-rest"}, (24, 4, 5)),
        # hard and soft lenses all have a normal tear rate: that column becomes constant.
        ("lenses", {"target": "hard-vs-soft"}, (9, 3, 4)),
        ("lymphography", {"target": "metastases-vs-malign"}, (142, 18, 81)),
        ("breast-cancer", {"missing": "drop-rows"}, (277, 9, 81)),  # 9 '?' in 9 rows, 4 pos.
        ("liver", {"target": "drinks"}, (345, 5, None)),
        ("ionosphere", {"constant_columns": "keep"}, (351, 34, 225)),
        ("ionosphere", {"binary_columns": "drop"}, (351, 32, 225)),
        ("boston", {"binary_columns": "drop"}, (506, 12, 250)),
        ("sick", {"constant_columns": "keep"}, (3772, 22, 231)),
    ],
)
def test_overrides_change_the_task(settings, name, overrides, expected):
    """Each open choice can be overridden from a config, with the documented effect."""
    data = load_task(TaskSpec(name, overrides=overrides), settings)
    rows, features, positives = expected
    assert (data.n_rows, data.n_features) == (rows, features)
    if positives is not None:
        assert data.n_positive == positives
    assert all(data.notes["choices"][k] == v for k, v in overrides.items())


def test_liver_drinks_target_is_above_median(settings, mirror):
    """liver target=drinks: drinks > its median is positive and drinks is not a feature."""
    raw = np.loadtxt(mirror / "liver" / "bupa.data", delimiter=",")
    data = load_task(TaskSpec("liver", overrides={"target": "drinks"}), settings)
    assert data.n_positive == int((raw[:, 5] > np.median(raw[:, 5])).sum())
    assert "drinks" not in data.feature_names and "selector" not in data.feature_names


def test_pima_zero_rows_can_be_dropped(settings, mirror):
    """pima zeros=drop-rows removes every row with a 0 in plas, pres, skin, insu or mass."""
    raw = np.loadtxt(mirror / "pima" / "pima-indians-diabetes.data", delimiter=",")
    ok = (raw[:, 1:6] != 0).all(axis=1)
    data = load_task(TaskSpec("pima", overrides={"zeros": "drop-rows"}), settings)
    assert data.n_rows == int(ok.sum()) == 392
    assert data.n_positive == int(raw[ok, 8].sum())


def test_validate_task_checks_names_and_overrides():
    """validate_task rejects unknown tasks, unknown choices and disallowed values."""
    validate_task(TaskSpec("lenses", overrides={"target": "hard-vs-soft"}))
    with pytest.raises(ConfigError, match="did you mean 'lenses'"):
        validate_task(TaskSpec("lensse"))
    with pytest.raises(ConfigError, match="'tagret' is not a choice.*did you mean 'target'"):
        validate_task(TaskSpec("lenses", overrides={"tagret": "soft-vs-rest"}))
    with pytest.raises(ConfigError, match="pool=1 is not allowed.*True, False"):
        validate_task(TaskSpec("adult-discrete", overrides={"pool": 1}))


def test_split_line_handles_the_file_quirks():
    """Trailing dots, |id suffixes and whitespace separation are parsed as the recipe says."""
    sick = Parse(columns=("a", "b", "class"), id_suffix=True, strip_dot=True)
    assert split_line("41,F,negative.|3733", sick) == ["41", "F", "negative"]
    adult = Parse(columns=("a", "class"), strip_dot=True)
    assert split_line("25, >50K.", adult) == ["25", ">50K"]
    assert split_line("25, >50K", adult) == ["25", ">50K"]
    assert split_line(" 1  1  2 ", Parse(columns=("a", "b", "c"), sep=None)) == ["1", "1", "2"]


def test_a_line_with_the_wrong_width_is_a_data_error():
    """A file whose record has too few fields is refused with its name and line number."""
    with pytest.raises(DataError, match=r"bad.data line 2: 2 fields .* expects 3"):
        read_rows(b"1,2,3\n1,2\n", "bad.data", Parse(columns=("a", "b", "c")))


def test_every_task_is_delegated_to_the_registry(monkeypatch, tmp_path):
    """validate_task/load_task hand every task, built-in or with a source:, to
    nbvslr.data.registry (its registry parses it, then loads it)."""
    import sys
    import types

    calls = []
    fake = types.ModuleType("nbvslr.data.registry")

    def parsed(spec, where=None):
        calls.append(("validate", spec.name))
        if spec.source is not None and spec.source.get("csv") is None:
            raise ConfigError("source: csv path missing")
        return spec

    fake.parsed = parsed
    fake.load = lambda spec, settings: calls.append(("load", spec.name)) or "dataset"
    monkeypatch.setitem(sys.modules, "nbvslr.data.registry", fake)
    monkeypatch.setattr(nbvslr.data, "registry", fake, raising=False)
    spec = TaskSpec("mine", source={"csv": "x.csv"})
    validate_task(spec)
    assert load_task(spec, DataSettings(cache_dir=tmp_path)) == "dataset"
    with pytest.raises(ConfigError, match="csv path missing"):
        validate_task(TaskSpec("mine", source={"csv": None}))
    assert load_task(TaskSpec("pima"), DataSettings(cache_dir=tmp_path)) == "dataset"
    assert calls == [("validate", "mine"), ("load", "mine"), ("validate", "mine"),
                     ("load", "pima")]


def _codes_by_sorting(X, missing):
    """The level codes as np.unique's sort gives them (how they were made before)."""
    from nbvslr.data.parse import _level_order

    out = []
    for j in range(X.shape[1]):
        uniq, inverse = np.unique(X[:, j], return_inverse=True)
        order = _level_order(uniq.tolist(), missing)
        rank = np.array([order.index(v) for v in uniq.tolist()], dtype=np.int64)
        out.append(rank[inverse.reshape(-1)])
    return np.column_stack(out)


def test_discrete_codes_follow_the_level_order():
    """Levels coded from a dict keep the codes np.unique's sort gave: text, numbers, '?'."""
    from nbvslr.data.parse import _encode_discrete

    rng = np.random.default_rng(3)
    pools = [["b", "a", "?", "c", "aa"], ["10", "2", "-1", "3.5", "?"], ["y", "n"],
             ["x", "x"], ["B", "a", "A", "_"]]
    X = np.empty((400, len(pools)), dtype=object)
    for j, pool in enumerate(pools):
        X[:, j] = [pool[k] for k in rng.integers(0, len(pool), 400)]
    names = [f"c{j}" for j in range(len(pools))]
    for choices in ({}, {"constant_columns": "keep"}):
        codes, kept, n_values, dropped = _encode_discrete(X, names, choices, "?")
        expected = _codes_by_sorting(X, "?")
        keep = [j for j, n in enumerate(names) if n in kept]
        np.testing.assert_array_equal(codes, expected[:, keep])
        assert n_values == tuple(int(expected[:, j].max()) + 1 for j in keep)
    assert dropped == []  # the last loop keeps the one-level column
    assert _encode_discrete(X, names, {}, "?")[3] == ["c3"]
