"""The gate stage: the machine checks on the candidate (acceptance commands, whitespace,
scope), each recorded; any failure sends the task to another attempt with the reasons. The
acceptance commands run in a fresh checkout of exactly the candidate commit
(pipeline/acceptance.py).
"""

from __future__ import annotations

import threading

from taskhand.gates import GateResult
from taskhand.pipeline import acceptance, gating
from taskhand.pipeline.harness import Harness, case_json
from taskhand.pipeline.work import Ended, Work
from taskhand.state.ledger import Entry, LedgerOutcome
from taskhand.state.records import AttemptStatus
from taskhand.workspace import diffs

CHECKS = "checks"  # the name of the gate's checkout among the run's copies (review-checks)


def gate(h: Harness, work: Work) -> Ended | None:
    """The checks on the candidate, each recorded; any failure sends the task to another
    attempt. With several jobs the candidate joins the merge queue here, and is checked on
    top of the candidates ahead of it while its own checks run."""
    task, attempt = work.task, work.attempt
    assert work.outcome is not None and work.candidate
    place = h.review_copy(CHECKS) if task.checks else None
    ready = acceptance.prepare(h, work, work.candidate, place, commands_only=False)
    if isinstance(ready, Ended):
        return ready
    before, run = ready
    found = _beside_the_queue(h, work, run) if h.config.jobs > 1 and task.checks else run()
    if isinstance(found, Ended):
        return found
    results = acceptance.record(h, work, before, found)
    if isinstance(results, Ended):
        return results
    work.gates = results
    failures = [g.detail for g in results if not g.ok]
    if not failures:
        return None
    summary = diffs.summary(h.repo, work.base, work.candidate)
    reason = "; ".join(failures)
    entry = Entry(
        LedgerOutcome.CHECKS_FAILED, reason, summary, case_json(work.outcome), gates(results)
    )
    return h.retry(attempt, task, AttemptStatus.FAILED, reason, entry)


def _beside_the_queue(h: Harness, work: Work, run: acceptance.Run) -> list[GateResult] | Ended:
    """The candidate's own checks (`run`, processes only) in a thread beside this one, which
    meanwhile puts the candidate in the merge queue and, while those run, takes the queue's
    steps as the candidates ahead allow them (replayed onto them, checked on the tree it would
    land as), so that its landing rarely waits for a second check. A check in the queue begun
    before its own end is waited for. Their results once both are done; or the attempt's end,
    when its checks in the queue could not run."""
    candidate = gating.join(h, work)
    done: list[list[GateResult] | BaseException] = []

    def own() -> None:
        try:
            done.append(run())
        except BaseException as exc:  # Interrupted too: raised again in the job's thread
            done.append(exc)
        h.queue.nudge()

    beside = threading.Thread(target=own, name=f"taskhand-checks-{work.task.id}")
    beside.start()
    try:  # steps as those ahead allow them, until its own checks are done
        ahead = gating.advance(h, work, candidate, until=lambda: bool(done))
    finally:
        beside.join()
    if isinstance(done[0], BaseException):
        raise done[0]
    return ahead if isinstance(ahead, Ended) else done[0]


def gates(results: list[GateResult]) -> list[dict[str, object]]:
    """The gate results as the ledger keeps them."""
    return [{"name": g.name, "ok": g.ok, "detail": g.detail} for g in results]
