"""The integrate stage: an accepted candidate lands on the run branch; the task is done once
the stages after it (deliver) pass it on.

Candidates land one at a time (several jobs share one queue). The run branch is checked
first: one an agent moved is put back, and this candidate is not built on. When another
task landed since this candidate's base, its change is replayed onto the new head and its
acceptance commands run again on the new tree before it lands (its paths and added lines,
which scope and whitespace judge, are the ones already checked); a conflict or a failing
check requeues the task, blamed on what landed (pipeline/requeue.py): a new attempt from the
new head, saying what landed and what conflicted, not counted as a failure. A
candidate that lands gets its disposition in the integration ledger, and its task branch: its
objects are copied into the user's repository then (refs.py), and only then.
"""

from __future__ import annotations

from dataclasses import replace

from taskhand.pipeline import requeue
from taskhand.pipeline.gate import gate, gates
from taskhand.pipeline.harness import Harness, case_json
from taskhand.pipeline.work import Ended, Work
from taskhand.state.events import EventKind
from taskhand.state.ledger import Entry, LedgerOutcome
from taskhand.state.records import Attempt, AttemptStatus
from taskhand.workspace import diffs, refs, replay

SHOWN_CONFLICTS = 20  # paths named in a conflict's reason; the rest are counted


def integrate(h: Harness, work: Work) -> Ended | None:
    with h.landing:
        return _land(h, work)


def _land(h: Harness, work: Work) -> Ended | None:
    task, attempt = work.task, work.attempt
    assert work.outcome is not None
    broken = h.guard.check_refs(task.id)
    if broken:  # the run branch is back where it belongs; this candidate is not built on
        return h.violation(attempt, task, broken)
    head = refs.branch_sha(h.repo, h.run.run_branch) or work.base
    if head != work.base:
        stopped = _onto(h, work, head)
        if stopped is not None:
            return stopped
        attempt = work.attempt
    summary = work.summary or diffs.summary(h.repo, work.base, work.candidate)
    resolution = work.outcome.resolution or f"{task.title}: done"
    case = case_json(work.outcome)
    entry = Entry(
        LedgerOutcome.ACCEPTED, resolution, summary, case, gates(work.gates), work.verdicts
    )
    resolution = h.end_attempt(attempt, AttemptStatus.PASSED, resolution, entry)
    refs.move_branch(h.repo, h.run.run_branch, work.candidate, work.base)
    record_landing(h, attempt, work.candidate)
    h.emit(EventKind.INTEGRATED, task.id, sha=work.candidate)
    work.landed = resolution  # done, unless a stage after this one (deliver) says otherwise
    return None


def _onto(h: Harness, work: Work, head: str) -> Ended | None:
    """Replay the candidate onto `head` and gate it there; the attempt's end when it cannot
    land, else None with the work moved onto `head`."""
    task, attempt = work.task, work.attempt
    assert work.outcome is not None
    replayed = replay.onto(h.depot, work.candidate, head)
    if replayed.sha is None:
        shown = ", ".join(replayed.conflicts[:SHOWN_CONFLICTS])
        more = len(replayed.conflicts) - SHOWN_CONFLICTS
        paths = shown + (f" and {more} more" if more > 0 else "")
        landed = requeue.since(h, work.plan, work.base, head)
        blamed = requeue.touching(h, landed, replayed.conflicts)
        reason = (
            f"requeued {requeue.after(blamed)}: its change conflicts with that work, in "
            f"{paths}; {requeue.ANEW}"
        )
        summary = work.summary or diffs.summary(h.repo, work.base, work.candidate)
        entry = Entry(LedgerOutcome.CONFLICT, reason, summary, case_json(work.outcome))
        return requeue.requeue(h, work, blamed, entry)
    h.emit(EventKind.REPLAYED, task.id, attempt=attempt.number, onto=head, sha=replayed.sha)
    before = work.base
    h.store.rebase_attempt(attempt.id, head, replayed.sha)
    work.attempt = replace(attempt, base_sha=head, candidate_sha=replayed.sha)
    work.candidate, work.summary = replayed.sha, ""
    # The acceptance commands again, on a fresh checkout of the tree that would land.
    return gate(h, work, replayed_from=before)


def record_landing(h: Harness, attempt: Attempt, sha: str) -> None:
    """The task branch at `sha`, the attempt's candidate that landed on the run branch, and
    the integration ledger's record of it (and that the task's earlier results are
    superseded): each done once, however often a resumed run comes back here
    (state/integration.py)."""
    now = refs.create_branch_if_absent(h.repo, attempt.branch, sha)
    ours = [a for a in h.store.attempts(h.run.id) if a.branch == attempt.branch]
    mine = {a.candidate_sha for a in ours} | {a.base_sha for a in ours}
    if now is not None and now != sha and now in mine:  # where an earlier landing put it
        refs.move_branch(h.repo, attempt.branch, sha, now)
    for row in h.store.record_landing(attempt.id, h.run.run_branch, sha):
        h.emit(
            EventKind.DISPOSED,
            row.task_id,
            attempt=row.attempt,
            status=row.status,
            target_ref=row.target_ref,
            sha=row.candidate_sha,
        )
