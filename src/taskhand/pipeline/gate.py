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
from taskhand.pipeline.setup import set_up
from taskhand.pipeline.work import Ended, Work
from taskhand.state.events import EventKind
from taskhand.state.ledger import Entry, LedgerOutcome
from taskhand.state.records import AttemptStatus
from taskhand.workspace import diffs, git

CHECKS = "checks"  # the name of the gate's checkout among the run's copies (review-checks)


def gate(h: Harness, work: Work) -> Ended | None:
    """The checks on the candidate, each recorded; any failure sends the task to another
    attempt."""
    task, attempt = work.task, work.attempt
    assert work.outcome is not None and work.candidate
    checkout = _checkout(h, work, work.candidate, h.review_copy(CHECKS)) if task.checks else None
    if isinstance(checkout, Ended):
        return checkout
    results = _run(h, work, checkout or work.ws.path, work.candidate, commands_only=False)
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


def recheck(h: Harness, work: Work, sha: str, place: tuple[Path, Path]) -> list[GateResult] | Ended:
    """The acceptance commands alone on `sha`, the candidate's change replayed on top of other
    work (pipeline/queue.py), in a fresh checkout at `place`, each recorded: the whitespace and
    scope results stand (a replay changes neither its paths nor its added lines). Or how the
    attempt ended: the checkout or its setup failed, or the checks reached past it."""
    checkout = _checkout(h, work, sha, place)
    if isinstance(checkout, Ended):
        return checkout
    return _run(h, work, checkout, sha, commands_only=True)


def _run(
    h: Harness, work: Work, checkout: Path, sha: str, *, commands_only: bool
) -> list[GateResult] | Ended:
    task, attempt, worktree = work.task, work.attempt, work.ws.path

    def shown(text: str) -> str:  # secrets out, and paths as the agent sees them
        return h.redact(workspace_relative(text, worktree))

    before = h.guard.before()
    found = run_gates(
        h.repo,
        checkout,
        work.base,
        sha,
        task,
        h.plan_folder_in_repo(),
        h.sandbox,
        h.config.env_pass,
        h.workspace_env(work.attempt.worktree),
        commands_only=commands_only,
    )
    results = [replace(g, detail=shown(g.detail), output=shown(g.output)) for g in found]
    for g in results:
        h.store.record_gate(attempt.id, g.name, g.ok, g.detail, g.exit_code, g.seconds, g.output)
        h.emit(EventKind.GATE, task.id, name=g.name, ok=g.ok, detail=g.detail)
    broken = h.breaches(before, "the acceptance checks", task.id)
    if broken:
        return h.violation(attempt, task, broken)
    return results


def _checkout(h: Harness, work: Work, sha: str, place: tuple[Path, Path]) -> Path | Ended:
    """A fresh checkout of `sha` at `place` (a folder and the harness's index of it), set up;
    or how the attempt ended when it could not be made (a commit git cannot write out, a
    setup that failed)."""
    folder, index = place
    try:
        workspace.prepare(h.depot, folder, index, sha, None)
    except (git.GitError, OSError) as exc:
        reason = f"the candidate could not be checked out for its checks: {exc}"
        entry = Entry(LedgerOutcome.UNIT_FAILED, reason)
        return h.retry(work.attempt, work.task, AttemptStatus.FAILED, reason, entry)
    return set_up(h, work, folder) or folder


def gates(results: list[GateResult]) -> list[dict[str, object]]:
    """The gate results as the ledger keeps them."""
    return [{"name": g.name, "ok": g.ok, "detail": g.detail} for g in results]
