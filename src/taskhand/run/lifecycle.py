"""What the run loop asks of the lifecycle: which tasks a screen may select (a task waiting for
a person is not workable, whatever its dialect's code says), how an attempt's end moves a
task's lifecycle and what its dialect shows (a hard stop of the full pipeline parks the task),
and how a task a killed run left at a person's gate concludes without any work.
"""

from __future__ import annotations

from taskhand.pipeline import lifecycle, planning, prototype
from taskhand.pipeline.harness import Harness
from taskhand.pipeline.lifecycle import Move, answered_by_hand, held
from taskhand.pipeline.track import Tracker
from taskhand.pipeline.work import Ended
from taskhand.plan.model import Dialect, Plan, Status, Task
from taskhand.state import documents
from taskhand.state.documents import Documents
from taskhand.state.events import EventKind
from taskhand.state.life import Lifecycle, Question
from taskhand.state.records import Attempt


def screened(track: Tracker, plan: Plan, statuses: dict[str, Status]) -> dict[str, Status]:
    """The statuses a screen goes by: a task the harness may not work on now (a draft, and on
    the full pipeline a question, a gate, a parked task) counts as waiting, so that it is
    neither selected nor taken for work left undone."""
    shown = dict(statuses)
    lives = track.lives(plan)
    for task in plan.tasks:
        life = lives[task.id]
        if shown.get(task.id) is Status.OPEN and held(plan, task, life, track.full(task)):
            shown[task.id] = Status.DONE if life.status in lifecycle.FINAL else Status.WAIT
    return shown


def adopt_hand_answers(h: Harness, plan: Plan) -> None:
    """Take each Response a person wrote by hand as the move it stands for: an answer to the
    open question; an approval or acceptance when it says so ("approved", "ok", ...), else
    the changes it asks for; a reopen of a parked task."""
    if plan.dialect is not Dialect.TASKTRACK:  # only a TaskTrack file holds a Response
        return
    key = h.track.plan_key
    lives = h.track.lives(plan)
    for task in plan.tasks:
        life = lives[task.id]
        if not h.track.full(task) or not answered_by_hand(plan, task, life):
            continue
        text = (task.exchanges[-1].response or "").strip()
        agrees = text.lower().strip(" .!") in AGREEMENTS
        docs = Documents(plan, h.state)
        by = "a Response in the task file"
        if life.status is Lifecycle.NEEDS_INPUT:
            for q in [q for q in h.store.questions(key, task.id) if q.open]:
                letter = text.lower().strip("() .")
                index = ord(letter) - ord("a") if len(letter) == 1 else -1
                chosen = letter if 0 <= index < len(q.options) else ""
                h.store.answer(key, task.id, q.number, chosen, "" if chosen else text)
            docs.show_questions(task, h.store.questions(key, task.id))
            back = Lifecycle(life.resume) if life.resume else Lifecycle.SPEC
            h.track.move(task, back, reason=by)
        elif life.status is Lifecycle.PLANNED and agrees:
            h.track.move(task, lifecycle.after_plan(task), reason=by)
        elif life.status is Lifecycle.PLANNED:
            docs.add_review(task, text)
            h.store.remark(key, task.id, str(Move.REVISE), text)
            h.track.move(task, Lifecycle.PLAN, reason=by)
        elif life.status is Lifecycle.PROTOTYPE and agrees:
            h.track.move(task, Lifecycle.READY, reason=by)
        elif life.status is Lifecycle.PROTOTYPE:
            docs.add_review(task, text, documents.PROTOTYPE)
            h.store.remark(key, task.id, str(Move.COMMENT), text)
            h.track.move(task, Lifecycle.PROTOTYPE, reason=by)
        elif life.status is Lifecycle.PARKED:  # a reopen, as the table sends it
            h.store.restart_lives(key, [task.id])
            h.store.reopen_task(h.run.id, task.id, by)
            pipeline = lifecycle.pipeline_of(task, h.track.pipeline)
            back = lifecycle.lands(Move.REOPEN, life, task, pipeline) or Lifecycle.SPEC
            h.track.move(task, back, reason=by, resume=lifecycle.onward(back))


# What a hand-written Response says when it lets a gate open as it is.
AGREEMENTS = frozenset(
    {"approve", "approved", "accept", "accepted", "ok", "okay", "yes", "lgtm", "go", "reopen"}
)


def left_waiting(h: Harness, plan: Plan, task: Task) -> Ended | None:
    """How a full-pipeline task concludes that a person must move before the harness works on
    it again, with the request its stage made; None when the harness may work on it.

    A run killed between a stage's move to a person's gate (a question, a plan to approve, a
    prototype to review, a park) and the task's conclusion resumes the task as BUSY; the
    lifecycle, not the dialect's status, says it waits: working on it would skip the gate,
    or ask the same question again. A kill between recording a question and the move leaves
    the question asked: the move is made now."""
    if not h.track.full(task):
        return None
    life = h.track.life(plan, task)
    questions = h.store.questions(h.track.plan_key, task.id)
    asked = [q for q in questions if q.open]
    unmoved = [q for q in asked if q.stage == life.status and not life.waiting]
    if unmoved:  # killed between recording a question and moving the task: it is asked
        logged = any(
            e.task_id == task.id and e.data.get("number") == unmoved[0].number
            for e in h.store.events_of(h.run.id, EventKind.QUESTION_ASKED)
        )
        h.track.wait_for_answer(plan, h.state, task, unmoved[0], logged)
        return Ended(Status.WAIT, documents.request_text(unmoved[0], task.id))
    if lifecycle.workable(life) or life.status in lifecycle.FINAL:
        return None
    if life.status in lifecycle.STOPPED:
        return Ended(Status.FAIL, life.reason or f"parked at {life.resume or life.status}")
    if life.status is Lifecycle.PLANNED:
        where = Documents(plan, h.state).where(task, documents.PLAN)
        return Ended(Status.WAIT, planning.approval_request(task, where))
    if life.status is Lifecycle.PROTOTYPE:
        shots = Documents(plan, h.state).folder(task.id)
        return Ended(Status.WAIT, prototype.review_request(task, shots))
    if asked:
        return Ended(Status.WAIT, documents.request_text(asked[0], task.id))
    return Ended(Status.WAIT, f"{task.id} waits for {lifecycle.waits_for(life, questions)}")


def asked_by(h: Harness, attempt: Attempt) -> Question | None:
    """The question an attempt a kill left open ended with: one the interview recorded after
    the attempt began. Such an attempt is not redone (its unit's question stands, asked once,
    perhaps answered already): it ends as a question, not as interrupted."""
    questions = h.store.questions(h.track.plan_key, attempt.task_id)
    found = [q for q in questions if q.asked >= attempt.started]
    return found[-1] if found else None


def concluded(h: Harness, plan: Plan, task: Task, ended: Ended) -> tuple[Status, str]:
    """The task's lifecycle after its processing ended, and the status and text its dialect
    concludes with. A stage that stopped for a person has moved it already."""
    assert ended.status is not None
    life = h.track.life(plan, task)
    full = h.track.full(task)
    if ended.status is Status.DONE:
        if life.status is not Lifecycle.DELIVERED:  # finished: no pull request is due
            h.track.move(task, Lifecycle.DONE, reason=ended.text, resume="")
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
