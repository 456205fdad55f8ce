"""Nothing wrong is ever believed: the data a run fits is the data it
fingerprinted, a task's files are one sealed unit, nothing in a task folder is followed
through a symlink, and every reader turns a damaged file into one line."""

from __future__ import annotations

import errno
import io
import os
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import nbvslr.results.read as read_module
import nbvslr.runner as runner
from nbvslr import results
from nbvslr.cli import cli
from nbvslr.config import parse_config
from nbvslr.data.dataset import DataSettings
from nbvslr.errors import DataError, ResultsError
from nbvslr.runner import outputs, units

REPO = Path(__file__).resolve().parents[2]

SIZES = [5, 10, 20]


def _toy_csv(path: Path, shift: float) -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 120)
    X = rng.normal(size=(120, 4)) + shift * y[:, None]  # (N, d)
    pd.DataFrame(X, columns=list("abcd")).assign(label=y).to_csv(path, index=False)


def _csv_config(folder: Path, **kw):
    raw = {
        "tasks": [{"name": "toy", "source": {"csv": str(folder / "toy.csv")},
                   "target": {"column": "label", "positive": [1]},
                   "features": {"kind": "continuous"}}],
        "sizes": SIZES, "splits": 6, "block": 3, "seed": 1, "models": {"nb": {}, "lr": {}},
    }
    data = DataSettings(cache_dir=folder / "cache", download=False)
    return parse_config(raw, source="toy.yaml", data=data, out=str(folder / "results"), **kw)


@pytest.mark.parametrize("backend", ["loky", "dask"])
def test_a_csv_replaced_after_the_fingerprint_is_refused_in_the_workers(
        tmp_path, monkeypatch, backend):
    """A CSV replaced between the fingerprint and the workers' reads: DataError, no files."""
    if backend == "dask":
        pytest.importorskip("distributed")
    _toy_csv(tmp_path / "toy.csv", shift=1.0)
    prepare = runner.prepare

    def prepare_then_replace(config):
        tasks = prepare(config)
        _toy_csv(tmp_path / "toy.csv", shift=3.0)  # the workers read this one
        return tasks

    monkeypatch.setattr(runner, "prepare", prepare_then_replace)
    config = _csv_config(tmp_path, backend=backend, jobs=2)
    with pytest.raises(DataError, match=r"toy\.csv changed during the run"):
        runner.run_experiment(config)
    assert not (tmp_path / "results" / "toy" / "summary.csv").exists()


def test_a_worker_reloads_a_copy_cached_by_an_earlier_run(tmp_path):
    """A process's cached copy of an earlier version of the file is read again, not fitted."""
    _toy_csv(tmp_path / "toy.csv", shift=1.0)
    config = _csv_config(tmp_path)
    spec, settings = units.portable(config.tasks[0], config.data)
    old, old_digest = units.loaded(spec, settings)
    _toy_csv(tmp_path / "toy.csv", shift=2.0)
    units._CACHE.pop(units._cache_key(spec, settings))
    new, new_digest = units.loaded(spec, settings)
    units._CACHE[units._cache_key(spec, settings)] = (old, old_digest, None)  # stale
    assert units.dataset_for(spec, settings, new_digest) is not old
    with pytest.raises(DataError):
        units.dataset_for(spec, settings, old_digest)


# --------------------------------------------------------------------------- sealed files


def _splits(shift: float) -> pd.DataFrame:
    rng = np.random.default_rng(int(shift * 10))
    rows = []
    for model, family in (("nb", "nb"), ("lr", "lr")):
        for m in (5, 10, 20):
            for split in range(4):
                err = float(np.clip(rng.uniform(0.1, 0.4) + shift * (family == "nb"), 0, 1))
                rows.append(("toy", model, family, m, split, err, False, "", 3, True))
    return pd.DataFrame(rows, columns=list(results.SPLIT_COLUMNS))


