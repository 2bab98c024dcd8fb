"""What the run loop asks of the lifecycle: which tasks a screen may select (a task waiting for
a person is not workable, whatever its dialect's code says), and how an attempt's end moves a
task's lifecycle and what its dialect shows (a hard stop of the full pipeline parks the task).
"""

from __future__ import annotations

from taskhand.pipeline import lifecycle
from taskhand.pipeline.harness import Harness
from taskhand.pipeline.track import Tracker
from taskhand.pipeline.work import Ended
from taskhand.plan.model import Plan, Status, Task
from taskhand.state.records import Lifecycle


def screened(track: Tracker, plan: Plan, statuses: dict[str, Status]) -> dict[str, Status]:
    """The statuses a screen goes by: a full-pipeline task the harness may not work on now (a
    draft, a question, a gate, a parked task) counts as waiting, so that it is neither
    selected nor taken for work left undone."""
    shown = dict(statuses)
    for task in plan.tasks:
        if not track.full(task) or shown.get(task.id) is not Status.OPEN:
            continue
        life = track.life(plan, task)
        if not lifecycle.workable(life):
            shown[task.id] = Status.DONE if life.status in lifecycle.FINAL else Status.WAIT
    return shown


def concluded(h: Harness, plan: Plan, task: Task, ended: Ended) -> tuple[Status, str]:
    """The task's lifecycle after its processing ended, and the status and text its dialect
    concludes with. A stage that stopped for a person has moved it already."""
    assert ended.status is not None
    life = h.track.life(plan, task)
    full = h.track.full(task)
    if ended.status is Status.DONE:
        if life.status is not Lifecycle.DELIVERED:
            h.track.move(task, Lifecycle.DONE, reason=ended.text)
        return Status.DONE, ended.text
    if ended.status is Status.FAIL and full:
        resume = life.status if life.status is not Lifecycle.PARKED else life.resume
        h.track.move(task, Lifecycle.PARKED, waiting=True, resume=resume, reason=ended.text)
        return Status.WAIT, f"Parked: {ended.text}. To retry: taskhand reopen {task.id}."
    if ended.status is Status.FAIL:
        h.track.move(task, Lifecycle.FAILED, waiting=True, reason=ended.text)
    elif not life.waiting:  # the default pipeline's worker asked a question
        h.track.move(
            task, Lifecycle.NEEDS_INPUT, waiting=True, resume=Lifecycle.READY, reason=ended.text
        )
    return ended.status, ended.text
