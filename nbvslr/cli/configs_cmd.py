"""``nbvslr configs``: list the configs shipped with nbvslr; ``nbvslr configs show NAME``."""

from __future__ import annotations

import click

from nbvslr.catalog import shipped_config, shipped_configs


class _Configs(click.Group):
    """``nbvslr configs``: a shipped config's name given where a command goes
    (``nbvslr configs pima``) is answered with the command that prints it."""

    def resolve_command(self, ctx: click.Context, args: list[str]):
        name = args[0] if args else ""
        if name and self.get_command(ctx, name) is None and not name.startswith("-"):
            if name in {c.name for c in shipped_configs()}:
                raise click.UsageError(f"no command {name!r}; to print the shipped config "
                                       f"{name!r}: nbvslr configs show {name}", ctx)
        return super().resolve_command(ctx, args)


@click.group(
    "configs", cls=_Configs, invoke_without_command=True,
    short_help="List the shipped configs, or show one.",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  nbvslr configs                            # every shipped config, one line each
  nbvslr configs show pima > my.yaml        # a starting point for your own
  nbvslr run pima                           # run a shipped config by name
""",
)
@click.pass_context
def configs(ctx):
    """List the configs shipped with nbvslr, with a one-line description each. Any of them
    runs by name from any folder (`nbvslr run NAME`)."""
    if ctx.invoked_subcommand is None:
        found = shipped_configs()
        width = max(len(c.name) for c in found)
        for config in found:
            click.echo(f"{config.name.ljust(width)}  {config.description}".rstrip())


@configs.command("show", short_help="Print a shipped config, to start one of your own.")
@click.argument("name")
def show(name):
    """Print the shipped config NAME, as a starting point for a config of your own."""
    click.echo(shipped_config(name).path.read_text(encoding="utf-8"), nl=False)
