"""The 15 built-in tasks of Ng & Jordan's Figure 1, three tasks of more than two classes
from the same files (``MULTICLASS_TASKS``) and adult with all 14 attributes
(``MIXED_TASKS``), as data.

A ``Recipe`` says everything needed to turn the original UCI files into a task:
which files (with their sha256), where they can be downloaded, how to parse them, which
attributes are kept, how the class becomes binary, the paper's m-grid and panel title, and
every choice the paper leaves open (``choices``: key -> ``Choice(value, reason, options)``).
A config may override a choice through ``TaskSpec.overrides``; ``resolve_choices`` checks
the keys and values.

The code that reads a recipe lives in ``parse.py`` (files -> Dataset) and ``sources.py``
(cache -> mirror -> download); this module holds no logic beyond lookups and validation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from nbvslr.errors import ConfigError, did_you_mean

# Where downloads come from. ``host`` keys of ``DataFile``; a test may point them at
# 127.0.0.1 (``monkeypatch.setitem(BASE_URLS, "uci", ...)``).
BASE_URLS: dict[str, str] = {
    "uci": "https://archive.ics.uci.edu/ml/machine-learning-databases",
    "github": "https://raw.githubusercontent.com",
    "figshare": "https://ndownloader.figshare.com",
}


@dataclass(frozen=True)
class DataFile:
    """One original file: its name, checksum and download location (``host`` + ``path``)."""

    name: str
    sha256: str
    host: str
    path: str


@dataclass(frozen=True)
class Parse:
    """How to split a data file into string fields.

    ``sep=None`` splits on runs of whitespace. Lines starting with one of ``junk_prefixes``
    and blank lines are skipped. ``id_suffix`` drops a trailing ``|<id>``;
    ``strip_dot`` drops one trailing ``.`` from the last field (adult.test, sick).
    ``expand`` names a field whose characters become one column each (promoters).
    ``zero_missing`` names columns where a recorded 0 is physically impossible (pima); the
    recipe's ``zeros`` choice says whether those rows are kept or dropped.
    """

    columns: tuple[str, ...]
    sep: str | None = ","
    missing: str = "?"
    junk_prefixes: tuple[str, ...] = ()
    id_suffix: bool = False
    strip_dot: bool = False
    expand: str | None = None
    zero_missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class Target:
    """How the class column becomes {0, 1}, or ``0 .. K - 1``.

    ``positive`` values give 1; rows whose class is in ``drop`` are removed; every other
    row gives 0. ``classes`` (a task of K > 2 classes) instead names the values kept, in the
    order of their codes ``0 .. K - 1``; the rows of other values are removed.
    ``above_median=True`` instead makes ``column > median(column)`` positive
    (the column is numeric and is never a feature).
    """

    column: str
    positive: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    above_median: bool = False
    classes: tuple[str, ...] = ()
    describe: str = ""
    title: str = ""  # fills ``{target}`` of the recipe's panel title: what is predicted


@dataclass(frozen=True)
class Choice:
    """A decision the paper leaves open: the value used, why, and the allowed values."""

    value: Any
    reason: str
    options: tuple[Any, ...]


@dataclass(frozen=True)
class Recipe:
    """Everything needed to build one built-in task from the original UCI files.

    Attributes
    ----------
    name, title : str
        Task name and the paper's panel title; ``{target}`` in it stands for the ``title``
        of the target rule chosen (``panel_title``), so the title says what is computed.
    dataset : str
        Folder of the files in the mirror and the cache (``adult``, ``optdigits``...).
    uci_id : int or None
        The dataset's id on the current UCI site (``fetch_ucirepo(id=...)``), if any.
    train, test : tuple of DataFile
        Data files; ``test`` files are pooled with ``train`` when ``choices["pool"]`` is true.
    parse : Parse
    kind : {"continuous", "discrete", "mixed"}
    features : tuple of str
        Attributes kept (only continuous or only discrete ones, as in the paper; a mixed
        task lists its continuous ones first).
    targets : mapping of str to Target
        One entry, or several selected by ``choices["target"]``.
    sizes : tuple of int
        The paper's m-grid.
    x_range : tuple of float
    choices : mapping of str to Choice
    known : tuple of int
        (rows, features, positives) under the default choices, shown before any download.
    continuous : tuple of str
        A mixed task: the attributes of ``features`` read as numbers and rescaled (the
        others become level codes). ``()`` for a continuous or discrete task.
    """

    name: str
    title: str
    dataset: str
    uci_id: int | None
    train: tuple[DataFile, ...]
    parse: Parse
    kind: str
    features: tuple[str, ...]
    targets: Mapping[str, Target]
    sizes: tuple[int, ...]
    x_range: tuple[float, float]
    known: tuple[int, int, int]
    test: tuple[DataFile, ...] = ()
    choices: Mapping[str, Choice] = field(default_factory=dict)
    continuous: tuple[str, ...] = ()

    @property
    def files(self) -> tuple[DataFile, ...]:
        """Every data file the task may read."""
        return self.train + self.test

    def panel_title(self, target: str | None = None) -> str:
        """The panel title for the target rule ``target`` (default: the recipe's default)."""
        if "{target}" not in self.title:
            return self.title
        key = target if target is not None else self.choices["target"].value
        return self.title.format(target=self.targets[key].title)


def _grid(start: int, stop: int, step: int) -> tuple[int, ...]:
    return tuple(range(start, stop + 1, step))


# --- choices shared by several recipes -------------------------------------------------

_SCALING = Choice(
    "whole-dataset",
    "min/max of all rows: the paper rescales inputs once per dataset, not per split",
    ("whole-dataset",),
)
_CONSTANT = Choice(
    "drop",
    "a column with one value carries no information and cannot be rescaled to [0, 1]",
    ("drop", "keep"),
)
_LEVELS = Choice(
    "observed",
    "levels seen in the whole dataset; a level no row has would only add a Laplace count",
    ("observed",),
)


def _pool(reason: str) -> Choice:
    return Choice(True, reason, (True, False))


def _missing(value: str, reason: str) -> Choice:
    return Choice(value, reason, ("level", "drop-rows"))


# --- column names ----------------------------------------------------------------------

_ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "class",
)  # fmt: skip
_ADULT_CONTINUOUS = (
    "age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week",
)  # fmt: skip
_ADULT_DISCRETE = (
    "workclass", "education", "marital-status", "occupation", "relationship", "race",
    "sex", "native-country",
)  # fmt: skip
_PIMA_COLUMNS = ("preg", "plas", "pres", "skin", "insu", "mass", "pedi", "age", "class")
_BOSTON_COLUMNS = (
    "CRIM", "ZN", "INDUS", "CHAS", "NOX", "RM", "AGE", "DIS", "RAD", "TAX", "PTRATIO", "B",
    "LSTAT", "MEDV",
)  # fmt: skip
_OPTDIGITS_COLUMNS = tuple(f"px{i}" for i in range(64)) + ("class",)
_IONOSPHERE_COLUMNS = tuple(f"a{i}" for i in range(1, 35)) + ("class",)
_LIVER_COLUMNS = ("mcv", "alkphos", "sgpt", "sgot", "gammagt", "drinks", "selector")
_SONAR_COLUMNS = tuple(f"band{i}" for i in range(1, 61)) + ("class",)
_LYMPH_COLUMNS = (
    "class", "lymphatics", "block-of-affere", "bl-of-lymph-c", "bl-of-lymph-s", "by-pass",
    "extravasates", "regeneration-of", "early-uptake-in", "lym-nodes-dimin",
    "lym-nodes-enlar", "changes-in-lym", "defect-in-node", "changes-in-node",
    "changes-in-stru", "special-forms", "dislocation-of", "exclusion-of-no", "no-of-nodes-in",
)  # fmt: skip
_BREAST_COLUMNS = (
    "class", "age", "menopause", "tumor-size", "inv-nodes", "node-caps", "deg-malig",
    "breast", "breast-quad", "irradiat",
)  # fmt: skip
_LENSES_COLUMNS = ("id", "age", "prescription", "astigmatic", "tear-rate", "class")
_SICK_COLUMNS = (
    "age", "sex", "on-thyroxine", "query-on-thyroxine", "on-antithyroid-medication", "sick",
    "pregnant", "thyroid-surgery", "I131-treatment", "query-hypothyroid",
    "query-hyperthyroid", "lithium", "goitre", "tumor", "hypopituitary", "psych",
    "TSH-measured", "TSH", "T3-measured", "T3", "TT4-measured", "TT4", "T4U-measured", "T4U",
    "FTI-measured", "FTI", "TBG-measured", "TBG", "referral-source", "class",
)  # fmt: skip
_SICK_CONTINUOUS = ("age", "TSH", "T3", "TT4", "T4U", "FTI", "TBG")
_VOTING_COLUMNS = ("class",) + tuple(f"vote{i}" for i in range(1, 17))


