"""What a person is told about the tasks a run leaves them: after a run stops, each task that
failed or waits and the command that moves it on; and how reopen and respond refuse a
default-pipeline task, in the five codes its people know. The moves themselves are in `moves`.
"""

from __future__ import annotations

from pathlib import Path

from taskhand.pipeline import standing
from taskhand.pipeline.lifecycle import Move
from taskhand.pipeline.standing import Standing
from taskhand.plan.model import Status, Task
from taskhand.plan.problems import PlanError
from taskhand.run.movement import ANSWER, command, shown_plan
from taskhand.run.preflight import load
from taskhand.state.life import Lifecycle
from taskhand.state.paths import StateDir
from taskhand.state.status import StatusBook
from taskhand.state.store import Store
from taskhand.text import printable

__all__ = ["left_for_a_person", "refusal", "reopen_command", "respond_command", "shown_plan"]


def reopen_command(task_id: str, plan: str) -> str:
    return f"taskhand reopen {task_id} {plan}"


def respond_command(task_id: str, plan: str) -> str:
    return f"taskhand respond {task_id} {ANSWER} {plan}"


def left_for_a_person(repo: Path, run_id: str) -> list[str]:
    """What a run that stopped leaves to a person: each failed task with its reason and the
    command to retry it, each waiting task with its question (or what else it waits for) and
    the command that moves it on."""
    state = StateDir.for_repo(repo)
    with Store.open(state.database) as store:
        run = store.get_run(run_id)
        if run is None:
            return []
        try:
            plan = load(Path(run.plan_path))
        except PlanError:  # edited since the run stopped: `validate` says what is wrong
            return []
        book = StatusBook(plan, store, run.id)
        statuses = book.statuses()
        pipeline = standing.plan_pipeline(plan.root, run)
        known = standing.known_statuses(book)
        where = standing.standings(plan, statuses, known, store, False, pipeline)
    shown = shown_plan(plan.root)
    lines = []
    for task in plan.tasks:
        status, stands = statuses[task.id], where[task.id]
        if stands.beyond_codes and (stands.waiting or status is Status.FAIL):
            if stands.moves:
                lines.append(f"{task.id} waits for {stands.waits_for}")
                first = next((q.number for q in stands.open_questions), 1)
                lines.append(f"  next: {command(stands.moves[0], task.id, shown, first)}")
        elif status is Status.FAIL:
            lines.append(f"{task.id} failed: {printable(task.failure or 'no reason was recorded')}")
            lines.append(f"  to retry it: {reopen_command(task.id, shown)}")
        elif status is Status.WAIT:
            lines.append(f"{task.id} asks: {printable(_question(task))}")
            lines.append(f"  to answer: {respond_command(task.id, shown)}")
    return lines


def _question(task: Task) -> str:
    open_requests = [e.request for e in task.exchanges if e.response is None]
    return open_requests[-1] if open_requests else "(the question was not recorded)"


def refusal(where: Standing, move: Move, shown: str) -> str | None:
    """Why reopen or respond is refused on a default-pipeline task, as these moves always
    said it; None where every move's refusal says it better (a parked task, say)."""
    task_id, status = where.task_id, where.status
    if where.pipeline != standing.DEFAULT or where.life.status is Lifecycle.PARKED:
        return None
    if status is Status.BUSY:
        return (
            f"{task_id} is BUSY: a run was working on it "
            "(fix: let that run end; if it was killed, taskhand resume takes it up)"
        )
    if move is Move.REOPEN:
        if status is Status.WAIT:
            return (
                f"{task_id} is WAIT: it waits for an answer, not a retry "
                f"(fix: {respond_command(task_id, shown)})"
            )
        if status is Status.DONE:
            return (
                f"{task_id} is DONE: only a FAIL task can be reopened "
                f"(fix: to redo finished work, start over: taskhand run {shown} --new)"
            )
        return (
            f"{task_id} is OPEN, not FAIL: there is nothing to reopen (fix: taskhand run {shown})"
        )
    fixes = {
        Status.FAIL: f"to retry it: {reopen_command(task_id, shown)}",
        Status.DONE: "nothing to answer: it is finished",
        Status.OPEN: f"nothing to answer yet: taskhand run {shown}",
    }
    if status not in fixes:
        return None
    return f"{task_id} is {status}, not WAIT: it asks nothing (fix: {fixes[status]})"
