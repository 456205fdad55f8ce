"""Attacks on a run that must end in one line and the right exit code, with results either
correct or absent: options out of bounds, memory, operating-system errors (read-only or full
disk, files where folders belong), bad command lines, signals, orphaned workers."""

from __future__ import annotations

import errno
import gzip
import hashlib
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from nbvslr import results
from nbvslr.cli import cli
from nbvslr.config import parse_config
from nbvslr.errors import ConfigError, ResultsError
from nbvslr.runner import memory

TOY = {
    "tasks": [{
        "name": "toy",
        "source": {"synthetic": {"generator": "nb", "rows": 200, "features": 5, "seed": 0}},
    }],
    "sizes": [2, 5, 10, 20, 40, 80],
    "splits": 200,
    "block": 50,
    "seed": 0,
    "models": {"nb": {}, "lr": {}},
}


# The runs a test signals once their first size is checkpointed: far more splits than they
# get through before the signal, so no busy machine lets one finish first.
LONG = {**TOY, "splits": 20_000}


def _config(folder: Path, raw: dict = TOY, name: str = "toy.yaml") -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(raw))
    return path


def _run(config: Path, out: Path | str, *args: str):
    return CliRunner().invoke(
        cli, ["run", str(config), "--out", str(out), "--cache", str(Path(config).parent / "c"),
              "--offline", "--jobs", "1", "-q", *args],
    )


def _one_line(result, code: int, *words: str) -> str:
    lines = result.output.strip().splitlines()
    assert result.exit_code == code, result.output
    assert len(lines) == 1, result.output
    assert "Traceback" not in result.output
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# The console script's code, with a marker on stdout once the entry point is imported (it
# imports nothing else: the interpreter's own start-up is out of its reach).
_ENTRY = ("import os, sys; from nbvslr.__main__ import main; os.write(1, b'up\\n'); "
          "sys.argv[0] = 'nbvslr'; main()")


def _start(config: Path, out: Path, *args: str) -> subprocess.Popen:
    cmd = [sys.executable, "-c", _ENTRY,
           "run", str(config), "--out", str(out), "--cache", str(out.parent / "c"),
           "--offline", "-q", *args]
    # SIGINT at its default, whatever the shell that started the tests left it at
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, cwd=out.parent,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _children(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry.name)] = int(fields[1])
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        kids = {p for p, pp in parents.items() if pp == parent}
        found |= kids
        todo.extend(kids)
    return found


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(pid)
    return alive


def _sigint_held_off(pid: int) -> bool:
    """Whether process ``pid`` blocks or ignores SIGINT (from /proc/PID/status)."""
    fields = dict(line.split(":\t", 1) for line in
                  Path(f"/proc/{pid}/status").read_text().splitlines() if ":\t" in line)
    bit = 1 << (signal.SIGINT - 1)
    return bool((int(fields["SigBlk"], 16) | int(fields["SigIgn"], 16)) & bit)


def _wait_until(predicate, limit: float) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


# --------------------------------------------------------------------------- bounds


@pytest.mark.parametrize("options, word", [
    ({"mcmc_draws": 100_000_000}, "mcmc_draws"),
    ({"mcmc_chains": 10**6}, "mcmc_chains"),
    ({"mcmc_chains": 1000, "mcmc_draws": 1000}, "hyperplanes per split"),
    ({"mcmc_burn_in": 10**7}, "mcmc_burn_in"),
    ({"mcmc_draws": 1000, "mcmc_thin": 5000}, "iterations per chain"),
    ({"max_iter": 10**9}, "max_iter"),
])
def test_every_count_option_has_an_upper_bound(options, word):
    """An option a typo can make huge (draws, chains, iterations) is refused, naming it."""
    raw = {**TOY, "models": {"lr": options}}
    with pytest.raises(ConfigError, match=word):
        parse_config(raw)


# --------------------------------------------------------------------------- memory


def _toy_shape(rows: int = 10_000_000, features: int = 10, grid=(10, 100)) -> memory.TaskShape:
    return memory.TaskShape("big", rows, features, features + 1, tuple(grid), 2, 2)


