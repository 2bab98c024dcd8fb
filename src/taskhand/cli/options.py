"""The options several commands share, declared once so that they read and behave alike."""

from __future__ import annotations

from pathlib import Path

import click

REPO = click.option(
    "--repo",
    type=click.Path(path_type=Path),
    help="The repository (default: the one holding the plan, or the current folder).",
)
JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
