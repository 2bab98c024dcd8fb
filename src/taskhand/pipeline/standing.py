"""Where each task stands for a person: its lifecycle record, reconciled with the status its
dialect shows, whether a unit works on it now, its questions, what it waits for and the moves
open to a person. The moves (run/moves.py) and `show` read it alike, from the one table of
`lifecycle`.

A default-pipeline task's five-code status is its truth (a person may edit a TaskTrack file,
and a run of the default pipeline concludes in those codes); a full-pipeline task's lifecycle
record is, once the harness or a person wrote one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from taskhand.pipeline import lifecycle
from taskhand.pipeline.lifecycle import STOPPED, Move
from taskhand.plan.model import Dialect, Plan, Status, Task
from taskhand.state.life import Lifecycle, Question, TaskLife

if TYPE_CHECKING:
    from taskhand.state.records import Run, UnitRow
    from taskhand.state.status import StatusBook
    from taskhand.state.store import Store

DEFAULT, FULL = "default", "full"
SETTINGS = "taskhand.toml"  # config.FILE, named here so that a plan without one loads no config
# What a dialect's status says of a task whose record does not agree with it.
_FROM_STATUS = {
    Status.WAIT: Lifecycle.NEEDS_INPUT,
    Status.DONE: Lifecycle.DONE,
    Status.FAIL: Lifecycle.FAILED,
}


@dataclass(frozen=True)
class Standing:
    """One task as a person sees it now."""

    task_id: str
    pipeline: str  # default or full: the stages it goes through
    life: TaskLife
    status: Status  # the dialect's five-code status as it stands
    working: bool  # a unit works on it now: every move waits
    questions: tuple[Question, ...]
    task: Task | None = None  # the plan's task (its kind says where an approval lands)
    cost: float = 0.0  # dollars its units spent in the plan's latest run
    unit: UnitRow | None = None  # the unit working on it now
    held: bool = False  # a run leaves it alone though its code may say OPEN (lifecycle.held)
    artifacts: str = ""  # the folder of what its stages left (spec, plan, pictures), once run

    @property
    def open_questions(self) -> list[Question]:
        return [q for q in self.questions if q.open]

    @property
    def waiting(self) -> bool:
        """A person's move is due: the record says so, or the task is a draft to submit."""
        return self.life.waiting or self.life.status is Lifecycle.DRAFT

    @property
    def moves(self) -> list[Move]:
        return lifecycle.moves(self.life, self.working, len(self.open_questions))

    @property
    def lands(self) -> dict[Move, Lifecycle]:
        """Where each open move that changes the status sends the task (a board's drop)."""
        if self.task is None:
            return {}
        found = {m: lifecycle.lands(m, self.life, self.task, self.pipeline) for m in self.moves}
        return {m: at for m, at in found.items() if at is not None}

    @property
    def beyond_codes(self) -> bool:
        """Whether its lifecycle says more than its five codes: a full-pipeline task's, or a
        default-pipeline task a person drafted or parked."""
        return self.pipeline == FULL or self.life.status in (Lifecycle.DRAFT, Lifecycle.PARKED)

    @property
    def waits_for(self) -> str:
        return "" if self.working else lifecycle.waits_for(self.life, self.questions)

    def as_json(self) -> dict[str, Any]:
        return {
            "lifecycle": str(self.life.status),
            "pipeline": self.pipeline,
            "waiting": self.waiting,
            "waits_for": self.waits_for,
            "moves": [str(m) for m in self.moves],
            "lands": {str(m): str(at) for m, at in self.lands.items()},
            "working": self.working,
            "unit": _working_unit(self.unit) if self.working else None,
            "cost": round(self.cost, 6),
            "questions": [
                {
                    "number": q.number,
                    "text": q.text,
                    "options": q.options,
                    "open": q.open,
                    "choice": q.choice,
                    "note": q.note,
                }
                for q in self.questions
            ],
            "pr": self.life.pr,
            "artifacts": self.artifacts or None,
        }


def agrees(life: TaskLife, status: Status) -> bool:
    """Whether the dialect's status is how the record shows (BUSY: any stage under way)."""
    if status is Status.BUSY:
        stopped = life.status in (*STOPPED, Lifecycle.DRAFT)
        return not life.waiting and not stopped and not lifecycle.finished(life)
    return lifecycle.shows_as(life) is status


def reconcile(life: TaskLife, status: Status | None, pipeline: str, task: Task) -> TaskLife:
    """The record, unless the dialect's recorded status (None: it records none) says
    otherwise and the record is not the truth: a default-pipeline task's, or none written."""
    if status is None or agrees(life, status):
        return life
    if pipeline == FULL and life.updated:
        return life
    if status in _FROM_STATUS:
        found = _FROM_STATUS[status]
        reason = task.failure if status is Status.FAIL else life.reason
        return replace(life, status=found, waiting=status is Status.WAIT, reason=reason)
    first = lifecycle.first_status(pipeline, task)
    at = Lifecycle.IMPLEMENTING if status is Status.BUSY and pipeline == DEFAULT else first
    return replace(life, status=at, waiting=False, reason=None)


def known_statuses(book: StatusBook) -> dict[str, Status]:
    """The statuses a dialect records: every TaskTrack file's; a Markdown task's once its
    plan's latest run recorded one (before that, its lifecycle record is all there is)."""
    if book.in_files:
        return book.statuses()
    if not book.run_id:
        return {}
    return {t: s.status for t, s in book.store.task_states(book.run_id).items()}


