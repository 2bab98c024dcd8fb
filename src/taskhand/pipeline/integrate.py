"""The integrate stage: an accepted candidate lands on the run branch; the task is done once
the stages after it (deliver) pass it on.

The run branch is checked first: one an agent moved is put back, and this candidate is not
built on.
"""

from __future__ import annotations

from taskhand.pipeline.gate import gates
from taskhand.pipeline.harness import Harness, case_json
from taskhand.pipeline.work import Ended, Work
from taskhand.state.events import EventKind
from taskhand.state.ledger import Entry, LedgerOutcome
from taskhand.state.records import AttemptStatus
from taskhand.workspace import diffs, refs


def integrate(h: Harness, work: Work) -> Ended | None:
    task, attempt = work.task, work.attempt
    assert work.outcome is not None
    broken = h.guard.check_refs(task.id)
    if broken:  # the run branch is back where it belongs; this candidate is not built on
        return h.violation(attempt, task, broken)
    summary = work.summary or diffs.summary(h.repo, work.base, work.candidate)
    resolution = work.outcome.resolution or f"{task.title}: done"
    case = case_json(work.outcome)
    entry = Entry(
        LedgerOutcome.ACCEPTED, resolution, summary, case, gates(work.gates), work.verdicts
    )
    resolution = h.end_attempt(attempt, AttemptStatus.PASSED, resolution, entry)
    refs.move_branch(h.repo, h.run.run_branch, work.candidate, work.base)
    h.emit(EventKind.INTEGRATED, task.id, sha=work.candidate)
    work.landed = resolution  # done, unless a stage after this one (deliver) says otherwise
    return None
