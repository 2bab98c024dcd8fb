"""The harness's moves of a task's lifecycle: after a unit ends and its contracts pass, the
runner (never an agent) moves the task, records why, and logs the move; a question of the
interview is recorded and shown where the task's dialect shows questions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from taskhand.pipeline import lifecycle
from taskhand.plan.model import Plan, Task
from taskhand.state.documents import Documents
from taskhand.state.events import EventKind
from taskhand.state.life import Lifecycle, Question, TaskLife
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from taskhand.unit import Question as Asked

Emit = Callable[..., None]
KEEP: Any = ...  # leave a column as it is


class Tracker:
    """Lifecycle records of one plan's tasks, as one run moves them."""

    def __init__(self, store: Store, plan_key: str, pipeline: str, emit: Emit) -> None:
        self.store = store
        self.plan_key = plan_key
        self.pipeline = pipeline  # the plan's; a task may choose its own
        self.emit = emit

    def life(self, plan: Plan, task: Task) -> TaskLife:
        return lifecycle.current(self.store, plan, task, self.pipeline)

    def lives(self, plan: Plan) -> dict[str, TaskLife]:
        """Every task's record, read at once (a screen asks of all of them): one not yet
        written starts where its pipeline starts."""
        found = self.store.lives(self.plan_key)
        return {
            t.id: found.get(t.id) or lifecycle.starting(plan, t, self.pipeline) for t in plan.tasks
        }

    def full(self, task: Task) -> bool:
        return lifecycle.pipeline_of(task, self.pipeline) == "full"

    def move(
        self,
        task: Task,
        status: Lifecycle,
        *,
        waiting: bool = False,
        reason: str | None = None,
        resume: Any = KEEP,
        bounce: bool = False,
        round_done: bool = False,
        pr: Any = KEEP,
    ) -> TaskLife:
        """Move `task` to `status`, logged when its status or waiting changed."""
        before = self.store.life(self.plan_key, task.id)
        options: dict[str, Any] = {"bounce": bounce, "round_done": round_done}
        if resume is not KEEP:
            options["resume"] = resume
        if pr is not KEEP:
            options["pr"] = pr
        after = self.store.set_life(
            self.plan_key, task.id, status, waiting=waiting, reason=reason, **options
        )
        # A task without a record was at its pipeline's first status: entering it is no move.
        first = lifecycle.first_status(lifecycle.pipeline_of(task, self.pipeline), task)
        was = (before.status, before.waiting) if before else (first, False)
        if was != (after.status, after.waiting):
            self.emit(
                EventKind.TASK_MOVED,
                task.id,
                before=str(was[0]),
                after=str(after.status),
                waiting=after.waiting,
                by="harness",
                reason=reason or "",
            )
        return after

    def enter(self, task: Task, status: Lifecycle) -> None:
        """The task's stage starts: its status shows where work is under way."""
        current = self.store.life(self.plan_key, task.id)
        if current is None or current.status is not status or current.waiting:
            self.move(task, status)

    def ask(
        self, plan: Plan, state: StateDir, task: Task, asked: Asked, stage: Lifecycle
    ) -> Question:
        """Record the unit's question, show it in the task, and wait for a person's answer;
        the task goes back to `stage` once no question is open."""
        question = self.store.ask(
            self.plan_key, task.id, asked.text, list(asked.options), str(stage)
        )
        self.wait_for_answer(plan, state, task, question, logged=False)
        return question

    def wait_for_answer(
        self, plan: Plan, state: StateDir, task: Task, question: Question, logged: bool
    ) -> None:
        """Show the recorded question in the task, log it unless `logged`, and move the task
        to needs-input; also what a resumed run does for a question a kill left unmoved."""
        Documents(plan, state).show_questions(task, self.store.questions(self.plan_key, task.id))
        if not logged:
            self.emit(
                EventKind.QUESTION_ASKED,
                task.id,
                number=question.number,
                text=question.text,
                options=question.options,
                stage=question.stage,
            )
        self.move(
            task, Lifecycle.NEEDS_INPUT, waiting=True, resume=question.stage, reason=question.text
        )
