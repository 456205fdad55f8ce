"""Experiment configuration: read a YAML file once, validate it, freeze it.

A config file (YAML, read with ``yaml.safe_load`` only)::

    tasks: [pima]                          # built-in names, or inline task definitions
    sizes: {start: 2, stop: 59, step: 3}   # stop inclusive; or a list; or "paper"
    splits: 1000                           # random train/test splits per size
    seed: 0                                # base seed of every random draw
    models:                                # name -> {model: nb|lr|lda|qda, ...options}
      nb: {}
      lr: {}
      lr_l2: {model: lr, C: 1.0}
    compare: [[nb, lr], [nb, lr_l2]]       # pairs [a, b] for paired.csv and the report
                                           # (default: every generative model against
                                           # every discriminative one, config.pairs)
    nested: false                          # training sets of one split grow with m
    block: 250                             # splits per work unit (never changes results)
    profile: stated                        # model defaults for every task (options.PROFILES)
    metrics: [error]                       # what to measure of each split (METRICS)

Everything below the CLI receives the frozen ``Config``; nothing there reads files,
environment variables or globals to find settings. Every problem is a ``ConfigError`` whose
message is one line: ``<file>: <key>: <problem> (<value>); <fix>``.
"""

from __future__ import annotations

import copy
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from nbvslr.config import sweep
from nbvslr.config.pairs import NEITHER, pick_pairs
from nbvslr.data import absolute_paths, is_text, parse_task
from nbvslr.data.dataset import DataSettings, TaskSpec
from nbvslr.errors import (
    ConfigError,
    NbvslrError,
    SizeError,
    check_known_keys,
    integer_setting,
    setting_error,
    with_hint,
)
from nbvslr.models import FAMILIES, resolve_options
from nbvslr.models.options import DEFAULT_PROFILE, PROFILES
from nbvslr.models.spec import ModelSpec
from nbvslr.models.text.entry import check_text_model
from nbvslr.results.layout import DEFAULT_METRICS, DEFAULT_OUT, METRICS
from nbvslr.splits import MIN_SIZE

KEYS = ("tasks", "sizes", "splits", "seed", "models", "compare", "nested", "block",
        "profile", "metrics")
TASK_KEYS = ("name", "source", "target", "features", "overrides", sweep.KEY)
RANGE_KEYS = ("start", "stop", "step")
DEFAULT_MODELS: Mapping[str, Mapping[str, Any]] = {"nb": {}, "lr": {}}
DEFAULT_TEXT_MODELS: Mapping[str, Mapping[str, Any]] = {"nb": {}, "lr": {"C": 1}}
"""The models of a config of text tasks alone that names none: the paper's unpenalised lr
needs a shared vocabulary of at most 1000 words on a text task (every training set is
separable before), so lr is L2-penalised (C = 1), which fits any text task, of two classes or
more, on the same words as nb (docs/text.md)."""
DEFAULT_SPLITS = 1000
DEFAULT_BLOCK = 250
DEFAULT_BACKEND = "loky"
DEFAULT_JOBS = 1
"""Workers of the Python API: the calling process, no worker start-up (and monkeypatching
works); results never depend on it."""
CLI_JOBS = -1
"""Workers of ``nbvslr run``: every core."""
MAX_SPLITS = 1_000_000  # the paper uses 1000; more would only fill memory with work units
MAX_SIZES = 10_000  # sizes in one grid
MAX_VALUES = 100_000  # values in a config once YAML aliases are expanded
MAX_CONFIG_BYTES = 16 << 20
"""The largest config file read (a config is a few kilobytes of plain data): a device such as
/dev/zero, or any file without end, is refused there rather than read into memory."""

