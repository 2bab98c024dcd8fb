"""The gate stage: the machine checks on the candidate (acceptance commands, whitespace,
scope), each recorded; any failure sends the task to another attempt with the reasons.

The acceptance commands run in a fresh checkout of exactly the candidate commit, the tree
that lands, set up as the attempt's workspace was: never in the worker's workspace, where
files the candidate leaves out (ignored by a `.gitignore` of the worker's, say) or holds
otherwise would be run too. Its files are the commit's bytes (workspace/depot.py).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from taskhand import workspace
from taskhand.gates import GateResult, run_gates
from taskhand.pipeline.harness import Harness, case_json, workspace_relative
from taskhand.pipeline.requeue import ANEW, Landing, after, requeue, since
from taskhand.pipeline.setup import set_up
from taskhand.pipeline.work import Ended, Work
from taskhand.state.events import EventKind
from taskhand.state.ledger import Entry, LedgerOutcome
from taskhand.state.records import AttemptStatus
from taskhand.workspace import diffs, git

CHECKS = "checks"  # the name of the gate's checkout among the run's copies (review-checks)


def gate(h: Harness, work: Work, replayed_from: str = "") -> Ended | None:
    """The checks on the candidate, each recorded; any failure sends the task to another
    attempt. `replayed_from`: the base the change was gated on before it was replayed onto
    a newer one; its acceptance commands run again on the new tree, and the whitespace and
    scope results stand (the replay changed neither its paths nor its added lines). A failure
    there is the doing of what landed since, not the worker's: the task is requeued, blamed on
    those landings."""
    task, attempt, worktree = work.task, work.attempt, work.ws.path
    assert work.outcome is not None and work.candidate
    kept = [g for g in work.gates if g.name != "command"] if replayed_from else []

    def shown(text: str) -> str:  # secrets out, and paths as the agent sees them
        return h.redact(workspace_relative(text, worktree))

    checkout = _checkout(h, work) if task.checks else worktree
    if isinstance(checkout, Ended):
        return checkout
    before = h.guard.before()
    found = run_gates(
        h.repo,
        checkout,
        work.base,
        work.candidate,
        task,
        h.plan_folder_in_repo(),
        h.sandbox,
        h.config.env_pass,
        h.workspace_env(work.attempt.worktree),
        commands_only=bool(kept),
    )
    results = [replace(g, detail=shown(g.detail), output=shown(g.output)) for g in found]
    for g in results:
        h.store.record_gate(attempt.id, g.name, g.ok, g.detail, g.exit_code, g.seconds, g.output)
        h.emit(EventKind.GATE, task.id, name=g.name, ok=g.ok, detail=g.detail)
    broken = h.breaches(before, "the acceptance checks", task.id)
    if broken:
        return h.violation(attempt, task, broken)
    results += kept
    work.gates = results
    failures = [g.detail for g in results if not g.ok]
    if not failures:
        return None
    summary = diffs.summary(h.repo, work.base, work.candidate)
    reason = "; ".join(failures)
    if replayed_from:
        return _broken(h, work, since(h, work.plan, replayed_from, work.base), reason, summary)
    entry = Entry(
        LedgerOutcome.CHECKS_FAILED, reason, summary, case_json(work.outcome), gates(results)
    )
    return h.retry(attempt, task, AttemptStatus.FAILED, reason, entry)


def _broken(h: Harness, work: Work, landed: list[Landing], failed: str, summary: str) -> Ended:
    """Requeue the task whose checks passed on its own base and failed on top of `landed`."""
    assert work.outcome is not None
    reason = (
        f"requeued {after(landed)}: its checks passed on its own base and failed on top of "
        f"that work ({failed}); {ANEW}"
    )
    outcome, checks = LedgerOutcome.BROKEN_BY_LANDING, gates(work.gates)
    entry = Entry(outcome, reason, summary, case_json(work.outcome), checks)
    return requeue(h, work, landed, entry)


def _checkout(h: Harness, work: Work) -> Path | Ended:
    """The gate's checkout of the candidate, fresh and set up; or how the attempt ended when
    it could not be made (a commit git cannot write out, a setup that failed)."""
    folder, index = h.review_copy(CHECKS)
    try:
        workspace.prepare(h.depot, folder, index, work.candidate, None)
    except (git.GitError, OSError) as exc:
        reason = f"the candidate could not be checked out for its checks: {exc}"
        entry = Entry(LedgerOutcome.UNIT_FAILED, reason)
        return h.retry(work.attempt, work.task, AttemptStatus.FAILED, reason, entry)
    return set_up(h, work, folder) or folder


def gates(results: list[GateResult]) -> list[dict[str, object]]:
    """The gate results as the ledger keeps them."""
    return [{"name": g.name, "ok": g.ok, "detail": g.detail} for g in results]
