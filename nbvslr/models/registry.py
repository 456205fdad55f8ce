"""Every model family, looked up by the config's ``model:`` name and the task's kind; the
approach of each (generative or discriminative); and the validation of a model's options
against its name's table.

A new family is a module with a ``family.Family`` entry, one line in ``ENTRIES`` and one in
``APPROACHES``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nbvslr.data.text import TEXT_FEATURES
from nbvslr.errors import ConfigError, did_you_mean, setting_error
from nbvslr.models.discriminant.lda import LinearDiscriminant, MulticlassLinearDiscriminant
from nbvslr.models.discriminant.qda import MulticlassQuadraticDiscriminant, QuadraticDiscriminant
from nbvslr.models.family import DISCRIMINATIVE, GENERATIVE, Family, Option, defaults
from nbvslr.models.lr.entry import LogisticRegression
from nbvslr.models.lr.entry_multi import SoftmaxRegression
from nbvslr.models.nb.entry import CategoricalNB, GaussianNB, MixedNB
from nbvslr.models.nb.entry_multi import MulticlassCategoricalNB, MulticlassGaussianNB
from nbvslr.models.options import DEFAULT_PROFILE, MCMC_DEFAULTS, PROFILES
from nbvslr.models.text.entry import (
    TEXT_LR_OPTIONS,
    TEXT_NB_OPTIONS,
    MulticlassTextLR,
    MulticlassTextNB,
    TextLR,
    TextNB,
)

#: The entries, in the order their names are listed (docs, errors, ``nbvslr run --help``).
ENTRIES: tuple[Family, ...] = (
    GaussianNB(),
    CategoricalNB(),
    MixedNB(),
    LogisticRegression(),
    MulticlassGaussianNB(),
    MulticlassCategoricalNB(),
    SoftmaxRegression(),
    TextNB(),
    TextLR(),
    MulticlassTextNB(),
    MulticlassTextLR(),
    LinearDiscriminant(),
    MulticlassLinearDiscriminant(),
    QuadraticDiscriminant(),
    MulticlassQuadraticDiscriminant(),
)

#: How each name learns: ``GENERATIVE`` (it models p(x, y) and classifies by Bayes' rule)
#: or ``DISCRIMINATIVE`` (it models p(y | x) alone). A config compares, by default, every
#: generative model with every discriminative one (``nbvslr.config.pairs``).
APPROACHES: dict[str, str] = {
    "nb": GENERATIVE,
    "lr": DISCRIMINATIVE,
    "lda": GENERATIVE,
    "qda": GENERATIVE,
}

#: Options of a name that only its text entries read, listed after its table's.
TEXT_OPTIONS: dict[str, tuple[Option, ...]] = {"nb": TEXT_NB_OPTIONS, "lr": TEXT_LR_OPTIONS}


def _tables() -> dict[str, tuple[Option, ...]]:
    tables: dict[str, tuple[Option, ...]] = {}
    for entry in ENTRIES:
        if tables.setdefault(entry.name, entry.options) is not entry.options:
            raise TypeError(f"the entries of model '{entry.name}' hold different options tables")
    return {name: table + TEXT_OPTIONS.get(name, ()) for name, table in tables.items()}


#: model name -> its options table (one per name, shared by the name's entries).
OPTIONS: dict[str, tuple[Option, ...]] = _tables()

if set(APPROACHES) != set(OPTIONS):
    raise TypeError(f"APPROACHES names {sorted(APPROACHES)}, ENTRIES {sorted(OPTIONS)}: "
                    "give every model name one approach")


def approach(name: str) -> str | None:
    """``GENERATIVE`` or ``DISCRIMINATIVE`` for a model name (a results file's ``family``),
    None for a name nbvslr does not know (a folder written by another version)."""
    return APPROACHES.get(name)

#: model name -> its default options (the tables' defaults).
FAMILIES: dict[str, dict[str, Any]] = {name: defaults(t) for name, t in OPTIONS.items()}


def lookup(name: str, kind: str, multiclass: bool = False, *, model: str | None = None,
           task: str | None = None, source: str | None = None) -> Family:
    """The entry of model ``name`` for tasks of ``kind`` (``continuous``, ``discrete``,
    ``mixed``, ``text``) of two classes, or of more (``multiclass``). ``model``, ``task``
    and ``source``: the config's name of the model, the task's name and the config file,
    named by the error.

    Raises
    ------
    ConfigError
        No entry fits that pair: one line naming the setting (``models.<model>``), the task,
        its kind and the kinds the model does fit.
    """
    fits = []
    for entry in ENTRIES:
        if entry.name == name and getattr(entry, "multiclass", False) == multiclass:
            if kind in entry.kinds:
                return entry
            fits += entry.kinds
    classes = "more than two classes" if multiclass else "two classes"
    which = f"task '{task}', a {kind} task" if task is not None else f"{kind} tasks"
    fix = (f"with {classes} it fits {', '.join(fits) + ' tasks' if fits else 'no task'}: "
           f"change the task's features or classes, or leave models.{model or name} out")
    raise setting_error(f"models.{model or name}",
                        f"model '{name}' has no fit for {which} of {classes}", "", fix, source)


def resolve_options(
    name: str, family: str, options: Mapping[str, Any], profile: str = DEFAULT_PROFILE
) -> dict[str, Any]:
    """Validate a model's options and fill in the family defaults.

    Parameters
    ----------
    name : str
        The model's name in the config (used in error messages).
    family : str
        Its ``model:`` name, a key of ``OPTIONS`` (``nb``, ``lr``).
    options : mapping
        The options the config sets; every other option takes its default.
    profile : str
        A key of ``options.PROFILES``: its settings replace the family defaults first.

    Returns
    -------
    dict
        Every option of the family, validated and normalised (floats, ints, None).

    Raises
    ------
    ConfigError
        Unknown family or option (with a "did you mean" hint), or a value out of range.
    """
    if family not in OPTIONS:
        raise ConfigError(
            f"model '{name}': unknown family '{family}'{did_you_mean(family, OPTIONS)}; "
            f"valid families: {', '.join(OPTIONS)}"
        )
    if profile not in PROFILES:
        raise ConfigError(
            f"unknown profile '{profile}'{did_you_mean(profile, PROFILES)}; "
            f"valid profiles: {', '.join(PROFILES)}"
        )
    rules = {o.name: o for o in OPTIONS[family]}
    resolved = dict(FAMILIES[family])
    for key, value in {**PROFILES[profile].get(family, {}), **dict(options)}.items():
        if key not in rules:
            raise ConfigError(
                f"model '{name}': unknown {family} option '{key}'{did_you_mean(key, rules)}; "
                f"valid options: {', '.join(rules)}"
            )
        try:
            resolved[key] = rules[key].check(value)
        except (ValueError, TypeError, OverflowError):
            raise ConfigError(
                f"model '{name}': option '{key}' = {value!r} is invalid; it must be "
                f"{rules[key].valid}"
            ) from None
    for entry in ENTRIES:
        if entry.name == family and not getattr(entry, "multiclass", False):
            entry.finish(name, resolved)
            break  # the entries of one name share their options
    return resolved


def _plain(value: Any) -> str:
    if value is None:
        return "null"
    return f"{value:g}" if isinstance(value, float) else str(value)


def options_help() -> list[tuple[str, str]]:
    """``(name.option, "default ...; valid values")`` of every model option, from the tables
    (``nbvslr run --help`` lists them)."""
    rows = []
    for name, table in OPTIONS.items():
        for o in table:
            default = _plain(o.default)
            if o.default is None and o.name in MCMC_DEFAULTS["hmc"]:
                default = ", ".join(f"{m} {d[o.name]}" for m, d in MCMC_DEFAULTS.items())
            rows.append((f"{name}.{o.name}", f"default {default}; {o.valid}"))
    return rows


def text_features_help() -> list[tuple[str, str]]:
    """``(features.option, "default ...; valid values")`` of a text task's vocabulary
    options (``nbvslr.data.text.TEXT_FEATURES``; ``nbvslr run --help`` lists them)."""
    return [(f"features.{name}", f"default {_plain(default)}; {valid}")
            for name, default, valid, _ in TEXT_FEATURES]
