"""The catalogue of a run's log: every kind of event, the payload each carries, and the stored
event row.

An event is stored as its kind and a JSON object of its payload's fields, in the order the
payload declares them. The store refuses a kind or a field the catalogue does not know;
`decode` turns a stored event into its typed payload, once, for whoever reads the log.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from enum import Enum, StrEnum
from typing import Any, TypeVar, get_type_hints

from taskhand.plan.model import Status
from taskhand.state.ledger import CaseNote, VerdictNote
from taskhand.state.life import Lifecycle
from taskhand.state.parallel_events import (
    AttemptRequeued,
    Gated,
    Gating,
    Held,
    Queued,
    Replayed,
)
from taskhand.state.records import Disposition, RunStatus
from taskhand.unit import Case, Role


class EventKind(StrEnum):
    RUN_STARTED = "run_started"
    RUN_RESUMED = "run_resumed"
    RUN_FINISHED = "run_finished"
    RUN_INTERRUPTED = "run_interrupted"  # a signal stopped it, resumably
    STEP = "step"  # a TaskTrack procedure step or exit message, verbatim
    WARNING = "warning"
    PLAN_CHANGED = "plan_changed"
    ATTEMPT_STARTED = "attempt_started"
    ATTEMPT_RESUMED = "attempt_resumed"  # a paused attempt goes on to its review
    ATTEMPT_PAUSED = "attempt_paused"  # a run cap stopped it before its review
    ATTEMPT_INTERRUPTED = "attempt_interrupted"
    ATTEMPT_FAILED = "attempt_failed"
    ATTEMPT_REJECTED = "attempt_rejected"
    ATTEMPT_REQUEUED = "attempt_requeued"  # another task's landing came first; not a failure
    UNIT_STARTED = "unit_started"
    UNIT_FINISHED = "unit_finished"
    GATE = "gate"
    VERDICT = "verdict"
    REVIEW_FAILED = "review_failed"  # a reviewer gave no verdict
    REVIEWER_WRITE_VIOLATION = "reviewer_write_violation"  # a reviewer changed the candidate
    INTEGRATED = "integrated"
    TASK_CONCLUDED = "task_concluded"
    TASK_REOPENED = "task_reopened"
    TASK_ANSWERED = "task_answered"
    OUTSIDE_CHANGE = "outside_change"  # a change past the workspaces under the sandbox
    VIOLATION = "violation"  # a run branch was moved; it was put back
    TASK_MOVED = "task_moved"  # a task's lifecycle status changed, by the harness or a person
    QUESTION_ASKED = "question_asked"  # the interview: a question with lettered options
    DELIVERED = "delivered"  # a pull request is open for a task (or for the run)
    REPLAYED = "replayed"  # a candidate replayed onto a run branch that moved since its base
    # The merge queue (pipeline/queue.py): a candidate joins it, its checks run on the tree it
    # would land as (the run branch and the candidates ahead of it), and it leaves by landing
    # (integrated), by a requeue, or by its attempt's end.
    QUEUED = "queued"
    GATING = "gating"
    GATED = "gated"
    TASK_HELD = "task_held"  # an eligible task waits: it may change what a running task changes
    DISPOSED = "disposed"  # the harness recorded a result's disposition (integrated, superseded)
    WORKSPACE_PRUNED = "workspace_pruned"  # an ended attempt's rebuildable folders were removed


@dataclass(frozen=True)
class Event:
    """One entry of a run's log as stored: `data` holds its payload's fields."""

    id: int
    run_id: str
    ts: str
    kind: EventKind
    task_id: str | None
    data: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        """The event as events.jsonl and `--json` show it: the payload beside id and time."""
        head = {"id": self.id, "ts": self.ts, "kind": self.kind.value, "task_id": self.task_id}
        return {**head, **self.data}


# The payloads. Fields are as the runner emits them; a field later versions added has a
# default, so that events older runs logged without it still decode.


@dataclass(frozen=True)
class RunStarted:
    plan: str
    base: str
    branch: str
    agent: str
    snapshot: str = ""  # the ref keeping the base, when it is a snapshot of the checkout


@dataclass(frozen=True)
class RunResumed:
    plan: str


@dataclass(frozen=True)
class RunFinished:
    status: RunStatus
    message: str


@dataclass(frozen=True)
class RunInterrupted:
    signal: str  # its name: SIGINT, SIGTERM, SIGHUP


@dataclass(frozen=True)
class Message:
    """A step, a warning, or why the plan was read again."""

    message: str


@dataclass(frozen=True)
class AttemptStarted:
    attempt: int
    start: str = ""  # the commit its workspace starts from


@dataclass(frozen=True)
class AttemptNumber:
    """An attempt resumed or interrupted."""

    attempt: int


@dataclass(frozen=True)
class AttemptPaused:
    attempt: int
    case: CaseNote  # the worker's case, which its review reads when the run goes on
    stage: str = "review"  # the stage it goes on at; runs before pipelines paused only there


@dataclass(frozen=True)
class AttemptEnded:
    """An attempt failed or rejected, and why."""

    reason: str


@dataclass(frozen=True)
class UnitStarted:
    role: Role
    attempt: int
    lens: str = ""  # a reviewer's lens; "" for the worker


@dataclass(frozen=True)
class UnitFinished:
    role: Role
    case: Case
    seconds: float
    tokens_in: int
    tokens_out: int
    cost: float


@dataclass(frozen=True)
class GateChecked:
    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class ReviewFailed:
    lens: str
    reason: str


@dataclass(frozen=True)
class ReviewerWrote:
    """A reviewer changed the candidate's workspace; its verdict does not count."""

    lens: str
    changes: list[str]


