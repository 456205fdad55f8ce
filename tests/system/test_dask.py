"""The runner on a dask cluster: same bytes as a local run, survives a lost worker, errors.

A scheduler and two worker processes run on 127.0.0.1 for the module (started from this
Python, in a folder other than the test's, so only absolute paths in the units can work);
every process started here is stopped by the fixtures' teardown.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from nbvslr.cli import cli
from nbvslr.config import parse_config
from nbvslr.data.dataset import DataSettings
from nbvslr.errors import ConfigError
from nbvslr.runner import backends, run_experiment, units
from nbvslr.runner.units import portable

distributed = pytest.importorskip("distributed")

pytestmark = [pytest.mark.dask]

SIZES = [4, 10, 20, 40]
SPLITS = 50
BLOCK = 5  # 4 sizes x 10 blocks + 1 full fit = 41 units
FILES = ("summary.csv", "splits.csv.gz")
START_SECONDS = 30


# --------------------------------------------------------------------------- processes


def _spawn(args: list[str], cwd: Path, log: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    with open(log, "wb") as out:
        return subprocess.Popen([sys.executable, "-m", *args], cwd=cwd, env=env,
                                stdout=out, stderr=subprocess.STDOUT)


def _stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _worker(address: str, name: str, cwd: Path) -> subprocess.Popen:
    # --no-nanny: the worker is this very process, so a SIGKILL really loses it
    # (a nanny would restart it).
    return _spawn(
        ["distributed.cli.dask_worker", address, "--name", name, "--nthreads", "1",
         "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"],
        cwd, cwd / f"{name}.log",
    )


def _scheduler(home: Path) -> tuple[subprocess.Popen, str]:
    """Start a scheduler on a free port of 127.0.0.1; return it and its address."""
    file = home / "scheduler.json"
    proc = _spawn(
        ["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
         "--no-dashboard", "--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(file)],
        home, home / "scheduler.log",
    )
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        try:
            return proc, json.loads(file.read_text())["address"]
        except (OSError, ValueError, KeyError):  # not written yet, or half written
            time.sleep(0.1)
    _stop([proc])
    raise RuntimeError(f"the dask scheduler did not start in {START_SECONDS} s")


def _wait_for(client, names: set[str]) -> dict[str, str]:
    """Block until the workers ``names`` are connected; return name -> address."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        workers = client.scheduler_info(n_workers=-1)["workers"]
        found = {w["name"]: addr for addr, w in workers.items() if w["name"] in names}
        if set(found) == names:
            return found
        time.sleep(0.1)
    raise RuntimeError(f"dask workers {sorted(names)} did not start in {START_SECONDS} s")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A scheduler and two single-thread workers on 127.0.0.1, run from another folder."""
    home = tmp_path_factory.mktemp("dask-elsewhere")
    scheduler, address = _scheduler(home)
    procs = [scheduler]
    client = None
    try:
        client = distributed.Client(address, timeout=START_SECONDS, set_as_default=False)
        procs += [_worker(address, f"w{i}", home) for i in (1, 2)]
        _wait_for(client, {"w1", "w2"})
        yield {"address": address, "client": client, "home": home, "procs": procs}
    finally:
        if client is not None:
            client.close()
        _stop(procs)


# --------------------------------------------------------------------------- runs


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A folder holding toy.csv (300 rows, 5 continuous features, shifted classes)."""
    folder = tmp_path_factory.mktemp("dask-run")
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    X = rng.normal(size=(300, 5)) + 0.5 * y[:, None]  # (N, d)
    pd.DataFrame(X, columns=list("abcde")).assign(label=y).to_csv(
        folder / "toy.csv", index=False
    )
    return folder


def _config(out: str, **kw):
    # Relative paths on purpose: they name files in the test's folder (the cwd here), which
    # the workers, started elsewhere, find only through the units' absolute paths.
    raw = {
        "tasks": [{
            "name": "toy",
            "source": {"csv": "toy.csv"},
            "target": {"column": "label", "positive": [1]},
            "features": {"kind": "continuous"},
        }],
        "sizes": SIZES,
        "splits": SPLITS,
        "seed": 3,
        "models": {"nb": {}, "lr": {}},
        "block": BLOCK,
    }
    data = DataSettings(cache_dir=Path("cache"), download=False)
    return parse_config(raw, source="toy.yaml", data=data, out=out, **kw)


def _bytes(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in FILES}


@pytest.fixture(scope="module")
def local(workdir) -> dict[str, bytes]:
    """The reference: the same config run by joblib's loky backend on this machine."""
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(workdir)
        run_experiment(_config("loky", jobs=2))
    return _bytes(workdir / "loky" / "toy")


class _KillOnBusy:
    """A progress sink that SIGKILLs a worker once it holds queued or running units."""

    def __init__(self, client, address: str, proc: subprocess.Popen) -> None:
        self.client, self.address, self.proc = client, address, proc
        self.total = 0
        self.done = 0
        self.killed_at: int | None = None

    def start(self, plan, workers: int = 1) -> None:
        self.total = sum((p.sizes - p.resumed) * p.splits for p in plan)

    def size_done(self, task: str, m: int) -> None:
        pass

    def task_done(self, task: str, seconds: float) -> None:
        pass

    def splits_done(self, task: str, m: int, n: int, seconds: float | None = None) -> None:
        self.done += n
        if self.killed_at is None:
            busy = self.client.processing(workers=[self.address]).get(self.address, ())
            if busy:
                self.proc.send_signal(signal.SIGKILL)
                self.proc.wait(timeout=10)
                self.killed_at = self.done

    def finish(self) -> None:
        pass


