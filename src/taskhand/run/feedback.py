"""What a stopped run tells the person: each failed or waiting task, and the command that
moves it on. The moves themselves are in `moves`.
"""

from __future__ import annotations

from pathlib import Path

from taskhand.plan.model import Status, Task
from taskhand.plan.problems import PlanError
from taskhand.run.movement import ANSWER, shown_plan
from taskhand.run.preflight import load
from taskhand.state.paths import StateDir
from taskhand.state.status import StatusBook
from taskhand.state.store import Store
from taskhand.text import printable

__all__ = ["left_for_a_person", "reopen_command", "respond_command", "shown_plan"]


def reopen_command(task_id: str, plan: str) -> str:
    return f"taskhand reopen {task_id} {plan}"


def respond_command(task_id: str, plan: str) -> str:
    return f"taskhand respond {task_id} {ANSWER} {plan}"


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