def test_memory_plan_of_the_largest_synthetic_task_fits_the_project_machine():
    """10^7 rows x 10 features (the largest synthetic task) with the default jobs on a 2-core
    machine is planned below 24 GiB; with 16 workers it is refused in one line."""
    shape = _toy_shape()
    plan = memory.plan([shape], splits=1000, block=250, workers=2, budget=24 * memory.GiB)
    assert plan.total < 24 * memory.GiB
    with pytest.raises(ConfigError, match=r"^memory: the run would need about .*--jobs 1"):
        memory.plan([shape], splits=1000, block=250, workers=16, budget=24 * memory.GiB)


def test_a_unit_is_estimated_at_one_chunk_of_the_model_code():
    """A unit of many splits at a large m holds one chunk of ``score_splits`` at a time:
    its estimate stops growing with the split count, and stays above one split's."""
    shape = _toy_shape(rows=1_000_000, features=10, grid=(10, 100_000))
    one = memory.unit_bytes(shape, 100_000, 1)
    assert memory.unit_bytes(shape, 100_000, 250) == memory.unit_bytes(shape, 100_000, 1000)
    assert one < memory.unit_bytes(shape, 100_000, 250) < 250 * one
    assert memory.unit_bytes(shape, 10, 250) == (
        memory.UNIT_FIXED + 250 * shape.split_bytes(10) + memory.sampler_bytes(shape, 10, 250))


def test_a_run_that_would_not_fit_is_refused_before_any_fit(tmp_path, monkeypatch):
    """A budget below the estimate: exit 2, one line with the estimate, no checkpoint."""
    monkeypatch.setattr(memory, "machine_bytes", lambda: 10 * memory.MiB)
    out = tmp_path / "out"
    line = _one_line(_run(_config(tmp_path), out), 2, "memory:", "GiB")
    assert "more than the 0.0 GiB" in line
    assert not list(out.rglob("m=*.csv.gz"))


def test_the_estimate_is_in_run_json(tmp_path):
    """run.json records the memory estimate of the run, below the machine's memory."""
    assert _run(_config(tmp_path, {**TOY, "sizes": [2, 5], "splits": 20}), tmp_path / "o"
                ).exit_code == 0
    info = json.loads((tmp_path / "o/toy/run.json").read_text())["memory"]
    assert 0 < info["estimate_bytes"] < info["budget_bytes"]
    assert info["estimate_bytes"] >= info["run_process_bytes"] + info["workers"] * info[
        "worker_bytes"] - 1


# --------------------------------------------------------------------------- OS errors


@pytest.mark.parametrize("out, word", [
    ("", "empty path"),
    ("toy.yaml", "is a file, not a folder"),
    ("toy.yaml/below", "no folder can be made below it"),
])
def test_an_out_folder_that_cannot_be_one_is_a_line(tmp_path, monkeypatch, out, word):
    """--out empty, a file, or below a file: exit 2, one line, nothing written."""
    monkeypatch.chdir(tmp_path)
    config = _config(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    _one_line(_run(config, out), 2, "--out", word)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_read_only_out_is_a_line(tmp_path, monkeypatch):
    """--out on a disk this process may not write: exit 2, one line, before any fit."""
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if mode & os.W_OK else
                        real_access(p, mode))
    _one_line(_run(_config(tmp_path), tmp_path / "ro" / "out"), 2, "cannot write in")


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_disk_full_or_read_only_while_writing_is_a_line_and_leaves_nothing_partial(
    tmp_path, monkeypatch, code
):
    """ENOSPC / EROFS while the results are written: exit 1, one line naming the file; no
    temporary file is left and the files of the previous run are untouched."""
    config = _config(tmp_path, {**TOY, "sizes": [2, 5], "splits": 20})
    out = tmp_path / "out"
    assert _run(config, out).exit_code == 0
    before = {p: p.read_bytes() for p in (out / "toy").iterdir() if p.is_file()}
    real_fsync = os.fsync

    def full(fd):
        if os.readlink(f"/proc/self/fd/{fd}").rsplit("/", 1)[-1].startswith(".summary.csv."):
            raise OSError(code, os.strerror(code))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full)
    line = _one_line(_run(config, out, "--force"), 1, "summary.csv", os.strerror(code))
    assert "Errno" not in line
    assert not list(out.rglob("*.tmp"))
    for path, data in before.items():
        if path.name != ".lock":  # each run writes its own token there
            assert path.read_bytes() == data, path


