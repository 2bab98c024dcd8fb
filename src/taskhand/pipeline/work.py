"""The attempt in flight, as the stages see it, and how an attempt ends.

A stage is a function `(harness, work) -> Ended | None`: None passes the work to the next stage
of the pipeline, an `Ended` ends the attempt (and, with a status, the task). Work that landed
and meets no stage that ends it concludes the task done.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from taskhand import prompts
from taskhand.gates import GateResult
from taskhand.pipeline.queue import Candidate
from taskhand.plan.model import Plan, Status, Task
from taskhand.state.records import Attempt
from taskhand.state.status import StatusBook
from taskhand.unit import Outcome
from taskhand.workspace import Workspace

if TYPE_CHECKING:
    from taskhand.pipeline.harness import Harness


@dataclass(frozen=True)
class Ended:
    """How one attempt ended: the status it concludes the task with, or None to retry."""

    status: Status | None
    text: str
    # The run reached a cap mid-attempt: the attempt pauses at its stage, and a resumed run
    # goes on from there instead of paying for the work before it again.
    run_capped: bool = False


@dataclass
class Work:
    """What one attempt has made so far, handed from stage to stage."""

    plan: Plan
    book: StatusBook
    task: Task
    attempt: Attempt
    ws: Workspace
    building_on: int | None = None  # the rejected attempt this one continues from
    outcome: Outcome | None = None  # the implementer's
    candidate: str = ""  # the commit the attempt produced
    gates: list[GateResult] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)  # the reviewers', as kept
    summary: str = ""  # the candidate's diff summary, once read
    # What the prompts show besides the task, read once at the attempt's start: later stages
    # must not see conventions the worker's unit rewrote in the workspace.
    context: prompts.Context | None = None
    # The resolution the work landed with, once integrate put it on the run branch: a pipeline
    # whose later stages (deliver) all pass it on concludes the task done with this.
    landed: str | None = None
    # Its place in the merge queue, from its gate (several jobs) or its integration on.
    queued: Candidate | None = None

    @property
    def base(self) -> str:
        return self.attempt.base_sha


Stage = Callable[["Harness", Work], Ended | None]
