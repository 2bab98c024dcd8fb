"""The rows of the state store as plain data (runs, task states, attempts, units, gates, the
integration ledger's dispositions and worker verdicts) and the words their status columns
hold. Events are in `events`, the ledger of attempts in `ledger`.

Readers of the store (the runner, the CLI, exports) work with these; only `store` writes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from taskhand.plan.model import Status
from taskhand.unit import Case, Role, Usage


class RunStatus(StrEnum):
    """Where a run stands: running, or how it ended (every end but completed resumes)."""

    RUNNING = "running"
    COMPLETED = "completed"  # every task is DONE
    FAILED = "failed"  # no task can go on and some failed
    WAITING = "waiting"  # no task can go on and some wait for an answer
    STOPPED = "stopped"  # nothing is eligible, or an agent reached past its workspace
    CAPPED = "capped"  # a run cap (time, tokens, dollars) was reached
    INTERRUPTED = "interrupted"  # a signal stopped it, or its process was found gone


class AttemptStatus(StrEnum):
    """Where an attempt stands: running, or how it ended."""

    RUNNING = "running"
    PASSED = "passed"  # accepted and integrated
    FAILED = "failed"  # its unit or its checks failed: the task may try again
    REJECTED = "rejected"  # a reviewer rejected it: the task may try again
    QUESTION = "question"  # the agent asked a person; the task waits
    GAVE_UP = "gave_up"  # the agent gave up: the task fails
    REVIEW_FAILED = "review_failed"  # no reviewer could judge it: the task fails
    CAPPED = "capped"  # the task's budget ran out: the task fails
    VIOLATION = "violation"  # an agent reached past its workspace: the task fails
    AWAITING = "awaiting"  # it reached a person's gate (a plan to approve, a prototype to review)
    PAUSED = "paused"  # a run cap stopped it before its review; a resumed run goes on with it
    INTERRUPTED = "interrupted"  # the run stopped under it; the task's next try redoes it
    # Another task's landing came first and its candidate could not land on top of it (a
    # conflict, or checks that failed only there): the task goes again from the new head,
    # not counted against max_attempts (max_requeues caps it).
    REQUEUED = "requeued"


class Disposition(StrEnum):
    """What became of a result (an ended attempt that left a candidate commit): exactly one
    per result, recorded by the harness or by a person or CI, never changed."""

    INTEGRATED = "integrated"  # it landed on its target ref
    REJECTED = "rejected"  # someone decided it does not land
    SUPERSEDED = "superseded"  # a later result of the same task landed instead


HARNESS = "harness"  # who recorded a disposition that the run itself made


class WorkerOutcome(StrEnum):
    """The verdict on the worker (the attempt's implementer) when its attempt ended."""

    ACCEPTED = "accepted"  # its candidate passed every check and review
    REJECTED = "rejected"  # a reviewer (or qa, or the judge) turned it down
    FAILED = "failed"  # its unit or the checks failed
    GAVE_UP = "gave_up"
    ASKED = "asked"  # it asked a person a question
    CAPPED = "capped"  # the task's budget ran out under it
    VIOLATION = "violation"  # it reached past its workspace
    UNJUDGED = "unjudged"  # no reviewer could judge its candidate
    # Its candidate could not land on top of another task's landing (a conflict, or checks
    # that failed only there): not the worker's doing.
    CONFLICTED = "conflicted"


class DeliveryState(StrEnum):
    """Where one delivery stands. Its row is written before and after each step outside
    (the push, the pull request), so a run killed in between goes on without a second PR."""

    PENDING = "pending"  # begun: branch and base chosen, nothing pushed yet
    PUSHED = "pushed"  # the branch is on the remote; a pull request may exist: ask first
    OPENED = "opened"  # the pull request is open and its address recorded
    FAILED = "failed"  # a step failed, the reason says which; a retry starts over


@dataclass(frozen=True)
class DeliveryRow:
    """One delivery of a run: a task's pull request, or the run's own (task_id "")."""

    run_id: str
    task_id: str
    branch: str
    base: str  # the branch the pull request goes into: the base, or a stacked PR's below
    pr_url: str
    state: DeliveryState
    reason: str
    updated: str


@dataclass(frozen=True)
class DispositionRow:
    """One result's disposition, with the attempt it belongs to."""

    id: int
    attempt_id: int
    run_id: str
    task_id: str
    attempt: int  # the attempt's number within the run
    candidate_sha: str  # the result
    status: Disposition
    target_ref: str  # where it landed (integrated), or the ref it was judged against; or ""
    target_sha: str  # that ref's commit holding it when recorded; or ""
    recorded_by: str  # "harness", or the person or CI that said so
    recorded: str
    note: str


@dataclass(frozen=True)
class WorkerVerdict:
    """The verdict on one attempt's worker: who it was, how its attempt ended, what it cost."""

    attempt_id: int
    run_id: str
    task_id: str
    attempt: int  # the attempt's number within the run
    agent: str
    model: str | None
    attempts: int  # the worker's tries at the task so far, this one included (kills not counted)
    outcome: WorkerOutcome
    tokens_in: int
    tokens_out: int
    dollars: float
    recorded: str


@dataclass(frozen=True)
class Run:
    id: str
    plan_path: str
    dialect: str
    repo: str
    base_sha: str
    run_branch: str
    status: RunStatus
    reason: str | None
    created: str
    updated: str
    config: dict[str, Any]


@dataclass(frozen=True)
class TaskState:
    run_id: str
    task_id: str
    status: Status
    reason: str | None
    updated: str
    counted_from: int  # a reopened task's caps count the attempts numbered above this


@dataclass(frozen=True)
class Attempt:
    id: int
    run_id: str
    task_id: str
    number: int
    worktree: str
    branch: str
    base_sha: str
    candidate_sha: str | None
    status: AttemptStatus
    reason: str | None
    started: str
    ended: str | None


@dataclass(frozen=True)
class UnitRow:
    id: int
    attempt_id: int
    run_id: str
    task_id: str
    role: Role
    agent: str
    model: str | None
    started: str
    ended: str | None
    tokens_in: int
    tokens_out: int
    tokens_cached: int
    cost: float
    cost_estimated: bool
    outcome: Case | None  # None while the unit runs
    transcript: str | None
    prompt_bytes: int
    prompt_tokens: int  # estimated from the prompt's bytes
    lens: str  # an evaluator's review focus; "" for other roles
    tokens_cache_write: int = 0  # parts of tokens_in and tokens_out, as the agent reported
    tokens_thinking: int = 0

    @property
    def usage(self) -> Usage:
        return Usage(
            self.tokens_in,
            self.tokens_out,
            self.tokens_cached,
            self.cost,
            self.cost_estimated,
            self.tokens_cache_write,
            self.tokens_thinking,
        )


@dataclass(frozen=True)
class Gate:
    id: int
    attempt_id: int
    name: str
    ok: bool
    detail: str
    exit_code: int | None
    seconds: float | None
    output: str
