"""The rows of the state store as plain data: runs, task states, attempts, units, gates, events.

Readers of the store (the runner, the CLI, exports) work with these; only `store` writes them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from taskhand.plan.model import Status
from taskhand.unit import Usage


@dataclass(frozen=True)
class Run:
    id: str
    plan_path: str
    dialect: str
    repo: str
    base_sha: str
    run_branch: str
    status: str
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
    status: str
    reason: str | None
    started: str
    ended: str | None


@dataclass(frozen=True)
class UnitRow:
    id: int
    attempt_id: int
    run_id: str
    task_id: str
    role: str
    agent: str
    model: str | None
    started: str
    ended: str | None
    tokens_in: int
    tokens_out: int
    tokens_cached: int
    cost: float
    cost_estimated: bool
    outcome: str | None
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


@dataclass(frozen=True)
class Entry:
    """What one attempt at a task came to, for the task's ledger.

    `outcome` is accepted, rejected, checks_failed, no_changes, unit_failed, gave_up,
    review_failed or capped; `report`
    the worker's case, `gates` the machine checks, `verdicts` the reviewers' judgements.
    """

    outcome: str
    summary: str
    diff_summary: str = ""
    report: dict[str, Any] = field(default_factory=dict)
    gates: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class LedgerEntry:
    id: int
    run_id: str
    task_id: str
    attempt_id: int
    iteration: int
    outcome: str
    summary: str
    diff_summary: str
    report: dict[str, Any]
    gates: list[dict[str, Any]]
    verdicts: list[dict[str, Any]]
    created: str


@dataclass(frozen=True)
class Event:
    id: int
    run_id: str
    ts: str
    kind: str
    task_id: str | None
    data: dict[str, Any]


@dataclass(frozen=True)
class TaskStats:
    task_id: str
    units: int  # units started, finished or not
    reviews: int  # of those, the reviewers' units
    prompt_bytes: int  # the prompts of all those units
    seconds: float  # agent time of finished units
    tokens_in: int
    tokens_out: int
    tokens_cached: int
    cost: float
    estimated: bool


@dataclass(frozen=True)
class Stats:
    tasks: list[TaskStats]
    total: TaskStats

    def as_json(self) -> dict[str, Any]:
        return {"tasks": [asdict(t) for t in self.tasks], "total": asdict(self.total)}
