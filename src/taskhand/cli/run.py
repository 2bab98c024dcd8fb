"""The run commands of `taskhand`: run, resume, runs, stats, ledger, clean, demo."""

from __future__ import annotations

import contextlib
import shlex
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console
from rich.table import Table

from taskhand import config, demo
from taskhand.cli.options import JSON, REPO
from taskhand.host import interrupts
from taskhand.plan import formats
from taskhand.plan.model import Status
from taskhand.run import clean, feedback, launch, lookup, supervisor
from taskhand.state.records import RunStatus
from taskhand.text import dumps, printable
from taskhand.unit import LENSES
from taskhand.views import ledger as ledger_view
from taskhand.views import progress as watch
from taskhand.views import stats as stats_view
from taskhand.views.terminal import echo, rich_text
from taskhand.workspace import git

T = TypeVar("T")
EXIT_CODES = {RunStatus.COMPLETED: 0, RunStatus.FAILED: 1}
EXIT_UNFINISHED = 3


def _listener(as_json: bool) -> watch.JsonLines | watch.Progress:
    return watch.JsonLines() if as_json else watch.Progress()


def _watched(listener: watch.JsonLines | watch.Progress, work: Callable[[], T]) -> T:
    """`work()` with SIGINT, SIGTERM and SIGHUP stopping it cleanly: a signal ends taskhand
    with 128 + its number after one line saying how to resume, never a traceback."""
    try:
        with interrupts.handled():
            try:
                return work()
            finally:
                listener.close()
    except interrupts.Interrupted as stop:
        _say_interrupted(stop)


def _say_interrupted(stop: interrupts.Interrupted) -> NoReturn:
    if stop.run_id is None:
        line = f"taskhand: stopped by {stop.name} (see taskhand runs)"
    else:
        command = f"taskhand resume {stop.run_id}"
        if stop.repo is not None and _repo_here() != stop.repo.resolve():
            command += f" --repo {shlex.quote(str(stop.repo))}"
        line = f"run {stop.run_id} interrupted by {stop.name}; resume it with: {command}"
    with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
        click.echo(line, err=True)
    sys.exit(stop.exit_code)


def _repo_here() -> Path | None:
    try:
        return git.find_repo(Path.cwd()).resolve()
    except git.GitError:
        return None


def _report(summary: config.Summary, as_json: bool) -> None:
    if as_json:
        return
    with watch.reader_may_leave():
        echo(f"\nrun {summary.run_id}: {summary.status} ({printable(summary.message)})")
        if summary.status != RunStatus.COMPLETED:
            for line in feedback.left_for_a_person(summary.repo, summary.run_id):
                echo(printable(line))
        echo(f"result branch: {summary.run_branch} in {summary.repo}")
        echo(f"state: {summary.state} (events.jsonl, task-status.json)")
        echo(f"costs: taskhand stats {summary.run_id}")


def _finish(summary: config.Summary) -> None:
    sys.exit(EXIT_CODES.get(RunStatus(summary.status), EXIT_UNFINISHED))


def _default(text: str, value: object) -> str:
    return f"{text} (default: {value})."


_DEFAULTS = config.RunConfig()  # the defaults the help names, as the builder has them
_CAPS = _DEFAULTS.caps


