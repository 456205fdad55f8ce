"""What a run shows on stderr: a bar that fits the terminal, plain lines in a log, or nothing."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from nbvslr.config import load_config
from nbvslr.data.dataset import DataSettings
from nbvslr.runner import run_experiment
from nbvslr.runner.progress import (
    MIN_BAR,
    LogProgress,
    NoProgress,
    Tally,
    TaskPlan,
    TerminalProgress,
    compose,
    progress_for,
)

REPO = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PLAN = [TaskPlan("adult-continuous", 20, 0, 1000), TaskPlan("nb-data", 15, 3, 1000)]


def _drive(progress, plan=PLAN) -> None:
    """Feed a whole run's events: blocks of 250 splits, sizes, tasks."""
    progress.start(plan)
    for task in plan:
        for k in range(task.sizes - task.resumed):
            for _ in range(task.splits // 250):
                progress.splits_done(task.name, 2 + 20 * k, 250, 0.01 * (k + 1))
            progress.size_done(task.name, 2 + 20 * k)
        progress.task_done(task.name, 12.0)
    progress.finish()


def _screens(raw: str) -> list[str]:
    """Every line the terminal showed: the text between carriage returns and newlines."""
    return [ANSI.sub("", part) for part in re.split(r"[\r\n]", raw) if part.strip()]


class FakeTerminal(io.StringIO):
    """A text stream that says it is a terminal, with no size of its own."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("columns", [120, 80, 60, 40])
def test_bar_never_wider_than_the_terminal(columns, monkeypatch):
    """On a terminal of COLUMNS columns every redraw is at most COLUMNS - 1 wide."""
    monkeypatch.setenv("COLUMNS", str(columns))
    stream = FakeTerminal()
    progress = progress_for(stream)
    assert isinstance(progress, TerminalProgress)
    progress.mininterval = 0
    _drive(progress)
    shown = _screens(stream.getvalue())
    assert len(shown) > 20
    assert max(len(line) for line in shown) <= columns - 1
    bars = [line for line in shown if "elapsed" in line]
    assert all("units" not in line and "it/s" not in line for line in shown)
    if columns >= 120:
        assert all(w in bars[-1] for w in ("sizes 35/35", "splits 35,000/35,000", "tasks 2/2"))
    if columns >= 80:
        assert "sizes 35/35" in bars[-1]
        assert any("left" in line for line in bars)
    assert "adult-continuous: done (20 sizes, 0:12)" in shown


def test_bar_on_a_pseudo_terminal_of_80_columns(monkeypatch):
    """A real pty of 80 columns (its own size, no COLUMNS): no line wraps."""
    monkeypatch.delenv("COLUMNS", raising=False)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    chunks: list[bytes] = []
    reader = threading.Thread(target=_read_all, args=(master, chunks))
    reader.start()
    with os.fdopen(slave, "w", encoding="utf-8") as stream:
        progress = progress_for(stream)
        assert isinstance(progress, TerminalProgress)
        progress.mininterval = 0
        _drive(progress)
    reader.join(timeout=10)
    os.close(master)
    shown = _screens(b"".join(chunks).decode("utf-8"))
    assert any("sizes" in line and "|" in line for line in shown)
    assert max(len(line) for line in shown) <= 79


SWEEP = [TaskPlan(f"discrete-bayes-n{n}", 7, 0, 500, features=n,
                  units=tuple((m, 250) for m in (2, 8, 32, 128, 512, 2048, 8192) for _ in "ab"))
         for n in (4, 16, 256)]


def test_long_task_names_at_80_columns_keep_the_name_and_a_steady_bar(monkeypatch):
    """`discrete-bayes-n16 m=8192` at 80 columns: every redraw names the task and size in
    full, and the bar has the same width in all of them."""
    monkeypatch.setenv("COLUMNS", "80")
    stream = FakeTerminal()
    progress = progress_for(stream)
    progress.mininterval = 0
    progress.start(SWEEP, workers=2)
    for plan in SWEEP:
        for m, n in plan.units:
            progress.splits_done(plan.name, m, n, 0.001 * m)
            progress.size_done(plan.name, m)
        progress.task_done(plan.name, 3.0)
    progress.finish()
    bars = [line for line in _screens(stream.getvalue()) if "elapsed" in line]
    running = [line for line in bars if " m=" in line]
    assert len(running) > 30
    assert all(re.match(r"discrete-bayes-n\d+ m=\d+ ", line) for line in running)
    assert any(line.startswith("discrete-bayes-n16 m=8192 ") for line in running)
    widths = {len(re.search(r"\|[^|]*\|", line).group()) for line in bars}
    assert len(widths) == 1 and widths.pop() >= 2 + MIN_BAR
    assert max(len(line) for line in bars) <= 79


def test_a_task_name_too_long_for_a_bar_at_80_columns_is_shortened_not_the_bar():
    """A 45-character task name at 80 columns: the bar is still drawn, the name shortened
    with "…" and the size kept, on every redraw."""
    name = "adult-continuous-rescaled-by-hand-twice-over"
    plan = [TaskPlan(name, 3, 0, 500, units=tuple((m, 250) for m in (2, 400, 32561)
                                                  for _ in "ab"))]
    tally = Tally()
    tally.start(plan)
    for m in (2, 400, 32561):
        label = f"{name} m={m}"
        left, right, bar = compose(label, tally, 79)
        assert bar and len(left) + len(right) + 2 + MIN_BAR <= 79
        assert left.startswith("adult-continuous") and "…" in left
        assert left.rstrip().endswith(f" m={m}")


def _read_all(fd: int, chunks: list[bytes]) -> None:
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # the other end closed
            return
        if not data:
            return
        chunks.append(data)


def test_log_gets_one_line_per_size_and_per_task():
    """Not a terminal: one flushed line per finished size and task, no carriage returns."""
    stream = io.StringIO()
    progress = progress_for(stream)
    assert isinstance(progress, LogProgress)
    _drive(progress)
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert lines[0] == "run: 2 tasks, 35 sizes (3 done before, from checkpoints), 35,000 splits"
    sizes = [ln for ln in lines if re.match(r"\S+ m=\d+: done; ", ln)]
    tasks = [ln for ln in lines if re.match(r"\S+: done in ", ln)]
    assert len(sizes) == 20 + 12 and len(tasks) == 2
    assert sizes[0].startswith("adult-continuous m=2: done; sizes 4/35, splits 4,000/35,000")
    assert tasks[-1].startswith("nb-data: done in 0:12; sizes 35/35, splits 35,000/35,000, "
                                "tasks 2/2")


@pytest.mark.parametrize("tty", [True, False])
def test_quiet_prints_nothing(tty):
    """--quiet: nothing on a terminal, nothing in a log."""
    stream = FakeTerminal() if tty else io.StringIO()
    progress = progress_for(stream, quiet=True)
    assert isinstance(progress, NoProgress)
    _drive(progress)
    assert stream.getvalue() == ""


def test_compose_fits_every_width_and_keeps_the_times():
    """For widths 1..200 the line fits; from 30 columns on, elapsed and left are shown."""
    tally = Tally()
    tally.start(PLAN)
    for k in range(12):
        tally.unit_done("adult-continuous", 2 + 20 * k, 1000, 0.5)
    tally.sizes_done = 15
    for width in range(1, 201):
        left, right, bar = compose("adult-continuous m=382", tally, width)
        used = len(left) + len(right) + (2 + MIN_BAR if bar else 0)
        assert used <= width, width
        if width >= 30:
            assert "elapsed" in right and "left" in right, width
        if width >= 72:  # an 80-column terminal names the task and size while it runs
            assert left.strip() == "adult-continuous m=382", width


def _tiny_config(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 80)
    frame = pd.DataFrame(rng.normal(size=(80, 2)) + y[:, None], columns=["a", "b"])
    frame.assign(label=y).to_csv(tmp_path / "toy.csv", index=False)
    task = {"name": "toy", "source": {"csv": "toy.csv"},
            "target": {"column": "label", "positive": [1]}}
    path = tmp_path / "toy.yaml"
    path.write_text(yaml.safe_dump({"tasks": [task], "sizes": [2, 4, 8], "splits": 20,
                                    "block": 10}))
    return path


@pytest.mark.parametrize("sink", ["file", "pipe"])
def test_run_logs_progress_to_a_file_or_a_pipe(tmp_path, sink):
    """`nbvslr run 2> log` or `| tee`: a line per size and one for the task, no bar."""
    cfg = _tiny_config(tmp_path)
    cmd = [sys.executable, "-m", "nbvslr", "run", str(cfg), "--jobs", "1",
           "--out", str(tmp_path / "res"), "--cache", str(tmp_path / "cache")]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if sink == "file":
        with open(tmp_path / "run.log", "w") as log:
            subprocess.run(cmd, stderr=log, stdout=subprocess.DEVNULL, check=True,
                           cwd=tmp_path, env=env)
        text = (tmp_path / "run.log").read_text()
    else:
        text = subprocess.run(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              check=True, cwd=tmp_path, env=env, text=True).stderr
    assert "\r" not in text and "|" not in text
    lines = text.splitlines()
    assert lines[0] == "run: 1 task, 3 sizes, 60 splits"
    assert [ln.split(";")[0] for ln in lines[1:]] == [
        "toy m=2: done", "toy m=4: done", "toy m=8: done", lines[-1].split(";")[0]]
    assert lines[-1].startswith("toy: done in ")


def test_runner_reports_every_split_size_and_task(tmp_path):
    """run_experiment tells the progress every split, each size once and the task once."""
    cfg = _tiny_config(tmp_path)
    config = load_config(cfg, out=tmp_path / "res", data=DataSettings(cache_dir=tmp_path))
    events: list[tuple] = []

    class Record(NoProgress):
        def start(self, plan, workers=1):
            events.append(("start", tuple(plan)))

        def splits_done(self, task, m, n, seconds=None):
            events.append(("splits", m, n))
            assert seconds is not None and seconds >= 0

        def size_done(self, task, m):
            events.append(("size", m))

        def task_done(self, task, seconds):
            events.append(("task", task))

    run_experiment(config, progress=Record())
    units = ((2, 10), (2, 10), (4, 10), (4, 10), (8, 10), (8, 10))
    assert events[0] == ("start", (TaskPlan("toy", 3, 0, 20, units, features=2),))
    assert sorted(e for e in events if e[0] == "size") == [("size", 2), ("size", 4), ("size", 8)]
    assert sum(e[2] for e in events if e[0] == "splits") == 3 * 20
    assert events[-1] == ("task", "toy")