def _without(columns: tuple[str, ...], *drop: str) -> tuple[str, ...]:
    return tuple(c for c in columns if c not in drop)


# --- files -------------------------------------------------------------------------------

_UCI = "uci"
_ADULT_DATA = DataFile(
    "adult.data",
    "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    _UCI,
    "adult/adult.data",
)
_ADULT_TEST = DataFile(
    "adult.test",
    "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    _UCI,
    "adult/adult.test",
)
_OPT_TRA = DataFile(
    "optdigits.tra",
    "e1b683cc211604fe8fd8c4417e6a69f31380e0c61d4af22e93cc21e9257ffedd",
    _UCI,
    "optdigits/optdigits.tra",
)
_OPT_TES = DataFile(
    "optdigits.tes",
    "6ebb3d2fee246a4e99363262ddf8a00a3c41bee6014c373ed9d9216ba7f651b8",
    _UCI,
    "optdigits/optdigits.tes",
)
_SICK_DATA = DataFile(
    "sick.data",
    "81d4e8ae85233d453afc3ac721cfc5af8d83c0e8cd39d70aa9923089022f2c02",
    _UCI,
    "thyroid-disease/sick.data",
)
_SICK_TEST = DataFile(
    "sick.test",
    "e618b0a41f6df17ff297c8fbf7d15e8d97b37397d26e784e708ebb2297613018",
    _UCI,
    "thyroid-disease/sick.test",
)