def test_checkpoints_folder_that_is_a_file_is_a_line(tmp_path):
    """``.checkpoints`` being a file: exit 1, one line naming it."""
    out = tmp_path / "out"
    (out / "toy").mkdir(parents=True)
    (out / "toy" / results.CHECKPOINTS).write_text("not a folder")
    _one_line(_run(_config(tmp_path), out), 1, ".checkpoints", "move it away")


def test_multiprocessing_backend_is_refused_before_the_folder_is_touched(tmp_path):
    """--backend multiprocessing (cannot stream results): exit 2, one line, no folder."""
    out = tmp_path / "out"
    _one_line(_run(_config(tmp_path), out, "--backend", "multiprocessing"), 2, "loky")
    assert not out.exists()


def test_usage_errors_are_one_line(tmp_path):
    """A click usage error (a value of the wrong type) is one line, exit 2."""
    _one_line(_run(_config(tmp_path), tmp_path / "o", "--jobs", "two"), 2, "--jobs",
              "--help")


def test_an_option_missing_its_value_points_to_its_commands_help(tmp_path):
    """``nbvslr run x.yaml -j`` (click gives that error no context): the line names
    ``nbvslr run --help``, not the program's."""
    line = _one_line(_run(_config(tmp_path), tmp_path / "o", "--jobs"), 2, "--jobs")
    assert line.endswith("see nbvslr run --help"), line


# --------------------------------------------------------------------------- CSV sources


def _csv_task(tmp_path: Path, csv: str, **source) -> Path:
    raw = {"tasks": [{"name": "c", "source": {"csv": csv, **source},
                      "target": {"column": "y"}}], "sizes": [2], "splits": 2}
    return _config(tmp_path, raw, "c.yaml")


def test_csv_separator_that_is_no_regular_expression_is_a_line(tmp_path):
    """``sep: "(["`` is a broken regular expression: exit 2, one line naming source.sep."""
    (tmp_path / "d.csv").write_text("a,y\n1,0\n2,1\n3,0\n")
    _one_line(_run(_csv_task(tmp_path, "d.csv", sep="(["), tmp_path / "o"), 2, "source.sep")


@pytest.mark.parametrize("path, word", [(".", "is a folder"), ("/dev/zero", "not a regular")])
def test_csv_path_that_is_no_file_says_what_it_is(tmp_path, path, word):
    """A CSV path naming a folder or a device is reported as such, not as "not found"."""
    _one_line(_run(_csv_task(tmp_path, path), tmp_path / "o"), 1, word)


def test_an_empty_column_is_reported_as_empty_not_as_text(tmp_path):
    """A column of empty cells with ``missing: drop``: "no value", and the fix."""
    (tmp_path / "d.csv").write_text("a,b,y\n1,,0\n2,,1\n3,,0\n4,,1\n")
    line = _one_line(_run(_csv_task(tmp_path, "d.csv", missing="drop"), tmp_path / "o"), 1,
                     "'b'", "no value", "features.drop")
    assert "text" not in line


# --------------------------------------------------------------------------- file modes


def test_every_written_file_has_the_ordinary_mode(tmp_path):
    """Results, figures and reports are written with mode 0666 & ~umask, like any file."""
    config = _config(tmp_path, {**TOY, "sizes": [2, 5], "splits": 20})
    out = tmp_path / "out"
    assert _run(config, out).exit_code == 0
    runner = CliRunner()
    assert runner.invoke(cli, ["plot", str(out / "toy"), "-o", str(tmp_path / "f.png")]
                         ).exit_code == 0
    assert runner.invoke(cli, ["report", str(out / "toy"), "-o", str(tmp_path / "r.md")]
                         ).exit_code == 0
    umask = os.umask(0)
    os.umask(umask)
    files = [p for p in out.rglob("*") if p.is_file()]
    files += [tmp_path / "f.png", tmp_path / "r.md"]
    assert len(files) >= 8
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, path


# --------------------------------------------------------------------------- signals


