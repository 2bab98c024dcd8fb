"""The desk a person's move is made at: the plan read under the lock of its files, the status
book of its latest run, each task's standing, and the one way a move lands (the lifecycle
record, the dialect's status with its Request or Response, the run's log). A refusal is one
line naming the moves that are open.

Moves never take the run's plan lock, which a supervisor holds for long: they refuse a task a
unit works on, and otherwise land between a run's steps, under the short lock of the files.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskhand.errors import UserError
from taskhand.pipeline import lifecycle, prototype, standing
from taskhand.pipeline.lifecycle import Move
from taskhand.pipeline.standing import Standing
from taskhand.plan import formats, validate
from taskhand.plan.model import Plan, Status, Task
from taskhand.plan.problems import NO_TASKS, display_path
from taskhand.run import lookup
from taskhand.state import documents, lock
from taskhand.state.documents import Documents
from taskhand.state.events import EventKind
from taskhand.state.life import Lifecycle, TaskLife
from taskhand.state.paths import StateDir
from taskhand.state.records import Run, RunStatus
from taskhand.state.status import StatusBook
from taskhand.state.store import Store
from taskhand.text import printable
from taskhand.workspace import git

L = Lifecycle
ANSWER = '"..."'  # where a person's words go in a suggested command
_KEEP: Any = ...  # leave the record's column as it is
# How each move reads as a suggested command, after `taskhand MOVE TASK`.
_ARGUMENTS = {
    Move.ANSWER: "Q1 a",
    Move.RESPOND: ANSWER,
    Move.REVISE: '"what to change"',
    Move.COMMENT: ANSWER,
    Move.PARK: '"why"',
}


class MoveError(UserError):
    """A move that cannot be made now; the message is one line with the moves that can."""


@dataclass(frozen=True)
class Moved:
    """What a move did, for the person who made it (and a board)."""

    task: str
    move: Move
    before: Lifecycle
    after: Lifecycle
    waiting: bool  # a person's move is due now
    status: Status  # how the dialect shows the task now
    next: str  # the command that takes the task on; "" when none is needed (`taken_up_by`)
    plan: str  # the plan as a command line names it
    run_id: str | None  # the plan's latest run; None: no run recorded yet
    file: str | None = None  # the task file a `new` wrote
    taken_up_by: str = ""  # what goes on with it by itself: a run under way, a supervisor

    def as_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "move": str(self.move),
            "before": str(self.before),
            "after": str(self.after),
            "waiting": self.waiting,
            "status": str(self.status),
            "next": self.next,
            "plan": self.plan,
            "run": self.run_id,
            "file": self.file,
        }


def shown_plan(path: Path) -> str:
    """The plan folder as a person would type it in a command."""
    return shlex.quote(display_path(path))


def command(move: Move, task_id: str, plan: str, question: int = 1) -> str:
    """The command line that makes `move` on the task (an answer: to question `question`)."""
    arguments = f"Q{question} a" if move is Move.ANSWER else _ARGUMENTS.get(move, "")
    return " ".join(x for x in ("taskhand", str(move), task_id, arguments, plan) if x)


@dataclass
class Desk:
    """One plan's tasks, their statuses and records, as one move reads and writes them."""

    plan: Plan
    state: StateDir
    store: Store
    run: Run | None
    book: StatusBook
    alive: bool  # a run holds the plan now (a supervisor's, or one working on another task)
    pipeline: str  # the plan's; a task may choose its own
    shown: str
    watched: bool = False  # a supervisor (run --watch, a board) keeps the plan going, idle or not

    @property
    def key(self) -> str:
        return lifecycle.plan_key(self.plan)

    @property
    def documents(self) -> Documents:
        return Documents(self.plan, self.state)

    def task(self, task_id: str, move: Move) -> tuple[Task, Standing]:
        """The task and where it stands; a MoveError naming the ids when there is none."""
        found = self.plan.task(task_id)
        if found is None:
            ids = [t.id for t in self.plan.tasks]
            listed = ", ".join(ids[:10]) + (", ..." if len(ids) > 10 else "")
            what = formats.unknown_task(self.plan, task_id, display_path(self.plan.root))
            raise MoveError(f"{printable(what)} (fix: {move} one of {listed})")
        return found, self.standings()[found.id]

    def standings(self) -> dict[str, Standing]:
        statuses = self.book.statuses()
        known = standing.known_statuses(self.book)
        return standing.standings(self.plan, statuses, known, self.store, self.alive, self.pipeline)

    def check(self, move: Move, where: Standing, why: str = "") -> None:
        """Refuse a move on a task a unit works on, or one its status does not open."""
        task_id = where.task_id
        if where.working:
            raise MoveError(
                f"{task_id} is being worked on: a unit of the run under way is on it "
                f"(fix: wait until it ends, then move it; taskhand show {self.shown} {task_id} "
                "says when it is free)"
            )
        if move in where.moves:
            return
        raise MoveError(
            f"{task_id} is {describe(where)}: {why or f'{move} is not open there'}"
            f" (fix: {self.open_moves(where)})"
        )

    def open_moves(self, where: Standing) -> str:
        if where.moves:
            first = next((q.number for q in where.open_questions), 1)
            listed = "; ".join(command(m, where.task_id, self.shown, first) for m in where.moves)
            return f"the moves open are: {listed}"
        if lifecycle.finished(where.life):
            return "none: it is finished"
        return f"none now; taskhand show {self.shown} {where.task_id} says what it waits for"

    def land(
        self,
        task: Task,
        before: Standing,
        move: Move,
        after: Lifecycle,
        *,
        waiting: bool = False,
        resume: Any = _KEEP,
        reason: str | None = None,
        response: str = "",
        request: str = "",
    ) -> Moved:
        """Make the move: the lifecycle record, the dialect's status (a Response to the open
        Request when `response`, a new Request when the task now waits), and the run's log."""
        options: dict[str, Any] = {} if resume is _KEEP else {"resume": resume}
        life = self.store.set_life(
            self.key, task.id, after, waiting=waiting, reason=reason, **options
        )
        status = target = lifecycle.shows_as(life)
        if response or not standing.agrees(life, before.status):
            if target is Status.WAIT:
                request = request or self.request_for(task, life)
            self.book.move(task.id, target, response=response, request=request)
        else:
            status = before.status  # a stage under way stays BUSY; nothing to write
        if self.run is not None:
            self.store.event(
                self.run.id,
                EventKind.TASK_MOVED,
                task.id,
                before=before.life.status,
                after=life.status,
                waiting=life.waiting,
                by=str(move),
                reason=reason or "",
            )
        then = self.next_command(task, life)
        return Moved(
            task.id,
            move,
            before.life.status,
            life.status,
            life.waiting,
            status,
            then,
            self.shown,
            self.run.id if self.run else None,
            taken_up_by="" if then or life.status is L.DELIVERED else self.taker(),
        )

    def taker(self) -> str:
        """What takes a workable task up by itself now: a run under way, else a supervisor."""
        if self.alive:
            return "the run under way"
        return "the supervisor (taskhand run --watch)" if self.watched else ""

    def request_for(self, task: Task, life: TaskLife) -> str:
        """What a waiting task's Request asks of a person, by its status."""
        how = f"taskhand show {self.shown} {task.id}"
        if life.status is L.PARKED:
            return (
                f"Parked: {(life.reason or 'no reason given').rstrip('.')}. To go on: "
                f"{command(Move.REOPEN, task.id, self.shown)}."
            )
        if life.status is L.PLANNED:
            where = self.documents.where(task, documents.PLAN)
            return (
                f"Approve the plan ({where}): {command(Move.APPROVE, task.id, self.shown)}, "
                f"or ask for changes: {command(Move.REVISE, task.id, self.shown)}."
            )
        if life.status is L.PROTOTYPE:
            shots = prototype.pictures_left(self.documents.folder(task.id))
            return (
                f"Review the prototype ({shots}, in {documents.ARTIFACTS}): "
                f"{command(Move.ACCEPT, task.id, self.shown)}, or "
                f"{command(Move.COMMENT, task.id, self.shown)} for another round."
            )
        asked = [q for q in self.store.questions(self.key, task.id) if q.open]
        if asked:
            return " ".join(documents.request_text(q, task.id) for q in asked)
        earlier = [e.request for e in task.exchanges]
        return earlier[-1] if earlier else f"Answer the task's question ({how})."

    def next_command(self, task: Task, life: TaskLife) -> str:
        """What takes the task on from here: a person's move, or a run."""
        if life.waiting or life.status is L.DRAFT:
            asked = [q.number for q in self.store.questions(self.key, task.id) if q.open]
            found = lifecycle.moves(life, False, len(asked))
            first = asked[0] if asked else 1
            return command(found[0], task.id, self.shown, first) if found else ""
        if lifecycle.finished(life) or self.taker():
            return ""  # finished, or taken up by what keeps the plan going
        if self.run is not None and self.run.status is not RunStatus.COMPLETED:
            return f"taskhand resume {self.run.id}"
        return f"taskhand run {self.shown}"


