"""The integrate stage: an accepted candidate, in the merge queue since its gate (or joining
now, with one job or on resume), lands on the run branch in its turn; the task is done once
the stages after it (deliver) pass it on.

The queue (pipeline/queue.py) says what each candidate does next; pipeline/gating.py does it,
in the job's thread: replays the candidate's change onto the tip it would land on (the run
branch and the candidates ahead of it), runs its acceptance commands there when that tree is
new (its paths and added lines, which scope and whitespace judged, are the ones already
checked), and lands it at the front when that exact tree passed. A candidate that conflicts
with what landed, or fails only on top of it, is requeued, blamed on those landings
(pipeline/requeue.py): a new attempt from the new head, not counted as a failure. The run
branch is checked before each landing: one an agent moved is put back, and that candidate is
not built on. A candidate that lands gets its disposition in the integration ledger, and its
task branch: its objects are copied into the user's repository then (refs.py), and only then.
"""

from __future__ import annotations

from dataclasses import replace

from taskhand.gates import GateResult
from taskhand.pipeline import gating, requeue
from taskhand.pipeline.gate import gates
from taskhand.pipeline.harness import Harness, case_json
from taskhand.pipeline.queue import Candidate, Step
from taskhand.pipeline.work import Ended, Work
from taskhand.state.events import EventKind
from taskhand.state.ledger import Entry, LedgerOutcome
from taskhand.state.records import Attempt, AttemptStatus
from taskhand.workspace import diffs, refs

SHOWN_CONFLICTS = 20  # paths named in a conflict's reason; the rest are counted


def integrate(h: Harness, work: Work) -> Ended | None:
    # Joined at its gate with several jobs (pipeline/gate.py); a resumed attempt joins now.
    candidate = work.queued or gating.join(h, work)
    h.queue.ready(candidate)
    h.seat.give_back()
    try:
        found = gating.advance(h, work, candidate)
        if isinstance(found, Ended):
            return found
        assert found is not None  # it waited for its turn
        if found[0] is Step.LAND:
            return _land(h, work, candidate)
        with h.landing:
            return _cannot_land(h, work, candidate, found[0])
    finally:
        h.queue.leave(candidate)


def _results(work: Work, candidate: Candidate) -> list[GateResult]:
    """The gate results its ledger entry keeps: whitespace and scope as judged on its own base,
    the acceptance commands as they ran on the tree it lands (or fails) as."""
    if candidate.checks is None:
        return work.gates
    return [g for g in work.gates if g.name != "command"] + candidate.checks


def _land(h: Harness, work: Work, candidate: Candidate) -> Ended | None:
    """At the front, its tree checked on the run branch's head: put it there. Its summary is
    read before the landing lock: the commit to land is fixed once the queue says so."""
    task = work.task
    assert work.outcome is not None
    head = candidate.onto
    replayed = candidate.sha != work.candidate
    if replayed:
        summary = diffs.summary(h.repo, head, candidate.sha)
    else:
        summary = work.summary or diffs.summary(h.repo, work.base, candidate.sha)
    with h.landing:
        broken = h.guard.check_refs(task.id)
        if broken:  # the run branch is back where it belongs; this candidate is not built on
            return h.violation(work.attempt, task, broken)
        if replayed:  # landed as its replay: the attempt says so first
            h.store.rebase_attempt(work.attempt.id, head, candidate.sha)
            work.attempt = replace(work.attempt, base_sha=head, candidate_sha=candidate.sha)
        work.candidate, work.summary = candidate.sha, summary
        work.gates = _results(work, candidate)
        resolution = work.outcome.resolution or f"{task.title}: done"
        case = case_json(work.outcome)
        entry = Entry(
            LedgerOutcome.ACCEPTED, resolution, summary, case, gates(work.gates), work.verdicts
        )
        resolution = h.end_attempt(work.attempt, AttemptStatus.PASSED, resolution, entry)
        refs.move_branch(h.repo, h.run.run_branch, work.candidate, head)
        h.queue.leave(candidate, landed=work.candidate)
        # Before the `integrated` event, which says the landing is whole (a resumed run
        # records what a kill cut short), and under the lock, so those events come in the
        # order the run branch moved: the guard reads its head from the last one.
        record_landing(h, work.attempt, work.candidate)
        h.emit(EventKind.INTEGRATED, task.id, sha=work.candidate)
    work.landed = resolution  # done, unless a stage after this one (deliver) says otherwise
    return None


def _cannot_land(h: Harness, work: Work, candidate: Candidate, step: Step) -> Ended:
    """At the front, on the run branch's head, it conflicts or its checks fail: what landed
    since its base is to blame, not its worker. (Its checks failing on its own base, the tree
    they passed on before, is a flaky check: its worker's again.)"""
    assert work.outcome is not None
    base, head = candidate.base, candidate.onto
    landed = requeue.since(h, work.plan, base, head)
    summary = work.summary or diffs.summary(h.repo, base, candidate.own)
    if step is Step.CONFLICTED:
        shown = ", ".join(candidate.conflicts[:SHOWN_CONFLICTS])
        more = len(candidate.conflicts) - SHOWN_CONFLICTS
        paths = shown + (f" and {more} more" if more > 0 else "")
        blamed = requeue.touching(h, landed, candidate.conflicts)
        reason = (
            f"requeued {requeue.after(blamed)}: its change conflicts with that work, in "
            f"{paths}; {requeue.ANEW}"
        )
        entry = Entry(LedgerOutcome.CONFLICT, reason, summary, case_json(work.outcome))
        return requeue.requeue(h, work, blamed, entry)
    results = _results(work, candidate)
    failed = "; ".join(g.detail for g in results if not g.ok)
    checks = gates(results)
    if not landed:
        entry = Entry(LedgerOutcome.CHECKS_FAILED, failed, summary, case_json(work.outcome), checks)
        return h.retry(work.attempt, work.task, AttemptStatus.FAILED, failed, entry)
    reason = (
        f"requeued {requeue.after(landed)}: its checks passed on its own base and failed on "
        f"top of that work ({failed}); {requeue.ANEW}"
    )
    entry = Entry(LedgerOutcome.BROKEN_BY_LANDING, reason, summary, case_json(work.outcome), checks)
    return requeue.requeue(h, work, landed, entry)


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
