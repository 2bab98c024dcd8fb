"""The implement stage: the implementer's unit in the attempt's workspace, and its work
collected as the attempt's candidate commit.

A question ends the attempt with the task waiting for a person; giving up ends the task; a
unit that broke, or changed nothing, sends the task to another attempt.
"""

from __future__ import annotations

from dataclasses import replace

from taskhand import prompts, workspace
from taskhand.pipeline import roles
from taskhand.pipeline.harness import Harness, verdict_json
from taskhand.pipeline.work import Ended, Work
from taskhand.plan.model import Status
from taskhand.state.ledger import Entry, LedgerOutcome
from taskhand.state.life import Lifecycle
from taskhand.state.records import AttemptStatus
from taskhand.text import cap
from taskhand.unit import Case, Outcome, Role, Verdict
from taskhand.workspace import diffs

# An empty change is rejected by the harness itself: there is nothing for a reviewer to read.
NOTHING_DONE = Verdict(
    False,
    "acceptance_gap",
    "The attempt changed no files: no work was performed in this task.",
    [],
    "Make the changes the task asks for in the workspace.",
)

FAILED = AttemptStatus.FAILED


def implement(h: Harness, work: Work) -> Ended | None:
    task, attempt = work.task, work.attempt
    h.track.enter(task, Lifecycle.IMPLEMENTING)
    work.context = work.context or h.context(work.plan, work.book, task, work.ws.path)
    brief = _brief(h, work) if h.track.full(task) else None
    prompt = h.redact(prompts.worker(task, work.context, work.building_on, brief))
    before = h.guard.before()
    outcome = h.unit(Role.IMPLEMENTER, task, attempt, work.ws.path, prompt)
    broken = h.breaches(before, "the worker's unit", task.id)
    if broken:
        return h.violation(attempt, task, broken)
    if outcome.case is Case.QUESTION and outcome.question and brief is not None:
        return roles.settle(h, work, outcome, Lifecycle.IMPLEMENTING)  # the interview's way
    if outcome.case is Case.QUESTION and outcome.question:
        h.store.finish_attempt(attempt.id, AttemptStatus.QUESTION, h.redact(outcome.question.text))
        return Ended(Status.WAIT, request(outcome))
    if outcome.case is Case.FAILED:
        failure = outcome.failure or "the agent gave up"
        failure = h.end_attempt(
            attempt, AttemptStatus.GAVE_UP, failure, Entry(LedgerOutcome.GAVE_UP, failure)
        )
        return Ended(Status.FAIL, failure)
    if outcome.case is not Case.DONE:
        failure = outcome.failure or "the agent did not finish"
        return h.retry(attempt, task, FAILED, failure, Entry(LedgerOutcome.UNIT_FAILED, failure))
    try:
        message, copied = f"{task.id}: {task.title}", h.config.setup.copy
        candidate = workspace.collect(h.depot, work.ws, work.base, message, keep_out=copied)
    except workspace.WorkspaceError as exc:
        failure = str(exc)
        return h.retry(attempt, task, FAILED, failure, Entry(LedgerOutcome.UNIT_FAILED, failure))
    if candidate is None:
        entry = Entry(
            LedgerOutcome.NO_CHANGES, NOTHING_DONE.concern, verdicts=[verdict_json(NOTHING_DONE)]
        )
        return h.retry(attempt, task, FAILED, "the attempt changed no files", entry)
    # Recorded only: its task branch points at it once it lands (pipeline/integrate.py), so
    # a candidate that never lands leaves nothing in the user's repository.
    h.store.set_candidate(attempt.id, candidate)
    work.outcome, work.candidate = outcome, candidate
    return None


def request(outcome: Outcome) -> str:
    """The implementer's question as the task's request: its text and lettered options."""
    assert outcome.question is not None
    options = outcome.question.options
    letters = "".join(f" ({chr(65 + i)}) {o}" for i, o in enumerate(options))
    suffix = f" Options:{letters} (the first is recommended)." if options else ""
    return f"{outcome.question.text}{suffix}"


def _brief(h: Harness, work: Work) -> prompts.Brief:
    """What the full lifecycle shows the implementer; on a rework, the change of the round a
    reviewer turned down, which its workspace holds."""
    brief = roles.brief(h, work)
    if work.building_on is None:
        return brief
    rejected = [a for a in h.store.attempts(h.run.id, work.task.id) if a.number == work.building_on]
    if not rejected or not rejected[0].candidate_sha:
        return brief
    patch = diffs.patch(h.repo, work.base, rejected[0].candidate_sha)
    return replace(brief, last_round=cap(patch, h.config.prompt_caps.diff_bytes))