@dataclass(frozen=True)
class Integrated:
    sha: str


@dataclass(frozen=True)
class TaskConcluded:
    status: Status
    text: str


@dataclass(frozen=True)
class TaskReopened:
    by: str  # who reopened it: a command, or an edit of the plan files


@dataclass(frozen=True)
class TaskAnswered:
    response: str


@dataclass(frozen=True)
class OutsideChange:
    during: str
    changes: list[str]


@dataclass(frozen=True)
class Violation:
    what: str


@dataclass(frozen=True)
class TaskMoved:
    before: Lifecycle
    after: Lifecycle
    waiting: bool  # a person's move is due now
    by: str  # "harness", or the person's move (approve, revise, ...)
    reason: str = ""


@dataclass(frozen=True)
class QuestionAsked:
    number: int
    text: str
    options: list[str]
    stage: str  # the status the task returns to once no question is open


@dataclass(frozen=True)
class Delivered:
    url: str  # the pull request's address
    branch: str
    base: str  # the branch it goes into


@dataclass(frozen=True)
class Disposed:
    attempt: int  # the result's attempt number
    status: Disposition
    target_ref: str
    sha: str  # the result's commit


@dataclass(frozen=True)
class Pruned:
    attempt: int
    bytes: int  # what the disk got back
    folders: list[str]  # the folders removed, relative to the workspace
    dropped: list[str] = field(default_factory=list)  # the files [setup] copied in


Payload = (
    RunStarted
    | RunResumed
    | RunFinished
    | RunInterrupted
    | Message
    | AttemptStarted
    | AttemptNumber
    | AttemptPaused
    | AttemptEnded
    | AttemptRequeued
    | UnitStarted
    | UnitFinished
    | GateChecked
    | VerdictNote
    | ReviewFailed
    | ReviewerWrote
    | Integrated
    | TaskConcluded
    | TaskReopened
    | TaskAnswered
    | OutsideChange
    | Violation
    | TaskMoved
    | QuestionAsked
    | Delivered
    | Replayed
    | Queued
    | Gating
    | Gated
    | Held
    | Disposed
    | Pruned
)

P = TypeVar("P", bound=Payload)

