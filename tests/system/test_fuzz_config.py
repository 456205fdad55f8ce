"""Config fuzzing: mutated configs end in exit 0 or a one-line error, never a traceback or code.

Each example is written to a file and given to ``nbvslr run`` (click's CliRunner). The run
itself is replaced by the runner's preparation (load every task, check the sizes), so the
data layer is exercised but no model is fitted.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbvslr import api
from nbvslr.cli import cli
from nbvslr.runner import bookkeeping

BASE: dict[str, Any] = {
    "tasks": [
        {"name": "toy", "source": {"synthetic": {"generator": "nb", "rows": 40, "features": 3,
                                                  "seed": 0}}},
        {"name": "table", "source": {"csv": "table.csv"},
         "target": {"column": "y", "positive": [1]}, "features": {"kind": "continuous"}},
    ],
    "sizes": {"start": 2, "stop": 8, "step": 3},
    "splits": 3,
    "seed": 0,
    "models": {"nb": {}, "lr": {"C": 1.0}, "lr_l2": {"model": "lr"}},
    "nested": False,
    "block": 2,
}
CSV = "a,b,y\n" + "".join(f"{i % 7},{(i * 3) % 5},{i % 2}\n" for i in range(30))

ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([0, -1, 1, 2, 10**9, 10**18, 2**63, -(2**63), 10**100]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", "paper", "../x", "/etc/passwd", "nb", "lr", "continuous", "~"]),
    st.lists(st.integers(min_value=-5, max_value=10**12), max_size=4),
    st.dictionaries(st.text(max_size=6), st.integers(), max_size=2),
    st.just([]),
    st.just({}),
)
TAGS = [
    '!!python/object/apply:os.system ["touch {canary}"]',
    '!!python/object/apply:subprocess.check_output [["touch", "{canary}"]]',
    "!!python/name:os.system",
    '!!python/object/new:os.system ["touch {canary}"]',
    "!!python/module:os",
    "!!binary aGVsbG8=",
    "!!set {{a, b}}",
    "!!timestamp 2001-12-14",
    "!custom 3",
    "!!float 1e999",
    "!!str 7",
]


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path of a nested dict/list (the root excluded)."""
    out = []
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(
        obj, list) else ()
    for key, value in items:
        out.append(prefix + (key,))
        out.extend(_paths(value, prefix + (key,)))
    return out


def _parent(raw: Any, path: tuple) -> Any:
    for key in path[:-1]:
        raw = raw[key]
    return raw


@st.composite
def mutated(draw) -> bytes:
    """A config file's bytes: BASE after a few structural, then textual, mutations."""
    raw = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _paths(raw)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = _parent(raw, path)
        op = draw(st.sampled_from(["set", "set", "delete", "unknown", "empty"]))
        if op == "set":
            parent[path[-1]] = draw(ODD_VALUES)
        elif op == "delete":
            del parent[path[-1]]
        elif op == "unknown" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(ODD_VALUES)
        elif op == "empty":
            value = parent[path[-1]]
            parent[path[-1]] = type(value)() if isinstance(value, dict | list | str) else None
    text = yaml.safe_dump(raw, allow_unicode=True).encode("utf-8")
    how = draw(st.sampled_from(["none", "none", "tag", "bytes", "truncate"]))
    if how == "tag":
        lines = text.splitlines()
        at = draw(st.integers(min_value=0, max_value=len(lines) - 1))
        line = lines[at].decode()
        head = line.split(":", 1)[0] if ":" in line else "seed"
        tag = draw(st.sampled_from(TAGS)).format(canary="{canary}")
        lines[at] = f"{head}: {tag}".encode()
        text = b"\n".join(lines) + b"\n"
    elif how == "bytes":
        at = draw(st.integers(min_value=0, max_value=len(text)))
        junk = draw(st.sampled_from([b"\xff", b"\xfe\xff", b"\xc3", b"\x80abc", b"\x00",
                                     b"\xed\xa0\x80"]))
        text = text[:at] + junk + text[at:]
    elif how == "truncate":
        text = text[: draw(st.integers(min_value=0, max_value=len(text)))]
    return text


def _prepare_only(config, progress=None):
    bookkeeping.prepare(config)  # load the data and check the sizes; fit nothing
    return []


