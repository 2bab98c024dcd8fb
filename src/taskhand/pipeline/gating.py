"""One candidate's way through the merge queue: it joins, and goes through the steps the queue
(pipeline/queue.py) gives it: replayed onto the tip it would land on, its acceptance commands
run there in a gate slot, until it is to land or to be requeued. Every step runs in the job's
own thread; the gate stage takes the first ones while the candidate's own checks run, and the
integrate stage the rest.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from taskhand.pipeline import acceptance
from taskhand.pipeline.harness import Harness
from taskhand.pipeline.queue import Candidate, Step
from taskhand.pipeline.work import Ended, Work
from taskhand.state.events import EventKind
from taskhand.workspace import refs, replay


def join(h: Harness, work: Work) -> Candidate:
    """The attempt's candidate at the queue's tail, said."""
    with h.landing:
        head = refs.branch_sha(h.repo, h.run.run_branch) or work.base
        candidate = Candidate(work.task.id, work.base, work.candidate)
        ahead = h.queue.join(candidate, head)
        h.emit(EventKind.QUEUED, work.task.id, attempt=work.attempt.number, ahead=ahead)
    work.queued = candidate
    return candidate


def advance(
    h: Harness, work: Work, candidate: Candidate, until: Callable[[], bool] | None = None
) -> tuple[Step, str] | Ended | None:
    """The queue's steps for the candidate, done, until it is to land or be requeued (that
    step, with the head it is at); or, with `until`, until that holds between two steps
    (None). Or the attempt's end: a gate's checkout or setup failed, or its checks reached
    past it."""
    while True:
        found = h.queue.next_step(candidate, until)
        if found is None:
            return None
        step, arg = found
        if step is Step.REPLAY:
            _replay(h, work, candidate, str(arg))
        elif step is Step.GATE:
            ended = _gate(h, work, candidate, int(arg))
            if ended is not None:
                return ended
        else:
            return step, str(arg)


def _replay(h: Harness, work: Work, candidate: Candidate, tip: str) -> None:
    """The candidate's own change onto `tip`. On its own base it is the commit its own checks
    judge; a task with no acceptance commands has nothing to check again."""
    if tip == candidate.base:
        h.queue.replayed(candidate, tip, candidate.own, [], checked=True)
        return
    replayed = replay.onto(h.depot, candidate.own, tip)
    if replayed.sha is not None:
        number = work.attempt.number
        h.emit(EventKind.REPLAYED, work.task.id, attempt=number, onto=tip, sha=replayed.sha)
    checked = True if replayed.sha and not work.task.checks else None
    h.queue.replayed(candidate, tip, replayed.sha or "", replayed.conflicts, checked)


def _gate(h: Harness, work: Work, candidate: Candidate, slot: int) -> Ended | None:
    """The acceptance commands on the tree the candidate would land as, in gate slot `slot`
    (its whitespace and scope results stand: a replay changes neither its paths nor its added
    lines)."""
    task, sha, on = work.task, candidate.sha, h.queue.beneath(candidate)
    number = work.attempt.number
    h.emit(EventKind.GATING, task.id, attempt=number, on=on, onto=candidate.onto, sha=sha)
    began = time.monotonic()
    found = acceptance.check(h, work, sha, h.review_copy(f"queue-{slot}"), commands_only=True)
    if isinstance(found, Ended):
        return found
    current = h.queue.gated(candidate, slot, sha, found)
    seconds = round(time.monotonic() - began, 3)
    ok = all(g.ok for g in found)
    h.emit(EventKind.GATED, task.id, attempt=number, on=on, ok=ok, seconds=seconds, current=current)
    return None
