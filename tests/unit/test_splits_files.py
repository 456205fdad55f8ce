"""A splits table's file: ``results.files.csv_bytes`` writes the bytes of pandas' own CSV
writer, whether it takes its own path (the plain columns of a splits table) or hands the
table to pandas; ``results.layout.sort_splits`` puts rows in pandas' stable order."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbvslr.results.files import _plain_fields, csv_bytes, csv_gz_bytes
from nbvslr.results.layout import SPLIT_COLUMNS, sort_splits


def pandas_csv(df: pd.DataFrame) -> bytes:
    return df.to_csv(index=False, lineterminator="\n").encode("utf-8")


def splits_like(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "task": "pima",
        "model": np.where(np.arange(n) % 2 == 0, "nb", "lr"),
        "family": np.where(np.arange(n) % 2 == 0, "nb", "lr"),
        "m": rng.integers(2, 400, n),
        "split": np.arange(n),
        "error": rng.integers(0, 737, n) / 737,
        "separable": rng.random(n) < 0.3,
        "separation": np.where(np.arange(n) % 2 == 0, "",
                               rng.choice(["overlap", "complete", "quasi"], n)).astype(object),
        "n_iter": rng.integers(0, 40, n),
        "converged": rng.random(n) < 0.9,
    })


def test_a_splits_table_takes_the_own_path_and_matches_pandas():
    df = splits_like(5000)
    assert _plain_fields(df) is not None
    assert csv_bytes(df) == pandas_csv(df)
    assert gzip.decompress(csv_gz_bytes(df)) == pandas_csv(df)


def test_pandas_string_dtype_and_object_columns_match():
    df = splits_like(50)
    for dtype in ("object", "string", "str"):
        d = df.astype({"task": dtype, "model": dtype})
        assert csv_bytes(d) == pandas_csv(d), dtype


@pytest.mark.parametrize("values", [
    [0.1, 1e-5, 1e-4, 0.0001234, 123456789012345678.0, 1e16, 1e15, 2.5e-300, 1.0, 0.0,
     1 / 3, 2 / 3, -1.5, 5e-324, 1.7976931348623157e308, float("inf"), -float("inf")],
])
def test_floats_are_written_as_pandas_writes_them(values):
    df = pd.DataFrame({"x": values, "i": np.arange(len(values)) - 5,
                       "u": np.arange(len(values), dtype=np.uint64)})
    assert _plain_fields(df) is not None
    assert csv_bytes(df) == pandas_csv(df)


@pytest.mark.parametrize("values", [[0.5, np.nan, 0.25, np.nan], [np.nan, np.nan], [np.nan]])
def test_missing_floats_are_written_empty_as_pandas_writes_them(values):
    """A float column with NaN (a metric without a value) takes the fast writer, with the
    bytes of pandas' (an empty field)."""
    df = pd.DataFrame({"x": values, "i": np.arange(len(values))})
    assert _plain_fields(df) is not None
    assert csv_bytes(df) == pandas_csv(df)


@pytest.mark.parametrize("df", [
    pd.DataFrame({"x": [0.0, -0.0]}),                 # negative zero
    pd.DataFrame({"s": ["a,b", "c"]}),                # a field to quote
    pd.DataFrame({"s": ['say "hi"', "c"]}),
    pd.DataFrame({"s": ["", "c"]}),                   # an empty string
    pd.DataFrame({"s": ["a", None]}),
    pd.DataFrame({"s": [1, "a"]}),                    # not a string
    pd.DataFrame({"x": np.array([1.5, 2.5], dtype=np.float32)}),
    pd.DataFrame({"a,b": [1, 2]}),                    # a header to quote
    pd.DataFrame({"x": [1, 2]}, index=[3, 4]),
    pd.DataFrame(),
    pd.DataFrame({"c": pd.Categorical(["a", "b"])}),
])
def test_anything_else_goes_through_pandas(df):
    assert _plain_fields(df) is None
    assert csv_bytes(df) == pandas_csv(df)


def test_no_rows():
    df = splits_like(0)
    assert csv_bytes(df) == pandas_csv(df)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=30),
       st.lists(st.text(max_size=4), min_size=1, max_size=30),
       st.lists(st.integers(min_value=-2**63, max_value=2**63 - 1), min_size=1, max_size=30))
