"""The lifecycle as one table: which human moves exist from each status, where each status
enters the pipeline, and how each shows in a dialect's five codes. The runner, the CLI and the
board all ask it, so they cannot disagree about what a person may do.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import TYPE_CHECKING

from taskhand.plan.model import Dialect, Plan, Status, Task
from taskhand.state.life import Lifecycle, Question, TaskLife

if TYPE_CHECKING:  # `show` reads this table without loading the store
    from taskhand.state.lifecycle import LifecycleRows

L = Lifecycle


class Move(StrEnum):
    """A person's moves; each is a command (`taskhand MOVE`) and a board action."""

    NEW = "new"  # write a draft task
    SUBMIT = "submit"  # draft -> spec
    ANSWER = "answer"  # pick an option of an open question
    RESPOND = "respond"  # answer a request in free text
    APPROVE = "approve"  # planned -> prototype (ui) or ready
    REVISE = "revise"  # planned -> plan, with what to change
    COMMENT = "comment"  # words for the next unit; on a prototype, another round
    ACCEPT = "accept"  # prototype -> ready
    REOPEN = "reopen"  # parked or failed -> where it was
    PARK = "park"  # any unfinished status -> parked, with why


FINAL = frozenset({L.DONE, L.DELIVERED})  # finished, unless its pull request is due
STOPPED = frozenset({L.PARKED, L.FAILED})
# The stages a new attempt enters the pipeline at, by status, the first the pipeline has. A
# new attempt has no candidate yet: from qa or judge, it implements again.
ENTRY = {
    L.SPEC: ("spec",),
    L.PLAN: ("plan",),
    L.PLANNED: ("prototype", "tests", "implement"),  # approved, on its way
    L.PROTOTYPE: ("prototype",),
    L.READY: ("tests", "implement"),
    L.IMPLEMENTING: ("tests", "implement"),
    L.REVIEW: ("implement",),
    L.QA: ("tests", "implement"),
    L.JUDGE: ("tests", "implement"),
    L.DONE: ("deliver",),
}
# Where the work of each stage shows: the status a task has while the stage runs.
AT_STAGE = {
    "spec": L.SPEC,
    "plan": L.PLAN,
    "prototype": L.PROTOTYPE,
    "implement": L.IMPLEMENTING,
    "gate": L.IMPLEMENTING,
    "review": L.REVIEW,
    "qa": L.QA,
    "judge": L.JUDGE,
    "integrate": L.DONE,
    "deliver": L.DONE,
}
# The moves a person's turn opens, by status: the gates.
_GATES = {
    L.DRAFT: (Move.SUBMIT,),
    L.NEEDS_INPUT: (Move.ANSWER, Move.RESPOND),
    L.PLANNED: (Move.APPROVE, Move.REVISE),
    L.PROTOTYPE: (Move.ACCEPT, Move.COMMENT),
    L.PARKED: (Move.REOPEN,),
    L.FAILED: (Move.REOPEN,),
}


def moves(life: TaskLife | None, working: bool, open_questions: int = 0) -> list[Move]:
    """The human moves open on a task now. None while a unit works on it; from a person's
    gate, its moves; a comment (a note to the next unit) and park from any unfinished status."""
    if working or life is None:
        return []
    status = life.status
    if finished(life):
        return []
    found: list[Move] = []
    if life.waiting or status in (L.DRAFT, *STOPPED):
        found += _GATES.get(status, ())
        if status is L.NEEDS_INPUT and open_questions == 0:
            found.remove(Move.ANSWER)  # a free-text request: respond
    if status not in STOPPED:
        found += [m for m in (Move.COMMENT, Move.PARK) if m not in found]
    return found


def due(life: TaskLife) -> bool:
    """Whether the task's pull request is due: its work landed (done) and the deliver stage,
    the runner's, opens it next (while it runs, after a kill inside it, after a reopen)."""
    return life.status is L.DONE and life.resume == L.DELIVERED


def finished(life: TaskLife) -> bool:
    """Whether nothing is left to do on the task: done with no pull request due, or
    delivered."""
    return life.status in FINAL and not due(life)


def onward(status: Lifecycle) -> str:
    """What a task a person's move lands at `status` goes on to: from done, delivered (a task
    a move reaches done with is one whose delivery failed: a finished one takes no move);
    from any other status, wherever its stages send it ("")."""
    return L.DELIVERED if status is L.DONE else ""


