"""Faults: runs killed (SIGKILL) or interrupted (SIGINT) and resumed, stale temporary files,
unreadable checkpoints, and a damaged dataset cache next to a mirror that is never written to.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from nbvslr.cli import cli
from nbvslr.runner import units

RESULT_FILES = ("splits.csv.gz", "summary.csv", "paired.csv")
SIZES = [2, 5, 10, 20, 40, 80]
CONFIG = {
    "tasks": [{
        "name": "toy",
        "source": {"synthetic": {"generator": "nb", "rows": 200, "features": 5, "seed": 0}},
    }],
    "sizes": SIZES,
    "splits": 200,
    "block": 50,
    "seed": 0,
    "models": {"nb": {}, "lr": {}},
}


def _write_config(folder: Path, raw: dict = CONFIG) -> Path:
    path = folder / "toy.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def _run_in_process(config: Path, out: Path, *args: str):
    return CliRunner().invoke(
        cli, ["run", str(config), "--out", str(out), "--cache", str(out.parent / "cache"),
              "--offline", "--jobs", "1", "-q", *args],
    )


def _start(config: Path, out: Path, *args: str) -> subprocess.Popen:
    """``nbvslr run`` in its own process group (as a terminal runs it)."""
    cmd = [sys.executable, "-c", "import sys; from nbvslr.cli import main; main(sys.argv[1:])",
           "run", str(config), "--out", str(out),
           "--cache", str(out.parent / "cache"), "--offline", "-q", *args]
    # SIGINT as a terminal delivers it: a shell that started the tests in the background
    # leaves it ignored, and a child inherits that (Python then never raises
    # KeyboardInterrupt)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, cwd=out.parent,
                            preexec_fn=_default_sigint)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _checkpoints(out: Path) -> set[str]:
    folder = out / "toy" / ".checkpoints"
    return {p.name for p in folder.glob("m=*.csv.gz")} if folder.is_dir() else set()


def _wait_for(predicate, proc: subprocess.Popen, limit: float = 30.0) -> None:
    end = time.monotonic() + limit
    while not predicate():
        if proc.poll() is not None:
            raise AssertionError(f"the run ended first: {proc.stderr.read().decode()}")
        if time.monotonic() > end:
            raise AssertionError(f"waited {limit} s in vain")
        time.sleep(0.01)


def _killpg(proc: subprocess.Popen, sig: int) -> tuple[str, str]:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:  # already finished
        pass
    out, err = proc.communicate(timeout=60)
    if sig != signal.SIGKILL:
        return out.decode(), err.decode()
    try:  # loky workers of a killed run: end them too
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return out.decode(), err.decode()


def _result_bytes(out: Path) -> dict[str, bytes]:
    return {name: (out / "toy" / name).read_bytes() for name in RESULT_FILES}


def _visible_files_are_complete(out: Path) -> None:
    """Every file a reader would take for a result parses completely; others are dot-files."""
    for path in (out / "toy").rglob("*"):
        if path.is_dir() or path.name.startswith("."):
            continue
        if path.name.endswith(".csv.gz"):
            frame = pd.read_csv(path)  # a truncated gzip would raise here
            assert len(frame) > 0
        elif path.suffix == ".csv":
            assert path.read_bytes().endswith(b"\n")
            pd.read_csv(path)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, bytes]:
    """The result files of one uninterrupted run."""
    folder = tmp_path_factory.mktemp("reference")
    out = folder / "results"
    result = _run_in_process(_write_config(folder), out)
    assert result.exit_code == 0, result.output
    return _result_bytes(out)


# --------------------------------------------------------------------------- SIGKILL


def test_runs_killed_at_random_moments_resume_to_the_same_bytes(reference, tmp_path):
    """SIGKILL at seeded random moments, then a rerun: the same files as a run never killed."""
    config = _write_config(tmp_path)
    out = tmp_path / "results"
    rng = np.random.default_rng(20240901)
    # One kill at a random moment of start-up and data loading, then kills after 1..5
    # finished sizes plus a random delay, so every restart has work left to resume.
    targets = sorted(rng.choice(np.arange(1, len(SIZES)), size=3, replace=False))
    killed_with_work_left = 0
    proc = _start(config, out, "--jobs", "1")
    time.sleep(rng.uniform(0.2, 1.5))
    _killpg(proc, signal.SIGKILL)
    _visible_files_are_complete(out) if (out / "toy").is_dir() else None
    for target in targets:
        proc = _start(config, out, "--jobs", "1")
        _wait_for(lambda t=target: len(_checkpoints(out)) >= t, proc)
        time.sleep(rng.uniform(0.0, 0.15))
        _killpg(proc, signal.SIGKILL)
        done = len(_checkpoints(out))
        assert done >= target
        killed_with_work_left += proc.returncode == -signal.SIGKILL and done < len(SIZES)
        _visible_files_are_complete(out)
        assert not (out / "toy" / "summary.csv").exists() or done == len(SIZES)
    assert killed_with_work_left >= 2, "the kills came too late to test resuming"
    result = _run_in_process(config, out)
    assert result.exit_code == 0, result.output
    assert _result_bytes(out) == reference


def test_temporary_files_of_a_killed_run_are_removed_by_the_next(reference, tmp_path):
    """Dot-files ending in .tmp (left by a kill mid-write) are deleted when the task reruns."""
    config = _write_config(tmp_path)
    out = tmp_path / "results"
    folder = out / "toy"
    (folder / ".checkpoints").mkdir(parents=True)
    stale = [folder / ".summary.csv.k2j4h1.tmp", folder / ".checkpoints" / ".m=5.csv.gz.x9.tmp"]
    for path in stale:
        path.write_bytes(b"half a fi")
    keep = folder / "notes.tmp"  # not one of ours: a user's file is left alone
    keep.write_text("mine")
    result = _run_in_process(config, out)
    assert result.exit_code == 0, result.output
    assert not any(p.exists() for p in stale)
    assert keep.read_text() == "mine"
    assert not [p for p in folder.rglob(".*.tmp")]
    assert _result_bytes(out) == reference


def test_unreadable_checkpoint_is_a_one_line_error(tmp_path):
    """A checkpoint cut short by hand: exit 1 and a message naming the file and --force."""
    config = _write_config(tmp_path, {**CONFIG, "sizes": [2, 5], "splits": 10})
    out = tmp_path / "results"
    assert _run_in_process(config, out).exit_code == 0
    checkpoint = out / "toy" / ".checkpoints" / "m=5.csv.gz"
    checkpoint.write_bytes(checkpoint.read_bytes()[:30])
    result = _run_in_process(config, out)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "m=5.csv.gz: damaged" in lines[0] and "--force" in lines[0]
    assert _run_in_process(config, out, "--force").exit_code == 0
    with gzip.open(checkpoint) as fh:
        assert fh.read().startswith(b"task,model,family,m,split,error")


# --------------------------------------------------------------------------- SIGINT


@pytest.mark.parametrize("moment", ["workers starting", "after a finished size"])
def test_ctrl_c_exits_130_with_one_line_and_resumes(reference, tmp_path, moment):
    """SIGINT to the process group: exit 130, one line, no traceback; a rerun completes."""
    config = _write_config(tmp_path)
    out = tmp_path / "results"
    proc = _start(config, out, "--jobs", "2", "--backend", "loky")
    if moment == "workers starting":  # the workers are still importing numpy & co.
        stamp = out / "toy" / ".checkpoints" / "fingerprint.json"
        _wait_for(stamp.is_file, proc)
        time.sleep(0.05)
    else:
        _wait_for(lambda: len(_checkpoints(out)) >= 1, proc)
    kept = _checkpoints(out)
    stdout, stderr = _killpg(proc, signal.SIGINT)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "Warning" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    if _checkpoints(out):  # a size was saved: it is kept, and the rerun resumes from it
        assert lines[0].startswith("interrupted: the finished sizes are kept in "), stderr
        assert "rerun the same command to resume" in lines[0]
    else:  # the workers were starting: nothing to keep, and the line says so
        assert lines[0] == ("interrupted before any size was computed: nothing was kept; "
                            "rerun the same command to start"), stderr
    assert kept <= _checkpoints(out)
    assert not (out / "toy" / "summary.csv").exists()
    _visible_files_are_complete(out)
    result = _run_in_process(config, out)
    assert result.exit_code == 0, result.output
    assert _result_bytes(out) == reference


@pytest.mark.parametrize("saved", [True, False])
def test_keyboard_interrupt_in_the_runner_is_reported_not_raised(tmp_path, monkeypatch,
                                                                 saved):
    """A KeyboardInterrupt inside the runner becomes exit 130 and the resume hint when a
    size was saved; before that (only the checkpoints' folder made), "nothing was kept"."""
    from nbvslr import api

    def interrupted(*args, **kwargs):
        folder = tmp_path / "results" / "toy" / ".checkpoints"
        folder.mkdir(parents=True)  # a run begun
        if saved:
            (folder / "m=2.csv.gz").write_bytes(b"")  # and a size saved
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "run_tasks", interrupted)  # what nbvslr run runs through
    result = _run_in_process(_write_config(tmp_path), tmp_path / "results")
    assert result.exit_code == 130
    assert "Traceback" not in result.output
    if not saved:
        assert result.output.strip() == ("interrupted before any size was computed: nothing "
                                         "was kept; rerun the same command to start")
        return
    assert result.output.strip().startswith("interrupted: ")
    assert "rerun the same command to resume" in result.output
    # one task: its own checkpoint folder is named
    assert str(tmp_path / "results" / "toy" / ".checkpoints") in result.output