_ADULT_POOL = _pool(
    "the paper draws its own random splits, so UCI's train/test division has no role; "
    "pooling gives all 48,842 rows"
)


def _optdigits(name: str, title: str, negative: str, positive: str) -> Recipe:
    # 0v1: 376+178 zeros, 389+182 ones; 2v3: 380+177 twos, 389+183 threes (optdigits.names);
    # 12 (0v1) and 7 (2v3) border pixels are 0 in every image of the pair and are dropped.
    known = {"0": (1125, 52, 571), "2": (1129, 57, 572)}[negative]
    return Recipe(
        name=name,
        title=title,
        dataset="optdigits",
        uci_id=80,
        train=(_OPT_TRA,),
        test=(_OPT_TES,),
        parse=Parse(columns=_OPTDIGITS_COLUMNS),
        kind="continuous",
        features=_OPTDIGITS_COLUMNS[:-1],
        targets={
            f"{positive}-vs-{negative}": Target(
                "class",
                positive=(positive,),
                drop=tuple(str(d) for d in range(10) if str(d) not in (negative, positive)),
                describe=f"digit {positive} = 1, digit {negative} = 0, other digits dropped",
            )
        },
        sizes=_grid(2, 154, 8),
        x_range=(0.0, 200.0),
        known=known,
        choices={
            "pool": _pool(
                "the paper draws its own random splits; pooling .tra and .tes uses every "
                "image of the two digits"
            ),
            "scaling": _SCALING,
            "constant_columns": Choice(
                "drop",
                "border pixels that are 0 for every image of the two digits carry no "
                "information and cannot be rescaled",
                ("drop", "keep"),
            ),
        },
    )