def workable(life: TaskLife) -> bool:
    """Whether the harness may work on the task: it is at a stage, and no person is due."""
    return not life.waiting and life.status in ENTRY


def held(plan: Plan, task: Task, life: TaskLife, full: bool) -> bool:
    """Whether a run leaves the task alone though its code says OPEN: a draft waits for a
    person's submit on any pipeline; a full-pipeline task the harness may not work on now (a
    question, a gate, a parked task) waits too, unless a person answered it in its file."""
    if life.status is L.DRAFT:
        return True
    return full and not workable(life) and not answered_by_hand(plan, task, life)


def answered_by_hand(plan: Plan, task: Task, life: TaskLife) -> bool:
    """A TaskTrack task a person answered in its file, as the spec's feedback procedure says
    (a Response below the Request, status OPEN), while its record still waits for them."""
    last = task.exchanges[-1] if task.exchanges else None
    return (
        plan.dialect is Dialect.TASKTRACK
        and life.waiting
        and task.status is Status.OPEN
        and last is not None
        and last.response is not None
    )


def plan_key(plan: Plan) -> str:
    """How the store names a plan's lifecycle records: its folder, resolved."""
    return str(plan.root.resolve())


def pipeline_of(task: Task, default: str) -> str:
    """The pipeline a task goes through: its own choice, else the plan's."""
    return task.pipeline or default


def current(store: LifecycleRows, plan: Plan, task: Task, default: str) -> TaskLife:
    """The task's lifecycle record; one not yet written starts where its pipeline starts."""
    found = store.life(plan_key(plan), task.id)
    return found if found is not None else starting(plan, task, default)


def starting(plan: Plan, task: Task, default: str) -> TaskLife:
    """The record of a task none was written for: at its pipeline's first status."""
    status = first_status(pipeline_of(task, default), task)
    return TaskLife(plan_key(plan), task.id, status, False, "", None, 0, 0, None, "")


def shows_as(life: TaskLife) -> Status:
    """The task's status in a dialect's five codes (TaskTrack files, task-status.json); done
    with its pull request due is a stage not yet started, OPEN (no Resolution yet)."""
    if finished(life):
        return Status.DONE
    if life.status is L.FAILED:
        return Status.FAIL
    if life.waiting or life.status in (L.NEEDS_INPUT, L.PARKED):
        return Status.WAIT
    return Status.OPEN


def first_status(pipeline: str, task: Task) -> Lifecycle:
    """Where a task the plan holds (no person wrote it as a draft) starts its life."""
    return L.SPEC if pipeline == "full" else L.READY


def after_plan(task: Task) -> Lifecycle:
    """Where an approved plan sends its task: a ui task to its prototype."""
    return L.PROTOTYPE if (task.kind or "") == "ui" else L.READY


def lands(move: Move, life: TaskLife, task: Task, pipeline: str) -> Lifecycle | None:
    """The status a move sends the task to (the board's column a drag onto it means); None
    for a move that leaves it where it is or sends it where its answer says."""
    match move:
        case Move.SUBMIT:
            return first_status(pipeline, task)
        case Move.APPROVE:
            return after_plan(task)
        case Move.REVISE:
            return L.PLAN
        case Move.ACCEPT:
            return L.READY
        case Move.REOPEN:  # a parked task to where it was parked from, a failed one afresh
            back = resumed(life.resume) if life.status is L.PARKED else None
            return back or first_status(pipeline, task)
        case Move.PARK:
            return L.PARKED
    return None


def resumed(name: str | None) -> Lifecycle | None:
    """The status a record says to return to (None: none, or a word of a later version)."""
    try:
        return Lifecycle(name) if name else None
    except ValueError:
        return None


def waits_for(life: TaskLife, questions: Iterable[Question] = ()) -> str:
    """What the task waits for, in a person's words ("" when it waits for no one)."""
    status = life.status
    if status is L.DRAFT:
        return "a person to submit the draft"
    if status is L.NEEDS_INPUT:
        open_ones = [q for q in questions if q.open]
        if open_ones:
            numbers = ", ".join(f"Q{q.number}" for q in open_ones)
            return f"an answer to {numbers}"
        return "a response to its request"
    if status is L.PLANNED and life.waiting:
        return "approval of the plan (or a revise)"
    if status is L.PROTOTYPE and life.waiting:
        return "review of the prototype (accept or comment)"
    if status in STOPPED:
        return f"a reopen ({life.reason or 'no reason recorded'})"
    return ""


def letter(index: int) -> str:
    return chr(ord("a") + index)