# Task and model names become folder names and CSV values: keep them plain.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class Config:
    """One validated experiment: what to run, and where the data and results live.

    Attributes
    ----------
    source : str
        The config file as named on the command line (used in messages).
    tasks : tuple of TaskSpec
    sizes : tuple of int, or "paper"
        As written; ``grids`` holds each task's resolved m-grid.
    grids : tuple of tuple of int
        ``grids[i]`` is the sorted m-grid of ``tasks[i]``.
    splits : int
        Random train/test splits per (task, m).
    seed : int
        Base seed (``>= 0``).
    models : tuple of ModelSpec
        Options resolved with their defaults (those of ``profile`` first).
    profile : str
        The model profile (``nbvslr.models.options.PROFILES``): ``stated`` is the paper's
        stated method.
    pairs : tuple of (str, str)
        The model pairs ``(a, b)`` compared split by split (``a - b``): the config's
        ``compare``, by default every generative model against every discriminative one
        (``nbvslr.config.pairs.pick_pairs``).
    nested : bool
        Nested training sets across sizes (see ``nbvslr.splits``).
    block : int
        Splits per work unit; any value gives the same results.
    data : DataSettings
    out : Path or None
        Results folder; task ``t`` writes to ``out / t``. None: nothing is written (the
        Python API's ``nbvslr.run(..., out=None)``; tables kept in memory).
    jobs : int
        Parallel workers (joblib's ``n_jobs``: ``-1`` = every core).
    backend : str
        A joblib backend name (``loky``, ``threading``, ``multiprocessing``, ``dask``...).
    scheduler : str or None
        Address of a dask scheduler (``tcp://host:8786``) for ``backend == "dask"``;
        None starts a local cluster (or uses the current dask client).
    force : bool
        Recompute sizes that have a checkpoint.
    metrics : tuple of str
        What is measured of each split, in ``results.layout.METRICS`` order, ``error``
        first (always measured).
    """

    source: str
    tasks: tuple[TaskSpec, ...]
    sizes: tuple[int, ...] | str
    grids: tuple[tuple[int, ...], ...]
    models: tuple[ModelSpec, ...]
    profile: str = DEFAULT_PROFILE
    pairs: tuple[tuple[str, str], ...] = ()
    splits: int = DEFAULT_SPLITS
    seed: int = 0
    nested: bool = False
    block: int = DEFAULT_BLOCK
    data: DataSettings = field(default_factory=DataSettings)
    out: Path | None = DEFAULT_OUT
    jobs: int = DEFAULT_JOBS
    backend: str = DEFAULT_BACKEND
    scheduler: str | None = None
    force: bool = False
    metrics: tuple[str, ...] = DEFAULT_METRICS

    def grid(self, task: str) -> tuple[int, ...]:
        """The m-grid of the task named ``task``."""
        for spec, grid in zip(self.tasks, self.grids, strict=True):
            if spec.name == task:
                return grid
        raise KeyError(task)

    def to_dict(self) -> dict[str, Any]:
        """The resolved experiment, as plain data (for ``run.json``)."""
        return {
            "source": self.source,
            "tasks": [_task_dict(t) for t in self.tasks],
            "sizes": self.sizes if isinstance(self.sizes, str) else list(self.sizes),
            "splits": self.splits,
            "seed": self.seed,
            "models": {m.name: {"model": m.family, **dict(m.options)} for m in self.models},
            "profile": self.profile,
            "compare": [list(p) for p in self.pairs],
            "nested": self.nested,
            "block": self.block,
            # only when asked: a run of the default writes the run.json it always wrote
            **({"metrics": list(self.metrics)} if self.metrics != DEFAULT_METRICS else {}),
        }


def _task_dict(spec: TaskSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"name": spec.name}
    for key in ("source", "target", "features"):
        value = getattr(spec, key)
        if value is not None:
            out[key] = copy.deepcopy(dict(value))
    if spec.overrides:
        out["overrides"] = copy.deepcopy(dict(spec.overrides))
    return out


# --------------------------------------------------------------------------- messages


@dataclass(frozen=True)
class SettingNames:
    """How messages name the settings given beside a config (``parse_config``'s
    ``splits``, ``seed``, ``jobs``, ...): the command line's options (``command line:
    --splits: ...``), or the arguments of a Python call (``nbvslr.run(splits=...): ...``)."""

    source: str | None
    call: str | None = None

    def key(self, name: str) -> str:
        """The setting ``name`` as the user gave it."""
        return f"{self.call}({name}=...)" if self.call else f"--{name}"


COMMAND_LINE = SettingNames("command line")
"""``nbvslr run``'s options."""


