"""The commands that read what runs left, and clean up after them: runs, stats, ledger,
clean."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from taskhand.cli.options import JSON, REPO
from taskhand.plan import formats
from taskhand.plan.model import Status
from taskhand.run import clean, launch, lookup, retention
from taskhand.state.events import EventKind
from taskhand.state.records import RunStatus
from taskhand.text import dumps, plural
from taskhand.views import ledger as ledger_view
from taskhand.views import stats as stats_view
from taskhand.views import waste
from taskhand.views.terminal import echo, rich_text


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
            heading, head = f"plan {folder} ({plural(len(runs), 'run')})", {"plan": str(folder)}
        figures = stats_view.figures(store, runs)
        ordered = sorted(runs, key=lambda r: (r.created, r.id))
        wasted = [waste.of_run(store, r.id) for r in ordered]
    if as_json:
        runs_json = [r.id for r in ordered]
        queue = {"queue": [w.as_json() for w in wasted]}
        click.echo(_json({**head, "runs": runs_json, **figures.as_json(), **queue}))
        return
    _console().print(stats_view.table(heading, figures))
    listed = stats_view.addresses(figures)
    if listed:  # whole, as plain lines: a terminal wraps them, nothing cuts them
        echo("pull requests:")
        for line in listed:
            echo(f"  {line}")
    agents = stats_view.agents_table(figures)
    if agents is not None:
        _console().print(agents)
    several = [w for w, r in zip(wasted, ordered, strict=True) if waste.shown(w, r)]
    if several:  # what running tasks side by side cost: a single job's run has nothing here
        echo("the merge queue:")
        for shown in several:
            echo(f"  {shown.line}")


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
        blamed = ledger_view.blamed(store.events_of(found.id, EventKind.ATTEMPT_REQUEUED))
    if as_json:
        shown = [
            {**e.as_json(), "after": blamed.get((e.task_id, e.iteration), [])} for e in entries
        ]
        click.echo(_json({"run": found.id, "entries": shown}))
        return
    if not entries:
        echo(f"run {found.id}: no attempt of {task_id or 'any task'} has ended yet")
    for line in ledger_view.lines(entries):
        echo(line)


@click.command(name="clean")
@click.argument("run_id", required=False)
@click.option("--dry-run", is_flag=True, help="Say what would be removed and why; change nothing.")
@click.option(
    "--keep-done",
    type=click.FloatRange(min=0),
    metavar="DAYS",
    help="Keep a passed attempt's workspace this long (default: [clean] keep_done, else 7).",
)
@click.option(
    "--keep-failed",
    type=click.FloatRange(min=0),
    metavar="DAYS",
    help="Keep any other ended attempt's this long (default: [clean] keep_failed, else 14).",
)
@REPO
def clean_command(
    run_id: str | None,
    dry_run: bool,
    keep_done: float | None,
    keep_failed: float | None,
    repo: Path | None,
) -> None:
    """Remove what runs left once integrated or disposed and past retention; keep the rest.

    Every run of this repository unless RUN is named. Each thing kept or waited on is said,
    with why: a result without a disposition (and the taskhand integration set command that
    records one), an attempt within its retention, a live run's work.
    """
    root, state, store = lookup.open_store(repo)
    with store:
        runs = [lookup.pick(store, run_id, root)] if run_id else store.runs()
        verb = "would remove" if dry_run else "removed"
        for found in runs:
            kept = retention.retention_for(found, keep_done, keep_failed)
            with clean.claimed(state, found) as holder:
                steps = clean.plan_clean(store, state, found, kept, holder)
                echo(f"run {found.id}:")
                for step in steps:
                    if step.kind is clean.Act.KEEP:
                        echo(f"  kept {step.target}: {step.reason}")
                    elif step.kind is clean.Act.SKIP:
                        echo(f"  waiting on {step.target}: {step.reason}")
                    else:
                        echo(f"  {verb} {step.kind} {step.target} ({step.reason})")
                if not dry_run:
                    for line in clean.apply(state, found, steps, holder):
                        echo(f"  not removed: {line}")


def _console() -> Console:
    """Tables at the terminal's width; unlimited when piped, so nothing is cut."""
    console = Console(highlight=False)
    return console if console.is_terminal else Console(highlight=False, width=10_000)


def _json(data: Any) -> str:
    return dumps(data, indent=2)
