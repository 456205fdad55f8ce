"""Sweeps: one task of a config becomes one task per value of a synthetic parameter.

::

    tasks:
      - name: gauss
        source: {synthetic: {generator: symmetric, kind: continuous, bayes_error: 0.1}}
        sweep: {features: [4, 8, 16, 32]}

is the four tasks ``gauss-n4``, ``gauss-n8``, ``gauss-n16`` and ``gauss-n32``, each with
``features`` set to its value and otherwise the same source. Each is a task like any other:
its own folder of results and, since a split's seed comes from the task's name, its own
random splits. The suffix is ``n<value>`` for ``features`` and ``<key><value>`` for any other
key (``gauss-separation2.5``). A sweep names exactly one key of ``source.synthetic``, with a
non-empty list of distinct numbers.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from nbvslr.errors import setting_error

KEY = "sweep"
SUFFIX = {"features": "n"}
MAX_VALUES = 1000


_error = setting_error


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _label(value: int | float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def expand(item: Any, key: str) -> list[Any]:
    """The tasks of one ``tasks:`` entry: itself, or one per value of its sweep.

    ``key`` locates the entry in messages (``tasks[2]``). An entry without ``sweep`` is
    returned unchanged (as the only element); the expanded entries have no ``sweep``.
    Raises ``ConfigError`` for a sweep that is not ``{<synthetic key>: [numbers]}``.
    """
    if not isinstance(item, Mapping) or KEY not in item:
        return [item]
    where = f"{key}.{KEY}"
    sweep = item[KEY]
    source = item.get("source")
    synthetic = source.get("synthetic") if isinstance(source, Mapping) else None
    if not isinstance(synthetic, Mapping):
        raise _error(where, "only a synthetic source can be swept", item.get("name"),
                     "give the task source: {synthetic: {...}} or remove sweep:")
    if not isinstance(sweep, Mapping) or len(sweep) != 1:
        raise _error(where, "must name exactly one parameter", sweep,
                     "write sweep: {features: [4, 8, 16]}")
    (param, values), = sweep.items()
    if param in ("generator", "kind", "seed"):
        raise _error(f"{where}.{param}", "cannot be swept", param,
                     "sweep a numeric parameter such as features; write one task per "
                     f"{param}")
    if not isinstance(values, list) or not values:
        raise _error(f"{where}.{param}", "must be a non-empty list", values,
                     f"write sweep: {{{param}: [4, 8, 16]}}")
    if len(values) > MAX_VALUES:
        raise _error(f"{where}.{param}", f"more than {MAX_VALUES} values", len(values),
                     "sweep fewer values")
    for i, value in enumerate(values):
        if not _number(value):
            raise _error(f"{where}.{param}[{i}]", "not a number", value, "list numbers")
        if values.index(value) != i:
            raise _error(f"{where}.{param}[{i}]", "listed twice", value, "list each value once")
    out = []
    base = {k: v for k, v in item.items() if k != KEY}
    for value in values:
        task = copy.deepcopy(base)
        task["source"]["synthetic"] = {**task["source"]["synthetic"], param: value}
        if isinstance(task.get("name"), str):
            task["name"] = f"{task['name']}-{SUFFIX.get(str(param), str(param))}{_label(value)}"
        out.append(task)
    return out