class _Where:
    """Builds the one-line messages of one config file (``errors.setting_error``)."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, key: str, problem: str, value: Any, fix: str,
              cls: type[ConfigError] = ConfigError) -> ConfigError:
        return setting_error(key, problem, value, fix, self.source, cls)

    def unknown_keys(self, where: str, given: Mapping[str, Any], allowed: tuple[str, ...]):
        check_known_keys(where, given, allowed, self.source)

    def integer(self, key: str, value: Any, low: int, rule: str,
                cls: type[ConfigError] = ConfigError) -> int:
        """``value`` as an int >= ``low``; ``cls`` (a ``ConfigError``) when it is below."""
        return integer_setting(key, value, low, rule, self.source, cls)


# --------------------------------------------------------------------------- reading


class _DuplicateKey(Exception):
    def __init__(self, key: Any, line: int, first: int) -> None:
        super().__init__(key)
        self.key, self.line, self.first = key, line, first


class _PlainLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                if key in seen:
                    raise _DuplicateKey(key, key_node.start_mark.line + 1, seen[key])
                seen[key] = key_node.start_mark.line + 1
            except TypeError:  # an unhashable key: SafeLoader's own error
                break
        return super().construct_mapping(node, deep)


# YAML 1.1 (PyYAML) reads a float only with a dot: ``1e-6`` would be the text "1e-6" and a
# numeric option would refuse it. A config reads floats as YAML 1.2 (and JSON) do: ``1e-6``,
# ``1E+3`` and ``-2e5`` are numbers too; anything YAML 1.1 reads as a float still is.
_PlainLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                   |[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
                   |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
                   |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                   |[-+]?\.(?:inf|Inf|INF)
                   |\.(?:nan|NaN|NAN))$""", re.X),
    list("-+0123456789."))


def _refuse_tags(where: _Where, text: str) -> None:
    """``ConfigError`` naming the line of the first explicit tag (``!!int``, ``!!str``,
    ``!custom``): a config holds plain data, typed by how it is written."""
    for token in yaml.scan(text):
        if isinstance(token, yaml.TagToken):
            handle, suffix = token.value
            raise where.error(
                f"line {token.start_mark.line + 1}", "YAML tags are not allowed",
                f"{handle or ''}{suffix}", "remove the tag: a config holds plain data only")


def _config_bytes(path: Path) -> bytes | None:
    """A regular file's bytes, at most ``MAX_CONFIG_BYTES + 1`` of them; None for anything
    else (opened without waiting: a named pipe with no writer would block the open)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(MAX_CONFIG_BYTES + 1)
    finally:
        os.close(fd)


def read_yaml(path: str | Path) -> Any:
    """Parse one YAML file with a ``yaml.SafeLoader``; every failure is a ``ConfigError``,
    and so are a key given twice in one mapping and any explicit tag (``!!int``)."""
    where = _Where(str(path))
    try:
        raw = _config_bytes(Path(path))
    except FileNotFoundError:
        raise where.error("file", "not found", str(path), "check the path") from None
    except OSError as exc:
        raise where.error("file", "cannot be read", exc.strerror, "check the path") from None
    if raw is None:
        raise where.error("file", "not a regular file (a device or a pipe)", str(path),
                          "name a config file")
    if len(raw) > MAX_CONFIG_BYTES:
        raise where.error("file", f"larger than {MAX_CONFIG_BYTES >> 20} MiB", str(path),
                          "a config is a few kilobytes of plain data: name a config file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start : exc.start + 1].hex()
        raise where.error(
            "file", "not UTF-8 text", f"byte 0x{bad} at offset {exc.start}",
            "save the file as UTF-8",
        ) from None
    try:
        _refuse_tags(where, text)
        raw = yaml.load(text, Loader=_PlainLoader)  # noqa: S506 - a SafeLoader
    except _DuplicateKey as exc:
        raise where.error(
            f"line {exc.line}", "duplicate key", exc.key,
            f"remove one of them (the first is on line {exc.first}): YAML would keep the "
            "last one silently",
        ) from None
    except yaml.constructor.ConstructorError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else "?"
        tag = str(exc.problem).split("'")[1] if "'" in str(exc.problem) else exc.problem
        tag = str(tag).replace("tag:yaml.org,2002:", "!!")
        raise where.error(
            f"line {line}", "YAML tags are not allowed", tag,
            "remove the tag: a config holds plain data only",
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        key = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "file"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise where.error(key, "malformed YAML", problem, "fix the YAML syntax") from None
    except RecursionError:
        raise where.error(
            "file", "nested too deeply", "YAML", "a config is a few levels of plain data"
        ) from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise where.error("file", "unreadable value", str(exc), "fix the value") from None
    _check_size(where, raw)
    return raw


def _check_size(where: _Where, raw: Any) -> None:
    """Refuse a config that refers to itself or expands (through YAML aliases) to more than
    ``MAX_VALUES`` values: messages print values, and neither could be printed."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()

    def size(obj: Any) -> int:
        if not isinstance(obj, dict | list):
            return 1
        key = id(obj)
        if key in open_:
            raise where.error(
                "file", "a YAML alias refers to the value that holds it", "*alias",
                "remove the alias",
            )
        if key not in sizes:
            open_.add(key)
            items = [*obj.keys(), *obj.values()] if isinstance(obj, dict) else obj
            total = 1
            for item in items:
                total += size(item)
                if total > MAX_VALUES:
                    raise where.error(
                        "file", f"more than {MAX_VALUES} values once YAML aliases are expanded",
                        "*alias", "write the config out plainly",
                    )
            open_.discard(key)
            sizes[key] = total
        return sizes[key]

    try:
        size(raw)
    except RecursionError:
        raise where.error(
            "file", "nested too deeply", "YAML", "a config is a few levels of plain data"
        ) from None


