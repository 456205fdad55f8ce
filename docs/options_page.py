"""Write docs/options.md from the code that defines every default: the config keys
(``nbvslr.config``), the model options (``nbvslr.models.options``) and the built-in tasks
(``nbvslr.data.recipes``).

    python docs/options_page.py > docs/options.md

``tests/test_docs.py`` checks that the committed page is what this prints.
"""

from __future__ import annotations

from typing import Any

from nbvslr import config
from nbvslr.data.recipes import BUILTIN_TASKS, get_recipe
from nbvslr.models.options import _RULES, FAMILIES, MCMC_DEFAULTS, PROFILES

#: What each config key means; its default comes from nbvslr.config.
CONFIG_KEYS = {
    "tasks": ("(required)", "built-in task names, or inline tasks ([configs.md](configs.md))"),
    "sizes": ("`paper`", "training-set sizes m: a list, `{start, stop, step}` (stop "
                         "inclusive) or `paper` (each built-in task's grid, below)"),
    "splits": (f"{config.DEFAULT_SPLITS}", "random train/test splits per size"),
    "seed": ("0", "base seed of every random draw"),
    "models": (", ".join(f"`{k}`" for k in config.DEFAULT_MODELS),
               "name -> options; the name is the results' `model` column (below)"),
    "compare": ("every nb model against every lr model",
                "pairs `[a, b]` of model names compared split by split (a − b), each with its "
                "paired interval and crossover in `paired.csv` and the report, e.g. "
                "`[[nb, lr], [nb, lr_l2]]`"),
    "nested": ("false", "true: the training sets of one split grow with m"),
    "block": (f"{config.DEFAULT_BLOCK}", "splits per work unit (never changes the results)"),
    "profile": (f"`{config.DEFAULT_PROFILE}`",
                "model defaults for every task: " + ", ".join(f"`{p}`" for p in PROFILES)
                + " ([configs.md](configs.md))"),
}

#: What each model option means; its default and valid values come from the code.
MEANINGS = {
    ("nb", "smoothing"): "Laplace smoothing l of the class prior and of every categorical "
                         "conditional",
    ("nb", "variance"): "`shared`: the paper's Gaussian NB, one variance per feature pooled "
                        "over the classes; `class`: class-specific variances",
    ("nb", "var_smoothing"): "epsilon added to every variance: `max(var_smoothing × largest "
                             "feature variance of the training set, var_floor)`",
    ("nb", "var_floor"): "the smallest epsilon (an all-equal training set keeps a positive "
                         "variance)",
    ("nb", "prior"): "`empirical`: the Laplace-smoothed class prior, as stated; `uniform`: "
                     "equal priors; `uniform-gaussian`: equal priors in Gaussian NB only",
    ("nb", "var_estimator"): "`ml`: the Gaussian variances divide by m (maximum likelihood); "
                             "`unbiased`: by m − 2 (shared) or the class count − 1",
    ("nb", "epsilon_form"): "`absolute`: epsilon is `max(var_smoothing, var_floor)` itself, "
                            "on the [0, 1] scale",
    ("nb", "epsilon_mode"): "`floor`: the variance is `max(variance, epsilon)` instead of "
                            "`variance + epsilon`",
    ("nb", "rescale"): "`dataset`: the [0, 1] rescaling over all rows; `training`: each "
                       "split's training rows are rescaled again over themselves",
    ("nb", "ties"): "a test row with log-odds exactly 0 counts half an error; `positive` / "
                    "`negative` predict class 1 / class 0 there",
    ("lr", "coding"): "discrete attributes: `reference` one-hot minus the most frequent level; "
                      "`full`: every level's indicator; `ordinal`: one column, level code / "
                      "(k − 1)",
    ("lr", "rescale"): "as for nb; for LR `training` moves only the separable-set rule and a "
                       "penalty",
    ("lr", "C"): "null: maximum likelihood, as in the paper; a number: L2 penalty "
                 "`C·loss + ‖w‖²/2` (intercept unpenalised)",
    ("lr", "separable"): "a linearly separable training set: `sample` averages the test error "
                         "of hyperplanes drawn uniformly from the separating ones (the paper's "
                         "rule); `l2` refits with `C = C_separable`; `mle` keeps the capped "
                         "Newton iterate",
    ("lr", "C_separable"): "the penalty of `separable: l2`",
    ("lr", "tol"): "Newton stops when the largest absolute gradient component over m is "
                   "≤ tol",
    ("lr", "max_iter"): "at most this many Newton steps",
    ("lr", "mcmc_method"): "the sampler of separating hyperplanes: `hmc` (exact Hamiltonian "
                           "Monte Carlo) or `hit-and-run`",
    ("lr", "mcmc_chains"): "chains per separable split",
    ("lr", "mcmc_draws"): "hyperplanes kept per chain (a split averages chains × draws)",
    ("lr", "mcmc_burn_in"): "HMC iterations or hit-and-run steps before the first kept draw",
    ("lr", "mcmc_thin"): "iterations or steps between kept draws",
}


