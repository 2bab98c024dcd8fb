"""The plan commands of `taskhand`: init, validate, show and next.

They read plan files (and, for a Markdown plan's statuses, the state store), never the run
machinery, so they start fast.
"""

from __future__ import annotations

import atexit
import functools
import gc
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, ParamSpec

import click

from taskhand.cli.errors import Failure
from taskhand.cli.options import JSON, summary
from taskhand.pipeline.standing import scheduled
from taskhand.plan import formats, schedule, templates, validate
from taskhand.plan.formats import markdown
from taskhand.plan.model import Dialect, Plan
from taskhand.plan.problems import display_path
from taskhand.plan.schedule import Statuses
from taskhand.text import dumps, plural
from taskhand.views import plan as views
from taskhand.views.plan import Standings
from taskhand.views.terminal import echo

EXIT_NONE_ELIGIBLE = 3
P = ParamSpec("P")


def _one_shot(command: Callable[P, None]) -> Callable[P, None]:
    """A plan command reads, prints and exits, and makes no garbage in cycles: the collector
    stays paused throughout (see `validate.collector_paused`), or it would walk a big plan's
    objects as soon as the plan is read; and it does not walk every object once more as the
    process exits (a tenth of a small command's time)."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        atexit.unregister(gc.freeze)  # once, however many commands a test runs
        atexit.register(gc.freeze)
        with validate.collector_paused():
            command(*args, **kwargs)

    return run


def _emit(data: Any) -> None:
    click.echo(dumps(data, indent=2))


def _read(path: Path, status_file: Path | None) -> tuple[Plan, Statuses, Standings]:
    """The plan (its own rules only: a plan that cannot run here still shows), its statuses
    as its latest run left them with `status_file` over them, and each task's standing."""
    from taskhand.pipeline import standing  # the store is read here; validate never opens it

    plan = validate.validate(path).require()
    statuses, standings = standing.read(plan, _overlay(status_file))
    return plan, statuses, standings


def _overlay(status_file: Path | None) -> Statuses:
    if status_file is None:
        return {}
    try:
        return markdown.read_status_overlay(status_file)
    except ValueError as exc:
        raise Failure(str(exc)) from None


PLAN = click.argument("plan", type=click.Path(path_type=Path))
STATUS_FILE = click.option(
    "--status-file",
    type=click.Path(path_type=Path),
    help="A Tilth-style task-status.json to overlay on a Markdown plan's statuses.",
)


@click.command()
@click.argument("folder", type=click.Path(path_type=Path), default=".")
@click.option(
    "--dialect",
    type=click.Choice([d.value for d in Dialect]),
    default="markdown",
    show_default=True,
    help="The plan format to write.",
)
@click.option("--code", help="TaskTrack plan code, 3 to 5 letters A-Z (default: from FOLDER).")
@click.option("--title", help="Plan title.")
@click.option(
    "--spec",
    type=click.Path(path_type=Path),
    help="A TaskTrack spec publication (TaskTrack-*.md) to copy in.",
)
def init(
    folder: Path, dialect: str, code: str | None, title: str | None, spec: Path | None
) -> None:
    """Create a plan in FOLDER: an overview and a first task to edit."""
    written = templates.init_plan(folder, Dialect(dialect), code, title, spec)
    for path in written:
        click.echo(f"created {display_path(path)}")
    click.echo(f"next: edit the files, then run 'taskhand validate {display_path(folder)}'")


@click.command(name="validate")
@PLAN
@JSON
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
@click.option("--lint", is_flag=True, help="Add the authoring checks (as taskhand lint).")
@_one_shot
def validate_command(plan: Path, as_json: bool, strict: bool, lint: bool) -> None:
    """Check PLAN against every rule of its dialect; list all problems at once."""
    from taskhand.run import preflight  # here: show and next never ask whether a plan can run

    report = preflight.validate(plan)
    if lint:
        from taskhand.plan import lint as authoring

        report = authoring.extend(report)
    ok = report.ok(strict)
    if as_json:
        shown = summary(report, plan, ok)
        shown["problems"] = [p.as_json() for p in report.problems]
        if report.shape is not None and not report.errors:
            shown.update(critical_path=report.shape.critical_path, width=report.shape.width)
        _emit(shown)
    else:
        for problem in report.problems:
            click.echo(problem.render())
        click.echo(_summary_line(report))
    sys.exit(0 if ok else 1)


def _summary_line(report: validate.Report) -> str:
    counts = f"{plural(len(report.errors), 'error')}, {plural(len(report.warnings), 'warning')}"
    shape = report.shape
    if report.plan is None or shape is None or report.errors:
        return f"{display_path(report.path)}: invalid ({counts})"
    return (
        f"{display_path(report.path)}: valid {report.plan.dialect} plan, "
        f"{plural(len(report.plan.tasks), 'task')} in {plural(len(report.plan.phases), 'phase')}; "
        f"critical path "
        f"{len(shape.critical_path)}, width {shape.width} ({counts})"
    )


@click.command()
@PLAN
@click.argument("task", required=False)
@JSON
@STATUS_FILE
@_one_shot
def show(plan: Path, task: str | None, as_json: bool, status_file: Path | None) -> None:
    """Show PLAN (phases, tasks, statuses, what is eligible), or one TASK of it."""
    loaded, statuses, standings = _read(plan, status_file)
    if task is None:
        if as_json:
            _emit(views.plan_json(loaded, statuses, standings))
        else:
            echo(views.plan_text(loaded, statuses, standings))
        return
    found = loaded.task(task)
    if found is None:
        _no_task(loaded, task)
    frontier = schedule.eligible(loaded, scheduled(statuses, standings))
    if as_json:
        _emit(views.task_json(found, statuses, frontier, standings[found.id]))
    else:
        echo(views.task_text(found, statuses, frontier, standings[found.id]))


def _no_task(plan: Plan, task: str) -> NoReturn:
    ids = [t.id for t in plan.tasks]
    shown = ", ".join(ids[:10]) + (", ..." if len(ids) > 10 else "")
    what = formats.unknown_task(plan, task, display_path(plan.root))
    raise Failure(f"{what} (fix: use one of {shown})")


@click.command(name="next")
@PLAN
@click.option("--all", "all_eligible", is_flag=True, help="List every eligible task.")
@JSON
@STATUS_FILE
@_one_shot
def next_command(plan: Path, all_eligible: bool, as_json: bool, status_file: Path | None) -> None:
    """Print the task a run would select next (exit 3 when none is eligible)."""
    loaded, statuses, standings = _read(plan, status_file)
    data = views.next_json(loaded, scheduled(statuses, standings))
    if as_json:
        _emit(data)
    else:
        echo(views.next_text(data, all_eligible))
    if data["next"] is None:
        sys.exit(EXIT_NONE_ELIGIBLE)