# The catalogue: the payload of each kind of event.
PAYLOADS: dict[EventKind, type[Payload]] = {
    EventKind.RUN_STARTED: RunStarted,
    EventKind.RUN_RESUMED: RunResumed,
    EventKind.RUN_FINISHED: RunFinished,
    EventKind.RUN_INTERRUPTED: RunInterrupted,
    EventKind.STEP: Message,
    EventKind.WARNING: Message,
    EventKind.PLAN_CHANGED: Message,
    EventKind.ATTEMPT_STARTED: AttemptStarted,
    EventKind.ATTEMPT_RESUMED: AttemptNumber,
    EventKind.ATTEMPT_PAUSED: AttemptPaused,
    EventKind.ATTEMPT_INTERRUPTED: AttemptNumber,
    EventKind.ATTEMPT_FAILED: AttemptEnded,
    EventKind.ATTEMPT_REJECTED: AttemptEnded,
    EventKind.ATTEMPT_REQUEUED: AttemptRequeued,
    EventKind.QUEUED: Queued,
    EventKind.GATING: Gating,
    EventKind.GATED: Gated,
    EventKind.UNIT_STARTED: UnitStarted,
    EventKind.UNIT_FINISHED: UnitFinished,
    EventKind.GATE: GateChecked,
    EventKind.VERDICT: VerdictNote,  # the ledger keeps the same shape
    EventKind.REVIEW_FAILED: ReviewFailed,
    EventKind.REVIEWER_WRITE_VIOLATION: ReviewerWrote,
    EventKind.INTEGRATED: Integrated,
    EventKind.TASK_CONCLUDED: TaskConcluded,
    EventKind.TASK_REOPENED: TaskReopened,
    EventKind.TASK_ANSWERED: TaskAnswered,
    EventKind.OUTSIDE_CHANGE: OutsideChange,
    EventKind.VIOLATION: Violation,
    EventKind.TASK_MOVED: TaskMoved,
    EventKind.QUESTION_ASKED: QuestionAsked,
    EventKind.DELIVERED: Delivered,
    EventKind.REPLAYED: Replayed,
    EventKind.TASK_HELD: Held,
    EventKind.DISPOSED: Disposed,
    EventKind.WORKSPACE_PRUNED: Pruned,
}


def check(kind: str, data: dict[str, Any]) -> EventKind:
    """`kind` as an EventKind, when it is one and `data` holds exactly its payload's fields
    (those with a default may be left out); else a ValueError saying what is wrong."""
    try:
        known = EventKind(kind)
    except ValueError:
        raise ValueError(f"no event kind {kind!r} in the catalogue") from None
    shape = fields(PAYLOADS[known])
    names = {f.name for f in shape}
    required = {f.name for f in shape if f.default is MISSING and f.default_factory is MISSING}
    unknown, missing = sorted(set(data) - names), sorted(required - set(data))
    if unknown or missing:
        raise ValueError(
            f"{known} events have the fields {sorted(names)} (got unknown {unknown}, "
            f"missing {missing})"
        )
    return known


def decode(event: Event) -> Payload:
    """The typed payload of a stored event."""
    shape = PAYLOADS[event.kind]
    if shape is VerdictNote:
        return VerdictNote.from_json(event.data)
    hints = _hints(shape)
    return shape(**{name: _typed(hints[name], value) for name, value in event.data.items()})


def decode_as(event: Event, shape: type[P]) -> P:
    """The payload of an event whose kind carries a `shape`: a TypeError if it does not."""
    payload = decode(event)
    if not isinstance(payload, shape):
        carried = PAYLOADS[event.kind].__name__
        raise TypeError(f"{event.kind} events carry {carried}, not {shape.__name__}")
    return payload


_HINTS: dict[type, dict[str, Any]] = {}  # each payload's field types, resolved when first read


def _hints(shape: type) -> dict[str, Any]:
    if shape not in _HINTS:
        _HINTS[shape] = get_type_hints(shape)
    return _HINTS[shape]


def _typed(hint: Any, value: Any) -> Any:
    """A JSON value as the field's type: a word as its enum, an object as its note."""
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(value)
    if hint is CaseNote:
        return CaseNote.from_json(value)
    return value
