"""adult-mixed: adult's 14 attributes as one mixed task, read with the two adult panels'
recipes; kept out of Figure 1; NB and LR run on it."""

from __future__ import annotations

import numpy as np
import pytest

from nbvslr import api
from nbvslr.config import load_config
from nbvslr.config.catalog import shipped_config
from nbvslr.data import (
    BUILTIN_TASKS,
    MIXED_TASKS,
    MULTICLASS_TASKS,
    get_recipe,
    load_task,
)
from nbvslr.data.dataset import DataSettings, TaskSpec
from nbvslr.models.design import get_design
from nbvslr.models.registry import lookup, resolve_options

CONTINUOUS = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
              "hours-per-week")
DISCRETE = ("workclass", "education", "marital-status", "occupation", "relationship", "race",
            "sex", "native-country")


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    """adult-mixed and the two adult panels, from the shipped files (no download)."""
    settings = DataSettings(cache_dir=tmp_path_factory.mktemp("cache"), download=False)
    return {name: load_task(TaskSpec(name), settings)
            for name in ("adult-mixed", "adult-continuous", "adult-discrete")}


def test_fourteen_attributes_of_the_right_kinds(tasks):
    """6 continuous attributes in [0, 1] then 8 discrete ones' codes; 48,842 rows, 11,687 >50K."""
    data = tasks["adult-mixed"]
    assert data.kind == "mixed" and data.n_features == 14 and data.n_continuous == 6
    assert data.feature_names == CONTINUOUS + DISCRETE
    assert (data.n_rows, data.n_positive) == (48842, 11687)
    assert (data.n_rows, data.n_features, data.n_positive) == get_recipe("adult-mixed").known
    assert data.X.dtype == np.float64
    assert data.X[:, :6].min() == 0.0 and data.X[:, :6].max() == 1.0
    codes = data.codes()
    assert np.array_equal(codes, data.X[:, 6:])  # whole numbers
    assert len(data.n_values) == 8 and (codes < np.array(data.n_values)).all()
    assert data.sizes == tuple(range(2, 383, 20))


def test_same_rows_and_encodings_as_the_two_panels(tasks):
    """The continuous block is adult (continuous)'s X, the codes adult (discrete)'s, row for
    row, with the same labels: the recipes are reused, not copied."""
    mixed, cont, disc = tasks["adult-mixed"], tasks["adult-continuous"], tasks["adult-discrete"]
    assert np.array_equal(mixed.y, cont.y) and np.array_equal(mixed.y, disc.y)
    assert np.array_equal(mixed.X[:, :6], cont.X)
    assert np.array_equal(mixed.codes(), disc.X) and mixed.n_values == disc.n_values
    assert mixed.notes["choices"]["missing"] == "level"
    assert mixed.notes["rows_dropped"] == 0


def test_kept_out_of_figure_1():
    """adult-mixed is a built-in task (a config may name it) but no panel of Figure 1."""
    assert MIXED_TASKS == ("adult-mixed",)
    assert "adult-mixed" not in BUILTIN_TASKS and "adult-mixed" not in MULTICLASS_TASKS
    assert get_recipe("adult-mixed").title == "adult (all 14 attributes, mixed)"


def test_lr_design_has_a_weight_per_continuous_attribute_and_non_reference_level(tasks):
    """LR's default design: 6 continuous columns + (102 - 8) indicators + the intercept."""
    data = tasks["adult-mixed"]
    opts = resolve_options("lr", "lr", {})
    design = get_design(data, lookup("lr", data.kind).design(data, opts))
    assert sum(data.n_values) == 102
    assert design.n_params == 6 + 102 - 8 + 1


def test_nb_and_lr_run_at_two_small_sizes():
    """A run of the shipped config's task at m = 22 and 102 (3 splits): both models, errors
    in (0, 0.5), below the 0.5 of a coin at m = 102."""
    config = {"tasks": ["adult-mixed"], "sizes": [22, 102], "splits": 3, "seed": 0,
              "models": {"nb": {}, "lr": {}}}
    summary = api.run(config, progress=False).summary
    assert sorted(zip(summary["model"], summary["m"], strict=True)) == [
        ("lr", 22), ("lr", 102), ("nb", 22), ("nb", 102)]
    assert (summary["n_splits"] == 3).all()
    assert summary["error_mean"].between(0.0, 0.5, inclusive="neither").all()


def test_the_shipped_config_runs_the_task_on_its_grid():
    """configs/adult-mixed.yaml: adult-mixed, its own grid (2..382 step 20), nb and lr."""
    config = load_config(shipped_config("adult-mixed").path)
    assert [t.name for t in config.tasks] == ["adult-mixed"]
    assert config.grids == (tuple(range(2, 383, 20)),)
    assert [m.name for m in config.models] == ["nb", "lr"]