def _write_set(folder: Path, shift: float, plot: bool = False) -> dict[str, bytes]:
    """A finished task's files for data of ``shift``; return their bytes by name."""
    run_info = {"task": {"name": "toy", "title": f"shift {shift}"},
                "models": [{"name": "nb", "family": "nb"}, {"name": "lr", "family": "lr"}],
                "asymptotic_error": {"nb": 0.1, "lr": 0.1}, "majority_error": 0.5}
    outputs.write_task(folder, _splits(shift), run_info, [("nb", "lr")], plot=plot)
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_a_full_disk_during_the_final_write_leaves_the_previous_files(tmp_path, monkeypatch):
    """No space left while a task's files are written: every file is the previous run's."""
    folder = tmp_path / "toy"
    before = _write_set(folder, 0.0)
    real, calls = os.fsync, []

    def full_disk(fd):
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd)

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError):
        _write_set(folder, 0.3)
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before


def test_a_mixed_set_is_refused_by_every_reader(tmp_path, monkeypatch):
    """summary.csv of another run beside this run's files: one line naming it, exit 1."""
    monkeypatch.setattr(read_module, "SETTLE_SECONDS", 0.1, raising=False)
    other = _write_set(tmp_path / "other" / "toy", 0.3)
    folder = tmp_path / "run" / "toy"
    _write_set(folder, 0.0)
    (folder / "summary.csv").write_bytes(other["summary.csv"])
    for argv in (["report", str(folder)], ["plot", str(folder), "-o", str(tmp_path / "c.png")],
                 ["compare", str(tmp_path / "other"), str(tmp_path / "run")]):
        result = CliRunner().invoke(cli, argv)
        assert result.exit_code == 1, (argv, result.output)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and "summary.csv" in lines[0] and "sha256" in lines[0], lines


def test_a_damaged_value_is_refused_though_it_parses(tmp_path, monkeypatch):
    """An error of 0.25 edited to 0.35 in summary.csv (a valid number) is not believed."""
    monkeypatch.setattr(read_module, "SETTLE_SECONDS", 0.0, raising=False)
    folder = tmp_path / "toy"
    _write_set(folder, 0.0)
    text = (folder / "summary.csv").read_text().splitlines()
    cells = text[1].split(",")
    cells[5] = "0.35" if cells[5] != "0.35" else "0.25"
    (folder / "summary.csv").write_text("\n".join([text[0], ",".join(cells), *text[2:]]) + "\n")
    with pytest.raises(ResultsError, match="summary.csv: does not have the sha256"):
        results.load_task(folder)


def test_a_reader_during_rewrites_sees_one_run_or_the_other(tmp_path):
    """Reports taken while a task is rewritten over and over: summary and run.json agree."""
    folder = tmp_path / "toy"
    sets = {0.0: _write_set(folder, 0.0), 0.3: _write_set(folder, 0.3)}
    summaries = {results.load_task(folder).title: results.load_task(folder).summary}
    stop = threading.Event()

    def rewrite():
        while not stop.is_set():
            for shift in sets:
                _write_set(folder, shift)

    writer = threading.Thread(target=rewrite)
    writer.start()
    try:
        seen = 0
        end = time.monotonic() + 3
        while time.monotonic() < end:
            task = results.load_task(folder)
            paired = task.saved_paired()
            shift = float(task.title.split()[-1])
            expected = pd.read_csv(io.BytesIO(sets[shift]["summary.csv"]))
            assert np.array_equal(task.summary["error_mean"].sort_values().to_numpy(),
                                  expected["error_mean"].sort_values().to_numpy())
            expected_paired = pd.read_csv(io.BytesIO(sets[shift]["paired.csv"]))
            assert np.array_equal(paired["diff_mean"].to_numpy(),
                                  expected_paired["diff_mean"].to_numpy())
            seen += 1
    finally:
        stop.set()
        writer.join()
    assert seen > 5 and summaries