_RECIPES: tuple[Recipe, ...] = (
    Recipe(
        name="pima",
        title="pima (continuous)",
        dataset="pima",
        uci_id=None,
        train=(
            DataFile(
                "pima-indians-diabetes.data",
                "06f5b7c2cd7bca686fda4f92eab5f61e7ff6426a9acefa2e3dda04fc54293cf5",
                "github",
                "majestyhao/ecs256_hw4/aa912acdd6bf51fbd040dedf6b0d9c03b5aa8c22/"
                "pima-indians-diabetes.data",
            ),
        ),
        parse=Parse(
            columns=_PIMA_COLUMNS, zero_missing=("plas", "pres", "skin", "insu", "mass")
        ),
        kind="continuous",
        features=_PIMA_COLUMNS[:-1],
        targets={"diabetes": Target("class", positive=("1",), describe="class 1 (diabetes)")},
        sizes=_grid(2, 59, 3),
        x_range=(0.0, 60.0),
        known=(768, 8, 268),
        choices={
            "zeros": Choice(
                "keep",
                "the file has no missing marker; the impossible zeros in plas, pres, skin, "
                "insu and mass are used as recorded",
                ("keep", "drop-rows"),
            ),
            "scaling": _SCALING,
            "constant_columns": _CONSTANT,
        },
    ),
    Recipe(
        name="adult-continuous",
        title="adult (continuous)",
        dataset="adult",
        uci_id=2,
        train=(_ADULT_DATA,),
        test=(_ADULT_TEST,),
        parse=Parse(
            columns=_ADULT_COLUMNS, junk_prefixes=("|",), strip_dot=True
        ),
        kind="continuous",
        features=_ADULT_CONTINUOUS,
        targets={"income": Target("class", positive=(">50K",), describe="income >50K")},
        sizes=_grid(2, 30, 1),
        x_range=(0.0, 30.0),
        known=(48842, 6, 11687),
        choices={
            "pool": _ADULT_POOL,
            "scaling": _SCALING,
            "constant_columns": _CONSTANT,
        },
    ),
    Recipe(
        name="boston",
        title="boston (predict if > median price, continuous)",
        dataset="boston",
        uci_id=None,
        train=(
            DataFile(
                "housing.data",
                "baadf72995725d76efe787b664e1f083388c79ba21ef9a7990d87f774184735a",
                "github",
                "superwave135/Statistical-Attribute-Computation/"
                "b5208720866f009ab07fba2bfbdf4d69044587bd/housing.data",
            ),
        ),
        parse=Parse(columns=_BOSTON_COLUMNS, sep=None),
        kind="continuous",
        features=_BOSTON_COLUMNS[:-1],
        targets={
            "above-median": Target(
                "MEDV",
                above_median=True,
                describe="MEDV > median (21.2); the 5 rows equal to it are negative",
            )
        },
        sizes=_grid(2, 59, 3),
        x_range=(0.0, 60.0),
        known=(506, 13, 250),
        choices={
            "binary_columns": Choice(
                "keep",
                "CHAS is one of the dataset's 13 attributes and is already in [0, 1]",
                ("keep", "drop"),
            ),
            "scaling": _SCALING,
            "constant_columns": _CONSTANT,
        },
    ),
    _optdigits("optdigits-0v1", "optdigits (0's and 1's, continuous)", "0", "1"),
    _optdigits("optdigits-2v3", "optdigits (2's and 3's, continuous)", "2", "3"),
    Recipe(
        name="ionosphere",
        title="ionosphere (continuous)",
        dataset="ionosphere",
        uci_id=52,
        train=(
            DataFile(
                "ionosphere.data",
                "46d52186b84e20be52918adb93e8fb9926b34795ff7504c24350ae0616a04bbd",
                _UCI,
                "ionosphere/ionosphere.data",
            ),
        ),
        parse=Parse(columns=_IONOSPHERE_COLUMNS),
        kind="continuous",
        features=_IONOSPHERE_COLUMNS[:-1],
        targets={"good": Target("class", positive=("g",), describe="g (good radar return)")},
        sizes=_grid(2, 97, 5),
        x_range=(0.0, 100.0),
        known=(351, 33, 225),
        choices={
            "binary_columns": Choice(
                "keep",
                "attribute 1 (0/1) is one of the 34 listed attributes and is already in [0, 1]",
                ("keep", "drop"),
            ),
            "constant_columns": Choice(
                "drop",
                "attribute 2 is 0 in every row: no information, and it cannot be rescaled",
                ("drop", "keep"),
            ),
            "scaling": _SCALING,
        },
    ),
    Recipe(
        name="liver",
        title="liver disorders (continuous)",
        dataset="liver",
        uci_id=60,
        train=(
            DataFile(
                "bupa.data",
                "a166a3e7a6f4dc41aaaedc59a107e57d8adcaeb8821f0873d756982f1ea74c92",
                _UCI,
                "liver-disorders/bupa.data",
            ),
        ),
        parse=Parse(columns=_LIVER_COLUMNS),
        kind="continuous",
        features=_LIVER_COLUMNS[:-1],
        targets={
            "selector": Target(
                "selector", positive=("2",), describe="selector 2 = 1, selector 1 = 0"
            ),
            "drinks": Target(
                "drinks",
                above_median=True,
                describe="drinks > median (3 half-pints a day); selector is not a feature",
            ),
        },
        sizes=_grid(2, 59, 3),
        x_range=(0.0, 60.0),
        known=(345, 6, 200),
        choices={
            "target": Choice(
                "selector",
                "the 7th field was the class in every use of the data up to 2001",
                ("selector", "drinks"),
            ),
            "scaling": _SCALING,
            "constant_columns": _CONSTANT,
        },
    ),
    Recipe(
        name="sonar",
        title="sonar (continuous)",
        dataset="sonar",
        uci_id=151,
        train=(
            DataFile(
                "sonar.all-data",
                "e90434cdbf00fcf93ffa911fe447ae25606979658e60f1d32e155c3b5240234d",
                _UCI,
                "undocumented/connectionist-bench/sonar/sonar.all-data",
            ),
        ),
        parse=Parse(columns=_SONAR_COLUMNS),
        kind="continuous",
        features=_SONAR_COLUMNS[:-1],
        targets={"mine": Target("class", positive=("M",), describe="M (mine) = 1, R = 0")},
        sizes=_grid(2, 102, 5),
        x_range=(0.0, 120.0),
        known=(208, 60, 111),
        choices={"scaling": _SCALING, "constant_columns": _CONSTANT},
    ),
    Recipe(
        name="adult-discrete",
        title="adult (discrete)",
        dataset="adult",
        uci_id=2,
        train=(_ADULT_DATA,),
        test=(_ADULT_TEST,),
        parse=Parse(columns=_ADULT_COLUMNS, junk_prefixes=("|",), strip_dot=True),
        kind="discrete",
        features=_ADULT_DISCRETE,
        targets={"income": Target("class", positive=(">50K",), describe="income >50K")},
        sizes=_grid(2, 382, 20),
        x_range=(0.0, 400.0),
        known=(48842, 8, 11687),
        choices={
            "pool": _ADULT_POOL,
            "missing": _missing(
                "level",
                "'?' (workclass, occupation, native-country) is one more value to NB and LR; "
                "keeps the same rows as adult (continuous)",
            ),
            "levels": _LEVELS,
            "constant_columns": _CONSTANT,
        },
    ),
    Recipe(
        name="promoters",
        title="promoters (discrete)",
        dataset="promoters",
        uci_id=67,
        train=(
            DataFile(
                "promoters.data",
                "9cba9e8661ab04760d69b857f62259233446f2dce5ec9b515efe0b23c315bb29",
                _UCI,
                "molecular-biology/promoter-gene-sequences/promoters.data",
            ),
        ),
        parse=Parse(columns=("class", "name", "p"), expand="p"),
        kind="discrete",
        features=tuple(f"p{i}" for i in range(1, 58)),
        targets={"promoter": Target("class", positive=("+",), describe="+ (promoter)")},
        sizes=_grid(2, 97, 5),
        x_range=(0.0, 100.0),
        known=(106, 57, 53),
        choices={"levels": _LEVELS, "constant_columns": _CONSTANT},
    ),
    Recipe(
        name="lymphography",
        title="lymphography (discrete)",
        dataset="lymphography",
        uci_id=63,
        train=(
            DataFile(
                "lymphography.data",
                "e17d22d071341af08a505a10eb558afc835e302b02c8b381c1fa3dd305731935",
                _UCI,
                "lymphography/lymphography.data",
            ),
        ),
        parse=Parse(columns=_LYMPH_COLUMNS),
        kind="discrete",
        features=_LYMPH_COLUMNS[1:],
        targets={
            "metastases-vs-rest": Target(
                "class",
                positive=("2",),
                describe="metastases (2) = 1; normal (1), malign lymph (3), fibrosis (4) = 0",
            ),
            "metastases-vs-malign": Target(
                "class",
                positive=("2",),
                drop=("1", "4"),
                describe="metastases (2) = 1, malign lymph (3) = 0; the 6 other rows dropped",
            ),
        },
        sizes=_grid(2, 135, 7),
        x_range=(0.0, 150.0),
        known=(148, 18, 81),
        choices={
            "target": Choice(
                "metastases-vs-rest",
                "keeps all 148 rows, as lenses keeps all 24; the 2 normal and 4 fibrosis rows "
                "are too few to be a class of their own",
                ("metastases-vs-rest", "metastases-vs-malign"),
            ),
            "levels": _LEVELS,
            "constant_columns": _CONSTANT,
        },
    ),
    Recipe(
        name="breast-cancer",
        title="breast cancer (discrete)",
        dataset="breast-cancer",
        uci_id=14,
        train=(
            DataFile(
                "breast-cancer.data",
                "ca7d3fa97b62ff967b6894ffbb3acaaf4a51062e0149e5950b3ad6f685970b65",
                _UCI,
                "breast-cancer/breast-cancer.data",
            ),
        ),
        parse=Parse(columns=_BREAST_COLUMNS),
        kind="discrete",
        features=_BREAST_COLUMNS[1:],
        targets={
            "recurrence": Target(
                "class", positive=("recurrence-events",), describe="recurrence-events"
            )
        },
        sizes=_grid(2, 268, 14),
        x_range=(0.0, 300.0),
        known=(286, 9, 85),
        choices={
            "missing": _missing(
                "level",
                "only 9 '?' cells (8 node-caps, 1 breast-quad); a level keeps all 286 rows, "
                "which the grid up to m = 268 suggests were used",
            ),
            "levels": _LEVELS,
            "constant_columns": _CONSTANT,
        },
    ),
    Recipe(
        name="lenses",
        title="lenses ({target}, discrete)",
        dataset="lenses",
        uci_id=58,
        train=(
            DataFile(
                "lenses.data",
                "711f22d5a4bed062bb715d39d23d54d2667206fbd97c94c7fd013ede47fb96c2",
                _UCI,
                "lenses/lenses.data",
            ),
        ),
        parse=Parse(columns=_LENSES_COLUMNS, sep=None),
        kind="discrete",
        features=("age", "prescription", "astigmatic", "tear-rate"),
        targets={
            "hard-vs-rest": Target(
                "class", positive=("1",), describe="hard (1) = 1; soft (2) and none (3) = 0",
                title="predict hard vs. soft or no lenses",
            ),
            "soft-vs-rest": Target(
                "class", positive=("2",), describe="soft (2) = 1; hard (1) and none (3) = 0",
                title="predict soft vs. hard or no lenses",
            ),
            "hard-vs-soft": Target(
                "class",
                positive=("1",),
                drop=("3",),
                describe="hard (1) = 1, soft (2) = 0; the 15 'none' rows dropped",
                title="predict hard vs. soft",
            ),
            "lenses-vs-none": Target(
                "class",
                positive=("1", "2"),
                describe="hard (1) and soft (2) = 1; none (3) = 0",
                title="predict lenses (hard or soft) vs. none",
            ),
        },
        sizes=_grid(2, 23, 1),
        x_range=(0.0, 25.0),
        known=(24, 4, 4),
        choices={
            "target": Choice(
                "hard-vs-rest",
                "the curve reaches m = 23, so all 24 rows were used: 'no lenses' must join a "
                "side, and the paper's title (\"predict hard vs. soft\") names hard lenses as "
                "the class predicted",
                ("hard-vs-rest", "soft-vs-rest", "hard-vs-soft", "lenses-vs-none"),
            ),
            "levels": _LEVELS,
            "constant_columns": _CONSTANT,
        },
    ),
    Recipe(
        name="sick",
        title="sick (discrete)",
        dataset="sick",
        uci_id=102,
        train=(_SICK_DATA,),
        test=(_SICK_TEST,),
        parse=Parse(columns=_SICK_COLUMNS, id_suffix=True, strip_dot=True),
        kind="discrete",
        features=_without(_SICK_COLUMNS, *_SICK_CONTINUOUS, "class"),
        targets={"sick": Target("class", positive=("sick",), describe="sick = 1, negative = 0")},
        sizes=_grid(2, 116, 6),
        x_range=(0.0, 150.0),
        known=(3772, 21, 231),
        choices={
            "pool": _pool(
                "the paper draws its own random splits; pooling sick.data and sick.test uses "
                "all 3,772 records"
            ),
            "missing": _missing(
                "level",
                "'?' occurs only in sex (150 rows) among the discrete attributes; a level "
                "keeps every record",
            ),
            "levels": _LEVELS,
            "constant_columns": Choice(
                "drop",
                "TBG-measured is 'f' in every record: it carries no information",
                ("drop", "keep"),
            ),
        },
    ),
    Recipe(
        name="voting",
        title="voting records (discrete)",
        dataset="voting",
        uci_id=105,
        train=(
            DataFile(
                "house-votes-84.data",
                "c87c14110a5ba91d4a1e313ec7392824458152bf071fa5f5452340488337936e",
                _UCI,
                "voting-records/house-votes-84.data",
            ),
        ),
        parse=Parse(columns=_VOTING_COLUMNS),
        kind="discrete",
        features=_VOTING_COLUMNS[1:],
        targets={
            "republican": Target(
                "class", positive=("republican",), describe="republican = 1, democrat = 0"
            )
        },
        sizes=_grid(2, 70, 2),
        x_range=(0.0, 80.0),
        known=(435, 16, 168),
        choices={
            "missing": _missing(
                "level",
                "'?' means the member did not vote (voting.names), a value in its own right",
            ),
            "levels": _LEVELS,
            "constant_columns": _CONSTANT,
        },
    ),
)