def _value(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f"`{v}`"
    return f"{v:g}" if isinstance(v, float) else str(v)


def _default(family: str, option: str, value: Any) -> str:
    if option in MCMC_DEFAULTS["hmc"]:
        return "; ".join(f"{method}: {d[option]}" for method, d in MCMC_DEFAULTS.items())
    return _value(value)


def _sizes(sizes: tuple[int, ...]) -> str:
    step = sizes[1] - sizes[0] if len(sizes) > 1 else 1
    if all(b - a == step for a, b in zip(sizes, sizes[1:], strict=False)):
        return f"{sizes[0]}..{sizes[-1]} step {step} ({len(sizes)} sizes)"
    return ", ".join(map(str, sizes))


def render() -> str:
    """The page, as Markdown."""
    out = [
        "# Configs and options",
        "",
        "Generated by `python docs/options_page.py > docs/options.md` from the code that "
        "defines each default (`nbvslr/config/__init__.py`, `nbvslr/models/options.py`, "
        "`nbvslr/data/recipes.py`); do not edit by hand. How to write a config, with inline "
        "tasks: [configs.md](configs.md).",
        "",
        "## Config keys",
        "",
        "| key | default | meaning |",
        "|---|---|---|",
    ]
    missing = [k for k in config.KEYS if k not in CONFIG_KEYS]
    if missing:
        raise KeyError(f"config keys without a description: {missing}")
    for key in config.KEYS:
        default, meaning = CONFIG_KEYS[key]
        out.append(f"| `{key}` | {default} | {meaning} |")
    out += ["", "## Model options", "",
            "A model's options are set in the config (`lr_l2: {model: lr, C: 1.0}`); every "
            "option not set takes its default.", "",
            "| family | option | default | valid values | meaning |", "|---|---|---|---|---|"]
    for family, options in FAMILIES.items():
        for option, value in options.items():
            if (family, option) not in MEANINGS:
                raise KeyError(f"model option without a description: {family}.{option}")
            valid = _RULES[family][option][1]
            out.append(f"| {family} | `{option}` | {_default(family, option, value)} | "
                       f"{valid} | {MEANINGS[family, option]} |")
    out += ["", "## Built-in tasks", "",
            "Rows, features and positives under the default choices; the paper's grid of m "
            "(`sizes: paper`).", "",
            "| task | panel title | kind | rows | features | positives | paper grid |",
            "|---|---|---|---|---|---|---|"]
    for name in BUILTIN_TASKS:
        r = get_recipe(name)
        rows, features, positives = r.known
        out.append(f"| {name} | {r.panel_title()} | {r.kind} | {rows} | {features} | {positives} | "
                   f"{_sizes(tuple(r.sizes))} |")
    out += ["", "## The recipes' choices", "",
            "Every choice the paper leaves open, overridable in a config with "
            "`tasks: [{name: lymphography, overrides: {target: metastases-vs-malign}}]`.", "",
            "| task | choice | default | alternatives | why |", "|---|---|---|---|---|"]
    for name in BUILTIN_TASKS:
        for key, choice in get_recipe(name).choices.items():
            others = ", ".join(str(_value(o)).strip("`") for o in choice.options
                               if o != choice.value)
            out.append(f"| {name} | `{key}` | `{str(_value(choice.value)).strip('`')}` | "
                       f"{others} | {choice.reason} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(render(), end="")
