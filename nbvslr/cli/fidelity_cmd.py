"""``nbvslr fidelity``: how close finished runs come to the paper's Figure 1."""

from __future__ import annotations

from pathlib import Path

import click

from nbvslr.analysis import fidelity
from nbvslr.errors import ConfigError, MissingResultsError, NbvslrError
from nbvslr.results import DEFAULT_OUT, atomic_write_text, find_task_dirs


class BelowThreshold(NbvslrError):
    """The run is further from the paper than the thresholds allow."""

    exit_code = 1


@click.command(
    "fidelity",
    short_help="Compare finished runs with the paper's Figure 1.",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  nbvslr fidelity                      # your runs in results/
  nbvslr fidelity results/reference
  nbvslr fidelity results/as-published --min-within 13 --min-agree 14   # exit 1 below
  nbvslr fidelity /tmp/study --nb nb_noprior --lr lr         # another pair of models
""",
)
@click.argument("results_dirs", nargs=-1, required=False, metavar="[RESULTS_DIR]...",
                type=click.Path(path_type=Path))
@click.option("--tol", type=click.FloatRange(min=0), default=fidelity.TOL, show_default=True,
              help="A panel is within the paper when both curves' mean |difference| is at "
                   "most this.")
@click.option("--tie", type=click.FloatRange(min=0), default=fidelity.TIE, show_default=True,
              help="NB and LR mean errors closer than this at an end are a tie (neither is "
                   "ahead).")
@click.option("--min-within", type=click.IntRange(min=0), default=0, show_default=True,
              metavar="K", help="Exit 1 when fewer than K panels are within --tol.")
@click.option("--min-agree", type=click.IntRange(min=0), default=0, show_default=True,
              metavar="K", help="Exit 1 when the model ahead at the largest m is the "
                                "paper's on fewer than K panels.")
@click.option("--nb", default=None, metavar="MODEL",
              help="The NB model to compare, of the nb family (default: the first of it).")
@click.option("--lr", default=None, metavar="MODEL",
              help="The LR model to compare, of the lr family (default: the first of it).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              default=None, metavar="FILE", help="Also write the table to FILE (Markdown).")
@click.option("--notes/--no-notes", default=True, show_default=True,
              help="Append the definitions of the columns.")
def fidelity_cmd(results_dirs, tol, tie, min_within, min_agree, nb, lr, output, notes):
    """Compare finished runs with the paper's Figure 1, panel by panel.

    For every built-in panel under RESULTS_DIR (default: results/, where `nbvslr run`
    writes; the committed run is results/reference): the mean |ours - paper| of the NB and the
    LR curve over the paper's sizes, the model ahead (lower mean error) at the smallest and
    largest m (the paper's and ours), the crossovers (the paper's and ours), and how many
    panels are within --tol and agree at each end. Made from saved results only.
    """
    if not results_dirs:
        results_dirs = (DEFAULT_OUT,)
        try:
            find_task_dirs(DEFAULT_OUT)
        except MissingResultsError:
            raise MissingResultsError(
                f"{DEFAULT_OUT}/ holds no runs yet; run `nbvslr run CONFIG` (or `make "
                f"figures`) first, or compare the committed run: nbvslr fidelity "
                f"{DEFAULT_OUT}/reference") from None
    for path in results_dirs:
        if not path.is_dir():
            raise ConfigError(f"results folder {path} does not exist; give a folder written "
                              f"by `nbvslr run CONFIG --out DIR`")
    panels = fidelity.compare_results(results_dirs, nb=nb, lr=lr, tie=tie)
    text = fidelity.markdown(panels, tol=tol, tie=tie, notes=notes)
    click.echo(text, nl=False)
    if output is not None:
        atomic_write_text(output, text)
        click.echo(f"wrote {output}", err=True)
    s = fidelity.summarize(panels, tol)
    short = []
    if s.within < min_within:
        short.append(f"{s.within} of {s.n} panels within {tol:g} (--min-within {min_within})")
    if s.agree_largest < min_agree:
        short.append(f"the model ahead at the largest m is the paper's on {s.agree_largest} "
                     f"of {s.n} (--min-agree {min_agree})")
    if short:
        raise BelowThreshold("further from the paper than allowed: " + "; ".join(short))