def _multiclass(
    binary: Recipe, name: str, title: str, classes: tuple[str, ...], describe: str,
    sizes: tuple[int, ...], x_range: tuple[float, float], known: tuple[int, int, int],
) -> Recipe:
    """A task of every class of a Figure 1 task's files (its parsing, attributes and
    choices, without the choice of a binary target); ``known`` is (rows, features, K)."""
    choices = {k: c for k, c in binary.choices.items() if k != "target"}
    return Recipe(
        name=name, title=title, dataset=binary.dataset, uci_id=binary.uci_id,
        train=binary.train, test=binary.test, parse=binary.parse, kind=binary.kind,
        features=binary.features,
        targets={"classes": Target("class", classes=classes, describe=describe)},
        sizes=sizes, x_range=x_range, known=known, choices=choices,
    )


_BY_NAME = {r.name: r for r in _RECIPES}


def _mixed(continuous: Recipe, discrete: Recipe, name: str, title: str,
           sizes: tuple[int, ...], x_range: tuple[float, float]) -> Recipe:
    """A task of the attributes of two Figure 1 panels of the same files, the ``continuous``
    panel's rescaled as it rescales them and the ``discrete`` panel's coded as it codes them
    (same parsing, target and choices); ``known`` adds up the two panels' features."""
    if (continuous.train, continuous.test, continuous.parse, continuous.targets) != (
        discrete.train, discrete.test, discrete.parse, discrete.targets
    ):
        raise ValueError(f"{name}: the two panels read different files or targets")
    rows, n_continuous, positives = continuous.known
    return Recipe(
        name=name, title=title, dataset=continuous.dataset, uci_id=continuous.uci_id,
        train=continuous.train, test=continuous.test, parse=continuous.parse, kind="mixed",
        features=continuous.features + discrete.features, targets=continuous.targets,
        sizes=sizes, x_range=x_range,
        known=(rows, n_continuous + discrete.known[1], positives),
        choices={**continuous.choices, **discrete.choices},
        continuous=continuous.features,
    )


