"""Reader fuzzing: damaged result files end in exit 0 or a one-line error, never a traceback.

A finished task's files are mutated (a cell replaced, a header changed, the file cut short,
its bytes replaced) and resealed (``files.sha256`` rewritten to match, so the parsers, not the
digest check, see the damage), then read by ``report``, ``compare`` and ``fidelity``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbvslr import results
from nbvslr.cli import cli
from nbvslr.runner import outputs

FILES = ("summary.csv", "paired.csv", "run.json", "splits.csv.gz")
SEALED = (*FILES, "curve.png")
CELLS = st.sampled_from(["x", "", "nan", "inf", "-1", "7.5", "1e400", "True", "é", "0.2,0.3",
                         '"', "2.5", "-0.0", "1"])
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=6)


def _base(folder: Path) -> None:
    rng = np.random.default_rng(0)
    rows = [("toy", model, model, m, split, float(rng.uniform(0.1, 0.4)), False, "", 3, True)
            for model in ("nb", "lr") for m in (5, 10, 20) for split in range(4)]
    splits = pd.DataFrame(rows, columns=list(results.SPLIT_COLUMNS))
    run_info = {"task": {"name": "toy", "title": "toy", "x_range": [0, 20]},
                "models": [{"name": "nb", "family": "nb"}, {"name": "lr", "family": "lr"}],
                "asymptotic_error": {"nb": 0.1, "lr": 0.1}, "majority_error": 0.5,
                "config": {"compare": [["nb", "lr"]]}}
    outputs.write_task(folder, splits, run_info, [("nb", "lr")], plot=False)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-results") / "results"
    _base(root / "toy")
    return root


def _mutate(data: bytes, name: str, draw) -> bytes:
    raw = gzip.decompress(data) if name.endswith(".gz") else data
    kind = draw(st.sampled_from(["cell", "header", "cut", "bytes", "lines", "json"]))
    if kind == "cut":
        return data[: draw(st.integers(0, max(0, len(data) - 1)))]
    if kind == "bytes":
        return draw(st.binary(max_size=40))
    if name == "run.json" or kind == "json":
        if name != "run.json":
            kind = "cell"
        else:
            obj = json.loads(raw)
            key = draw(st.sampled_from(["task", "models", "asymptotic_error", "majority_error",
                                        "config", "x_range", "name", "title"]))
            target = obj["task"] if key in ("x_range", "name", "title") else obj
            target[key] = draw(JSON_VALUES)
            return json.dumps(obj).encode()
    lines = raw.decode().splitlines()
    if kind == "header":
        header = lines[0].split(",")
        i, j = draw(st.integers(0, len(header) - 1)), draw(st.integers(0, len(header) - 1))
        header[i] = header[j] if draw(st.booleans()) else draw(CELLS)
        lines[0] = ",".join(header)
    elif kind == "lines":
        lines = lines[: draw(st.integers(0, len(lines)))]
    else:
        row = draw(st.integers(1, len(lines) - 1))
        cells = lines[row].split(",")
        cells[draw(st.integers(0, len(cells) - 1))] = draw(CELLS)
        lines[row] = ",".join(cells)
    out = ("\n".join(lines) + "\n").encode()
    return gzip.compress(out) if name.endswith(".gz") and draw(st.booleans()) else out


def _reseal(folder: Path) -> None:
    text = "".join(f"{hashlib.sha256((folder / n).read_bytes()).hexdigest()}  {n}\n"
                   for n in SEALED if (folder / n).exists())
    (folder / "files.sha256").write_text(text)


def _one_line_or_success(result) -> None:
    assert result.exit_code in (0, 1), (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        repr(result.exception))
    lines = result.output.strip().splitlines()
    if result.exit_code == 1 and not lines[0].startswith("curve guard:"):  # a guard's report
        assert len(lines) == 1 and lines[0].startswith("error: "), result.output


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_damaged_result_files_are_one_line_never_a_traceback(pristine, tmp_path_factory, data):
    """A mutated (and resealed) results file: report, compare, fidelity exit 0 or 1 line."""
    root = tmp_path_factory.mktemp("case") / "results"
    shutil.copytree(pristine, root)
    folder = root / "toy"
    name = data.draw(st.sampled_from(FILES))
    (folder / name).write_bytes(_mutate((folder / name).read_bytes(), name, data.draw))
    _reseal(folder)
    runner = CliRunner()
    for argv in (["report", str(root), "--n-boot", "20", "--no-paper"],
                 ["report", str(root), "--format", "csv", "--n-boot", "20"],
                 ["compare", str(pristine), str(root)],
                 ["fidelity", str(root)]):
        _one_line_or_success(runner.invoke(cli, argv))


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_damaged_result_files_are_one_line_for_plot(pristine, tmp_path_factory, data):
    """A mutated (and resealed) results file: plot exits 0 or prints one line."""
    root = tmp_path_factory.mktemp("case") / "results"
    shutil.copytree(pristine, root)
    name = data.draw(st.sampled_from(FILES))
    path = root / "toy" / name
    path.write_bytes(_mutate(path.read_bytes(), name, data.draw))
    _reseal(root / "toy")
    _one_line_or_success(CliRunner().invoke(
        cli, ["plot", str(root / "toy"), "-o", str(root / "f.png"), "--dpi", "30"]))


def test_a_corrupt_splits_file_is_refused_by_plot_not_drawn_without_its_crossover(
        pristine, tmp_path):
    """splits.csv.gz of text (resealed): plot exits 1 naming it, no figure without the mark."""
    root = tmp_path / "results"
    shutil.copytree(pristine, root)
    (root / "toy" / "splits.csv.gz").write_bytes(b"not a table at all\n")
    _reseal(root / "toy")
    result = CliRunner().invoke(cli, ["plot", str(root / "toy"), "-o", str(tmp_path / "f.png")])
    assert result.exit_code == 1 and "splits.csv.gz" in result.output, result.output
    assert not (tmp_path / "f.png").exists()