@pytest.mark.parametrize("sig, code, word", [
    (signal.SIGINT, 130, "interrupted: "), (signal.SIGTERM, 143, "terminated: "),
])
def test_ctrl_c_or_sigterm_during_start_up_is_one_line(tmp_path, sig, code, word):
    """SIGINT to the process group (a terminal's Ctrl-C) or SIGTERM to the process (kill
    PID) at moments spread over start-up once the entry point runs (imports, config, data,
    workers): exit 130 / 143 and one line, never a traceback."""
    config = _config(tmp_path)
    for delay in (0.05, 0.1, 0.2, 0.4, 0.7, 1.0):
        proc = _start(config, tmp_path / "out", "--jobs", "2")
        assert proc.stdout.readline() == b"up\n"
        time.sleep(delay)
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        err = err.decode()
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, (delay, err)
        assert proc.returncode == code, (delay, err)
        # "interrupted: ..." or, before the first size was saved, "interrupted before any
        # size was computed: nothing was kept; ..."
        assert re.match(rf"{word[:-2]}( before any size was computed)?: ", err), err


def test_sigterm_stops_the_run_in_one_line_and_ends_its_workers(tmp_path):
    """SIGTERM to the run's process only: exit 143, one line, no leaked-semaphore warning,
    and its worker processes are gone soon after."""
    out = tmp_path / "out"
    proc = _start(_config(tmp_path, LONG), out, "--jobs", "2")
    assert _wait_until(lambda: list(out.glob("toy/.checkpoints/m=*.csv.gz")), 300)
    workers = _children(proc.pid)
    assert workers and all(_sigint_held_off(pid) for pid in workers)  # Ctrl-C: no traceback
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    err = err.decode()
    assert proc.returncode == 143, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("terminated: "), err
    assert "leaked" not in err
    assert _wait_until(lambda: not _alive(workers), 60), _alive(workers)


def test_workers_end_soon_after_the_run_is_killed(tmp_path):
    """kill -9 of the run's process: its loky workers end within seconds (not minutes)."""
    out = tmp_path / "out"
    proc = _start(_config(tmp_path, LONG), out, "--jobs", "2")
    assert _wait_until(lambda: list(out.glob("toy/.checkpoints/m=*.csv.gz")), 300)
    workers = _children(proc.pid)
    assert workers
    proc.kill()
    proc.wait(timeout=60)
    try:
        left = {p: Path(f"/proc/{p}/cmdline").read_bytes()[:200] for p in _alive(workers)}
        assert _wait_until(lambda: not _alive(workers), 60), left
    finally:
        for pid in _alive(workers):
            os.kill(pid, signal.SIGKILL)
        proc.communicate(timeout=60)


# --------------------------------------------------------------------------- two runs, one folder


def _result_bytes(out: Path, task: str = "toy") -> dict[str, bytes]:
    return {n: (out / task / n).read_bytes() for n in ("splits.csv.gz", "summary.csv",
                                                      "paired.csv")}


def test_a_second_run_on_a_task_folder_in_use_is_refused_and_the_first_is_unharmed(tmp_path):
    """Run A (seed 0) is writing; run B (seed 1, other splits) on the same --out is refused
    in one line naming A's process, before it touches the folder; A ends with exactly the
    files of a run that was alone."""
    config = _config(tmp_path)
    alone = tmp_path / "alone"
    assert _run(config, alone).exit_code == 0
    out = tmp_path / "out"
    first = _start(config, out, "--jobs", "1")
    assert first.stdout.readline() == b"up\n"
    assert _wait_until(lambda: list(out.glob("toy/.checkpoints/m=*.csv.gz")), 60)
    temp = out / "toy" / ".checkpoints" / ".m=80.csv.gz.live.tmp"  # as if being written
    temp.write_bytes(b"")
    for args in (("--seed", "1", "--splits", "150"), ()):
        line = _one_line(_run(config, out, *args), 1, str(out / "toy"),
                         f"process {first.pid}", "another --out")
        assert "Traceback" not in line
    assert temp.exists()  # the refused run removed nothing
    temp.unlink()
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err.decode()
    assert _result_bytes(out) == _result_bytes(alone)


# The console script, paused after its first checkpoint is saved: it says "saved" on stdout
# and waits on stdin, holding its task folder's lock, until the test acts. The test then
# acts on an event, never after a guessed delay: a run that finished (or had not started)
# before a timed kill would leave the test checking nothing, or waiting in vain.
_ENTRY_PAUSED = (
    "import os, sys\n"
    "from nbvslr.results.checkpoints import Checkpoints\n"
    "save = Checkpoints.save\n"
    "def paused(self, m, df):\n"
    "    save(self, m, df)\n"
    "    os.write(1, b'saved\\n')\n"
    "    os.read(0, 1)\n"
    "Checkpoints.save = paused\n"
    "from nbvslr.__main__ import main\n"
    "sys.argv[0] = 'nbvslr'; main()\n")