def test_a_legacy_folder_without_manifest_is_read_without_a_digest(tmp_path):
    """A folder written before files.sha256 (its tables alone) is read, its values checked."""
    import shutil

    folder = tmp_path / "lenses"
    shutil.copytree(REPO / "results" / "reference" / "lenses", folder)
    (folder / results.MANIFEST_FILE).unlink()
    task = results.load_task(folder)
    assert task.manifest is None and len(task.summary) > 0


# --------------------------------------------------------------------------- symlinks, lock

TOY = ("tasks: [{name: toy, source: {synthetic: {generator: nb, rows: 100, features: 3, "
       "seed: 0}}}]\nsizes: [4, 8]\nsplits: 4\nseed: 0\nmodels: {nb: {}, lr: {}}\n")


def _run(tmp_path: Path, *args: str):
    config = tmp_path / "toy.yaml"
    config.write_text(TOY)
    return CliRunner().invoke(cli, ["run", str(config), "--out", str(tmp_path / "out"),
                                    "--cache", str(tmp_path / "cache"), "--offline",
                                    "--jobs", "1", "-q", *args])


def test_a_lock_file_that_is_a_symlink_is_refused_and_its_target_untouched(tmp_path):
    """.lock -> a file elsewhere: one line, exit 1, that file keeps its bytes."""
    elsewhere = tmp_path / "precious.txt"
    elsewhere.write_text("keep me\n")
    (tmp_path / "out" / "toy").mkdir(parents=True)
    (tmp_path / "out" / "toy" / ".lock").symlink_to(elsewhere)
    result = _run(tmp_path)
    assert result.exit_code == 1, result.output
    assert len(result.output.strip().splitlines()) == 1 and "symbolic link" in result.output
    assert elsewhere.read_text() == "keep me\n"


def test_a_checkpoints_folder_that_is_a_symlink_is_refused_and_never_written(tmp_path):
    """.checkpoints -> another folder: one line, exit 1, nothing written or deleted there."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "m=4.csv.gz").write_bytes(b"someone else's")
    (tmp_path / "out" / "toy").mkdir(parents=True)
    (tmp_path / "out" / "toy" / ".checkpoints").symlink_to(other, target_is_directory=True)
    result = _run(tmp_path)
    assert result.exit_code == 1, result.output
    assert "symbolic link" in result.output
    assert {p.name: p.read_bytes() for p in other.iterdir()} == {"m=4.csv.gz": b"someone else's"}


def test_a_replaced_lock_file_neither_admits_a_second_run_nor_goes_unnoticed(tmp_path):
    """.lock deleted and recreated while a run holds it: a second run is still refused, and
    the holder notices before its next write."""
    folder = tmp_path / "toy"
    with results.TaskLocks([folder]) as locks:
        (folder / ".lock").unlink()
        (folder / ".lock").write_text("")
        with pytest.raises(ResultsError, match="another nbvslr run"), \
                results.TaskLocks([folder]):
            pass
        with pytest.raises(ResultsError, match="was replaced or removed"):
            locks.check(folder)


def test_a_result_file_that_is_a_symlink_is_refused_by_the_readers(tmp_path):
    """summary.csv -> a file elsewhere: the report refuses it in one line."""
    folder = tmp_path / "toy"
    _write_set(folder, 0.0)
    elsewhere = tmp_path / "summary.csv"
    (folder / "summary.csv").rename(elsewhere)
    (folder / "summary.csv").symlink_to(elsewhere)
    result = CliRunner().invoke(cli, ["report", str(folder)])
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1 and "symbolic link" in result.output


def test_a_full_disk_while_the_lock_is_written_names_the_lock_file(tmp_path, monkeypatch):
    """No space for .lock's holder line: 'cannot use <folder>/.lock', not 'a file'."""
    import errno as errno_module

    def full(fd, data, offset):
        raise OSError(errno_module.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "pwrite", full)
    result = _run(tmp_path)
    assert result.exit_code == 1
    assert f"cannot use {tmp_path / 'out' / 'toy' / '.lock'}: No space" in result.output