def load_config(path: str | Path, **settings: Any) -> Config:
    """Read, validate and freeze one config file.

    ``settings`` are the command line's: ``splits``, ``seed`` (override the file when not
    None), ``data``, ``out``, ``jobs``, ``backend``, ``scheduler``, ``force``.
    """
    return parse_config(
        read_yaml(path), source=str(path), base_dir=Path(path).parent, **settings
    )


def parse_config(
    raw: Any,
    *,
    source: str = "<config>",
    base_dir: str | Path | None = None,
    splits: int | None = None,
    seed: int | None = None,
    data: DataSettings | None = None,
    out: str | Path | None = DEFAULT_OUT,
    jobs: int = DEFAULT_JOBS,
    backend: str = DEFAULT_BACKEND,
    scheduler: str | None = None,
    force: bool = False,
    metrics: Any = None,
    named: SettingNames = COMMAND_LINE,
) -> Config:
    """Validate a parsed config (a mapping) and the command line's settings.

    ``base_dir`` is the folder of the config file: a relative ``source: {csv: path}`` is read
    from there (as a user expects of a path written in a file), not from the current folder.
    ``named``: how the messages name the settings (the command line's options, or a Python
    call's arguments).
    """
    where = _Where(source)
    if raw is None:
        raise where.error("file", "empty config", "", "give at least tasks: [...]")
    if not isinstance(raw, Mapping):
        raise where.error(
            "file", "the top level must be a mapping of keys", type(raw).__name__,
            f"use keys: {', '.join(KEYS)}",
        )
    where.unknown_keys("", raw, KEYS)
    if "tasks" not in raw:
        raise where.error("tasks", "missing", None, "list built-in task names or inline tasks")

    tasks = _tasks(where, raw["tasks"], Path(base_dir) if base_dir is not None else None)
    sizes = _sizes(where, raw.get("sizes", "paper"))
    grids = tuple(_grid_of(where, t, sizes) for t in tasks)
    profile = raw.get("profile", DEFAULT_PROFILE)
    if profile not in PROFILES:
        problem = with_hint("unknown profile", profile, PROFILES)
        raise where.error("profile", problem, profile, f"use one of: {', '.join(PROFILES)}")
    default = (DEFAULT_TEXT_MODELS if tasks and all(is_text(t) for t in tasks)
               else DEFAULT_MODELS)
    models = _models(where, raw.get("models", default), profile)
    _check_text(where, tasks, models)
    pairs = _pairs(where, raw["compare"], models) if "compare" in raw else pick_pairs(
        [(m.name, m.family) for m in models])
    n_splits = where.integer("splits", raw.get("splits", DEFAULT_SPLITS), 1, ">= 1")
    if n_splits > MAX_SPLITS:
        raise where.error("splits", f"more than {MAX_SPLITS}", n_splits, "give fewer splits")
    base_seed = where.integer("seed", raw.get("seed", 0), 0, ">= 0")
    block = where.integer("block", raw.get("block", DEFAULT_BLOCK), 1, ">= 1")
    nested = raw.get("nested", False)
    if not isinstance(nested, bool):
        raise where.error("nested", "not true or false", nested, "write nested: true or false")
    measured = _metrics(where, "metrics", raw.get("metrics", list(DEFAULT_METRICS)))

    cli, key = _Where(named.source), named.key
    if splits is not None:
        n_splits = cli.integer(key("splits"), splits, 1, ">= 1")
        if n_splits > MAX_SPLITS:
            raise cli.error(key("splits"), f"more than {MAX_SPLITS}", n_splits,
                            "give fewer splits")
    if seed is not None:
        base_seed = cli.integer(key("seed"), seed, 0, ">= 0")
    jobs = cli.integer(key("jobs"), jobs, -10**6, "other than 0")
    if jobs == 0:
        raise cli.error(key("jobs"), "must not be 0", 0, "give 1, 2, ... or -1 for every core")
    backend = check_backend(backend, named)
    if metrics is not None:
        measured = _metrics(cli, key("metrics"), metrics, example="metrics=['error', "
                            "'log_loss']" if named.call else None)
    if scheduler is not None and backend != "dask":
        raise cli.error(
            key("scheduler"), f"a dask scheduler needs {key('backend')} dask, not {backend}",
            scheduler, f"add {key('backend')} dask, or drop {key('scheduler')}",
        )
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip()):
        raise cli.error(key("scheduler"), "empty address", scheduler, "give tcp://HOST:PORT")
    return Config(
        source=source,
        tasks=tasks,
        sizes=sizes,
        grids=grids,
        models=models,
        profile=profile,
        pairs=pairs,
        splits=n_splits,
        seed=base_seed,
        nested=nested,
        block=block,
        data=data if data is not None else DataSettings(),
        out=Path(out) if out is not None else None,
        jobs=jobs,
        backend=backend,
        scheduler=scheduler.strip() if scheduler is not None else None,
        force=bool(force),
        metrics=measured,
    )


