"""The report as one self-contained HTML page to share (``nbvslr report --format html``).

Every task's figure is inline (a base64 PNG in a ``data:`` URL), the report's text is the
Markdown of ``report.report_table`` (its table, notes, the comparison with the paper's
Figure 1 and the section past the grid, when there are any) turned into HTML here, and the
run's settings and versions come from each task's ``run.json``. No script, no stylesheet or
font from elsewhere: the file reads the same offline, in any browser. Made from saved
results only.

``every_metric_page`` is the page of every metric the runs measured (``--metric all``):
per task a figure with a panel per metric, the table of every metric and where the
winners differ (``views.every_metric``).
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import nbvslr.views.every_metric as every_metric
import nbvslr.views.plots as plots
from nbvslr.analysis.crossovers import DEFAULT_N_BOOT
from nbvslr.analysis.metrics import LABELS, label
from nbvslr.results.read import PathLike, TaskResults
from nbvslr.views.report import report_rows, report_table

STYLE = """\
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       margin: 2em auto; max-width: 1400px; padding: 0 1em; color: #222; background: #fff;
       line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 1.8em; border-bottom: 1px solid #ccc; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(380px, 1fr));
           gap: 1em; }
figure { margin: 0; }
.metrics { max-width: 1000px; }
figure img { width: 100%; height: auto; border: 1px solid #eee; box-sizing: border-box; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left;
         vertical-align: top; }
