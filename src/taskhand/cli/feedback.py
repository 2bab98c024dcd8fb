"""The commands a person uses between runs: reopen a failed task, respond to a waiting one."""

from __future__ import annotations

from pathlib import Path

import click

from taskhand.cli.options import REPO
from taskhand.run import feedback

PLAN = click.argument("plan", type=click.Path(path_type=Path), required=False)


def _next(moved: feedback.Moved) -> str:
    if moved.run_id is None:
        return f"next: taskhand run {moved.plan}"
    return f"next: taskhand resume {moved.run_id} (or taskhand run {moved.plan} with your options)"


@click.command()
@click.argument("task_id", metavar="TASK")
@PLAN
@REPO
def reopen(task_id: str, plan: Path | None, repo: Path | None) -> None:
    """Retry a FAIL task: set TASK OPEN again, with fresh attempts.

    The run takes it up again (taskhand resume); the ledger keeps the earlier attempts. PLAN
    defaults to the plan of this repository's latest run.
    """
    moved = feedback.reopen(task_id, plan, repo)
    click.echo(
        f"reopened {moved.task_id}: OPEN, with its attempts counted afresh "
        f"(the earlier ones: taskhand ledger {moved.task_id})"
    )
    click.echo(_next(moved))


@click.command()
@click.argument("task_id", metavar="TASK")
@click.argument("text")
@PLAN
@REPO
def respond(task_id: str, text: str, plan: Path | None, repo: Path | None) -> None:
    """Answer a WAIT task's question with TEXT and set it OPEN.

    Its next attempt sees the question and TEXT. PLAN defaults to the plan of this
    repository's latest run.
    """
    moved = feedback.respond(task_id, text, plan, repo)
    click.echo(f"answered {moved.task_id}: OPEN; its next attempt sees the question and answer")
    click.echo(_next(moved))