@click.command()
@click.argument("plan", type=click.Path(path_type=Path))
@click.option(
    "--agent",
    help="The agent backend (default: the plan's taskhand.toml, $TASKHAND_AGENT, else "
    f"{config.DEFAULT_AGENT}).",
)
@click.option("--model", help="The model the agent uses.")
@click.option("--script", type=click.Path(path_type=Path), help="The replay agent's script.")
@click.option(
    "--base", "base_ref", help=_default("The commit tasks start from", _DEFAULTS.base_ref)
)
@click.option("--new", is_flag=True, help="Start a new run even if the last one is unfinished.")
@click.option(
    "--sandbox",
    metavar=f"[{'|'.join(config.SANDBOXES)}]",
    help="What confines the agents' processes: bwrap (bubblewrap), none, or auto "
    f"(bwrap when it works here, else none with a warning) (default: {_DEFAULTS.sandbox}).",
)
@click.option(
    "--max-attempts",
    type=int,
    help=_default("Attempts per task that may fail their checks", _CAPS.max_attempts),
)
@click.option(
    "--bounces",
    type=int,
    help="Attempts per task the reviewer may reject (default: the plan's taskhand.toml, else "
    f"{_CAPS.bounces}).",
)
@click.option(
    "--review",
    "lenses",
    help="Reviewers, comma-separated, each in its own copy: "
    f"{', '.join(LENSES)} (default: the plan's taskhand.toml, else "
    f"{','.join(_DEFAULTS.lenses)}).",
)
@click.option(
    "--evaluator", help="The reviewers' agent (default: [roles.evaluator], else --agent)."
)
@click.option("--evaluator-model", help="The model the reviewers use.")
@click.option(
    "--unit-timeout",
    "unit_seconds",
    type=float,
    help=_default("Seconds per agent unit", f"{_CAPS.unit_seconds:g}"),
)
@click.option("--run-timeout", "run_seconds", type=float, help="Wall-clock seconds per run.")
@click.option("--task-tokens", type=int, help="Token cap per task.")
@click.option("--run-tokens", type=int, help="Token cap per run.")
@click.option("--task-dollars", type=float, help="Spend cap per task.")
@click.option("--run-dollars", type=float, help="Spend cap per run.")
@click.option(
    "--pipeline",
    metavar="[default|full]",
    help="The stages a task goes through: default (implement, review) or full (spec, plan, "
    "prototype, implement, qa, judge) (default: the plan's taskhand.toml, else default).",
)
@click.option(
    "--autonomy",
    metavar="[gated|full]",
    help="gated: a person approves each plan and prototype; full: they pass by themselves.",
)
@click.option("--prototype-rounds", type=int, help="Designer rounds per ui task (default: 3).")
@click.option(
    "--deliver",
    metavar="[off|task|run]",
    help="Open pull requests: one per task, one per run, or none (default: [deliver], else off).",
)
@click.option(
    "--watch",
    "supervise",
    is_flag=True,
    help="Keep going while people answer: when the run waits for a person, idle until a move "
    "makes a task workable, then go on (Ctrl-C stops).",
)
@REPO
@JSON
def run(
    plan: Path, new: bool, supervise: bool, repo: Path | None, as_json: bool, **flags: Any
) -> None:
    """Work through PLAN: each task in its own worktree, gated, integrated into a run branch.

    An unfinished earlier run of the same plan is continued (use --new for a fresh one).
    Every option but --new, --repo and --json may come from a variable instead: TASKHAND_ and
    the option's name (--max-attempts: TASKHAND_MAX_ATTEMPTS).
    """
    folder = formats.plan_folder(plan)
    try:
        settings = config.build(folder, config.Flags(**flags))
    except config.FlagError as exc:  # the command line's fault: a usage error, as click's
        message = f"{exc.what} (fix: {exc.fix})"
        raise click.BadParameter(message, param_hint=[exc.where]) from None
    listener = _listener(as_json)
    if supervise:

        def idle(waiting: config.Summary) -> None:
            _report(waiting, as_json)
            if not as_json:
                echo("watching: the run goes on when a move makes a task workable (Ctrl-C stops)")

        work = partial(supervisor.watch, plan, settings, listener, repo, new, idle)
        summary = _watched(listener, work)
    else:
        summary = _watched(listener, lambda: launch.start(plan, settings, listener, repo, new))
    if summary.already_completed:
        _completed_before(summary, feedback.shown_plan(folder), as_json)
        return
    _report(summary, as_json)
    _finish(summary)


def _completed_before(summary: config.Summary, plan: str, as_json: bool) -> None:
    line = (
        f"run {summary.run_id} already completed this plan; its result is on branch "
        f"{summary.run_branch} (to start over: taskhand run {plan} --new)"
    )
    if as_json:
        record = {"kind": "already_completed", "run_id": summary.run_id}
        click.echo(dumps({**record, "branch": summary.run_branch, "message": line}))
    else:
        echo(printable(line))


@click.command()
@click.argument("run_id", required=False)
@REPO
@JSON
def resume(run_id: str | None, repo: Path | None, as_json: bool) -> None:
    """Resume RUN (default: the latest run of this repository) where it stopped."""
    listener = _listener(as_json)
    summary = _watched(listener, lambda: launch.resume(run_id, listener, repo))
    _report(summary, as_json)
    _finish(summary)


@click.command()
@REPO
@JSON
def runs(repo: Path | None, as_json: bool) -> None:
    """List the runs of this repository, newest first."""
    _, state, store = lookup.open_store(repo)
    with store:
        rows: list[dict[str, Any]] = []
        for item in store.runs():
            states = store.task_states(item.id)
            done = sum(1 for s in states.values() if s.status is Status.DONE)
            status, reason = item.status, item.reason
            if launch.process_gone(state, item):
                status = RunStatus.INTERRUPTED
                reason = f"its process is gone; taskhand resume {item.id}"
            rows.append(
                {
                    "id": item.id,
                    "status": status,
                    "plan": item.plan_path,
                    "done": done,
                    "tasks": len(states),
                    "branch": item.run_branch,
                    "created": item.created,
                    "reason": reason,
                }
            )
    if as_json:
        click.echo(_json(rows))
        return
    table = Table("run", "status", "done", "plan", "branch", box=None)
    for row in rows:
        tally = f"{row['done']}/{row['tasks']}"
        cells = (row["id"], row["status"], tally, row["plan"], row["branch"])
        table.add_row(*map(rich_text, cells))
    _console().print(table)


