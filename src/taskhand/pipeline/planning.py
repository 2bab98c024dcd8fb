"""The plan stage: the explorer maps the code (once per task), the planner writes the plan
(keeping every Review a person wrote); then the plan waits for a person's approval, or with
full autonomy moves on by itself.
"""

from __future__ import annotations

from taskhand.pipeline import lifecycle, roles
from taskhand.pipeline.harness import Harness
from taskhand.pipeline.work import Ended, Work
from taskhand.plan.formats.files import write_atomic
from taskhand.plan.model import Task
from taskhand.prompts import roles as role_prompts
from taskhand.state.documents import Documents
from taskhand.state.life import Lifecycle
from taskhand.unit import Role

L = Lifecycle


def plan(h: Harness, work: Work) -> Ended | None:
    task = work.task
    h.track.enter(task, Lifecycle.PLAN)
    work.context = context = work.context or h.context(work.plan, work.book, task, work.ws.path)
    docs = Documents(work.plan, h.state)
    code_map = docs.folder(task.id) / "map.md"
    if not code_map.is_file():
        found = roles.done_in_copy(
            h, work, Role.EXPLORER, lambda b: role_prompts.explorer(task, context, b), L.PLAN
        )
        if isinstance(found, Ended):
            return found
        code_map.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(code_map, h.redact(found.resolution.strip()) + "\n")
    outcome = roles.done_in_copy(
        h, work, Role.PLANNER, lambda b: role_prompts.planner(task, context, b), L.PLAN
    )
    if isinstance(outcome, Ended):
        return outcome
    docs.write_plan(task, h.redact(outcome.resolution.strip()) or "(the planner wrote no plan)")
    if h.config.autonomy == "full":
        h.track.move(task, lifecycle.after_plan(task))
        return None
    h.track.move(task, Lifecycle.PLANNED, waiting=True, reason="the plan awaits approval")
    return roles.hand_over(h, work, approval_request(task, docs.where(task, "plan")))


def approval_request(task: Task, where: str) -> str:
    """What a planned task asks of a person; `where` the plan is to be read."""
    return (
        f"Approve the plan (in {where}): taskhand approve {task.id}, "
        f'or ask for changes: taskhand revise {task.id} "what to change".'
    )