def _start_paused(config: Path, out: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-c", _ENTRY_PAUSED,
           "run", str(config), "--out", str(out), "--cache", str(out.parent / "c"),
           "--offline", "-q", "--jobs", "1"]
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, cwd=out.parent)


def test_a_killed_run_leaves_no_stale_lock(tmp_path):
    """kill -9 of a run that holds the lock (checked, with a checkpoint saved): the lock is
    free as soon as the process is gone, and the next run takes it and finishes, with the
    bytes of an uninterrupted run."""
    config = _config(tmp_path)
    alone = tmp_path / "alone"
    assert _run(config, alone).exit_code == 0
    out = tmp_path / "out"
    proc = _start_paused(config, out)
    try:
        line = proc.stdout.readline()  # the event: its first size is checkpointed
        assert line == b"saved\n", (line, proc.stderr.read().decode())
        assert list(out.glob("toy/.checkpoints/m=*.csv.gz"))
        with pytest.raises(ResultsError, match=f"process {proc.pid}"):
            with results.TaskLocks([out / "toy"]):  # held by the paused run
                pass
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=600)
    assert proc.returncode == -signal.SIGKILL
    with results.TaskLocks([out / "toy"]):  # free at once: the kernel released it
        pass
    assert (out / "toy" / results.lock.LOCK_FILE).exists()  # the file stays, not the lock
    assert _run(config, out).exit_code == 0
    assert _result_bytes(out) == _result_bytes(alone)


def test_task_lock_is_held_by_one_process_and_dies_with_it(tmp_path):
    """TaskLocks: refused while another process holds the folder; free once it is killed."""
    folder = tmp_path / "task"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from nbvslr.results import TaskLocks\n"
         f"with TaskLocks([{str(folder)!r}]):\n    print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline() == b"held\n"
        with pytest.raises(ResultsError, match=f"process {holder.pid}"):
            with results.TaskLocks([folder]):
                pass
    finally:
        holder.kill()
        holder.communicate()
    with results.TaskLocks([folder]):  # the kernel released it with the process
        pass


# --------------------------------------------------------------------------- damaged checkpoints


def _rewrite(path: Path, change) -> None:
    frame = pd.read_csv(path)
    frame = change(frame)
    path.write_bytes(gzip.compress(frame.to_csv(index=False).encode(), mtime=0))


