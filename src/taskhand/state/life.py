"""The lifecycle's records as plain data: a task's lifecycle status and record, the interview's
questions, a person's remarks. Apart from the run's rows (`records`), so that reading where
tasks stand (`show`) loads only these.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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
    # The status to return to: after needs-input, or the one parked from; at done, delivered
    # (its pull request is due: pipeline/lifecycle.py `due`).
    resume: str
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
