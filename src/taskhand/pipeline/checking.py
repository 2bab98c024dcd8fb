"""The qa and judge stages: an independent role checks the candidate in a disposable copy and
gives a verdict. qa runs the closing checks and walks each [found] criterion in a browser,
one screenshot each; the judge, after the harness re-runs every closing check, tries to
reject. A rejection is a bounce: the task goes back to implementing, building on this work.
"""

from __future__ import annotations

from pathlib import Path

from taskhand import prompts
from taskhand.pipeline import roles
from taskhand.pipeline.gate import gate, gates
from taskhand.pipeline.harness import Harness, case_json, verdict_json
from taskhand.pipeline.work import Ended, Work
from taskhand.prompts import roles as role_prompts
from taskhand.state.documents import Documents
from taskhand.state.events import EventKind
from taskhand.state.ledger import Entry, LedgerOutcome, VerdictNote
from taskhand.state.life import Lifecycle
from taskhand.state.records import AttemptStatus
from taskhand.unit import Role
from taskhand.workspace import diffs

FOUND_SHOTS = "found-*.png"  # qa's screenshot of [found] criterion N is found-N.png


def qa(h: Harness, work: Work) -> Ended | None:
    task = work.task
    h.track.enter(task, Lifecycle.QA)
    shots = Documents(work.plan, h.state).folder(task.id)
    has_found = any(c.tag == "found" for c in task.criteria)
    if shots.is_dir():
        for old in shots.glob(FOUND_SHOTS):
            old.unlink()  # this round's walk replaces the last one's
    ended = _verdict(h, work, Role.QA, shots if has_found else None)
    if ended is not None:
        return ended
    h.track.move(task, Lifecycle.JUDGE)
    return None


def judge(h: Harness, work: Work) -> Ended | None:
    h.track.enter(work.task, Lifecycle.JUDGE)
    rerun = gate(h, work)  # every closing check again, by the harness, on this candidate
    if rerun is not None:
        h.track.move(work.task, Lifecycle.IMPLEMENTING)
        return rerun
    return _verdict(h, work, Role.JUDGE, None)


def _verdict(h: Harness, work: Work, role: Role, shots: Path | None) -> Ended | None:
    """The role's verdict on the candidate; a rejection ends the attempt as a bounce."""
    task, attempt = work.task, work.attempt
    assert work.outcome is not None
    work.context = context = work.context or h.context(work.plan, work.book, task, work.ws.path)
    work.summary = work.summary or diffs.summary(h.repo, work.base, work.candidate)
    candidate = prompts.Candidate(
        work.outcome.resolution,
        work.outcome.report,
        work.gates,
        diffs.changed_paths(h.repo, work.base, work.candidate),
        diffs.patch(h.repo, work.base, work.candidate),
        work.summary,
    )
    outcome = roles.in_copy(
        h,
        work,
        role,
        lambda b: role_prompts.checker(str(role), task, context, b, candidate),
        work.candidate,
        shots=shots,
    )
    if isinstance(outcome, Ended):
        return outcome
    case = case_json(work.outcome)
    if outcome.verdict is None:
        reason = f"the {role} gave no verdict: {outcome.failure or outcome.case}"
        h.emit(EventKind.REVIEW_FAILED, task.id, lens=str(role), reason=reason)
        entry = Entry(LedgerOutcome.UNIT_FAILED, reason, work.summary, case, gates(work.gates))
        return h.retry(attempt, task, AttemptStatus.FAILED, reason, entry)
    shown = verdict_json(outcome.verdict, str(role))
    h.emit(EventKind.VERDICT, task.id, **h.redact.value(shown))
    work.verdicts = [*work.verdicts, shown]
    if outcome.verdict.accepted:
        return None
    reason = VerdictNote.from_json(shown).line()
    entry = Entry(
        LedgerOutcome.REJECTED, reason, work.summary, case, gates(work.gates), work.verdicts
    )
    h.track.move(task, Lifecycle.IMPLEMENTING, bounce=True, reason=reason)
    return h.retry(attempt, task, AttemptStatus.REJECTED, reason, entry)
