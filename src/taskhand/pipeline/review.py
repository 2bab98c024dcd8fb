"""The review stage: every reviewer lens judges the candidate from its own disposable copy;
any rejection sends the task to another attempt that builds on this one's work.

A reviewer that breaks, or changes the candidate's workspace, is replaced once. A run cap
reached before a reviewer is paid pauses the attempt at this stage.
"""

from __future__ import annotations

from dataclasses import dataclass

from taskhand import prompts
from taskhand.pipeline.gate import gates
from taskhand.pipeline.harness import Harness, case_json, verdict_json
from taskhand.pipeline.work import Ended, Work
from taskhand.plan.model import Status
from taskhand.state.events import EventKind
from taskhand.state.ledger import Entry, LedgerOutcome, VerdictNote
from taskhand.state.life import Lifecycle
from taskhand.state.records import AttemptStatus
from taskhand.unit import Case, Role, Verdict
from taskhand.workspace import WorkspaceError, diffs
from taskhand.workspace.review_copy import disposable_copy

REVIEW_TRIES = 2  # a reviewer that breaks or writes outside its copy is replaced once


@dataclass(frozen=True)
class Stop:
    """Why a review ended without verdicts: the attempt's outcome and the reason."""

    # review_failed, capped (the task's budget), interrupted (the run's cap) or violation
    outcome: AttemptStatus
    reason: str


def review(h: Harness, work: Work) -> Ended | None:
    task, attempt = work.task, work.attempt
    assert work.outcome is not None
    h.track.enter(task, Lifecycle.REVIEW)
    work.summary = diffs.summary(h.repo, work.base, work.candidate)
    case = case_json(work.outcome)
    found = verdicts(h, work)
    if isinstance(found, Stop) and found.outcome == AttemptStatus.INTERRUPTED:
        return Ended(None, found.reason, run_capped=True)  # paused: resumed at this stage
    if isinstance(found, Stop) and found.outcome == AttemptStatus.VIOLATION:
        return h.violation(attempt, task, [found.reason])
    if isinstance(found, Stop):
        entry = Entry(
            LedgerOutcome(found.outcome), found.reason, work.summary, case, gates(work.gates)
        )
        reason = h.end_attempt(attempt, found.outcome, found.reason, entry)
        h.emit(EventKind.ATTEMPT_FAILED, task.id, reason=reason)
        return Ended(Status.FAIL, reason)
    work.verdicts = [verdict_json(v, lens) for lens, v in found]
    rejections = [n for n in map(VerdictNote.from_json, work.verdicts) if not n.accepted]
    if not rejections:
        return None
    reason = "; ".join(n.line() for n in rejections)
    entry = Entry(
        LedgerOutcome.REJECTED, reason, work.summary, case, gates(work.gates), work.verdicts
    )
    return h.retry(attempt, task, AttemptStatus.REJECTED, reason, entry)


def verdicts(h: Harness, work: Work) -> list[tuple[str, Verdict]] | Stop:
    """Every reviewer's verdict on the candidate, each from its own disposable copy; or
    why the review stopped: a reviewer could not judge, or the task's budget ran out."""
    task, base, candidate = work.task, work.base, work.candidate
    assert work.outcome is not None
    # A resumed attempt has none yet: it reads them from its checkout of the candidate.
    context = work.context or h.context(work.plan, work.book, task, work.ws.path)
    shown = prompts.Candidate(
        work.outcome.resolution,
        work.outcome.report,
        work.gates,
        diffs.changed_paths(h.repo, base, candidate),
        diffs.patch(h.repo, base, candidate),
        work.summary,
    )
    found = []
    for lens in h.config.lenses:
        spent = h.task_cap(task.id)  # the worker's unit may have used up the budget
        if spent:
            return Stop(AttemptStatus.CAPPED, spent)
        capped = h.run_cap()  # or the run's: stop before paying a reviewer, resumably
        if capped:
            return Stop(AttemptStatus.INTERRUPTED, capped)
        prompt = h.redact(prompts.evaluator(task, context, shown, lens))
        verdict = reviewer(h, work, prompt, lens)
        if isinstance(verdict, Stop):
            return verdict
        if isinstance(verdict, str):
            return Stop(AttemptStatus.REVIEW_FAILED, verdict)
        found.append((lens, verdict))
    return found


def reviewer(h: Harness, work: Work, prompt: str, lens: str) -> Verdict | str | Stop:
    """One reviewer's verdict. A reviewer that breaks, or that changes the candidate's
    worktree, is replaced once; its verdict does not count."""
    task, attempt = work.task, work.attempt
    problem = ""
    copy_path, index = h.review_copy(lens)
    for _ in range(REVIEW_TRIES):
        try:
            with disposable_copy(h.depot, work.candidate, copy_path, index, work.ws.path) as copy:
                before = h.guard.before()
                outcome = h.unit(Role.EVALUATOR, task, attempt, copy.path, prompt, lens)
                broken = h.breaches(before, f"the {lens} review", task.id)
        except WorkspaceError as exc:  # an earlier reviewer left what cannot be deleted
            return f"the {lens} reviewer's copy could not be made: {exc}"
        if copy.left:
            h.emit(EventKind.WARNING, task.id, message=copy.left)
        if broken:
            return Stop(AttemptStatus.VIOLATION, "; ".join(broken))
        if copy.violations:
            problem = (
                f"{EventKind.REVIEWER_WRITE_VIOLATION}: the {lens} reviewer changed the candidate: "
                + ", ".join(copy.violations[:10])
            )
            # The candidate is its commit; the next reviewer's check starts from here.
            h.emit(
                EventKind.REVIEWER_WRITE_VIOLATION, task.id, lens=lens, changes=copy.violations[:50]
            )
            continue
        if outcome.case is Case.DONE and outcome.verdict is not None:
            h.emit(
                EventKind.VERDICT, task.id, **h.redact.value(verdict_json(outcome.verdict, lens))
            )
            return outcome.verdict
        problem = f"the {lens} reviewer gave no verdict: {outcome.failure or outcome.case}"
        h.emit(EventKind.REVIEW_FAILED, task.id, lens=lens, reason=problem)
    return problem