_MIXED_RECIPES = (
    # Grid: the discrete panel's (2..382 step 20): LR's one-hot design has 6 + 102 columns,
    # as wide as the discrete panel's, and its curve flattens on that scale.
    _mixed(
        _BY_NAME["adult-continuous"], _BY_NAME["adult-discrete"], "adult-mixed",
        "adult (all 14 attributes, mixed)", _grid(2, 382, 20), (0.0, 400.0),
    ),
)
_MULTICLASS_RECIPES = (
    _multiclass(
        _BY_NAME["optdigits-0v1"], "optdigits-10", "optdigits (10 digits, continuous)",
        tuple(str(d) for d in range(10)), "digits 0 .. 9 = classes 0 .. 9 (5,620 images)",
        (10, 15, 20, 30, 40, 50, 60, 80, 100, 125, 150, 200, 250, 300, 400, 500),
        (0.0, 500.0), (5620, 62, 10),
    ),
    _multiclass(
        _BY_NAME["lymphography"], "lymphography-4", "lymphography (4 classes, discrete)",
        ("1", "2", "3", "4"),
        "normal (1), metastases (2), malign lymph (3), fibrosis (4) = classes 0 .. 3",
        _grid(4, 144, 7), (0.0, 150.0), (148, 18, 4),
    ),
    _multiclass(
        _BY_NAME["lenses"], "lenses-3", "lenses (hard, soft or none, discrete)",
        ("1", "2", "3"), "hard (1), soft (2), none (3) = classes 0 .. 2",
        _grid(3, 23, 1), (0.0, 25.0), (24, 4, 3),
    ),
)

