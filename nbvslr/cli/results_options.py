"""Arguments shared by the commands that read finished runs (``plot``, ``report``)."""

from __future__ import annotations

from pathlib import Path

import click

results_dirs_argument = click.argument(
    "results_dirs", nargs=-1, required=True, metavar="RESULTS_DIR...",
    type=click.Path(file_okay=False, path_type=Path),
)
"""``RESULTS_DIR...``: one or more results folders (task folders or roots of them)."""
