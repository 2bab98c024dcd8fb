"""The `taskhand` command: argument parsing and printing only; the library does the work."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from taskhand.cli import errors as cli_errors
from taskhand.cli import feedback as cli_feedback
from taskhand.cli import run as cli_run
from taskhand.cli.errors import Failure
from taskhand.cli.options import JSON
from taskhand.errors import UserError
from taskhand.plan import schedule, templates, validate
from taskhand.plan.formats import markdown
from taskhand.plan.model import Dialect, Plan
from taskhand.plan.problems import PlanError, display_path, relative_path
from taskhand.plan.schedule import Statuses
from taskhand.run import feedback, preflight
from taskhand.text import dumps
from taskhand.views import plan as views
from taskhand.views.terminal import echo

EXIT_NONE_ELIGIBLE = 3
JSON_ERRORS = "taskhand.json_errors"  # in the context's meta: --json was asked for
# `taskhand` alone prints the help (exit 2); that is no error to restyle.
_SHOWS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class Group(click.Group):
    """Turns any error into the one style (cli_errors); TASKHAND_DEBUG=1 re-raises the rest."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        as_json = cli_errors.wants_json(args)
        try:
            ctx = super().make_context(info_name, args, parent, **extra)
        except click.ClickException as exc:
            if isinstance(exc, _SHOWS_HELP):
                raise
            raise cli_errors.from_click(exc, as_json) from None
        ctx.meta[JSON_ERRORS] = as_json
        return ctx

    def invoke(self, ctx: click.Context) -> Any:
        as_json = bool(ctx.meta.get(JSON_ERRORS))
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            raise cli_errors.from_click(exc, as_json) from None
        except (click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:
            # Ctrl-C outside a run (which handles it itself): the shell's code, not "Aborted!".
            click.echo("taskhand: interrupted", err=True)
            raise SystemExit(130) from None
        except BrokenPipeError:
            # The reader went away (`taskhand ledger | head`): stop quietly, as a filter does.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise SystemExit(141) from None
        except PlanError as exc:
            raise cli_errors.from_plan_error(exc, as_json) from None
        except UserError as exc:  # an expected failure: one line naming what and the fix
            raise Failure(str(exc), as_json=as_json) from None
        except Exception as exc:
            if os.environ.get("TASKHAND_DEBUG"):
                raise
            raise Failure(
                f"{type(exc).__name__}: {exc} (fix: set TASKHAND_DEBUG=1 for details)",
                as_json=as_json,
            ) from None


def _emit(data: Any) -> None:
    click.echo(dumps(data, indent=2))


def _load(path: Path, status_file: Path | None) -> tuple[Plan, Statuses]:
    # The plan's own rules only: a plan that cannot run here (preflight) still shows.
    plan = validate.validate(path).require()
    statuses = feedback.latest_statuses(plan)
    if status_file is not None:
        try:
            statuses = {**statuses, **markdown.read_status_overlay(status_file)}
        except ValueError as exc:
            raise Failure(str(exc)) from None
    return plan, statuses


PLAN = click.argument("plan", type=click.Path(path_type=Path))
STATUS_FILE = click.option(
    "--status-file",
    type=click.Path(path_type=Path),
    help="A Tilth-style task-status.json to overlay on a Markdown plan's statuses.",
)


@click.group(name="taskhand", cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="taskhand")
def cli() -> None:
    """Run coding agents through a plan of tasks."""


@cli.command()
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


@cli.command(name="validate")
@PLAN
@JSON
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
def validate_command(plan: Path, as_json: bool, strict: bool) -> None:
    """Check PLAN against every rule of its dialect; list all problems at once."""
    report = preflight.validate(plan)
    ok = report.ok(strict)
    if as_json:
        summary: dict[str, Any] = {
            "ok": ok,
            "path": relative_path(plan),
            "dialect": str(report.plan.dialect) if report.plan else None,
            "tasks": len(report.plan.tasks) if report.plan else 0,
            "errors": len(report.errors),
            "warnings": len(report.warnings),
            "problems": [p.as_json() for p in report.problems],
        }
        if report.plan is not None and not report.errors:
            shape = schedule.shape(report.plan)
            summary.update(critical_path=shape.critical_path, width=shape.width)
        _emit(summary)
    else:
        for problem in report.problems:
            click.echo(problem.render())
        click.echo(_summary_line(report))
    sys.exit(0 if ok else 1)


def _summary_line(report: validate.Report) -> str:
    counts = f"{len(report.errors)} errors, {len(report.warnings)} warnings"
    if report.plan is None or report.errors:
        return f"{display_path(report.path)}: invalid ({counts})"
    shape = schedule.shape(report.plan)
    return (
        f"{display_path(report.path)}: valid {report.plan.dialect} plan, "
        f"{len(report.plan.tasks)} tasks in {len(report.plan.phases)} phases; critical path "
        f"{len(shape.critical_path)}, width {shape.width} ({counts})"
    )


@cli.command()
@PLAN
@click.argument("task", required=False)
@JSON
@STATUS_FILE
def show(plan: Path, task: str | None, as_json: bool, status_file: Path | None) -> None:
    """Show PLAN (phases, tasks, statuses, what is eligible), or one TASK of it."""
    loaded, statuses = _load(plan, status_file)
    if task is None:
        if as_json:
            _emit(views.plan_json(loaded, statuses))
        else:
            echo(views.plan_text(loaded, statuses))
        return
    found = loaded.task(task)
    if found is None:
        _no_task(loaded, task)
    frontier = schedule.eligible(loaded, statuses)
    if as_json:
        _emit(views.task_json(found, statuses, frontier))
    else:
        echo(views.task_text(found, statuses, frontier))


def _no_task(plan: Plan, task: str) -> NoReturn:
    ids = [t.id for t in plan.tasks]
    shown = ", ".join(ids[:10]) + (", ..." if len(ids) > 10 else "")
    raise Failure(f"no task {task} in {display_path(plan.root)} (fix: use one of {shown})")


@cli.command(name="next")
@PLAN
@click.option("--all", "all_eligible", is_flag=True, help="List every eligible task.")
@JSON
@STATUS_FILE
def next_command(plan: Path, all_eligible: bool, as_json: bool, status_file: Path | None) -> None:
    """Print the task a run would select next (exit 3 when none is eligible)."""
    loaded, statuses = _load(plan, status_file)
    data = views.next_json(loaded, statuses)
    if as_json:
        _emit(data)
    else:
        echo(views.next_text(data, all_eligible))
    if data["next"] is None:
        sys.exit(EXIT_NONE_ELIGIBLE)


for command in [*cli_run.COMMANDS, *cli_feedback.COMMANDS]:
    cli.add_command(command)


def main() -> None:
    cli(prog_name="taskhand")