def _metrics(where: _Where, key: str, raw: Any, example: str | None = None
             ) -> tuple[str, ...]:
    """The metrics a run measures (a list of ``METRICS`` names), in ``METRICS`` order,
    ``error`` always first whether listed or not. ``example``: a good value as the user
    would write it (default ``key: [error, log_loss]``, a config file's)."""
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list | tuple) or not raw:
        example = example or f"{key}: [error, log_loss]"
        raise where.error(key, "not a list of metrics", raw,
                          f"write e.g. {example}; metrics: {', '.join(METRICS)}")
    for k, name in enumerate(raw):
        if name not in METRICS:
            problem = with_hint("unknown metric", str(name), METRICS)
            raise where.error(key, problem, name, f"use some of: {', '.join(METRICS)}")
        if name in raw[:k]:
            raise where.error(key, "a metric listed twice", name, "list each metric once")
    return tuple(k for k in METRICS if k == "error" or k in raw)


BACKENDS = ("loky", "threading", "sequential", "dask")
"""The joblib backends a run works on: each must stream results as they finish
(``return_as="generator_unordered"``), which joblib's ``multiprocessing`` backend cannot."""


def check_backend(name: str, named: SettingNames = COMMAND_LINE) -> str:
    """A backend of ``BACKENDS``, or a ``ConfigError`` listing them (the setting named as
    ``named`` names it)."""
    where, key = _Where(named.source), named.key("backend")
    if name == "multiprocessing":
        raise where.error(
            key, "joblib's multiprocessing backend cannot stream results as they "
            "finish", name, "use loky, which runs the same worker processes",
        )
    if name not in BACKENDS:
        problem = with_hint("unknown backend", name, BACKENDS)
        raise where.error(key, problem, name, f"use one of: {', '.join(BACKENDS)}")
    return name


# --------------------------------------------------------------------------- sections


def _check_name(where: _Where, key: str, name: Any, what: str) -> str:
    if not isinstance(name, str) or not name:
        raise where.error(key, f"{what} name must be a non-empty string", name, "name it")
    if not _NAME.fullmatch(name) or ".." in name:
        raise where.error(
            key, f"{what} names become folder and column names", name,
            "use letters, digits, '.', '_' and '-' only (no '/', no '..', no leading '.')",
        )
    return name