def test_an_interrupt_before_the_run_began_names_no_checkpoints(tmp_path, monkeypatch):
    """Stopped while the data loads (a download, a slow file): no checkpoint folder exists,
    and the message does not send the user to one."""
    from nbvslr import api

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "run_tasks", interrupted)
    result = _run_in_process(_write_config(tmp_path), tmp_path / "results")
    assert result.exit_code == 130
    assert result.output.strip() == ("interrupted before any size was computed: nothing was "
                                     "kept; rerun the same command to start")
    assert not (tmp_path / "results" / "toy").exists()


# --------------------------------------------------------------------------- cache and mirror


def _tree_state(root: Path) -> dict[str, tuple[str, int]]:
    return {
        str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture
def mini_mirror(mirror, tmp_path) -> Path:
    """A copy of the mirror's lenses folder (the real mirror stays out of reach)."""
    root = tmp_path / "mirror"
    shutil.copytree(mirror / "lenses", root / "lenses")
    return root


def _lenses_run(tmp_path: Path, mirror: Path | None, cache: Path, *args: str):
    config = tmp_path / "lenses.yaml"
    config.write_text("tasks: [lenses]\nsizes: [2, 5]\nsplits: 3\nmodels: {nb: {}}\n")
    argv = ["run", str(config), "--out", str(tmp_path / "results"), "--cache", str(cache),
            "--offline", "--fresh", "--jobs", "1", "-q", "--force", *args]
    env = {"NBVSLR_DATA_MIRROR": str(mirror) if mirror is not None else ""}
    if mirror is not None:
        argv += ["--mirror", str(mirror)]
    units._CACHE.clear()  # each run a new process: the data is read again
    return CliRunner(env=env).invoke(cli, argv)


def test_damaged_cache_file_is_replaced_from_the_mirror_which_is_never_written(
        mini_mirror, tmp_path):
    """A truncated or altered cache file is replaced from the mirror; the mirror is unchanged."""
    cache = tmp_path / "cache"
    before = _tree_state(mini_mirror)
    assert _lenses_run(tmp_path, mini_mirror, cache).exit_code == 0
    cached = cache / "lenses" / "lenses.data"
    good = cached.read_bytes()
    for damage in (good[: len(good) // 2], good.replace(b"1", b"2", 1), b""):
        cached.write_bytes(damage)
        result = _lenses_run(tmp_path, mini_mirror, cache)
        assert result.exit_code == 0, result.output
        assert cached.read_bytes() == good
    assert _tree_state(mini_mirror) == before
    assert not list(cache.rglob("*.tmp"))


def test_damaged_cache_file_without_mirror_is_refused_with_the_repair(mini_mirror, tmp_path):
    """No mirror, downloads off: exit 1, one line naming the file and how to repair it."""
    cache = tmp_path / "cache"
    assert _lenses_run(tmp_path, mini_mirror, cache).exit_code == 0
    cached = cache / "lenses" / "lenses.data"
    cached.write_bytes(cached.read_bytes()[:-10])
    result = _lenses_run(tmp_path, None, cache)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "fails its sha256" in lines[0] and "NBVSLR_DATA_MIRROR" in lines[0]
    assert f"delete {cached}" in lines[0]


def test_a_cache_inside_the_mirror_is_never_written(mini_mirror, tmp_path):
    """--cache pointing into the mirror: verified files are read, nothing is ever written there."""
    before = _tree_state(mini_mirror)
    assert _lenses_run(tmp_path, mini_mirror, mini_mirror).exit_code == 0
    (mini_mirror / "lenses" / "lenses.data").unlink()
    before.pop("lenses/lenses.data")
    result = _lenses_run(tmp_path, mini_mirror, mini_mirror)
    assert result.exit_code == 1
    assert "inside the mirror" in result.output and "--cache" in result.output
    assert _tree_state(mini_mirror) == before


def test_loky_manager_thread_error_during_a_stop_is_not_printed(capsys, monkeypatch):
    """While a run is being stopped, an exception of loky's manager thread (it races the
    cancelled queue) goes unprinted; at any other time, and from any other thread, it is
    printed as usual."""
    import threading

    from nbvslr.runner import backends

    def add_call_item_to_queue() -> None:  # where loky's manager thread races the stop
        raise KeyError(1)

    def other_failure() -> None:
        raise ValueError("a real failure of the manager thread")

    def run_thread(name: str, target=add_call_item_to_queue) -> str:
        thread = threading.Thread(target=target, name=name)
        thread.start()
        thread.join()
        return capsys.readouterr().err

    monkeypatch.setattr(backends, "_stopped_at", [])
    monkeypatch.setattr(backends, "_previous_hook", backends._previous_hook)
    monkeypatch.setattr(backends, "_hook_installed", False)
    monkeypatch.setattr(threading, "excepthook", threading.__excepthook__)
    backends._quiet_loky_on_stop()
    try:
        assert "KeyError" in run_thread("ExecutorManagerThread")  # no stop under way
        backends._stopped_at.append(time.monotonic())
        assert run_thread("ExecutorManagerThread") == ""
        assert "KeyError" in run_thread("some-other-thread")
        assert "a real failure" in run_thread("ExecutorManagerThread", other_failure)
    finally:
        threading.excepthook = threading.__excepthook__