td.one { white-space: nowrap; }
td code { word-break: break-all; }
th { background: #f3f3f3; }
.wide { overflow-x: auto; }
.settings td { white-space: normal; overflow-wrap: anywhere; }
code { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.95em; }
.note { color: #555; font-size: 0.9em; }
"""


def _inline(text: str) -> str:
    """One line of the report's Markdown as HTML: escaped, then `code` and **bold**."""
    out = html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table row (``\\|`` is a ``|`` inside a cell)."""
    inner = line.strip()[1:-1]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def _cell(text: str) -> str:
    """A table cell. Cells of words wrap where they must, so that a table as wide as the
    report's fits the page (no column cut at its right edge); an estimate's interval breaks
    off whole (``0.414`` over ``± 0.008``: a no-break space after the ``±``); a cell of one
    word (a task's name, a range of m) is never broken at its hyphen or dash."""
    one = "" if " " in text.strip() else ' class="one"'
    return f"<td{one}>{_inline(text.replace(' ± ', ' ±' + chr(0xA0)))}</td>"


def markdown_html(text: str) -> str:
    """The Markdown that ``report_table`` writes, as HTML: blocks apart by blank lines,
    each a table (``|`` rows, the second the rule), a list (``- `` items, indented lines
    continuing them), a heading (one line ending in ``:``) or a paragraph."""
    parts = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.splitlines()
        if lines[0].startswith("|"):
            head, body = _cells(lines[0]), [_cells(x) for x in lines[2:]]
            rows = ["<tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr>"]
            rows += ["<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in body]
            parts.append('<div class="wide"><table>\n' + "\n".join(rows) + "\n</table></div>")
        elif lines[0].startswith("- "):
            items: list[str] = []
            for line in lines:
                if line.startswith("- "):
                    items.append(line[2:])
                else:
                    items[-1] += " " + line.strip()
            parts.append('<ul class="note">\n' + "\n".join(
                f"<li>{_inline(i)}</li>" for i in items) + "\n</ul>")
        elif len(lines) == 1 and lines[0].endswith(":") and len(lines[0]) < 80:
            parts.append(f"<h2>{_inline(lines[0][:-1])}</h2>")
        else:
            parts.append(f"<p>{_inline(' '.join(x.strip() for x in lines))}</p>")
    return "\n".join(parts)


def _png(fig) -> str:
    """A figure as the base64 of its PNG, at the notebook's resolution."""
    return base64.b64encode(plots.render(fig, "png", dpi=plots.NOTEBOOK_DPI)).decode("ascii")


def _figure(task: TaskResults, n_boot: int, seed: int) -> str:
    """A task's panel (``nbvslr plot``'s, of the task's metric) as an inline PNG."""
    png = _png(plots.figure_of_tasks([task], n_boot=n_boot, seed=seed))
    name = html.escape(task.name)
    what = html.escape(label(task))
    return (f'<figure id="figure-{name}"><img alt="learning curves ({what}) of {name}" '
            f'src="data:image/png;base64,{png}"></figure>')


def _value(value: Any) -> str:
    """A setting as HTML: a mapping of mappings a line per key (``name: k=v, ...``), a
    mapping ``k v, ...``, anything deeper its JSON."""
    if isinstance(value, Mapping) and all(isinstance(v, Mapping) for v in value.values()):
        return "<br>".join(
            f"<strong>{html.escape(str(k))}</strong>: " + html.escape(", ".join(
                f"{a}={json.dumps(b)}" for a, b in v.items())) for k, v in value.items())
    if isinstance(value, Mapping) and not any(
            isinstance(v, Mapping | list | tuple) for v in value.values()):
        return html.escape(", ".join(f"{k} {v}" for k, v in value.items()))
    if isinstance(value, Mapping | list | tuple):
        return f"<code>{html.escape(json.dumps(value, sort_keys=True))}</code>"
    return html.escape("" if value is None else str(value))


def _settings(task: TaskResults) -> dict[str, Any]:
    """What a reader needs to rerun the task, from its ``run.json``."""
    info = task.run_info
    config = info.get("config") or {}
    execution = info.get("execution") or {}
    models = {m.get("name"): {"family": m.get("family"), **(m.get("options") or {})}
              for m in info.get("models") or [] if isinstance(m, Mapping)}
    return {
        "config": config.get("source"),
        "splits per size": info.get("splits") or int(task.summary["n_splits"].max()),
        "seed": info.get("seed"),
        "sizes": ", ".join(str(m) for m in sorted({int(m) for m in task.summary["m"]})),
        "models": models,
        "jobs, backend": ", ".join(str(execution.get(k)) for k in ("jobs", "backend"))
        if execution else None,
        "versions": info.get("versions"),
        "machine": info.get("machine"),
    }


def settings_html(tasks: Sequence[TaskResults]) -> str:
    """One table of settings and versions per group of tasks that share them (the
    sizes, each task's own, are in the table's rows)."""
    groups: dict[str, tuple[list[str], dict[str, Any]]] = {}
    for task in tasks:
        got = _settings(task)
        key = json.dumps({k: v for k, v in got.items() if k != "sizes"}, sort_keys=True,
                         default=str)
        groups.setdefault(key, ([], got))[0].append(task.name)
    out = []
    for names, got in groups.values():
        sizes = {t.name: _settings(t)["sizes"] for t in tasks if t.name in names}
        rows = [("tasks", ", ".join(names))]
        rows += [(k, v) for k, v in got.items() if k != "sizes" and v not in (None, {}, "")]
        rows += [(f"sizes of {name}", s) for name, s in sizes.items()]
        out.append('<table class="settings">\n' + "\n".join(
            f"<tr><th>{html.escape(k)}</th><td>{_value(v)}</td></tr>" for k, v in rows)
            + "\n</table>")
    return "\n".join(out)


def html_page(
    results_dirs: PathLike | Iterable[PathLike] | Sequence[TaskResults],
    *,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    level: float = 0.95,
    notes: bool = True,
    paper: bool = True,
    extrapolate: bool = False,
    beyond_reach: bool = False,
    title: str | None = None,
    metric: str = "error",
    lead: str = "",
    made: str | None = None,
) -> str:
    """The page: a figure per task (the panel ``nbvslr plot`` draws for it), the report
    (``report_table`` with these arguments), then the settings and versions of the runs.
    ``metric``: the page of that metric (``nbvslr plot --metric``'s figures, ``nbvslr
    report --metric``'s table), named in its title and headings; ``title`` by default
    "nbvslr report", followed by the metric's name for another metric than the error.
    ``lead``: a line of Markdown under the title; ``made``: the command named as the
    page's maker (by default ``nbvslr report --format html`` with the ``--metric``)."""
    rows = report_rows(results_dirs, n_boot=n_boot, seed=seed, level=level, metric=metric)
    tasks = list({id(r["_task"]): r["_task"] for r in rows}.values())
    report = report_table(results_dirs, n_boot=n_boot, seed=seed, level=level, notes=notes,
                          paper=paper, rows=rows, extrapolate=extrapolate,
                          beyond_reach=beyond_reach, metric=metric)
    if title is None:
        title = "nbvslr report" + (f": {LABELS[metric]}" if metric != "error" else "")
    figures = "\n".join(_figure(t, n_boot, seed) for t in tasks)
    if made is None:
        made = "nbvslr report --format html" + (f" --metric {metric}" if metric != "error"
                                                else "")
    curves = "Learning curves" + (f" ({LABELS[metric]})" if metric != "error" else "")
    return _page(title, tasks, made, f"""{markdown_html(lead) + chr(10) if lead else ""}\
<h2>{html.escape(curves)}</h2>
<div class="figures">
{figures}
</div>
<h2>Report</h2>
{markdown_html(report)}""")


def _page(title: str, tasks: Sequence[TaskResults], made: str, body: str) -> str:
    """The whole page: its head, the title, the line naming the tasks and the command that
    made it, ``body`` (HTML), and the settings and versions of ``tasks``."""
    count = f"{len(tasks)} task{'' if len(tasks) == 1 else 's'}"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>
{STYLE}</style>
</head>
<body>
<h1>{html.escape(title)}</h1>
<p class="note">{count}: {html.escape(", ".join(t.name for t in tasks))}. Made by
<code>{html.escape(made)}</code> from the saved results alone.</p>
{body}
<h2>Settings and versions</h2>
{settings_html(list(tasks))}
</body>
</html>
"""


def every_metric_page(
    results_dirs: PathLike | Iterable[PathLike] | Sequence[TaskResults]
    | every_metric.EveryMetric,
    *,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    level: float = 0.95,
    notes: bool = True,
    paper: bool = True,
    title: str | None = None,
) -> str:
    """The page of every metric the runs measured (``nbvslr report --format html --metric
    all``): per task, its figure of each metric (``nbvslr plot --metric``'s panel) side by
    side, its table of every metric (``every_metric.task_markdown``: a row per pair and
    metric, each metric's numbers those of ``nbvslr report --metric``) and where the
    log-loss's or the Brier score's winner differs from the test error's; then the notes
    and the settings. Runs that measured the test error alone get the test error's page
    (``html_page``) with ``every_metric.ERROR_ALONE`` under its title. ``results_dirs``
    may be the rows already made (``every_metric.every_metric`` of the same arguments)."""
    every = results_dirs if isinstance(results_dirs, every_metric.EveryMetric) else \
        every_metric.every_metric(results_dirs, n_boot=n_boot, seed=seed, level=level)
    made = f"nbvslr report --format html --metric {every_metric.ALL}"
    if every.error_alone:
        return html_page(list(every.tasks), n_boot=n_boot, seed=seed, level=level,
                         notes=notes, paper=paper, title=title, lead=every_metric.ERROR_ALONE,
                         made=made)
    title = "nbvslr report: every metric" if title is None else title
    tasks = every.tasks
    sections = []
    for task in tasks:
        name = every_metric.heading(every, task)
        views = [every.view(task, m) for m in every.metrics
                 if m in every.measured[every_metric.key(task)]]
        png = _png(plots.figure_of_metrics(views, n_boot=n_boot, seed=seed))
        what = html.escape(", ".join(label(v) for v in views))
        figures = (f'<figure id="figure-{html.escape(task.name)}"><img alt="learning curves '
                   f'({what}) of {html.escape(task.name)}" '
                   f'src="data:image/png;base64,{png}"></figure>')
        sections.append(f'<section id="task-{html.escape(task.name)}">\n'
                        f"<h2>{html.escape(name)}</h2>\n"
                        f'<div class="metrics">\n{figures}\n</div>\n'
                        f"{markdown_html(every_metric.task_markdown(every, task))}\n"
                        "</section>")
    tail = every_metric.notes_markdown(every, level=level, n_boot=n_boot, notes=notes,
                                       paper=paper)
    body = "\n".join(sections)
    opposite = every_metric.opposite_markdown(every)
    if tail:
        body += "\n" + ("<h2>Notes</h2>\n" if notes else "") + markdown_html(tail)
    return _page(title, list(tasks), made, f"""{markdown_html(every_metric.intro(every))}
{markdown_html(opposite) if opposite else ""}
{body}""")