RECIPES: Mapping[str, Recipe] = MappingProxyType(
    {r.name: r for r in _RECIPES + _MULTICLASS_RECIPES + _MIXED_RECIPES}
)
BUILTIN_TASKS: tuple[str, ...] = tuple(r.name for r in _RECIPES)
"""The 15 tasks of Figure 1, in panel order."""
MULTICLASS_TASKS: tuple[str, ...] = tuple(r.name for r in _MULTICLASS_RECIPES)
"""The built-in tasks of more than two classes (no panel of the paper)."""
MIXED_TASKS: tuple[str, ...] = tuple(r.name for r in _MIXED_RECIPES)
"""The built-in tasks of continuous and discrete attributes together (no panel of the
paper): adult-mixed."""


def get_recipe(name: str) -> Recipe:
    """The recipe of a built-in task; ``ConfigError`` (with a suggestion) for an unknown name."""
    try:
        return RECIPES[name]
    except KeyError:
        raise ConfigError(
            f"task '{name}' is not a built-in task{did_you_mean(name, RECIPES)}; "
            f"built-in tasks: {', '.join(RECIPES)}"
        ) from None


def resolve_choices(recipe: Recipe, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The value of every choice of ``recipe``, after ``overrides`` (checked)."""
    for key, value in overrides.items():
        if key not in recipe.choices:
            known = ", ".join(recipe.choices) or "none"
            raise ConfigError(
                f"overrides: '{key}' is not a choice of task '{recipe.name}'"
                f"{did_you_mean(key, recipe.choices)}; its choices: {known}"
            )
        options = recipe.choices[key].options
        if not any(type(value) is type(o) and value == o for o in options):
            shown = ", ".join(repr(o) for o in options)
            raise ConfigError(
                f"overrides: {key}={value!r} is not allowed for task '{recipe.name}'; "
                f"allowed: {shown}"
            )
    return {key: overrides.get(key, choice.value) for key, choice in recipe.choices.items()}


def resolved_target(recipe: Recipe, choices: Mapping[str, Any]) -> tuple[str, Target]:
    """The target rule selected by ``choices`` (the only one, or ``choices['target']``)."""
    key = choices.get("target", next(iter(recipe.targets)))
    return key, recipe.targets[key]
