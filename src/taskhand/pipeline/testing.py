"""The tests stage: the tester writes the task's tests in the attempt's workspace before the
implementer writes the code there. An attempt that builds on a rejected one has them already.
"""

from __future__ import annotations

from taskhand.pipeline import roles
from taskhand.pipeline.harness import Harness
from taskhand.pipeline.work import Ended, Work
from taskhand.prompts import roles as role_prompts
from taskhand.state.life import Lifecycle
from taskhand.unit import Role


def tests(h: Harness, work: Work) -> Ended | None:
    task, attempt = work.task, work.attempt
    h.track.enter(task, Lifecycle.IMPLEMENTING)
    # Read before any unit of the attempt: the implement stage must not see conventions the
    # tester rewrote.
    work.context = work.context or h.context(work.plan, work.book, task, work.ws.path)
    if work.building_on is not None:
        return None
    prompt = h.redact(role_prompts.tester(task, work.context, roles.brief(h, work)))
    before = h.guard.before()
    outcome = h.unit(Role.TESTER, task, attempt, work.ws.path, prompt)
    broken = h.breaches(before, "the tester's unit", task.id)
    if broken:
        return h.violation(attempt, task, broken)
    return roles.settle(h, work, outcome, Lifecycle.IMPLEMENTING)
