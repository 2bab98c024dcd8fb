"""The spec stage: the writer turns a person's draft into a spec, or asks what it cannot
guess; the harness writes the spec into the task and moves it on to its plan.
"""

from __future__ import annotations

from taskhand.pipeline import roles
from taskhand.pipeline.harness import Harness
from taskhand.pipeline.work import Ended, Work
from taskhand.prompts import roles as role_prompts
from taskhand.state import documents
from taskhand.state.documents import Documents
from taskhand.state.life import Lifecycle
from taskhand.unit import Role


def spec(h: Harness, work: Work) -> Ended | None:
    task = work.task
    h.track.enter(task, Lifecycle.SPEC)
    context = work.context = work.context or h.context(work.plan, work.book, task, work.ws.path)
    outcome = roles.done_in_copy(
        h, work, Role.WRITER, lambda b: role_prompts.writer(task, context, b), Lifecycle.SPEC
    )
    if isinstance(outcome, Ended):
        return outcome
    text = h.redact(outcome.resolution.strip()) or task.description
    Documents(work.plan, h.state).write(task, documents.SPEC, text)
    h.track.move(task, Lifecycle.PLAN)
    return None