def standings(
    plan: Plan,
    statuses: Mapping[str, Status],
    known: Mapping[str, Status],
    store: Store | None,
    alive: bool,
    pipeline: str,
) -> dict[str, Standing]:
    """Every task's standing. `statuses`: as the plan's latest run shows them; `known`: those
    the dialect records; `alive`: a run holds the plan now; `pipeline`: the plan's."""
    key = lifecycle.plan_key(plan)
    lives = store.lives(key) if store is not None else {}
    units = _units(store, key)
    found = {}
    for task in plan.tasks:
        own = lifecycle.pipeline_of(task, pipeline)
        record = lives.get(task.id) or lifecycle.starting(plan, task, own)
        life = reconcile(record, known.get(task.id), own, task)
        asked = store.questions(key, task.id) if store is not None and task.id in lives else []
        status = statuses.get(task.id, task.status)
        working = alive and status is Status.BUSY
        spent = units.get(task.id, [])
        running = [u for u in spent if u.ended is None]
        found[task.id] = Standing(
            task.id, own, life, status, working, tuple(asked), task,
            cost=sum(u.cost for u in spent), unit=running[-1] if running else None,
            held=lifecycle.held(plan, task, life, own == FULL),
        )  # fmt: skip
    return found


def scheduled(statuses: Mapping[str, Status], found: Mapping[str, Standing]) -> dict[str, Status]:
    """The statuses a run's screen goes by (run/lifecycle.py `screened`), for `show` and
    `next`: a task shown OPEN that a run leaves alone (a draft, a gate) counts as waiting, a
    finished one as done. So a script looping on `next` ends where a run would."""
    shown = dict(statuses)
    for task_id, where in found.items():
        if shown.get(task_id) is Status.OPEN and where.held:
            shown[task_id] = Status.DONE if lifecycle.finished(where.life) else Status.WAIT
    return shown


def plan_pipeline(plan_root: Path, run: Run | None) -> str:
    """The plan's pipeline as its next run takes it: its taskhand.toml's, else the one its
    latest run was started with, else the default."""
    chosen = run.config.get("pipeline") if run else ""
    if (plan_root / SETTINGS).is_file():  # the settings' reader loads only for a plan with some
        from taskhand.config import read_file

        chosen = read_file(plan_root).get("pipeline") or chosen
    return str(chosen or DEFAULT)


def _units(store: Store | None, key: str) -> dict[str, list[UnitRow]]:
    """The units of the plan's latest run, by task, in the order they started."""
    run = store.latest_run(key) if store is not None else None
    if store is None or run is None:
        return {}
    found: dict[str, list[UnitRow]] = {}
    for unit in store.units(run.id):
        found.setdefault(unit.task_id, []).append(unit)
    return found


def _working_unit(unit: UnitRow | None) -> dict[str, Any] | None:
    if unit is None:
        return None
    # The id reads the unit's transcript as it goes (the board's Live dock).
    return {"id": unit.id, "role": str(unit.role), "agent": unit.agent, "started": unit.started}


def read(
    plan: Plan, overlay: Mapping[str, Status] | None = None, repo: Path | None = None
) -> tuple[dict[str, Status], dict[str, Standing]]:
    """For `show`: the plan's statuses as its latest run left them (questions and answers
    attached to a Markdown plan's tasks), `overlay` over them, and each task's standing. The
    store is opened only when the repository has one."""
    from taskhand.state.paths import StateDir
    from taskhand.workspace import git

    overlay = dict(overlay or {})
    try:
        state: StateDir | None = StateDir.for_repo(git.repo_for(plan.root, repo))
    except git.GitError:  # a plan outside any repository has never run
        state = None
    if state is None or not state.database.exists():
        statuses = {**plan.statuses(), **overlay}
        recorded = plan.statuses() if plan.dialect is Dialect.TASKTRACK else {}
        pipeline = _pipeline(plan, None)
        return statuses, standings(plan, statuses, {**recorded, **overlay}, None, False, pipeline)
    # Loaded only for a plan that has run: `show` of a new plan needs none of these.
    from taskhand.state import lock
    from taskhand.state.status import StatusBook
    from taskhand.state.store import Store

    with Store.open(state.database) as store:
        run = store.latest_run(lifecycle.plan_key(plan))
        book = StatusBook(plan, store, run.id if run else "")
        statuses = {**book.statuses(), **overlay}
        known = {**known_statuses(book), **overlay}
        alive = lock.holder(state.lock(plan.root)) is not None
        pipeline = _pipeline(plan, run)
        found = standings(plan, statuses, known, store, alive, pipeline)
    found = {t: replace(s, artifacts=str(state.artifacts(plan.root, t))) for t, s in found.items()}
    # A task its dialect records no status for yet shows as its lifecycle record does.
    shown = {t: known.get(t) or lifecycle.shows_as(s.life) for t, s in found.items()}
    return shown, found


def _pipeline(plan: Plan, run: Run | None) -> str:
    recorded = str(run.config.get("pipeline", DEFAULT)) if run else DEFAULT
    if not (plan.root / SETTINGS).is_file():
        return plan_pipeline(plan.root, run)
    from taskhand.config import SettingsError

    try:
        return plan_pipeline(plan.root, run)
    except SettingsError:  # `validate` reports the file; `show` still shows the plan
        return recorded
