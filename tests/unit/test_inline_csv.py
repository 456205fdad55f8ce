"""Inline tasks from a local CSV file, and the validation of inline specs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nbvslr.data import load_task, validate_task
from nbvslr.data.dataset import DataSettings, TaskSpec
from nbvslr.errors import ConfigError, DataError


def _write(tmp_path: Path, text: str, name: str = "d.csv") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _load(tmp_path: Path, text: str, source=None, **kw):
    path = _write(tmp_path, text)
    spec = TaskSpec(name="mine", source={"csv": path, **(source or {})}, **kw)
    return load_task(spec, DataSettings(cache_dir=tmp_path / "cache", download=False))


TABLE = "a,b,c,cls\n1,10,x,yes\n3,10,y,no\n5,10,x,yes\n9,10,z,no\n"


def test_continuous_csv_end_to_end(tmp_path):
    """A numeric CSV becomes float64 features rescaled to [0, 1], int8 labels, provenance."""
    data = _load(
        tmp_path, TABLE, target={"column": "cls", "positive": ["yes"]},
        features={"kind": "continuous", "columns": ["a", "b"]},
    )
    assert data.kind == "continuous" and data.X.dtype == np.float64 and data.y.dtype == np.int8
    np.testing.assert_allclose(data.X[:, 0], [0, 0.25, 0.5, 1])
    np.testing.assert_array_equal(data.X[:, 1], 0.0)  # constant column kept, scaled to 0
    assert data.notes["constant"] == ["b"]
    np.testing.assert_array_equal(data.y, [1, 0, 1, 0])
    assert data.feature_names == ("a", "b") and data.sizes is None and data.n_values == ()
    assert data.notes["source"] == "csv" and len(data.notes["sha256"]) == 64


def test_discrete_csv_codes_levels_in_sorted_order(tmp_path):
    """Discrete columns become codes 0..k-1 over sorted levels, with n_values."""
    data = _load(tmp_path, TABLE, features={"kind": "discrete", "columns": ["c", "a"]})
    assert data.X.dtype == np.int64
    np.testing.assert_array_equal(data.X[:, 0], [0, 1, 0, 2])
    np.testing.assert_array_equal(data.X[:, 1], [0, 1, 2, 3])  # numeric order, not text
    assert data.n_values == (3, 4)
    assert data.notes["levels"]["c"] == ["x", "y", "z"]


def test_default_target_is_last_column_second_value_positive(tmp_path):
    """Without target: the last column; of its two values, the second in sorted order is 1."""
    data = _load(tmp_path, TABLE, features={"drop": ["c"]})
    assert data.notes["target"] == "cls"
    assert data.notes["positive"] == ["yes"] and data.notes["negative"] == ["no"]
    np.testing.assert_array_equal(data.y, [1, 0, 1, 0])
    numeric = _load(tmp_path, "f,t\n1,10\n2,9\n3,10\n")
    np.testing.assert_array_equal(numeric.y, [1, 0, 1])  # 10 > 9 numerically


def test_positive_matches_numbers_written_differently(tmp_path):
    """positive: [1] matches cells written 1.0; values in a list all count as class 1."""
    data = _load(tmp_path, "f,t\n1,1.0\n2,2\n3,3\n", target={"positive": [1, 3]})
    np.testing.assert_array_equal(data.y, [1, 0, 1])


def test_header_false_names_columns_by_position(tmp_path):
    """header: false reads every line as data, with columns named 0, 1, ..."""
    data = _load(tmp_path, "1;a\n2;b\n3;a\n", source={"sep": ";", "header": False},
                 target={"column": 1, "positive": ["a"]})
    assert data.feature_names == ("0",)
    np.testing.assert_array_equal(data.y, [1, 0, 1])


def test_missing_values_error_drop_and_level(tmp_path):
    """Missing cells are refused by default, dropped with drop, a level with level."""
    text = "f,g,t\n1,a,0\n?,b,1\n3,,1\n4,a,0\n5,b,1\n"
    with pytest.raises(DataError, match=r"column 'f': missing value at data row 2.*missing: drop"):
        _load(tmp_path, text, features={"kind": "continuous", "columns": ["f"]})
    dropped = _load(tmp_path, text, source={"missing": "drop"},
                    features={"kind": "continuous", "columns": ["f"]})
    assert dropped.n_rows == 4 and dropped.notes["rows_dropped"] == 1
    both = _load(tmp_path, text, source={"missing": "drop"}, features={"kind": "discrete"})
    assert both.n_rows == 3
    level = _load(tmp_path, text, source={"missing": "level"},
                  features={"kind": "discrete", "columns": ["g"]})
    assert level.notes["levels"]["g"] == ["?", "a", "b"] and level.n_rows == 5


@pytest.mark.parametrize(
    ("text", "kw", "pattern"),
    [
        ("f,t\n1,0\nnan,1\n2,1\n", {"source": {"na": []}}, r"column 'f': not a number \('nan'\)"),
        ("f,t\n1,0\ninf,1\n2,1\n", {}, r"column 'f': not finite \('inf'\) at data row 2"),
        ("f,t\n1,0\nabc,1\n2,1\n", {"features": {"kind": "continuous"}},
         r"column 'f': not a number \('abc'\).*features.discrete"),
        ("f,t\n1,0\n2,1\n", {}, r"2 usable rows of 2.*at least 3"),
        ("f,t\n1,0\n2,0\n3,0\n", {"target": {"positive": ["0"]}},
         r"every row of column 't' is positive"),
        ("f,t\n1,0\n2,0\n3,0\n", {}, r"column 't' has 1 value \('0'\), not 2"),
        ("f,t\n1,0\n2,1\n3,0\n", {"target": {"positive": ["yes"]}},
         r"value 'yes' never occurs in column 't'; its values are '0', '1'"),
        ("f,t\n1,0\n2,1\n3,0\n", {"target": {"column": "tt"}},
         r"target.column: no column 'tt' \(did you mean 't'\?\)"),
        ("f,t\n1,0\n2,1\n3,0\n", {"features": {"columns": ["g"]}},
         r"features.columns: no column 'g'"),
        ("f,g,t\n1,a,0\n2,b,1\n3,a,0\n", {}, r"columns 'g' hold text and the others numbers"),
        ("f,t\n1,0\n2,1,5\n3,0\n", {}, r"cannot parse as CSV"),
    ],
)
def test_bad_csv_gives_one_line_data_error(tmp_path, text, kw, pattern):
    """Each data problem is a one-line DataError naming the file and what to change."""
    with pytest.raises(DataError, match=pattern) as info:
        _load(tmp_path, text, **kw)
    message = str(info.value)
    assert "\n" not in message and "d.csv" in message


def test_missing_file_and_empty_file(tmp_path):
    """A path that does not exist, and an empty file, are DataErrors naming the path."""
    spec = TaskSpec(name="x", source={"csv": str(tmp_path / "nope.csv")})
    with pytest.raises(DataError, match=r"nope.csv: source.csv: file not found"):
        load_task(spec, DataSettings())
    with pytest.raises(DataError, match=r"d.csv: the file is empty"):
        _load(tmp_path, "")


@pytest.mark.parametrize(
    ("spec", "pattern"),
    [
        ({"source": {"cvs": "a.csv"}}, r"^source: names no known source, did you mean 'csv'"),
        ({"source": {"csv": "a", "uci": 3}}, r"^source: names 2 sources"),
        ({"source": {"csv": "a", "seperator": ";"}}, r"^source.seperator: unknown key"),
        ({"source": {"csv": 3}}, r"^source.csv: must be a file path"),
        ({"source": {"csv": "a", "missing": "dorp"}},
         r"^source.missing: unknown mode, did you mean 'drop'"),
        ({"source": {"csv": "a", "header": "yes"}}, r"^source.header: not true or false"),
        ({"source": {"uci": "53"}}, r"^source.uci: must be a UCI dataset id"),
        ({"source": {"uci": 0}}, r"^source.uci: must be a UCI dataset id"),
        ({"source": {"csv": "a"}, "target": {"colum": "c"}},
         r"^target.colum: unknown key, did you mean 'column'"),
        ({"source": {"csv": "a"}, "target": {"positive": [True]}},
         r"^target.positive: a YAML true/false.*quote it"),
        ({"source": {"csv": "a"}, "features": {"kind": "continous"}},
         r"^features.kind: unknown kind, did you mean 'continuous'"),
        ({"source": {"csv": "a"}, "features": {"columns": ["a"], "drop": ["b"]}},
         r"^features: give columns or drop, not both"),
        ({"source": {"csv": "a"}, "features": {"columns": ["a", "a"]}},
         r"^features.columns: lists a column twice"),
        ({"source": {"csv": "a"}, "target": {"column": "a"}, "features": {"columns": ["a"]}},
         r"^features.columns: lists the target column"),
        ({"source": {"csv": "a", "missing": "level"}, "features": {"kind": "continuous"}},
         r"^source.missing: 'level' only applies to discrete"),
        ({"source": {"csv": "a"}, "overrides": {"pool": True}},
         r"^overrides: only built-in tasks"),
        ({"source": {"synthetic": {}}, "target": {"column": "y"}},
         r"^target: a synthetic task makes its own"),
        ({"source": {"synthetic": {"rows": 2}}}, r"^source.synthetic.rows: must be >= 3"),
        ({"source": {"synthetic": {"generator": "bayes"}}},
         r"^source.synthetic.generator: unknown generator"),
        ({"source": {"synthetic": {"prior": 1.0}}},
         r"^source.synthetic.prior: must be strictly between 0 and 1"),
        ({"source": {"synthetic": {"levels": 4}}},
         r"^source.synthetic.levels: only used with kind: discrete"),
        ({"source": {"synthetic": {"generator": "dependent", "factors": 11}}},
         r"^source.synthetic.factors: must be between 1 and features \(10\)"),
        ({"source": {"synthetic": {"sepration": 2}}},
         r"^source.synthetic.sepration: unknown key, did you mean 'separation'"),
    ],
)
def test_validation_errors_are_one_line_and_name_the_key(spec, pattern):
    """validate refuses a bad inline spec with one line: key, problem, value and fix."""
    with pytest.raises(ConfigError, match=pattern) as info:
        validate_task(TaskSpec(name="t", **spec))
    message = str(info.value)
    assert "\n" not in message and "; " in message


def test_validate_accepts_good_specs():
    """Well-formed specs of each source pass validation without reading anything."""
    for spec in (
        TaskSpec(name="a", source={"csv": "nowhere.csv", "missing": "drop", "na": ["?"]},
                 target={"column": "c", "positive": ["x", 1]},
                 features={"kind": "continuous", "drop": ["id"]}),
        TaskSpec(name="b", source={"uci": 53}, target={"column": "class", "positive": "1"}),
        TaskSpec(name="c", source={"synthetic": {"generator": "dependent", "kind": "discrete",
                                                 "levels": 4, "factors": 2, "noise": 0.1}}),
    ):
        assert validate_task(spec) is None


def test_config_reports_inline_errors_with_file_and_task_key(tmp_path):
    """Through parse_config an inline spec error is one line: file, task, key, fix."""
    from nbvslr.config import parse_config

    raw = {"tasks": [{"name": "mine", "source": {"csv": "x.csv"},
                      "features": {"knd": "discrete"}}], "sizes": [2, 3]}
    with pytest.raises(ConfigError) as info:
        parse_config(raw, source="my.yaml")
    message = str(info.value)
    assert message.startswith("my.yaml: tasks[0]: features.knd: unknown key, did you mean 'kind'")
    assert "\n" not in message


def test_csv_task_loads_through_the_data_layer(tmp_path):
    """A config's inline CSV task is loaded by nbvslr.data.load_task like a built-in one."""
    from nbvslr.config import parse_config
    from nbvslr.data import load_task

    path = _write(tmp_path, TABLE)
    raw = {"tasks": [{"name": "mine", "source": {"csv": path},
                      "target": {"column": "cls", "positive": ["no"]},
                      "features": {"kind": "discrete", "columns": ["c"]}}],
           "sizes": {"start": 2, "stop": 3}}
    config = parse_config(raw, source="my.yaml")
    data = load_task(config.tasks[0], DataSettings(cache_dir=tmp_path / "cache"))
    np.testing.assert_array_equal(data.y, [0, 1, 0, 1])
    assert data.title == "mine (discrete)" and data.n_values == (3,)


def test_permuting_csv_rows_permutes_the_task(tmp_path):
    """Row order changes nothing but the order: scaling and level codes use all rows."""
    lines = TABLE.splitlines()
    order = [3, 1, 4, 2]
    shuffled = "\n".join([lines[0], *(lines[i] for i in order)]) + "\n"
    kw = {"features": {"kind": "discrete", "columns": ["c", "a"]}}
    a = _load(tmp_path, TABLE, **kw)
    b = _load(tmp_path, shuffled, **kw)
    rows = [i - 1 for i in order]
    np.testing.assert_array_equal(b.X, a.X[rows])
    np.testing.assert_array_equal(b.y, a.y[rows])
    c = _load(tmp_path, TABLE, features={"kind": "continuous", "columns": ["a"]})
    d = _load(tmp_path, shuffled, features={"kind": "continuous", "columns": ["a"]})
    np.testing.assert_array_equal(d.X, c.X[rows])
