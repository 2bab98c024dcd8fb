"""The rows of the state store as plain data (runs, task states, attempts, units, gates) and
the words their status columns hold. Events are in `events`, the ledger in `ledger`.

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


class Lifecycle(StrEnum):
    """Where a task stands in its lifecycle: one status, one board column, one owner. The
    dialects show each as one of their five codes (pipeline/lifecycle.py says which)."""

    DRAFT = "draft"  # a person's two lines; submit sends it on
    SPEC = "spec"  # the writer writes the spec
    NEEDS_INPUT = "needs-input"  # a question waits for a person's answer
    PLAN = "plan"  # the explorer and planner write the plan
    PLANNED = "planned"  # the plan waits for approval (gated)
    PROTOTYPE = "prototype"  # the designer's round, then a person's review (ui tasks)
    READY = "ready"  # approved; nothing runs yet
    IMPLEMENTING = "implementing"  # the tester and implementer, then the gate
    REVIEW = "review"  # the default pipeline's reviewers
    QA = "qa"  # the closing checks, and the [found] criteria in a browser
    JUDGE = "judge"  # re-runs every closing check and tries to reject
    DONE = "done"
    DELIVERED = "delivered"  # the branch is pushed and the pull request open
    PARKED = "parked"  # a hard stop, with the reason; reopen returns it
    FAILED = "failed"  # the default pipeline's final failure


@dataclass(frozen=True)
class TaskLife:
    """A task's lifecycle record, kept per plan across its runs (people move tasks between
    runs)."""

    plan: str
    task_id: str
    status: Lifecycle
    waiting: bool  # a person's move is due (an approval, a review, an answer, a reopen)
    resume: str  # the status to return to: after needs-input, or the one parked from
    reason: str | None  # why it parked or failed; what it waits for
    bounces: int  # qa fails and judge rejections
    rounds: int  # designer rounds
    pr: str | None  # the pull request's address, once delivered
    updated: str


@dataclass(frozen=True)
class Question:
    """A question of the interview: lettered options (the first recommended), the stage that
    asked, and once a person answered, the option chosen and a note."""

    plan: str
    task_id: str
    number: int  # Q1, Q2, ... within the task
    text: str
    options: list[str]
    stage: str  # the status to return to once no question is open
    choice: str | None  # the letter chosen: "a", "b", ...
    note: str | None
    asked: str
    answered: str | None

    @property
    def open(self) -> bool:
        return self.choice is None and self.answered is None


@dataclass(frozen=True)
class Remark:
    """A person's words to the agents on a task, kept word for word: a revise's request for
    the plan, a comment on a prototype or on the work, a free-text response."""

    id: int
    plan: str
    task_id: str
    kind: str  # the move that wrote it: revise, comment, respond
    text: str
    at: str


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

    @property
    def usage(self) -> Usage:
        return Usage(
            self.tokens_in, self.tokens_out, self.tokens_cached, self.cost, self.cost_estimated
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