def test_any_columns_match_pandas(floats, texts, ints):
    n = min(len(floats), len(texts), len(ints))
    df = pd.DataFrame({"f": floats[:n], "s": pd.Series(texts[:n], dtype=object),
                       "i": np.array(ints[:n], dtype=np.int64), "b": np.arange(n) % 3 == 0})
    assert csv_bytes(df) == pandas_csv(df)


def pandas_order(df: pd.DataFrame) -> pd.DataFrame:
    df = df.loc[:, list(SPLIT_COLUMNS)]
    return df.sort_values(["model", "m", "split"], kind="mergesort").reset_index(drop=True)


@pytest.mark.parametrize("seed", range(5))
def test_sort_splits_is_pandas_stable_sort(seed):
    rng = np.random.default_rng(seed)
    df = splits_like(3000, seed)
    df["model"] = rng.choice(["nb", "lr", "lr_l2", "Nb", "b", "\u00e9"], len(df))
    df["split"] = rng.integers(0, 20, len(df))  # repeated keys: the stable order counts
    df = df.sample(frac=1, random_state=seed).reset_index(drop=True)
    got = sort_splits(df)
    pd.testing.assert_frame_equal(got, pandas_order(df))
    assert (got.columns == list(SPLIT_COLUMNS)).all()
    pd.testing.assert_frame_equal(sort_splits(got), got)  # in order: kept as is


@pytest.mark.parametrize("change", ["nan_model", "float_m", "mixed_model", "str_dtype"])
def test_sort_splits_other_tables(change):
    df = splits_like(200).sample(frac=1, random_state=1).reset_index(drop=True)
    if change == "nan_model":
        df["model"] = df["model"].astype(object)
        df.loc[3, "model"] = np.nan
    elif change == "float_m":
        df["m"] = df["m"].astype(float)
    elif change == "mixed_model":
        df["model"] = df["model"].astype(object)
        df.loc[3, "model"] = "zz"
    else:
        df["model"] = df["model"].astype("string")
    pd.testing.assert_frame_equal(sort_splits(df), pandas_order(df))


def _checkpoint_texts(df: pd.DataFrame, sizes_per_file: int) -> list[tuple[bytes, pd.DataFrame]]:
    """``df`` cut into checkpoints of a few sizes each, as written and read back."""
    from nbvslr.results.files import read_csv_bytes

    sizes = np.unique(df["m"])
    out = []
    for k in range(0, len(sizes), sizes_per_file):
        part = df[df["m"].isin(sizes[k:k + sizes_per_file])]
        text = csv_bytes(sort_splits(part))
        out.append((text, read_csv_bytes(text)))
    return out


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), per_file=st.integers(1, 4), nan_share=st.floats(0, 1))
def test_the_run_s_splits_file_from_its_checkpoints_lines_is_the_formatted_table(
        seed, per_file, nan_share):
    """The splits file a finished run writes from its checkpoints' lines (each value
    formatted once) has the bytes of the table it reads back formatted again, metric
    columns with missing values included."""
    from nbvslr.results.checkpoints import joined

    rng = np.random.default_rng(seed)
    df = splits_like(600, seed).assign(m=rng.choice([2, 5, 10, 20, 40, 80], 600))
    df = df.assign(split=df.groupby(["model", "m"]).cumcount())
    df.insert(6, "log_loss", np.where(rng.random(600) < nan_share, np.nan,
                                      rng.exponential(1.0, 600)))
    df.insert(7, "brier", rng.random(600) / 3)
    df.insert(8, "train_error", rng.integers(0, 9, 600) / 9)
    table, text = joined(_checkpoint_texts(df, per_file))
    assert text is not None
    assert text == csv_bytes(table)


def test_checkpoints_whose_columns_differ_in_type_are_formatted_again():
    """A column of integers in one checkpoint and floats in another (written 5 and 5.0)
    gives no lines to reuse: the caller formats the table."""
    from nbvslr.results.checkpoints import joined

    df = splits_like(40)
    read = _checkpoint_texts(df, 100)
    text, frame = read[0]
    other = frame.assign(n_iter=frame["n_iter"].astype(float) + 0.5)
    assert joined([(text, frame), (csv_bytes(other), other)])[1] is None
