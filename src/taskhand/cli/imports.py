"""`taskhand import`: a plan made from another tool's file (a Spec Kit tasks.md, a Taskmaster
tasks.json), with what had no home in it listed. Parsing and printing only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from taskhand.cli.options import JSON, SPEC
from taskhand.plan.imports import Imported, import_plan
from taskhand.plan.model import Dialect, Status
from taskhand.plan.problems import Severity, display_path, relative_path
from taskhand.text import dumps, plural


@click.command(name="import")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="The new plan folder: one that does not exist yet, or is empty.",
)
@click.option(
    "--dialect",
    type=click.Choice([d.value for d in Dialect]),
    default="markdown",
    show_default=True,
    help="The plan format to write.",
)
@click.option("--code", help="TaskTrack plan code, 3 to 5 letters A-Z (default: from --out).")
@SPEC
@click.option("--tag", help="The Taskmaster tag to import (default: master, else the first).")
@JSON
def import_command(
    file: Path,
    out: Path,
    dialect: str,
    code: str | None,
    spec: Path | None,
    tag: str | None,
    as_json: bool,
) -> None:
    """Make a plan in --out from FILE: a Spec Kit tasks.md or a Taskmaster tasks.json.

    The format is told from what FILE holds. Phases, dependencies, done tasks, file paths and
    test strategies are carried over; what has no home in a plan is listed as dropped. Nothing
    is written unless the whole plan is, and validates.
    """
    done = import_plan(file, out, Dialect(dialect), code, spec, tag)
    if as_json:
        click.echo(dumps(_summary(done), indent=2))
        return
    plan = done.plan
    click.echo(
        f"imported {display_path(file)} ({done.format.label}): {plural(len(plan.tasks), 'task')} "
        f"in {plural(len(plan.phases), 'phase')}, {plural(done.dependencies, 'dependency')}, "
        f"{sum(t.status is Status.DONE for t in plan.tasks)} done"
    )
    click.echo(f"wrote {len(done.written)} files into {display_path(out)} ({dialect})")
    if done.dropped:
        click.echo(f"dropped ({len(done.dropped)}: no home in the plan):")
        for item in done.dropped:
            click.echo(f"  {item.render()}")
    click.echo(
        f"validate: 0 errors, {plural(len(done.warnings), Severity.WARNING)}"
        + (f" (taskhand validate {display_path(out)} lists them)" if done.warnings else "")
    )
    if Dialect(dialect) is Dialect.TASKTRACK and done.spec is None:
        click.echo(
            f"spec: none in {display_path(out)} (taskhand ships none, and no TaskTrack plan of "
            "this repository holds one); copy a TaskTrack-<REVISION>.md publication into it, "
            "or import again with --spec FILE"
        )
    elif spec is None and done.spec is not None:
        click.echo(f"spec: copied from {display_path(done.spec)}")
    click.echo(f"next: taskhand show {display_path(out)}")


def _summary(done: Imported) -> dict[str, Any]:
    plan = done.plan
    return {
        "source": relative_path(done.source),
        "format": str(done.format),
        "out": relative_path(done.out),
        "dialect": str(plan.dialect),
        "tasks": len(plan.tasks),
        "phases": len(plan.phases),
        "dependencies": done.dependencies,
        "ids": done.ids,
        "dropped": [{"where": d.where, "what": d.what} for d in done.dropped],
        "written": [relative_path(p) for p in done.written],
        "warnings": [p.as_json() for p in done.warnings],
    }