def _tasks(where: _Where, raw: Any, base_dir: Path | None) -> tuple[TaskSpec, ...]:
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise where.error(
            "tasks", "must be a non-empty list", raw,
            "list built-in task names or inline tasks, e.g. tasks: [pima]",
        )
    specs: list[TaskSpec] = []
    seen: set[str] = set()
    expanded = []
    for i, item in enumerate(raw):
        if isinstance(item, Mapping):
            where.unknown_keys(f"tasks[{i}]", item, TASK_KEYS)
        try:
            expanded += [(f"tasks[{i}]", task) for task in sweep.expand(item, f"tasks[{i}]")]
        except ConfigError as exc:
            raise ConfigError(f"{where.source}: {exc}") from None
    for key, item in expanded:
        spec = _task(where, key, item)
        if spec.name in seen:
            raise where.error(key, "task listed twice", spec.name, "list each task once")
        seen.add(spec.name)
        spec = parse_task(spec, f"{where.source}: {key}")  # parsed once, here
        if base_dir is not None:
            spec = absolute_paths(spec, base_dir)
        specs.append(spec)
    return tuple(specs)


def _task(where: _Where, key: str, item: Any) -> TaskSpec:
    if isinstance(item, str):
        item = {"name": item}
    if not isinstance(item, Mapping):
        raise where.error(
            key, "a task is a name or a mapping", item,
            "write a built-in name, or {name: ..., source: ..., target: ..., features: ...}",
        )
    where.unknown_keys(key, item, TASK_KEYS)
    if "name" not in item:
        raise where.error(f"{key}.name", "missing", None, "give the task a name")
    name = _check_name(where, f"{key}.name", item["name"], "task")
    mappings = {}
    for sub in ("source", "target", "features", "overrides"):
        value = item.get(sub)
        if value is not None and not isinstance(value, Mapping):
            raise where.error(f"{key}.{sub}", "must be a mapping", value, "write {key: value}")
        mappings[sub] = copy.deepcopy(dict(value)) if value is not None else None
    return TaskSpec(
        name=name,
        source=mappings["source"],
        target=mappings["target"],
        features=mappings["features"],
        overrides=mappings["overrides"] or {},
    )


def _sizes(where: _Where, raw: Any) -> tuple[int, ...] | str:
    if raw == "paper":
        return "paper"
    if isinstance(raw, Mapping):
        where.unknown_keys("sizes", raw, RANGE_KEYS)
        for k in ("start", "stop"):
            if k not in raw:
                raise where.error(
                    f"sizes.{k}", "missing", None, "write sizes: {start: 2, stop: 59, step: 3}"
                )
        start = where.integer("sizes.start", raw["start"], MIN_SIZE, f">= {MIN_SIZE}",
                              SizeError)
        stop = where.integer("sizes.stop", raw["stop"], start, f">= start = {start}")
        step = where.integer("sizes.step", raw.get("step", 1), 1, ">= 1")
        grid = range(start, stop + 1, step)
        if len(grid) > MAX_SIZES:
            raise where.error(
                "sizes", f"{len(grid)} sizes, more than {MAX_SIZES}", f"{start}..{stop}",
                "use a larger step or a smaller stop",
            )
        return tuple(grid)
    if isinstance(raw, int) and not isinstance(raw, bool):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise where.error(
            "sizes", "must be a list of sizes, {start, stop, step} or \"paper\"", raw,
            "e.g. sizes: [2, 5, 10] or sizes: {start: 2, stop: 59, step: 3}",
        )
    values: list[int] = []
    for i, value in enumerate(raw):
        if isinstance(value, bool) or not isinstance(value, int):
            raise where.error(f"sizes[{i}]", "not an integer", value, "give whole numbers")
        if value < MIN_SIZE:
            raise where.error(
                f"sizes[{i}]", f"a training set needs at least {MIN_SIZE} rows, one per class",
                value, f"use sizes >= {MIN_SIZE}", SizeError,
            )
        if value in values:
            raise where.error(f"sizes[{i}]", "listed twice", value, "list each size once")
        values.append(value)
    return tuple(sorted(values))


