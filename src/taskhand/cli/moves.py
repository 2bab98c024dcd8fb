"""A person's moves on a plan's tasks, one command each: new, submit, answer, respond, approve,
revise, comment, accept, reopen, park. Each prints what moved and what happens next, or with
--json the move as one JSON object; a refused move is one line naming the moves that are open.
"""

from __future__ import annotations

from pathlib import Path

import click

from taskhand.cli.options import JSON, REPO
from taskhand.pipeline.lifecycle import Move
from taskhand.plan.drafts import KINDS
from taskhand.run import moves
from taskhand.run.movement import Moved
from taskhand.state.life import Lifecycle
from taskhand.text import dumps, printable

PLAN = click.argument("plan", type=click.Path(path_type=Path), required=False)
TASK = click.argument("task_id", metavar="TASK")
_DONE = {
    Move.NEW: "created",
    Move.SUBMIT: "submitted",
    Move.ANSWER: "answered",
    Move.RESPOND: "answered",
    Move.APPROVE: "approved the plan of",
    Move.REVISE: "sent back the plan of",
    Move.COMMENT: "commented on",
    Move.ACCEPT: "accepted the prototype of",
    Move.REOPEN: "reopened",
    Move.PARK: "parked",
}


def _report(moved: Moved, as_json: bool) -> None:
    if as_json:
        click.echo(dumps(moved.as_json()))
        return
    where = f" ({printable(moved.file)})" if moved.file else ""
    change = f"{moved.before} -> {moved.after}" if moved.before != moved.after else str(moved.after)
    waiting = ", waiting for a person" if moved.waiting else ""
    line = f"{_DONE[moved.move]} {moved.task}{where}: {change} ({moved.status}{waiting})"
    if moved.move is Move.REOPEN and moved.after is Lifecycle.DONE:  # its delivery failed
        line += "; its pull request is due: a run delivers it, no agent works on it again"
    elif moved.move is Move.REOPEN:
        line += f"; its caps count afresh (the earlier attempts: taskhand ledger {moved.task})"
    click.echo(line)
    if not moved.next:
        click.echo(
            f"next: {moved.taken_up_by} takes it up"
            if moved.taken_up_by
            else "next: nothing; it is finished"
        )
    elif moved.next.startswith("taskhand resume"):
        click.echo(f"next: {moved.next} (or taskhand run {moved.plan} with your options)")
    else:
        click.echo(f"next: {moved.next}")


@click.command()
@PLAN
@click.option("--title", required=True, help="The task's title, one line.")
@click.option("--draft", required=True, help="What you want, in a line or two.")
@click.option("--kind", type=click.Choice(KINDS), help="ui (gets a prototype), logic or vague.")
@REPO
@JSON
def new(
    plan: Path | None, title: str, draft: str, kind: str | None, repo: Path | None, as_json: bool
) -> None:
    """Write a new task into PLAN as a draft, with the next free id.

    submit sends it on. PLAN defaults to the plan of this repository's latest run.
    """
    _report(moves.new(plan, title, draft, kind, repo), as_json)


@click.command()
@TASK
@PLAN
@REPO
@JSON
def submit(task_id: str, plan: Path | None, repo: Path | None, as_json: bool) -> None:
    """Send the draft TASK on to its pipeline's first stage."""
    _report(moves.submit(task_id, plan, repo), as_json)


@click.command()
@TASK
@click.argument("number", metavar="Q")
@click.argument("option", metavar="OPTION")
@PLAN
@click.option("--note", default="", help="Words to go with the answer.")
@REPO
@JSON
def answer(
    task_id: str,
    number: str,
    option: str,
    plan: Path | None,
    note: str,
    repo: Path | None,
    as_json: bool,
) -> None:
    """Answer TASK's question Q (Q1, Q2, ...) with its OPTION (a, b, ...).

    Once no question is open, the stage that asked goes on.
    """
    _report(moves.answer(task_id, number, option, note, plan, repo), as_json)


@click.command()
@TASK
@click.argument("text")
@PLAN
@REPO
@JSON
def respond(task_id: str, text: str, plan: Path | None, repo: Path | None, as_json: bool) -> None:
    """Answer a WAIT task's question with TEXT and set it OPEN.

    Its next attempt sees the question and TEXT. PLAN defaults to the plan of this
    repository's latest run.
    """
    _report(moves.respond(task_id, text, plan, repo), as_json)


@click.command()
@TASK
@PLAN
@REPO
@JSON
def approve(task_id: str, plan: Path | None, repo: Path | None, as_json: bool) -> None:
    """Approve TASK's plan: a ui task goes on to its prototype, any other to ready."""
    _report(moves.approve(task_id, plan, repo), as_json)


@click.command()
@TASK
@click.argument("text")
@PLAN
@REPO
@JSON
def revise(task_id: str, text: str, plan: Path | None, repo: Path | None, as_json: bool) -> None:
    """Send TASK's plan back to the planner with TEXT: what to change.

    TEXT lands in a `### Review` block at the end of the plan, which the next round keeps.
    """
    _report(moves.revise(task_id, text, plan, repo), as_json)


@click.command()
@TASK
@click.argument("text")
@PLAN
@REPO
@JSON
def comment(task_id: str, text: str, plan: Path | None, repo: Path | None, as_json: bool) -> None:
    """Leave TEXT for TASK's next unit; on a prototype awaiting review, ask for another round."""
    _report(moves.comment(task_id, text, plan, repo), as_json)


@click.command()
@TASK
@PLAN
@REPO
@JSON
def accept(task_id: str, plan: Path | None, repo: Path | None, as_json: bool) -> None:
    """Accept TASK's prototype: it is ready for its tests and code."""
    _report(moves.accept(task_id, plan, repo), as_json)


@click.command()
@TASK
@PLAN
@REPO
@JSON
def reopen(task_id: str, plan: Path | None, repo: Path | None, as_json: bool) -> None:
    """Retry a FAIL task, or take up a parked one where it stopped.

    Its caps count afresh; the ledger keeps the earlier attempts. PLAN defaults to the plan
    of this repository's latest run.
    """
    _report(moves.reopen(task_id, plan, repo), as_json)


@click.command()
@TASK
@click.argument("why")
@PLAN
@REPO
@JSON
def park(task_id: str, why: str, plan: Path | None, repo: Path | None, as_json: bool) -> None:
    """Stop TASK, saying WHY; reopen takes it up where it stopped."""
    _report(moves.park(task_id, why, plan, repo), as_json)