def _check(result, canary: Path) -> None:
    assert not canary.exists(), "a YAML tag ran code"
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"uncaught {type(result.exception).__name__}: {result.exception}")
    assert result.exit_code in (0, 1, 2), result.output
    assert "Traceback" not in result.output
    if result.exit_code != 0:
        lines = result.output.strip().splitlines()
        assert len(lines) == 1, result.output
        assert lines[0].startswith("error: ") or lines[0].startswith("Error: "), lines[0]


@pytest.fixture
def workdir(tmp_path, monkeypatch) -> Path:
    """A folder holding the CSV of the inline table task; runs prepare but never fit."""
    (tmp_path / "table.csv").write_text(CSV)
    monkeypatch.setattr(api, "run_tasks", _prepare_only)  # what nbvslr run runs through
    return tmp_path


def _invoke(workdir: Path, text: bytes):
    config = workdir / "fuzz.yaml"
    canary = workdir / "PWNED"
    config.write_bytes(text.replace(b"{canary}", str(canary).encode()))
    result = CliRunner().invoke(cli, [
        "run", str(config), "--out", str(workdir / "results"), "--offline",
        "--cache", str(workdir / "cache"), "--jobs", "1", "-q",
    ])
    return result, canary


def test_base_config_is_valid(workdir):
    """The fuzzing starts from a config that passes (so mutations test the checks)."""
    result, _ = _invoke(workdir, yaml.safe_dump(BASE).encode())
    assert result.exit_code == 0, result.output


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=mutated())
def test_mutated_configs_fail_cleanly(workdir, text):
    """Any mutation: exit 0, or exit 1/2 with one 'error:' line; no traceback, no code run."""
    result, canary = _invoke(workdir, text)
    _check(result, canary)


@pytest.mark.parametrize("tag", TAGS)
def test_yaml_tags_never_run_code(workdir, tag):
    """Every tag is refused (or, for plain-data tags, checked as a value) and runs nothing."""
    text = yaml.safe_dump(BASE).replace("seed: 0\n", f"seed: {tag}\n", 1).encode()
    result, canary = _invoke(workdir, text)
    _check(result, canary)
    assert result.exit_code == 2


def _bomb() -> str:
    """A flow list of 10 nested levels of aliases: 30 lines of YAML naming 10**9 strings."""
    items = ['&a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    items += [f"&a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    return "[" + ", ".join(items) + "]"


@pytest.mark.parametrize("body", [
    "tasks: [toy]\nseed: BOMB\n",
    "tasks: [toy]\nmodels: {nb: BOMB}\n",
    "tasks: [toy]\nmodels: {lr: {C: BOMB}}\n",
    "tasks: BOMB\n",
    "tasks: [toy]\nseed: &s [1, *s]\n",
    "tasks: [toy]\nseed: " + "[" * 3000 + "]" * 3000 + "\n",
    "tasks: [toy]\nseed: " + "9" * 5000 + "\n",
])
def test_alias_bombs_cycles_and_monsters_are_refused_quickly(workdir, body):
    """Alias bombs, self-references, deep nesting, 5000-digit numbers: exit 2, one short line."""
    result, canary = _invoke(workdir, body.replace("BOMB", _bomb()).encode())
    _check(result, canary)
    assert result.exit_code == 2
    assert len(result.output) < 400


@pytest.mark.parametrize("path, value, needle", [
    (("tasks", 0, "source", "synthetic", "rows"), 10**12, "rows"),
    (("tasks", 0, "source", "synthetic", "features"), 10**9, "features"),
    (("tasks", 0, "source", "synthetic", "separation"), 1e200, "separation"),
    (("sizes", "stop"), 10**12, "sizes"),
    (("splits",), 10**12, "splits"),
    (("models", "lr", "C"), 10**400, "C"),
    (("sizes",), [10**18], "sizes"),
])
def test_huge_numbers_are_refused_before_any_memory_is_used(workdir, path, value, needle):
    """Numbers that would fill memory or overflow a float: exit 2 naming the setting."""
    raw = copy.deepcopy(BASE)
    _parent(raw, path)[path[-1]] = value
    result, canary = _invoke(workdir, yaml.safe_dump(raw).encode())
    _check(result, canary)
    assert result.exit_code == 2
    assert needle in result.output
