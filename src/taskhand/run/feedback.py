"""A person's moves between runs: reopen a failed task, answer a waiting one; and what a
stopped run tells the person (each failed or waiting task, and the command that moves it on).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from taskhand.errors import UserError
from taskhand.plan.model import Plan, Status, Task
from taskhand.plan.problems import PlanError, display_path
from taskhand.run import lookup
from taskhand.run.preflight import load
from taskhand.state import lock
from taskhand.state.paths import StateDir
from taskhand.state.status import StatusBook
from taskhand.state.store import Store
from taskhand.text import printable
from taskhand.workspace import git

ANSWER = '"..."'  # where the answer goes in a suggested `taskhand respond` command


class FeedbackError(UserError):
    """A move that cannot be made; the message is one line with the fix."""


@dataclass(frozen=True)
class Moved:
    """What a move did, for the person who made it."""

    task_id: str
    status: Status  # the task's status before the move
    run_id: str | None  # the run that takes the task up again; None: no run recorded yet
    plan: str  # the plan as a command line shows it


def reopen_command(task_id: str, plan: str) -> str:
    return f"taskhand reopen {task_id} {plan}"


def respond_command(task_id: str, plan: str) -> str:
    return f"taskhand respond {task_id} {ANSWER} {plan}"


def shown_plan(path: Path) -> str:
    """The plan folder as a person would type it in a command."""
    return shlex.quote(display_path(path))


def reopen(task_id: str, plan_path: Path | None = None, repo: Path | None = None) -> Moved:
    """Set the FAIL task `task_id` OPEN again, with fresh attempts in the same run."""
    with _book("reopen", plan_path, repo) as (plan, book):
        status = _status(plan, book, task_id, "reopen")
        shown = shown_plan(plan.root)
        if status is not Status.FAIL:
            raise FeedbackError(_not_failed(task_id, status, shown))
        book.reopen(task_id)
        return Moved(task_id, status, book.run_id or None, shown)


def respond(
    task_id: str, text: str, plan_path: Path | None = None, repo: Path | None = None
) -> Moved:
    """Answer the question of the WAIT task `task_id` and set it OPEN; the next attempt's
    prompt shows the question and this answer."""
    with _book("respond", plan_path, repo) as (plan, book):
        status = _status(plan, book, task_id, "respond")
        shown = shown_plan(plan.root)
        if status is not Status.WAIT:
            raise FeedbackError(_not_waiting(task_id, status, shown))
        if not text.strip():
            raise FeedbackError(
                f"the answer is empty (fix: write it: taskhand respond {task_id} "
                f'"your answer" {shown})'
            )
        book.answer(task_id, text.strip())
        return Moved(task_id, status, book.run_id or None, shown)


def left_for_a_person(repo: Path, run_id: str) -> list[str]:
    """What a run that stopped leaves to a person: each failed task with its reason and the
    command to retry it, each waiting task with its question and the command to answer it."""
    state = StateDir.for_repo(repo)
    with Store.open(state.database) as store:
        run = store.get_run(run_id)
        if run is None:
            return []
        try:
            plan = load(Path(run.plan_path))
        except PlanError:  # edited since the run stopped: `validate` says what is wrong
            return []
        statuses = StatusBook(plan, store, run.id).statuses()
    shown = shown_plan(plan.root)
    lines = []
    for task in plan.tasks:
        status = statuses[task.id]
        if status is Status.FAIL:
            lines.append(f"{task.id} failed: {printable(task.failure or 'no reason was recorded')}")
            lines.append(f"  to retry it: {reopen_command(task.id, shown)}")
        elif status is Status.WAIT:
            lines.append(f"{task.id} asks: {printable(_question(task))}")
            lines.append(f"  to answer: {respond_command(task.id, shown)}")
    return lines


def _question(task: Task) -> str:
    open_requests = [e.request for e in task.exchanges if e.response is None]
    return open_requests[-1] if open_requests else "(the question was not recorded)"


@contextmanager
def _book(
    move: str, plan_path: Path | None, repo: Path | None
) -> Iterator[tuple[Plan, StatusBook]]:
    """The plan and the status book of its latest run, under the plan's lock: a person's
    move never lands in the middle of a run."""
    plan = load(plan_path if plan_path is not None else _latest_plan(move, repo))
    root = git.repo_for(plan.root, repo)
    state = StateDir.for_repo(root)
    with lock.hold(state.lock(plan.root), plan.root, f"taskhand {move}"):
        # Without a database, a TaskTrack plan's files are all there is to change.
        where = state.database if state.database.exists() else Path(":memory:")
        with Store.open(where) as store:
            run = store.latest_run(str(plan.root.resolve()))
            yield plan, StatusBook(plan, store, run.id if run else "")


def _latest_plan(move: str, repo: Path | None) -> Path:
    root, run = lookup.latest(repo)
    if run is not None:
        return Path(run.plan_path)
    raise FeedbackError(
        f"no runs in {root} to take the plan from (fix: name it: taskhand {move} TASK ... PLAN)"
    )


def _status(plan: Plan, book: StatusBook, task_id: str, move: str) -> Status:
    statuses = book.statuses()
    if task_id not in statuses:
        ids = [t.id for t in plan.tasks]
        listed = ", ".join(ids[:10]) + (", ..." if len(ids) > 10 else "")
        raise FeedbackError(
            f"no task {printable(task_id)} in {display_path(plan.root)} "
            f"(fix: {move} one of {listed})"
        )
    return statuses[task_id]


def _busy(task_id: str) -> str:
    return (
        f"{task_id} is BUSY: a run is working on it "
        "(fix: let that run end; if it was killed, taskhand resume takes it up)"
    )


def _not_failed(task_id: str, status: Status, plan: str) -> str:
    if status is Status.BUSY:
        return _busy(task_id)
    if status is Status.WAIT:
        return (
            f"{task_id} is WAIT: it waits for an answer, not a retry "
            f"(fix: {respond_command(task_id, plan)})"
        )
    if status is Status.DONE:
        return (
            f"{task_id} is DONE: only a FAIL task can be reopened "
            f"(fix: to redo finished work, start over: taskhand run {plan} --new)"
        )
    return f"{task_id} is OPEN, not FAIL: there is nothing to reopen (fix: taskhand run {plan})"


def _not_waiting(task_id: str, status: Status, plan: str) -> str:
    if status is Status.BUSY:
        return _busy(task_id)
    fixes = {
        Status.FAIL: f"to retry it: {reopen_command(task_id, plan)}",
        Status.DONE: "nothing to answer: it is finished",
        Status.OPEN: f"nothing to answer yet: taskhand run {plan}",
    }
    return f"{task_id} is {status}, not WAIT: it asks nothing (fix: {fixes[status]})"
