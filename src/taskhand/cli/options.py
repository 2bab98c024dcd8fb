"""The options several commands share, declared once so that they read and behave alike."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from taskhand.plan.problems import relative_path

if TYPE_CHECKING:
    from taskhand.plan.validate import Report

REPO = click.option(
    "--repo",
    type=click.Path(path_type=Path),
    help="The repository (default: the one holding the plan, or the current folder).",
)
JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
SPEC = click.option(
    "--spec",
    type=click.Path(path_type=Path),
    help="The TaskTrack spec publication (TaskTrack-<REVISION>.md) to copy in (default: one a "
    "TaskTrack plan of the repository holds).",
)


def summary(report: Report, path: Path, ok: bool) -> dict[str, Any]:
    """What `validate --json` and `lint --json` both begin with: the plan and its counts."""
    return {
        "ok": ok,
        "path": relative_path(path),
        "dialect": str(report.plan.dialect) if report.plan else None,
        "tasks": len(report.plan.tasks) if report.plan else 0,
        "errors": len(report.errors),
        "warnings": len(report.warnings),
    }