def describe(where: Standing) -> str:
    """A task's status as a person reads it: the five codes for the default pipeline."""
    if where.pipeline == standing.DEFAULT and where.life.status is not L.PARKED:
        shown = str(where.status)
    else:
        shown = str(where.life.status)
    waits = where.waits_for
    return f"{shown}, waiting for {waits}" if waits else shown


@contextmanager
def desk(
    move: Move, plan_path: Path | None, repo: Path | None, *, durable: bool = True
) -> Iterator[Desk]:
    """The plan (default: the plan of the repository's latest run) and its latest run's
    book, all under the lock of the plan's files. Without a state database, one is made only
    when the move is `durable` (a lifecycle record must outlive it); else the move has the
    files alone to change (a TaskTrack plan no run has recorded)."""
    path = plan_path if plan_path is not None else _latest_plan(move, repo)
    folder = formats.plan_folder(path)
    if not folder.is_dir():
        validate.validate(path).require()  # says what is wrong with the path
    with lock.files(folder):
        plan = _plan(path, move)
        state = StateDir.for_repo(git.repo_for(plan.root, repo))
        where = state.database if durable or state.database.exists() else Path(":memory:")
        with Store.open(where) as store:
            run = store.latest_run(lifecycle.plan_key(plan))
            yield Desk(
                plan,
                state,
                store,
                run,
                StatusBook(plan, store, run.id if run else ""),
                lock.holder(state.lock(plan.root)) is not None,
                standing.plan_pipeline(plan.root, run),
                shown_plan(plan.root),
                lock.holder(state.watch_lock(plan.root)) is not None,
            )


def _plan(path: Path, move: Move) -> Plan:
    """The plan the move works on; for `new`, also one that has only its overview yet."""
    report = validate.validate(path)
    empty = report.errors and all(p.rule == NO_TASKS for p in report.errors)
    if move is Move.NEW and report.plan is not None and empty:
        return report.plan
    return report.require()


def _latest_plan(move: Move, repo: Path | None) -> Path:
    root, run = lookup.latest(repo)
    if run is not None:
        return Path(run.plan_path)
    raise MoveError(
        f"no runs in {root} to take the plan from (fix: name it: taskhand {move} TASK ... PLAN)"
    )
