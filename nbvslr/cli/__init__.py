"""The ``nbvslr`` command: a thin click shell over the Python API.

Every user error is an ``NbvslrError``; ``main`` turns it into one line on stderr and the
error's exit code, never a traceback.
"""

from __future__ import annotations

import sys

import click

from nbvslr import __version__
from nbvslr.errors import NbvslrError


class _Group(click.Group):
    """A click group that reports ``NbvslrError`` as ``error: ...`` and its exit code."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except NbvslrError as exc:
            click.echo(f"error: {one_line(str(exc))}", err=True)
            ctx.exit(exc.exit_code)


def one_line(text: str) -> str:
    """``text`` with line breaks and other unprintable characters escaped (``\\r``).

    A message quotes what the user wrote (a key, a cell); whatever that holds, the message
    stays on one line and can be printed in any encoding.
    """
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape", "backslashreplace").decode("ascii")
        for c in text
    )


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nbvslr")
def cli() -> None:
    """Naive Bayes vs logistic regression learning curves (Ng & Jordan, NIPS 2001)."""


def _register() -> None:
    from nbvslr.cli import (
        configs_cmd,
        datasets_cmd,
        fidelity_cmd,
        figures_cmd,
        guard_cmd,
        run_cmd,
        study_cmd,
    )

    cli.add_command(run_cmd.run)
    cli.add_command(configs_cmd.configs)
    cli.add_command(datasets_cmd.datasets)
    cli.add_command(figures_cmd.plot)
    cli.add_command(figures_cmd.report)
    cli.add_command(fidelity_cmd.fidelity_cmd)
    cli.add_command(guard_cmd.compare_cmd)
    cli.add_command(study_cmd.sample_complexity)


_register()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=argv, prog_name="nbvslr", standalone_mode=True)


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