def _record(path: Path) -> None:
    """Record the checkpoint's current sha256, as if it had been written so."""
    stamp = path.parent / "fingerprint.json"
    info = json.loads(stamp.read_text())
    info["checkpoints"][path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    stamp.write_text(json.dumps(info))


TAMPERING = {
    "rows cut": lambda f: f[f["model"] != "nb"],
    "error nan": lambda f: f.assign(error=f["error"].where(f.index != 3, float("nan"))),
    "error 7.5": lambda f: f.assign(error=f["error"].where(f.index != 3, 7.5)),
    "task renamed": lambda f: f.assign(task="other"),
    "split repeated": lambda f: f.assign(split=f["split"].where(f.index != 1, 0)),
}


@pytest.mark.parametrize("recorded", [False, True], ids=["digest differs", "digest matches"])
@pytest.mark.parametrize("how", [*TAMPERING, "copied from m=10"])
def test_a_damaged_checkpoint_is_named_before_anything_is_recomputed(tmp_path, how, recorded):
    """A checkpoint altered after it was written (and, with ``recorded``, its sha256 forged
    to match): exit 1, one line naming it and the fix, no size recomputed, the results of
    the finished run untouched; deleting it recomputes that size to the right bytes."""
    config = _config(tmp_path, {**TOY, "sizes": [2, 5, 10], "splits": 20})
    out = tmp_path / "out"
    assert _run(config, out).exit_code == 0
    good = _result_bytes(out)
    folder = out / "toy" / results.CHECKPOINTS
    target = folder / "m=5.csv.gz"
    if how == "copied from m=10":
        target.write_bytes((folder / "m=10.csv.gz").read_bytes())
    else:
        _rewrite(target, TAMPERING[how])
    if recorded:
        _record(target)
    before = {p: p.stat().st_mtime_ns for p in folder.iterdir()}
    line = _one_line(_run(config, out, "--seed", "0"), 1, "m=5.csv.gz", "--force")
    assert (": damaged (" in line) != recorded
    assert {p: p.stat().st_mtime_ns for p in folder.iterdir()} == before
    assert _result_bytes(out) == good
    target.unlink()
    assert _run(config, out).exit_code == 0
    assert _result_bytes(out) == good


def test_a_checkpoint_whose_sha256_was_never_recorded_is_recomputed(tmp_path):
    """A run killed between writing a checkpoint and recording it: that size is recomputed,
    silently, to the same bytes."""
    config = _config(tmp_path, {**TOY, "sizes": [2, 5, 10], "splits": 20})
    out = tmp_path / "out"
    assert _run(config, out).exit_code == 0
    good = _result_bytes(out)
    stamp = out / "toy" / results.CHECKPOINTS / "fingerprint.json"
    info = json.loads(stamp.read_text())
    del info["checkpoints"]["m=5.csv.gz"]
    stamp.write_text(json.dumps(info))
    (out / "toy" / "summary.csv").unlink()
    result = _run(config, out)
    assert result.exit_code == 0 and result.output.count("\n") == 1, result.output
    assert _result_bytes(out) == good
    assert "m=5.csv.gz" in json.loads(stamp.read_text())["checkpoints"]


_IGNORED_CONTEXT = """
import signal, sys, time, weakref
import nbvslr.__main__ as entry
from nbvslr import errors
signal.signal(signal.SIGTERM, errors.stop_on_sigterm)  # a handler that does not note it
sys.unraisablehook = entry._resend
class Thing: pass
def callback(ref):  # Python ignores exceptions raised here
    signal.raise_signal(signal.SIGTERM)
try:
    thing = Thing(); ref = weakref.ref(thing, callback); del thing
    time.sleep(5)
    print("lost")
except KeyboardInterrupt as exc:
    print("raised", type(exc).__name__)
"""


def test_a_signal_raised_where_exceptions_are_ignored_is_sent_again():
    """SIGTERM handled inside a weak reference's callback (where Python ignores exceptions):
    no "Exception ignored" traceback, and the run still stops."""
    done = subprocess.run([sys.executable, "-c", _IGNORED_CONTEXT], capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.strip() == "raised Terminated", done
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


_SWALLOWED = """
import os, signal, sys, time
import nbvslr.__main__ as entry
import nbvslr.cli as cli
real = cli.main
def swallowing(argv):
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    except KeyboardInterrupt:
        pass  # as C code that clears the error (numpy.random's module init, seen here)
    real(argv)
cli.main = swallowing
sys.argv = ["nbvslr", *sys.argv[1:]]
entry.main()
"""


def test_a_ctrl_c_whose_exception_was_swallowed_still_stops_the_command(tmp_path):
    """A Ctrl-C during the command's imports whose KeyboardInterrupt some C code cleared:
    the command stops at its next check (exit 130, one line), it does not run on."""
    config = _config(tmp_path)
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-c", _SWALLOWED, "run", str(config), "--out", str(out),
         "--cache", str(tmp_path / "c"), "--offline", "-q", "--jobs", "1"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 130, done
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done
    assert done.stderr.startswith("interrupted: "), done
    assert not (out / "toy" / "summary.csv").exists()


def test_a_noted_signal_is_not_sent_again(monkeypatch):
    """A KeyboardInterrupt lost where Python ignores exceptions is sent again, unless the
    command's handler noted it: then raise_if_stopped raises it, and a second signal would
    only interrupt the clean-up."""
    import types

    import nbvslr.__main__ as entry
    from nbvslr import errors

    sent: list[tuple] = []
    monkeypatch.setattr(entry.threading, "Timer",
                        lambda *args: types.SimpleNamespace(start=lambda: sent.append(args)))
    lost = types.SimpleNamespace(exc_value=KeyboardInterrupt())
    monkeypatch.setattr(errors, "_received", [])
    entry._resend(lost)
    assert len(sent) == 1  # not noted: sent again
    monkeypatch.setattr(errors, "_received", [signal.SIGINT])
    entry._resend(lost)
    assert len(sent) == 1  # noted: left to raise_if_stopped
    with pytest.raises(KeyboardInterrupt):
        errors.raise_if_stopped()
