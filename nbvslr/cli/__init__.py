"""The ``nbvslr`` command: a thin click shell over the Python API.

Every user error is an ``NbvslrError``; ``main`` turns it into one line on stderr and the
error's exit code, never a traceback. So is an ``OSError`` (a read-only or full disk, a file
where a folder belongs): one line naming the file. Ctrl-C at any moment after start-up exits
with 130 and one line.

The commands' modules (numpy, pandas, matplotlib) are imported when a command is chosen, not
when this module is, so that a Ctrl-C during those imports is caught like any other.
"""

from __future__ import annotations

import errno
import os
import sys

import click

from nbvslr.errors import INTERRUPTED, NbvslrError, import_held, raise_if_stopped, stopped
from nbvslr.version import __version__

#: command name -> (module, attribute), imported on first use
COMMANDS = {
    "run": ("nbvslr.cli.run_cmd", "run"),
    "configs": ("nbvslr.cli.configs_cmd", "configs"),
    "datasets": ("nbvslr.cli.datasets_cmd", "datasets"),
    "plot": ("nbvslr.cli.plot_cmd", "plot"),
    "report": ("nbvslr.cli.report_cmd", "report"),
    "fidelity": ("nbvslr.cli.fidelity_cmd", "fidelity_cmd"),
    "compare": ("nbvslr.cli.compare_cmd", "compare_cmd"),
    "sample-complexity": ("nbvslr.cli.study_cmd", "sample_complexity"),
}

#: command name -> its ``short_help``, shown by ``nbvslr --help`` without importing the
#: command's module (numpy, pandas...); tests/unit/test_startup.py checks each against the
#: command's own
SHORT_HELP = {
    "run": "Run the learning-curve experiments of each config.",
    "configs": "List the shipped configs, or show one.",
    "datasets": "List the built-in tasks and where their files are.",
    "plot": "Draw the learning curves of finished runs.",
    "report": "Tabulate finished runs: errors, a - b, crossovers.",
    "fidelity": "Compare finished runs with the paper's Figure 1.",
    "compare": "Check a run's curves against a reference run.",
    "sample-complexity": "Run a study of m* (NB and LR) as n grows.",
}


_NO_ARGS = getattr(click.exceptions, "NoArgsIsHelpError", ())


class _Group(click.Group):
    """A click group that imports its commands on first use and reports ``NbvslrError``
    and ``OSError`` as ``error: ...`` with an exit code, Ctrl-C as ``interrupted: ...``."""

    def _command_path(self, args) -> str:
        """``nbvslr <command>`` of a command line whose error click gave no context (an
        option missing its value: ``nbvslr run x.yaml -j``), from its first word that is
        not an option; ``nbvslr`` if that names no command."""
        argv = list(sys.argv[1:] if args is None else args)
        first = next((a for a in argv if not a.startswith("-")), None)
        names = {*self.commands, *COMMANDS}
        return f"nbvslr {first}" if first in names else "nbvslr"

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their one-line help, from ``SHORT_HELP`` for those not imported
        yet: ``nbvslr --help`` imports no command's module."""
        rows = []
        for name in self.list_commands(ctx):
            if name in self.commands:
                cmd = self.commands[name]
                if cmd.hidden:
                    continue
                rows.append((name, cmd.get_short_help_str(formatter.width - 6 - len(name))))
            else:
                rows.append((name, SHORT_HELP[name]))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in COMMANDS:
            module, attr = COMMANDS[name]
            # numpy, pandas, matplotlib: with Ctrl-C and SIGTERM held until they are imported
            self.add_command(getattr(import_held(module), attr), name)
            raise_if_stopped()  # a Ctrl-C whose exception the imports swallowed
        return super().get_command(ctx, name)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True,
             **extra):
        """As click's, but a usage error (an unknown option, a value of the wrong type) is
        one line too: ``error: <problem>; see nbvslr <command> --help``."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _NO_ARGS as exc:  # ``nbvslr`` alone: the help, as click shows it
            exc.show()
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            where = (exc.ctx.command_path if getattr(exc, "ctx", None)
                     else self._command_path(args))
            problem = one_line(exc.format_message()).rstrip(".")
            click.echo(f"error: {problem}; see {where} --help", err=True)
            sys.exit(exc.exit_code)
        except click.Abort as exc:  # Ctrl-C (or SIGTERM) while the command line is parsed
            stop = exc.__context__
            what, code = (stopped(stop) if isinstance(stop, KeyboardInterrupt)
                          else ("interrupted", INTERRUPTED))
            click.echo(f"{what}: rerun the same command to start again", err=True)
            sys.exit(code)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except NbvslrError as exc:
            click.echo(f"error: {one_line(str(exc))}", err=True)
            ctx.exit(exc.exit_code)
        except BrokenPipeError:  # the reader of stdout is gone (| head): stop quietly
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(1)
        except OSError as exc:
            click.echo(f"error: {one_line(os_error_line(exc))}", err=True)
            ctx.exit(1)
        except KeyboardInterrupt as exc:
            what, code = stopped(exc)
            click.echo(f"{what}: rerun the same command to start again", err=True)
            ctx.exit(code)


_OS_FIXES = {
    errno.ENOSPC: "free some space on that disk or choose another --out",
    errno.EDQUOT: "free some space (the disk quota is reached) or choose another --out",
    errno.EROFS: "choose a folder on a writable disk (--out)",
    errno.EACCES: "choose a folder you may write to, or change its permissions",
    errno.EPERM: "choose a folder you may write to, or change its permissions",
    errno.ENOTDIR: "a part of that path is a file, not a folder: move it away or choose "
                   "another path",
    errno.EEXIST: "a file stands where a folder belongs: move it away or choose another path",
    errno.EISDIR: "a folder stands where a file belongs: move it away or choose another path",
    errno.EMFILE: "raise the limit of open files (ulimit -n)",
    errno.ENOMEM: "close other programs or use fewer --jobs",
}


def os_error_line(exc: OSError) -> str:
    """One line for an operating-system error: the file, the system's reason, the fix."""
    where = exc.filename if exc.filename is not None else "a file"
    reason = exc.strerror or type(exc).__name__
    fix = _OS_FIXES.get(exc.errno, "check the path and the disk")
    return f"cannot use {where}: {reason}; {fix}"


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


def main(argv: list[str] | None = None) -> None:
    """The command line with ``argv`` (the console script, ``nbvslr.__main__``, calls this)."""
    cli.main(args=argv, prog_name="nbvslr", standalone_mode=True)


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