def test_cluster_run_matches_local_run_byte_for_byte(cluster, workdir, local, monkeypatch):
    """--scheduler: workers in another folder load the data and write the same bytes."""
    monkeypatch.chdir(workdir)
    client = cluster["client"]
    before = _clients(client)
    run_experiment(_config("remote", backend="dask", scheduler=cluster["address"]))
    assert _bytes(workdir / "remote" / "toy") == local
    ran = client.run(lambda: sorted(units._CACHE))
    assert all(keys for keys in ran.values()), "every worker loaded the task itself"
    assert _clients(client) == before, "the run closed its client"


def _clients(client) -> set[str]:
    """The scheduler's clients, except those joblib opens inside the workers."""
    names = client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.clients))
    return {name for name in names if not name.startswith("Client-worker-")}


def test_killed_worker_costs_only_its_units(cluster, workdir, local, monkeypatch):
    """SIGKILL of a busy worker mid-run: its units are re-run, the bytes do not change."""
    monkeypatch.chdir(workdir)
    client = cluster["client"]
    victim = _worker(cluster["address"], "victim", cluster["home"])
    try:
        address = _wait_for(client, {"victim"})["victim"]
        progress = _KillOnBusy(client, address, victim)
        run_experiment(_config("killed", backend="dask", scheduler=cluster["address"]),
                       progress=progress)
    finally:
        _stop([victim])
    assert victim.returncode == -signal.SIGKILL
    assert progress.killed_at is not None and progress.killed_at < progress.total
    assert progress.done == progress.total
    assert _bytes(workdir / "killed" / "toy") == local


def test_local_dask_cluster_matches_local_run(workdir, local, monkeypatch):
    """--backend dask without --scheduler starts (and stops) a local cluster: same bytes."""
    monkeypatch.chdir(workdir)
    run_experiment(_config("dask-local", backend="dask", jobs=2))
    assert _bytes(workdir / "dask-local" / "toy") == local
    with pytest.raises(ValueError):
        distributed.get_client()  # the run's client is closed, none is left as default


# --------------------------------------------------------------------------- errors


def test_unreachable_scheduler_is_a_one_line_error(monkeypatch, tmp_path):
    """A scheduler nobody listens on: exit 2 within seconds, naming the address."""
    monkeypatch.setattr(backends, "DASK_CONNECT_SECONDS", 1)
    monkeypatch.chdir(tmp_path)
    _write_config(tmp_path)
    address = "tcp://127.0.0.1:1"
    t0 = time.monotonic()
    result = CliRunner().invoke(cli, ["run", "toy.yaml", "-q", "--backend", "dask",
                                      "--scheduler", address])
    assert time.monotonic() - t0 < 10
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and address in lines[0] and "dask scheduler" in lines[0]


def test_scheduler_without_workers_is_a_one_line_error(tmp_path, monkeypatch):
    """A reachable scheduler with no worker: exit 2 telling how to start one."""
    monkeypatch.setattr(backends, "DASK_WORKERS_SECONDS", 0.5)
    proc, address = _scheduler(tmp_path)
    try:
        monkeypatch.chdir(tmp_path)
        _write_config(tmp_path)
        result = CliRunner().invoke(cli, ["run", "toy.yaml", "-q", "--backend", "dask",
                                          "--scheduler", address])
    finally:
        _stop([proc])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert f"dask worker {address}" in result.output


def test_malformed_scheduler_address_is_a_one_line_error(tmp_path, monkeypatch):
    """An address distributed cannot parse is refused before any client exists."""
    monkeypatch.chdir(tmp_path)
    _write_config(tmp_path)
    result = CliRunner().invoke(cli, ["run", "toy.yaml", "-q", "--backend", "dask",
                                      "--scheduler", "nowhere:port"])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "nowhere:port" in result.output


def test_scheduler_needs_the_dask_backend(tmp_path, monkeypatch):
    """--scheduler with the default loky backend is refused, not silently ignored."""
    with pytest.raises(ConfigError, match="--scheduler.*--backend dask"):
        parse_config({"tasks": ["pima"]}, scheduler="tcp://127.0.0.1:8786")


def test_missing_distributed_names_the_pip_command(tmp_path, monkeypatch):
    """Without the distributed package, --backend dask says how to install it."""
    monkeypatch.setitem(sys.modules, "distributed", None)  # import now raises ImportError
    monkeypatch.chdir(tmp_path)
    _write_config(tmp_path)
    result = CliRunner().invoke(cli, ["run", "toy.yaml", "-q", "--backend", "dask"])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert "pip install 'nbvslr[dask]'" in result.output


def test_units_carry_absolute_paths(tmp_path, monkeypatch):
    """Relative CSV, cache and mirror paths reach the workers resolved from the cwd."""
    monkeypatch.chdir(tmp_path)
    config = _config("out")
    spec, settings = portable(config.tasks[0], config.data)
    assert Path(spec.source["csv"]) == tmp_path / "toy.csv"
    assert settings.cache_dir == tmp_path / "cache"
    _, with_mirror = portable(config.tasks[0], DataSettings(mirror=Path("uci")))
    assert with_mirror.mirror == tmp_path / "uci"
    assert config.tasks[0].source["csv"] == "toy.csv", "the config itself is unchanged"


def _write_config(folder: Path) -> None:
    (folder / "toy.csv").write_text("a,label\n0.1,0\n0.9,1\n0.2,0\n0.8,1\n")
    (folder / "toy.yaml").write_text(
        "tasks: [{name: toy, source: {csv: toy.csv}, target: {column: label}}]\n"
        "sizes: [2]\nsplits: 2\n"
    )
