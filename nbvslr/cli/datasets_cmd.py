"""``nbvslr datasets``: list the built-in tasks; ``datasets fetch``: fill the cache."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import click

from nbvslr.cli.data_options import data_options, data_settings
from nbvslr.data import (
    BUILTIN_TASKS,
    MIXED_TASKS,
    MULTICLASS_TASKS,
    fetch,
    get_recipe,
    task_status,
)
from nbvslr.data.dataset import DataSettings
from nbvslr.data.sources import cache_path, is_url, shipped_file, url_of

COLUMNS = ("task", "rows", "features", "positives", "classes", "kind", "title", "status",
           "location")


def task_rows(settings: DataSettings) -> list[dict[str, object]]:
    """One row per built-in task (Figure 1's, adult-mixed, then the tasks of K > 2 classes):
    the recipe's counts (positives: of a two-class task only), title, and where its files
    are."""
    rows = []
    for name in BUILTIN_TASKS + MIXED_TASKS + MULTICLASS_TASKS:
        recipe = get_recipe(name)
        n_rows, n_features, third = recipe.known  # positives, or K of a K-class task
        classes = third if name in MULTICLASS_TASKS else 2
        positives = "" if name in MULTICLASS_TASKS else third
        state = task_status(name, settings)
        first = recipe.files[0]
        if state == "cached":
            location = str(cache_path(recipe.dataset, first, settings).parent)
        elif state == "shipped":
            location = str(Path(str(shipped_file(recipe.dataset, first))).parent)
        elif state == "mirror" and is_url(settings.mirror):
            location = f"{str(settings.mirror).rstrip('/')}/{recipe.dataset}/"
        elif state == "mirror":
            location = str(Path(settings.mirror) / recipe.dataset)  # type: ignore[arg-type]
        else:
            location = url_of(first).rsplit("/", 1)[0] + "/"
        rows.append(dict(task=name, rows=n_rows, features=n_features, positives=positives,
                         classes=classes, kind=recipe.kind, title=recipe.panel_title(),
                         status=state, location=location))
    return rows


def _table(rows: list[dict[str, object]]) -> str:
    shown = [c for c in COLUMNS if c != "kind"]
    cells = [[str(r[c]) for c in shown] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(shown)]
    numeric = {"rows", "features", "positives", "classes"}

    def line(values):
        return "  ".join(
            v.rjust(w) if c in numeric else v.ljust(w)
            for c, v, w in zip(shown, values, widths, strict=True)
        ).rstrip()

    return "\n".join([line(shown), *(line(row) for row in cells)])


def _csv(rows: list[dict[str, object]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue().rstrip("\n")


@click.group(
    "datasets", invoke_without_command=True,
    short_help="List the built-in tasks and where their files are.",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  nbvslr datasets                                   # where every task's files are
  nbvslr datasets --format csv
  nbvslr datasets fetch pima sonar --fresh --mirror ~/uci   # check against your own copy
  nbvslr datasets fetch --fresh --mirror https://example.org/uci/   # <dataset>/<file> there
""",
)
@click.option("--format", "fmt", type=click.Choice(["table", "csv"]), default="table",
              show_default=True, help="Output format of the list.")
@data_options
@click.pass_context
def datasets(ctx, fmt, mirror, cache, offline, fresh, timeout):
    """List the 15 built-in tasks of Figure 1, adult-mixed (adult's 14 attributes) and the
    tasks of K > 2 classes (optdigits-10, lymphography-4, lenses-3): rows, features,
    positives and classes (under the recipe's default choices), the panel title, and
    where the files are: cached, shipped with nbvslr, in the mirror, or to be downloaded.
    A last line names the built-in text tasks."""
    ctx.obj = data_settings(mirror, cache, offline, fresh, timeout)
    if ctx.invoked_subcommand is None:
        rows = task_rows(ctx.obj)
        click.echo(_csv(rows) if fmt == "csv" else _table(rows) + "\n" + TEXT_NOTE)


#: The table's last line: the built-in text tasks, which the table (of rows and features)
#: does not list.
TEXT_NOTE = ("text tasks (docs/text.md): sms-spam (shipped), 20news and 20news-crypt-graphics "
             "(downloaded on first use, or `nbvslr datasets fetch 20news`); run one by name, "
             "e.g. `nbvslr run sms-spam`")


@datasets.command("fetch", short_help="Put verified copies of the tasks' files in the cache.")
@click.argument("tasks", nargs=-1, metavar="TASK...")
@data_options
@click.pass_context
def fetch_cmd(ctx, tasks, mirror, cache, offline, fresh, timeout):
    """Put verified copies of the files of each TASK (every built-in task of the list if
    none is named; a text task, sms-spam or 20news, when named) in the cache, from the
    shipped files, the mirror or by download (with --fresh: the mirror or a download only)."""
    parent = ctx.obj if isinstance(ctx.obj, DataSettings) else DataSettings()
    own = data_settings(mirror, cache, offline, fresh, timeout)
    given = {name for name in ("cache", "timeout")
             if ctx.get_parameter_source(name).name not in ("DEFAULT", "ENVIRONMENT")}
    settings = DataSettings(
        cache_dir=own.cache_dir if "cache" in given else parent.cache_dir,
        mirror=own.mirror if mirror is not None else parent.mirror,
        download=own.download and parent.download,
        timeout=timeout if "timeout" in given else parent.timeout,
        shipped=own.shipped and parent.shipped,
    )
    for path in fetch(tasks or BUILTIN_TASKS, settings):  # every name checked first
        click.echo(str(path))