@click.command()
@click.argument("run_id", required=False)
@click.option(
    "--plan",
    type=click.Path(path_type=Path),
    help="Sum every run of PLAN (a plan that waited for people runs more than once).",
)
@REPO
@JSON
def stats(run_id: str | None, plan: Path | None, repo: Path | None, as_json: bool) -> None:
    """Units by role, agent time, tokens and dollars per task and in total for RUN.

    RUN is the latest run of this repository unless named; --plan PLAN sums its runs.
    """
    if plan is not None and run_id:
        raise click.UsageError("give RUN or --plan PLAN, not both")
    folder = formats.plan_folder(plan).resolve() if plan is not None else None
    root, _, store = lookup.open_store(repo or folder)
    with store:
        if folder is None:
            runs = [lookup.pick(store, run_id, root)]
            heading, head = f"run {runs[0].id}", {"run": runs[0].id}
        else:
            runs = lookup.runs_of_plan(store, folder)
            heading, head = f"plan {folder} ({len(runs)} runs)", {"plan": str(folder)}
        figures = stats_view.figures(store, runs)
    if as_json:
        runs_json = [r.id for r in sorted(runs, key=lambda r: (r.created, r.id))]
        click.echo(_json({**head, "runs": runs_json, **figures.as_json()}))
        return
    _console().print(stats_view.table(heading, figures))


@click.command()
@click.argument("task_id", required=False)
@click.option("--run", "run_id", help="The run (default: the latest of this repository).")
@REPO
@JSON
def ledger(task_id: str | None, run_id: str | None, repo: Path | None, as_json: bool) -> None:
    """What became of each attempt at TASK (default: every task): checks, verdicts, change."""
    root, _, store = lookup.open_store(repo)
    with store:
        found = lookup.pick(store, run_id, root)
        entries = store.ledger(found.id, task_id)
    if as_json:
        click.echo(_json({"run": found.id, "entries": [e.as_json() for e in entries]}))
        return
    if not entries:
        echo(f"run {found.id}: no attempt of {task_id or 'any task'} has ended yet")
    for line in ledger_view.lines(entries):
        echo(line)


@click.command(name="clean")
@click.argument("run_id", required=False)
@click.option("--dry-run", is_flag=True, help="Show what would be removed; change nothing.")
@REPO
def clean_command(run_id: str | None, dry_run: bool, repo: Path | None) -> None:
    """Remove RUN's worktrees and integrated task branches; keep (and say why) the rest."""
    root, state, store = lookup.open_store(repo)
    with store:
        found = lookup.pick(store, run_id, root)
        with clean.claimed(state, found):
            steps = clean.plan_clean(store, state, found)
            verb = "would remove" if dry_run else "removed"
            for step in steps:
                if step.kind == "keep":
                    echo(f"kept {step.target}: {step.reason}")
                else:
                    echo(f"{verb} {step.kind} {step.target} ({step.reason})")
            if not dry_run:
                clean.apply(state, found, steps)


@click.command(name="demo")
@click.option(
    "--dir",
    "folder",
    type=click.Path(path_type=Path),
    help="A new or empty folder to build the demo in (default: a new temporary folder).",
)
@click.option(
    "--full",
    is_flag=True,
    help="The full lifecycle instead: a small web app's plan from an interview to pull requests.",
)
def demo_command(folder: Path | None, full: bool) -> None:
    """Build a small project and plan in a temporary repository and run it with replay.

    With --dir, the folder must be new or empty. With --full, the plan goes through the whole
    lifecycle: an interview, a plan revised and approved, a prototype, qa's screenshots, a
    judge's rejection fixed, and a pull request per task against a local bare remote.
    """
    try:
        with interrupts.handled():
            if full:
                from taskhand.demo import full as full_demo

                code = full_demo.main(folder)
            else:
                code = demo.main(folder)
    except interrupts.Interrupted as stop:
        _say_interrupted(stop)
    sys.exit(code)


def _console() -> Console:
    """Tables at the terminal's width; unlimited when piped, so nothing is cut."""
    console = Console(highlight=False)
    return console if console.is_terminal else Console(highlight=False, width=10_000)


def _json(data: Any) -> str:
    return dumps(data, indent=2)
