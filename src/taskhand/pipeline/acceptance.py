"""The acceptance checks on one commit: a fresh checkout of exactly that commit, the tree that
would land, set up as the attempt's workspace was (never the worker's workspace, where files
the candidate leaves out, ignored by a `.gitignore` of the worker's say, or holds otherwise
would be run too; its files are the commit's bytes: workspace/depot.py); the gates run there,
each recorded and told, and what they reached past their checkout found.

Split in two for the merge queue: `prepare` and `record` in the job's thread (they write the
store), `run` anywhere (processes only), so the candidate's checks on its own base run while
the same thread checks it on top of the candidates ahead (pipeline/gate.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from taskhand import workspace
from taskhand.gates import GateResult, run_gates
from taskhand.pipeline.harness import Harness, workspace_relative
from taskhand.pipeline.setup import set_up
from taskhand.pipeline.work import Ended, Work
from taskhand.state.events import EventKind
from taskhand.state.ledger import Entry, LedgerOutcome
from taskhand.state.records import AttemptStatus
from taskhand.workspace import git
from taskhand.workspace.backstop import Print

Run = Callable[[], list[GateResult]]


def check(
    h: Harness, work: Work, sha: str, place: tuple[Path, Path] | None, *, commands_only: bool
) -> list[GateResult] | Ended:
    """The gates on `sha` in a fresh checkout at `place` (None: the worker's workspace, for a
    task with no acceptance commands), recorded; or how the attempt ended."""
    ready = prepare(h, work, sha, place, commands_only=commands_only)
    if isinstance(ready, Ended):
        return ready
    before, run = ready
    return record(h, work, before, run())


def prepare(
    h: Harness, work: Work, sha: str, place: tuple[Path, Path] | None, *, commands_only: bool
) -> tuple[Print, Run] | Ended:
    """The checkout of `sha` at `place`, set up, and the guard's print before the checks;
    with the checks to run there. Or how the attempt ended: the checkout or its setup failed."""
    checkout = _checkout(h, work, sha, place) if place is not None else work.ws.path
    if isinstance(checkout, Ended):
        return checkout

    def run() -> list[GateResult]:
        return run_gates(
            h.repo,
            checkout,
            work.base,
            sha,
            work.task,
            h.plan_folder_in_repo(),
            h.sandbox,
            h.config.env_pass,
            h.workspace_env(work.attempt.worktree),
            commands_only=commands_only,
        )

    return h.guard.before(), run


def record(
    h: Harness, work: Work, before: Print, found: list[GateResult]
) -> list[GateResult] | Ended:
    """The gates' results recorded and told, secrets out and paths as the agent sees them; or
    the attempt's end when the checks reached past their checkout."""
    task, attempt, worktree = work.task, work.attempt, work.ws.path

    def shown(text: str) -> str:
        return h.redact(workspace_relative(text, worktree))

    results = [replace(g, detail=shown(g.detail), output=shown(g.output)) for g in found]
    for g in results:
        h.store.record_gate(attempt.id, g.name, g.ok, g.detail, g.exit_code, g.seconds, g.output)
        h.emit(EventKind.GATE, task.id, name=g.name, ok=g.ok, detail=g.detail)
    broken = h.breaches(before, "the acceptance checks", task.id)
    if broken:
        return h.violation(attempt, task, broken)
    return results


def _checkout(h: Harness, work: Work, sha: str, place: tuple[Path, Path]) -> Path | Ended:
    folder, index = place
    try:
        workspace.prepare(h.depot, folder, index, sha, None)
    except (git.GitError, OSError) as exc:
        reason = f"the candidate could not be checked out for its checks: {exc}"
        entry = Entry(LedgerOutcome.UNIT_FAILED, reason)
        return h.retry(work.attempt, work.task, AttemptStatus.FAILED, reason, entry)
    return set_up(h, work, folder) or folder