def _grid_of(where: _Where, task: TaskSpec, sizes: tuple[int, ...] | str) -> tuple[int, ...]:
    if sizes != "paper":
        return tuple(sizes)
    paper = getattr(task.parsed, "sizes", None)  # a recipe's (nbvslr.data.registry.recipe)
    if paper is None:
        raise where.error(
            "sizes", f"\"paper\" has no grid for the {'text' if is_text(task) else 'inline'} "
            f"task {task.name}", sizes,
            "give sizes as a list or {start, stop, step}",
        )
    return tuple(sorted(paper))


def _models(where: _Where, raw: Any, profile: str = "stated") -> tuple[ModelSpec, ...]:
    if not isinstance(raw, Mapping) or not raw:
        raise where.error(
            "models", "must be a non-empty mapping of name -> options", raw,
            "e.g. models: {nb: {}, lr: {}}",
        )
    families = tuple(FAMILIES)
    specs = []
    for name, options in raw.items():
        key = f"models.{name}"
        _check_name(where, key, name, "model")
        if name == NEITHER:
            raise where.error(key, f"'{NEITHER}' is the report's word for neither model being "
                              "better", name, "give the model another name")
        if options is None:
            options = {}
        if not isinstance(options, Mapping):
            raise where.error(key, "options must be a mapping", options, "write {} or {C: 1.0}")
        options = copy.deepcopy(dict(options))
        family = options.pop("model", name if name in families else None)
        if family is None:
            problem = with_hint("unknown model", name, families)
            raise where.error(
                key, problem, name,
                f"name a model {' or '.join(families)}, or add model: "
                f"{' or model: '.join(families)}",
            )
        if family not in families:
            problem = with_hint("unknown model", family, families)
            raise where.error(
                f"{key}.model", problem, family, f"use one of: {', '.join(families)}"
            )
        try:
            resolved = resolve_options(name, family, options, profile)
        except NbvslrError as exc:
            raise ConfigError(f"{where.source}: {key}: {exc}") from None
        specs.append(ModelSpec(name=name, family=family, options=resolved))
    return tuple(specs)


def _check_text(where: _Where, tasks: tuple[TaskSpec, ...], models: tuple[ModelSpec, ...]
                ) -> None:
    """Each model fits each task: nb's ``event`` is for text tasks only, and the paper's
    unpenalised lr on a text task needs a shared, capped vocabulary (``check_text_model``)."""
    for i, task in enumerate(tasks):
        text = is_text(task)
        for m in models:
            if not text and m.family == "nb" and m.options.get("event") != "multinomial":
                raise where.error(
                    f"models.{m.name}.event", f"applies to text tasks only, and {task.name} "
                    "is not one", m.options["event"], "remove event: from this model, or run "
                    "it in a config of text tasks")
            if not text and m.family == "lr" and m.options.get("max_features") is not None:
                raise where.error(
                    f"models.{m.name}.max_features", f"applies to text tasks only, and "
                    f"{task.name} is not one", m.options["max_features"], "remove "
                    "max_features: from this model, or run it in a config of text tasks")
            if text:
                try:
                    check_text_model(m.name, m.family, m.options, task.features or {})
                except ConfigError as exc:
                    raise ConfigError(f"{where.source}: tasks[{i}] ({task.name}): {exc}"
                                      ) from None


def _pairs(where: _Where, raw: Any, models: tuple[ModelSpec, ...]) -> tuple[tuple[str, str], ...]:
    names = [m.name for m in models]
    fix = f"e.g. compare: [[{names[0]}, {names[-1]}]]" if len(names) > 1 else (
        "add a second model to compare with")
    if not isinstance(raw, list) or not raw:
        raise where.error("compare", "must be a non-empty list of pairs [a, b]", raw, fix)
    pairs: list[tuple[str, str]] = []
    for i, pair in enumerate(raw):
        key = f"compare[{i}]"
        if not isinstance(pair, list) or len(pair) != 2:
            raise where.error(key, "not a pair of two model names", pair, fix)
        for j, name in enumerate(pair):
            if not isinstance(name, str) or name not in names:
                raise where.error(f"{key}[{j}]", with_hint("unknown model", name, names), name,
                                  f"use the names under models: {', '.join(names)}")
        a, b = pair
        if a == b:
            raise where.error(key, "a model compared with itself", pair,
                              "name two different models")
        if (a, b) in pairs or (b, a) in pairs:
            raise where.error(key, "this pair is already compared", pair,
                              "list each pair once")
        pairs.append((a, b))
    return tuple(pairs)
